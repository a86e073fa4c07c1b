//! Property-based differential cases: proptest strategies generate a
//! backpressure setting and a list of operations; the operations run on the RTL
//! bench, whose scoreboard checks every packet, memory access and counter
//! against the golden model. A failing input is shrunk with proptest's value
//! trees (fewer operations, simpler seeds, less backpressure).
//!
//! `stream` cases are flat random streams (every op, dtype, target list and
//! payload edge case, malformed frames, claimed source ports). `sequence` cases
//! are operation sequences over a reference state, the stimulus's record of
//! mapped tokens: map (Dispatch of a new token), re-dispatch of a mapped token,
//! combine of mapped tokens and of never-mapped ones, AL-TLB pressure (more new
//! entries than the TLB holds) and drains (everything delivered, counters equal)
//! between phases — the role `proptest-state-machine` plays, with transitions
//! whose concrete packets are drawn from the state when they are applied.

use super::{Case, CaseFail, Checked, Kind, Outcome, Size};
use crate::stimulus::{Stimulus, SCRATCH};
use crate::tb::{Bench, BenchConfig, TbError};
use dysharp_registry::Registry;
use dysharp_sim::packet::{decode, Origin, Packet};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Random valid/ready backpressure and memory latency of one input.
#[derive(Clone, Debug)]
pub(crate) struct Pressure {
    /// Probability that a source holds its next flit back in a cycle.
    inject_stall: f64,
    /// Probability that an SM holds a response flit back.
    sm_stall: f64,
    /// Probability that a GPU memory refuses a request.
    mem_stall: f64,
    /// Read latency range.
    latency: (u64, u64),
    /// log2 of the data slots per expert: 12 (the default) or 5, so that
    /// allocations run out (`ERR_ALLOC`) within a case.
    log2_slots: u32,
}

/// One operation; the number is the seed its packet is drawn from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    DynSt(u64),
    Redispatch(u64),
    Combine(u64),
    CombineUnmapped(u64),
    /// A DYN op whose address fails the hub's range check.
    OutOfRange(u64),
    Write(u64),
    Read(u64),
    McSt(u64),
    McLdReduce(u64),
    Malformed(u64),
    /// New AL entries: 0 → 16, 1 → 64, 2 → TLB entries + 16.
    TlbPressure(u64, u8),
    /// Run until everything is delivered; counters must equal the golden model's.
    Drain,
}

impl Pressure {
    /// Stall probabilities of the sources, SMs and memories, and the read latency.
    pub(crate) fn new(
        inject_stall: f64,
        sm_stall: f64,
        mem_stall: f64,
        latency: (u64, u64),
        log2_slots: u32,
    ) -> Self {
        Pressure {
            inject_stall,
            sm_stall,
            mem_stall,
            latency,
            log2_slots,
        }
    }
}

fn stall() -> impl Strategy<Value = f64> {
    prop_oneof![2 => Just(0.0), 3 => 0.0..0.9f64]
}

fn pressure() -> impl Strategy<Value = Pressure> {
    (
        stall(),
        stall(),
        stall(),
        0u64..8,
        0u64..48,
        prop_oneof![3 => Just(12u32), 1 => Just(5u32)],
    )
        .prop_map(|(i, s, m, lo, extra, slots)| Pressure {
            inject_stall: i,
            sm_stall: s,
            mem_stall: m,
            latency: (1 + lo, 1 + lo + extra),
            log2_slots: slots,
        })
}

/// The operations of a `stream` case. Without the dynamic operations (`dynamic` false, spec
/// §5.7) unicast and static-group ops dominate and the DYN ops are bad input (illegal opcodes
/// there); the weights of the dynamic mix are unchanged from before the parameter existed.
fn stream_op(dynamic: bool) -> impl Strategy<Value = Op> {
    let (dyn_w, static_w) = if dynamic { (1, 0) } else { (0, 2) };
    prop_oneof![
        1 + 5 * dyn_w => any::<u64>().prop_map(Op::DynSt),
        4 * dyn_w + 1 => any::<u64>().prop_map(Op::Combine),
        1 => any::<u64>().prop_map(Op::CombineUnmapped),
        1 => any::<u64>().prop_map(Op::OutOfRange),
        1 + static_w => any::<u64>().prop_map(Op::Write),
        1 + static_w => any::<u64>().prop_map(Op::Read),
        1 + static_w => any::<u64>().prop_map(Op::McSt),
        1 + static_w => any::<u64>().prop_map(Op::McLdReduce),
        2 => any::<u64>().prop_map(Op::Malformed),
    ]
}

/// The operations of a `sequence` case (see [`stream_op`] for `dynamic`).
fn sequence_op(dynamic: bool) -> impl Strategy<Value = Op> {
    let (dyn_w, static_w) = if dynamic { (1, 0) } else { (0, 2) };
    prop_oneof![
        1 + 4 * dyn_w => any::<u64>().prop_map(Op::DynSt),
        1 + 2 * dyn_w => any::<u64>().prop_map(Op::Redispatch),
        1 + 4 * dyn_w => any::<u64>().prop_map(Op::Combine),
        1 => any::<u64>().prop_map(Op::CombineUnmapped),
        1 => (any::<u64>(), 0u8..3).prop_map(|(s, n)| Op::TlbPressure(s, n)),
        1 => any::<u64>().prop_map(Op::OutOfRange),
        1 + static_w => any::<u64>().prop_map(Op::Write),
        1 + static_w => any::<u64>().prop_map(Op::Read),
        1 + static_w => any::<u64>().prop_map(Op::McSt),
        1 + static_w => any::<u64>().prop_map(Op::McLdReduce),
        1 => any::<u64>().prop_map(Op::Malformed),
        2 => Just(Op::Drain),
    ]
}

/// The static groups every property case programs (ports 0, 1, 3; none; all).
fn groups(ports: usize) -> Vec<u32> {
    vec![0b1011, 0, (u64::MAX >> (64 - ports)) as u32]
}

fn ports_of(model: &str) -> usize {
    Registry::builtin()
        .get(model)
        .and_then(|m| m.ports())
        .unwrap_or(8)
}

/// Whether `model` has the dynamic operations built in (registry `DynamicOps`).
fn dynamic_ops(model: &str) -> bool {
    Registry::builtin()
        .get(model)
        .is_none_or(|m| m.dynamic_ops())
}

/// The scratch range WRITE/READ/MC ops of the stimulus address.
pub(crate) const SCRATCH_RANGE: (u64, u64) = (SCRATCH, SCRATCH + 0x1000);

/// The drain bound of a run: 20,000 cycles plus 64 cycles per queued flit,
/// divided by the slowest stream's acceptance probability.
pub(crate) fn drain_bound(flits: u64, p: &Pressure) -> u64 {
    let slowest = 1.0 - p.inject_stall.max(p.sm_stall).max(p.mem_stall);
    20_000 + (64.0 * flits as f64 / slowest.max(0.05)) as u64
}

/// The bench configuration of a property input.
pub(crate) fn bench_config(
    model: &str,
    seed: u64,
    p: &Pressure,
    vcd: Option<PathBuf>,
) -> BenchConfig {
    let mut c = BenchConfig::new(model, seed);
    c.groups = groups(ports_of(model));
    c.inject_rate = 1.0 - p.inject_stall;
    c.sm_ready_rate = 1.0 - p.sm_stall;
    c.mem_ready_rate = 1.0 - p.mem_stall;
    c.mem_latency = p.latency;
    c.hub.log2_slots = p.log2_slots;
    c.vcd = vcd;
    c.write_regions = Some(vec![SCRATCH_RANGE]);
    c
}

/// Queues a packet or frame, counting legal and malformed ones.
pub(crate) fn push_frame(b: &mut Bench, port: usize, frame: Vec<u128>, checked: &mut Checked) {
    let limits = b.golden_cfg().limits();
    if decode(&frame, Origin::Sm, &limits).is_ok() {
        checked.legal_injected += 1;
    } else {
        checked.malformed_injected += 1;
    }
    b.push_frame(port, frame);
}

/// A legal packet from a source that sometimes claims another port (the
/// switch must stamp the ingress port).
fn claim(op_seed: u64, mut p: Packet) -> Packet {
    if op_seed & 3 == 0 {
        p.src_port = ((op_seed >> 8) % 32) as u8;
    }
    p
}

/// Runs `ops` on a fresh bench; returns what was checked and the first error.
fn run_ops(
    model: &str,
    seed: u64,
    p: &Pressure,
    ops: &[Op],
    vcd: Option<PathBuf>,
) -> (Checked, Result<(), TbError>) {
    let mut checked = Checked::default();
    let mut bench = match Bench::new(bench_config(model, seed, p, vcd)) {
        Ok(b) => b,
        Err(e) => return (checked, Err(e)),
    };
    let b = &mut bench;
    let mut s = Stimulus::new(b.golden_cfg(), seed);
    s.max_k = b.golden_cfg().max_targets.min(16);
    let tlb = b.golden_cfg().hub.tlb_entries;
    let mut flits = 0u64;
    let result = (|| -> Result<(), TbError> {
        for op in ops {
            let mut frames: Vec<(usize, Vec<u128>)> = Vec::new();
            let mut legal = |x: u64, (src, pkt): (usize, Packet)| {
                frames.push((src, claim(x, pkt).encode()));
            };
            match *op {
                Op::Drain => {
                    b.run(drain_bound(flits, p))?;
                    flits = 0;
                }
                Op::DynSt(x) => {
                    s.reseed(x);
                    // One in 8 may name the source's own experts (self-delivery): its replica
                    // returns to the source's hub, and a Combine of the token reduces the
                    // requester's own port too.
                    s.self_delivery = x % 8 == 3;
                    // One in 16 crowds one destination port (several target flits per replica),
                    // one in 16 crowds one port among others (pruned lists of several flits).
                    legal(
                        x,
                        match x % 16 {
                            0 => s.dyn_st_wide(),
                            8 => s.dyn_st_mixed(),
                            _ => s.dyn_st(),
                        },
                    );
                    s.self_delivery = false;
                }
                Op::Redispatch(x) => {
                    s.reseed(x);
                    legal(x, s.redispatch());
                }
                Op::Combine(x) => {
                    s.reseed(x);
                    legal(x, s.dyn_ld_reduce(false));
                }
                Op::CombineUnmapped(x) => {
                    s.reseed(x);
                    legal(x, s.dyn_ld_reduce(true));
                }
                Op::OutOfRange(x) => {
                    s.reseed(x);
                    legal(x, s.dyn_out_of_range());
                }
                Op::Write(x) | Op::Read(x) => {
                    s.reseed(x);
                    legal(x, s.unicast(matches!(op, Op::Write(_))));
                }
                Op::McSt(x) | Op::McLdReduce(x) => {
                    s.reseed(x);
                    if let Some(sp) = s.multicast(matches!(op, Op::McSt(_))) {
                        legal(x, sp);
                    }
                }
                Op::Malformed(x) => {
                    s.reseed(x);
                    frames.push(s.malformed());
                }
                Op::TlbPressure(x, n) => {
                    s.reseed(x);
                    let n = match n {
                        0 => 16,
                        1 => 64,
                        _ => tlb + 16,
                    };
                    for (src, pkt) in s.tlb_pressure(n) {
                        frames.push((src, pkt.encode()));
                    }
                }
            }
            for (src, f) in frames {
                flits += f.len() as u64;
                push_frame(b, src, f, &mut checked);
            }
        }
        b.run(drain_bound(flits, p))?;
        Ok(())
    })();
    b.close();
    let st = b.stats();
    checked.packets = st.packets_checked;
    checked.mem_accesses = st.mem_checked;
    checked.cycles = st.cycles;
    (checked, result)
}

/// Shrinking budget: `PROPTEST_MAX_SHRINK_ITERS` runs (default 1000), at most 90 seconds.
fn shrink_budget() -> (u32, Duration) {
    let iters = std::env::var("PROPTEST_MAX_SHRINK_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    (iters, Duration::from_secs(90))
}

/// Draws the input of `seed` from `strategy`, runs it and shrinks it on failure.
fn property<S>(
    model: &str,
    seed: u64,
    strategy: S,
    vcd: Option<PathBuf>,
    checked: &mut Checked,
) -> Result<Outcome, CaseFail>
where
    S: Strategy<Value = (Pressure, Vec<Op>)>,
{
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&0x6479_7368_6172_7021u64.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    let tree = strategy
        .new_tree(&mut runner)
        .map_err(|e| CaseFail::error(format!("cannot draw an input: {e}")))?;
    let (p, ops) = tree.current();
    let (c, first) = run_ops(model, seed, &p, &ops, vcd);
    *checked = c;
    let Err(first) = first else {
        return Ok(Outcome::Passed);
    };
    // Shrink. Each operation carries its own seed, so any subsequence is a valid input:
    // delta debugging (drop chunks of halving size while the input still fails), then
    // the backpressure setting to none.
    let mut fail = CaseFail::from(first);
    let (max_iters, max_time) = shrink_budget();
    let start = Instant::now();
    let mut runs = 0u32;
    let mut last_error = fail.message.clone();
    let mut fails = |p: &Pressure, ops: &[Op]| -> bool {
        if runs >= max_iters || start.elapsed() >= max_time {
            return false;
        }
        runs += 1;
        match run_ops(model, seed, p, ops, None).1 {
            Err(e) => {
                last_error = e.to_string();
                true
            }
            Ok(()) => false,
        }
    };
    let mut p = p;
    let mut ops = ops;
    let mut n = 2usize;
    while ops.len() >= 2 {
        let chunk = ops.len().div_ceil(n);
        let smaller = (0..n).find_map(|i| {
            let lo = (i * chunk).min(ops.len());
            let hi = ((i + 1) * chunk).min(ops.len());
            let candidate: Vec<Op> = ops[..lo].iter().chain(&ops[hi..]).copied().collect();
            (lo < hi && fails(&p, &candidate)).then_some(candidate)
        });
        let reduced = smaller.is_some();
        if let Some(c) = smaller {
            ops = c;
            n = (n - 1).max(2);
        }
        if !reduced {
            if n >= ops.len() {
                break;
            }
            n = (2 * n).min(ops.len());
        }
    }
    let calm = Pressure {
        inject_stall: 0.0,
        sm_stall: 0.0,
        mem_stall: 0.0,
        latency: (1, 1),
        ..p.clone()
    };
    if fails(&calm, &ops) {
        p = calm;
    }
    let mut best = format!("{} ops, {p:?}: {ops:?} ({last_error})", ops.len());
    if best.len() > 4000 {
        best.truncate(4000);
        best.push_str(" …");
    }
    fail.shrunk = Some(format!("after {runs} shrink runs: {best}"));
    Err(fail)
}

fn ops_len(size: Size) -> std::ops::RangeInclusive<usize> {
    match size {
        Size::Quick => 40..=120,
        Size::Full => 400..=1500,
    }
}

/// A `stream/MODEL` or `sequence/MODEL` case.
pub(crate) fn ops_case(
    model: &str,
    case: &Case,
    vcd: Option<PathBuf>,
    checked: &mut Checked,
) -> Result<Outcome, CaseFail> {
    let op = if matches!(case.kind, Kind::Sequence { .. }) {
        sequence_op(dynamic_ops(model)).boxed()
    } else {
        stream_op(dynamic_ops(model)).boxed()
    };
    let strategy = (pressure(), prop::collection::vec(op, ops_len(case.size)));
    property(model, case.seed, strategy, vcd, checked)
}

//! Trace replay through the RTL (`dysharp replay --engine rtl`): the same
//! Dispatch and Combine packets as the golden replay, driven at line rate into the
//! Verilator model, every packet and memory access checked by the bench's
//! scoreboard, byte counts read from the RTL's own link counters.

use crate::tb::{Bench, BenchConfig, RtlCounters, TbError};
use dysharp_registry::{Registry, Use};
use dysharp_sim::packet::{ErrorCode, Opcode, Packet, Stage};
use dysharp_sim::replay::{
    combine_packet, dispatch_packet, replay_config, token_row, ReplayError, ReplayOptions,
    ReplayShape,
};
use dysharp_sim::traffic::{account, PhaseTraffic, RowShape, Token};
use serde::Serialize;

/// One phase as the RTL ran it.
#[derive(Clone, Debug, Serialize)]
pub struct RtlPhase {
    /// Byte counts: DySHARP columns from the RTL's counters, baseline columns from
    /// the accounting of spec §8 (the RTL does not run the baseline).
    #[serde(flatten)]
    pub traffic: PhaseTraffic,
    /// Cycles from the first injected flit until everything drained.
    pub cycles: u64,
    /// `cycles / lower_bound_cycles`.
    pub cycles_over_lower_bound: f64,
    /// Packets injected by the SMs.
    pub packets: u64,
}

/// Zero-load latency of one operation, in cycles.
#[derive(Clone, Debug, Serialize)]
pub struct OpLatency {
    /// Operation name.
    pub op: String,
    /// Cycles from the first flit accepted from the SM to the last effect (the
    /// last memory write of a store, the last flit of a load's response).
    pub cycles: u64,
}

/// Result of an RTL replay.
#[derive(Clone, Debug, Serialize)]
pub struct RtlReplayReport {
    /// "rtl".
    pub engine: String,
    /// Verilator model used.
    pub model: String,
    /// The workload replayed.
    #[serde(flatten)]
    pub shape: ReplayShape,
    /// Dispatch phase.
    pub dispatch: RtlPhase,
    /// Combine phase.
    pub combine: RtlPhase,
    /// Total cycles (both phases).
    pub cycles: u64,
    /// Scoreboard mismatches: always 0 in a returned report, because the first
    /// mismatch ends the replay with an error (kept for the JSON's `mismatches` key).
    pub mismatches: u64,
    /// Always true: the replay stops at its first mismatch (an error naming it), so a
    /// report exists only for a run without one; `mismatches` is not a count of a whole run.
    pub stops_at_first_mismatch: bool,
    /// Packets checked by the scoreboard.
    pub packets_checked: u64,
    /// Memory accesses checked.
    pub mem_checked: u64,
    /// AL-TLB hit rate over all hubs (RTL counters).
    pub tlb_hit_rate: f64,
    /// Error counters summed over ports (RTL), index = code - 1.
    pub errors: Vec<u64>,
    /// Zero-load latency per operation.
    pub zero_load_latency: Vec<OpLatency>,
    /// Simulation speed.
    pub cycles_per_second: f64,
    /// Whether the scoreboard ran on a thread of its own ([`crate::tb::BenchConfig::check_thread`]).
    pub check_thread: bool,
    /// The injection order (`--inject`).
    pub inject: String,
    /// The fused schedule (`--fused`): its steps and bound. In a fused replay the two phases
    /// share the links, so `dispatch` and `combine` hold the accounting of spec §8 with
    /// `cycles` 0, and the time is here.
    pub fused: Option<FusedReport>,
}

/// One step of a fused replay: Dispatch of tile `i` beside Combine of tile `i − 1`.
#[derive(Clone, Debug, Serialize)]
pub struct FusedStep {
    /// Tile whose Dispatch runs in this step (none in the last step: the drain).
    pub dispatch_tile: Option<usize>,
    /// Tile whose Combine runs in this step (none in the first step: the fill).
    pub combine_tile: Option<usize>,
    /// Cycles from the step's first injected flit until everything drained.
    pub cycles: u64,
    /// The step's lower bound: the busiest link's wire flits of both phases' packets.
    pub bound_cycles: u64,
    /// That link: `port P uplink` or `port P downlink`.
    pub bound_link: String,
    /// `cycles / bound_cycles`.
    pub cycles_over_bound: f64,
}

/// A fused replay: steps, their bound and the total.
#[derive(Clone, Debug, Serialize)]
pub struct FusedReport {
    /// Tokens per GPU per tile.
    pub tile: usize,
    /// The steps, fill first and drain last.
    pub steps: Vec<FusedStep>,
    /// Cycles of all steps.
    pub cycles: u64,
    /// Σ over steps of the step's bound: the fused lower bound, fill and drain included
    /// (the study's `fused_lb`).
    pub fused_bound_cycles: u64,
    /// `cycles / fused_bound_cycles`.
    pub cycles_over_fused_bound: f64,
    /// Dispatch bound + Combine bound of the whole trace (the phases one after the other).
    pub sequential_bound_cycles: u64,
}

/// What one replay phase returns: (cycles, packets, counters before, counters after).
type PhaseRun = (u64, u64, RtlCounters, RtlCounters);

/// Builds the packet of (token, remote targets, chunk, chunk flits).
type MakePacket<'a> = dyn FnMut(&Token, &[u16], usize, usize) -> Packet + 'a;

/// The Verilator model for `ep` ports (and its experts per port): the
/// registry's `regress` model with that many ports.
pub fn model_for(ep: usize) -> Option<(&'static str, usize)> {
    let m = Registry::builtin().for_ports(ep)?;
    Some((m.name.as_str(), m.experts_per_port()?))
}

/// Why an RTL replay failed.
#[derive(Debug, thiserror::Error)]
pub enum RtlReplayError {
    /// The shape does not fit the model (or the golden replay's configuration).
    #[error(transparent)]
    Shape(#[from] ReplayError),
    /// The bench failed: a difference from the golden model, an assertion, or a
    /// phase that did not drain ([`TbError::Timeout`]).
    #[error(transparent)]
    Bench(#[from] TbError),
}

fn err(e: impl std::fmt::Display) -> RtlReplayError {
    RtlReplayError::Shape(ReplayError::Shape(e.to_string()))
}

fn phase_from(
    before: &RtlCounters,
    after: &RtlCounters,
    expected: &PhaseTraffic,
    cycles: u64,
    packets: u64,
) -> RtlPhase {
    let d = |a: &[u64], b: &[u64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| 16 * (x - y))
            .collect::<Vec<_>>()
    };
    let mut t = expected.clone();
    t.uplink_payload_bytes = d(&after.up_payload_flits, &before.up_payload_flits);
    t.downlink_payload_bytes = d(&after.dn_payload_flits, &before.dn_payload_flits);
    t.uplink_wire_bytes = d(&after.up_flits, &before.up_flits);
    t.downlink_wire_bytes = d(&after.dn_flits, &before.dn_flits);
    RtlPhase {
        cycles_over_lower_bound: if t.lower_bound_cycles == 0 {
            0.0
        } else {
            cycles as f64 / t.lower_bound_cycles as f64
        },
        traffic: t,
        cycles,
        packets,
    }
}

/// Maps a trace expert to the model's numbering (the model may hold more experts per port).
fn remap(e: u16, epp_trace: usize, epp_model: usize) -> u16 {
    let e = e as usize;
    ((e / epp_trace) * epp_model + e % epp_trace) as u16
}

/// Measures the zero-load latency of each operation on a fresh model.
pub fn zero_load_latency(model: &str, seed: u64) -> Result<Vec<OpLatency>, TbError> {
    let mut out = Vec::new();
    let ops: [(&str, Opcode); 6] = [
        ("DYN_ST", Opcode::DynSt),
        ("DYN_LD_REDUCE", Opcode::DynLdReduce),
        ("WRITE", Opcode::Write),
        ("READ", Opcode::Read),
        ("MC_ST", Opcode::McSt),
        ("MC_LD_REDUCE", Opcode::McLdReduce),
    ];
    let mut cfg = BenchConfig::new(model, seed);
    cfg.groups = vec![0b110];
    let mut b = Bench::new(cfg)?;
    let hub = b.golden_cfg().hub.clone();
    let epp = b.golden_cfg().experts_per_port as u16;
    for (name, op) in ops {
        let mut p = Packet::new(op);
        p.len = 16;
        p.maddr = hub.mbase;
        p.route = if matches!(op, Opcode::McSt | Opcode::McLdReduce) {
            0
        } else {
            1
        };
        if op.is_dynamic() {
            p.targets = vec![epp + 1, 2 * epp + 2];
        }
        if op == Opcode::DynLdReduce {
            p.stage = Stage::Combine;
        }
        if op.is_store() {
            p.be = Some(u128::MAX);
            p.payload = vec![0x3C; 256];
        }
        b.push(0, &p);
        let start = b.cycles();
        b.run(100_000)?;
        let (first, last) = b.last_packet_span();
        out.push(OpLatency {
            op: name.into(),
            cycles: last.saturating_sub(first.max(start)),
        });
    }
    Ok(out)
}

/// Replays `tokens` through the RTL model for `opts.ep` ports.
/// Where a running RTL replay is, reported every 10,000 cycles.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Cycles of the phase being run.
    pub phase_cycles: u64,
    /// Cycles of both phases so far.
    pub cycles: u64,
    /// The lower bound of both phases together: the run takes about this many cycles (the
    /// replays of docs/perf.md end within 1.04 of it), so cycles / lower_bound is the progress.
    pub lower_bound: u64,
}

/// Rows a GPU has in flight by default (`--inject interleave:32`).
pub const DEFAULT_ROWS: usize = 32;

/// The order in which each SM injects its packets of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectOrder {
    /// Token by token: all chunks of a token, then the next token (a row at a time).
    Token,
    /// Chunk by chunk: chunk 0 of every token of the SM, then chunk 1, ... (every row of the
    /// phase interleaved, so consecutive packets of an SM go to different target sets).
    Chunk,
    /// `interleave:W` (the default, W = [`DEFAULT_ROWS`]): each GPU sends its tokens `W` at a
    /// time, as `W` SMs (or warps) each sending a different token's row would: chunk 0 of
    /// tokens `1..=W`, chunk 1 of the same tokens, ..., then the next `W` tokens.
    Interleave(usize),
}

impl Default for InjectOrder {
    fn default() -> Self {
        InjectOrder::Interleave(DEFAULT_ROWS)
    }
}

impl InjectOrder {
    /// The accepted forms, for messages.
    pub const FORMS: &'static str =
        "interleave:W (W rows in flight per GPU; the default is interleave:32), token, chunk";

    /// The order as `--inject` spells it.
    pub fn name(self) -> String {
        match self {
            InjectOrder::Token => "token".into(),
            InjectOrder::Chunk => "chunk".into(),
            InjectOrder::Interleave(w) => format!("interleave:{w}"),
        }
    }

    /// The packets of one source in injection order, as (token position in `tokens`, chunk):
    /// `tokens` are the positions of the source's sending tokens, in token order.
    pub fn sequence(self, tokens: &[usize], chunks: usize) -> Vec<(usize, usize)> {
        let w = match self {
            InjectOrder::Token => 1,
            InjectOrder::Chunk => tokens.len().max(1),
            InjectOrder::Interleave(w) => w.max(1),
        };
        let mut out = Vec::with_capacity(tokens.len() * chunks);
        for group in tokens.chunks(w) {
            for c in 0..chunks {
                out.extend(group.iter().map(|&t| (t, c)));
            }
        }
        out
    }
}

impl std::fmt::Display for InjectOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl std::str::FromStr for InjectOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not an injection order; orders: {}",
                InjectOrder::FORMS
            )
        };
        match s {
            "token" => Ok(Self::Token),
            "chunk" => Ok(Self::Chunk),
            _ => {
                let w = s.strip_prefix("interleave:").ok_or_else(bad)?;
                match w.parse::<usize>() {
                    Ok(w) if w >= 1 => Ok(Self::Interleave(w)),
                    _ => Err(bad()),
                }
            }
        }
    }
}

/// What both replays start from: the model, the bench, and the tokens in the model's
/// expert numbering.
struct Setup {
    model: &'static str,
    epp_model: usize,
    latency: Vec<OpLatency>,
    b: Bench,
    cfg: dysharp_sim::config::Config,
    mtok: Vec<Token>,
    row: RowShape,
}

fn setup(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
    seed: u64,
    check_thread: bool,
) -> Result<Setup, RtlReplayError> {
    let (model, epp_model) = model_for(opts.ep).ok_or_else(|| {
        err(format!(
            "no RTL model for EP {}: the registry's switch models have {} ports",
            opts.ep,
            Registry::builtin()
                .with(Use::Regress)
                .filter_map(|m| m.ports().map(|p| p.to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let epp_trace = opts.experts / opts.ep.max(1);
    if epp_trace > epp_model || !opts.experts.is_multiple_of(opts.ep) {
        return Err(err(format!(
            "{} experts over {} ranks need {epp_trace} experts per port; model {model} has {epp_model}",
            opts.experts, opts.ep
        )));
    }
    if topk > 32 {
        return Err(err(format!(
            "top-{topk} exceeds the model's MaxTargets (32)"
        )));
    }
    let gcfg = replay_config(opts, tokens.len(), topk)?;
    let mut bcfg = BenchConfig::new(model, seed);
    bcfg.hub = gcfg.hub.clone();
    bcfg.check_thread = check_thread;
    let latency = zero_load_latency(model, seed)?;
    let b = Bench::new(bcfg)?;
    // The golden configuration of the bench, for addresses.
    let cfg = b.golden_cfg().clone();
    let mtok: Vec<Token> = tokens
        .iter()
        .map(|t| Token {
            src: t.src,
            aidx: t.aidx,
            experts: t
                .experts
                .iter()
                .map(|e| remap(*e, epp_trace, epp_model))
                .collect(),
        })
        .collect();
    let row = RowShape {
        row_bytes: opts.hidden * opts.dtype.bytes(),
    };
    Ok(Setup {
        model,
        epp_model,
        latency,
        b,
        cfg,
        mtok,
        row,
    })
}

/// Replays `tokens` (Dispatch, then Combine) through the RTL model for `opts.ep`
/// ports, every packet and memory access checked against the golden model; each
/// SM injects its packets in `order`. With `check_thread` the scoreboard runs on a thread of
/// its own (the same checks; two cores).
pub fn replay_rtl(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
    order: InjectOrder,
    seed: u64,
    check_thread: bool,
    mut progress: impl FnMut(&str, Progress),
) -> Result<RtlReplayReport, RtlReplayError> {
    let Setup {
        model,
        epp_model,
        latency,
        mut b,
        cfg,
        mtok,
        row,
    } = setup(tokens, topk, opts, seed, check_thread)?;
    let chunks = row.chunks();
    let expected = account(&mtok, opts.ep, epp_model, row);
    let start = std::time::Instant::now();
    let mut buf = Vec::new();
    let bound = expected.dispatch.lower_bound_cycles + expected.combine.lower_bound_cycles;
    let mut done_before = 0u64;
    let mut run_phase =
        |b: &mut Bench, name: &str, make: &mut MakePacket| -> Result<PhaseRun, RtlReplayError> {
            let before = b.counters();
            let mut packets = 0u64;
            let sent: Vec<(&Token, Vec<u16>)> = mtok
                .iter()
                .map(|t| (t, t.remote(epp_model)))
                .filter(|(_, r)| !r.is_empty())
                .collect();
            let ports = sent.iter().map(|(t, _)| t.src + 1).max().unwrap_or(0);
            let mut by_src: Vec<Vec<usize>> = vec![Vec::new(); ports];
            for (i, (t, _)) in sent.iter().enumerate() {
                by_src[t.src].push(i);
            }
            for src in &by_src {
                for (i, c) in order.sequence(src, chunks.len()) {
                    let (t, remote) = &sent[i];
                    b.push(t.src, &make(t, remote, c, chunks[c]));
                    packets += 1;
                }
            }
            let c0 = b.cycles();
            let mut last_report = c0;
            while b.queued() > 0 || !b.is_drained()? {
                b.step()?;
                if b.cycles() - last_report >= 10_000 {
                    last_report = b.cycles();
                    progress(
                        name,
                        Progress {
                            phase_cycles: b.cycles() - c0,
                            cycles: done_before + b.cycles() - c0,
                            lower_bound: bound,
                        },
                    );
                }
                let limit = 50
                    * (expected.dispatch.lower_bound_cycles + expected.combine.lower_bound_cycles)
                    + 100_000;
                if b.cycles() - c0 > limit {
                    return Err(TbError::Timeout {
                        cycle: b.cycles(),
                        limit,
                        pending: format!("{name} phase: {} frames unsent", b.queued()),
                    }
                    .into());
                }
            }
            b.check_counters()?;
            done_before += b.cycles() - c0;
            Ok((b.cycles() - c0, packets, before, b.counters()))
        };
    let (dc, dp, d0, d1) = run_phase(&mut b, "dispatch", &mut |t, remote, c, len| {
        token_row(opts.dtype, opts.seed, t.aidx, opts.hidden, &mut buf);
        dispatch_packet(&cfg, t, remote, c, len, opts.dtype, &buf)
    })?;
    let (cc, cp, c0, c1) = run_phase(&mut b, "combine", &mut |t, remote, c, len| {
        combine_packet(&cfg, t, remote, c, chunks.len(), len, opts.dtype)
    })?;
    let secs = start.elapsed().as_secs_f64();
    b.close();
    let stats = b.stats();
    let (tlb_hit_rate, errors) = hit_rate_and_errors(&c1);
    Ok(RtlReplayReport {
        engine: "rtl".into(),
        model: model.into(),
        shape: ReplayShape::new(tokens.len(), topk, opts),
        dispatch: phase_from(&d0, &d1, &expected.dispatch, dc, dp),
        combine: phase_from(&c0, &c1, &expected.combine, cc, cp),
        cycles: dc + cc,
        mismatches: 0,
        stops_at_first_mismatch: true,
        packets_checked: stats.packets_checked,
        mem_checked: stats.mem_checked,
        tlb_hit_rate,
        errors,
        zero_load_latency: latency,
        cycles_per_second: (dc + cc) as f64 / secs.max(1e-9),
        check_thread,
        inject: order.name(),
        fused: None,
    })
}

/// The busiest link of two phases' traffic on the same links: (its wire flits, port, uplink?).
fn step_bound(parts: &[&PhaseTraffic]) -> (u64, usize, bool) {
    let per_port = |f: &dyn Fn(&PhaseTraffic) -> &Vec<u64>| -> Vec<u64> {
        let n = parts.iter().map(|p| f(p).len()).max().unwrap_or(0);
        (0..n)
            .map(|i| {
                parts
                    .iter()
                    .map(|p| f(p).get(i).copied().unwrap_or(0))
                    .sum::<u64>()
            })
            .collect()
    };
    let up = per_port(&|p| &p.uplink_wire_bytes);
    let down = per_port(&|p| &p.downlink_wire_bytes);
    let mut best = (0u64, 0usize, true);
    for (i, &b) in up.iter().enumerate() {
        if b > best.0 {
            best = (b, i, true);
        }
    }
    for (i, &b) in down.iter().enumerate() {
        if b > best.0 {
            best = (b, i, false);
        }
    }
    (best.0 / 16, best.1, best.2)
}

/// Replays `tokens` through the RTL model in the fused schedule: the tokens are cut into tiles
/// of `tile` tokens per GPU (a GPU's `tile` first tokens, then the next), and step `i` sends
/// Dispatch of tile `i` and Combine of tile `i − 1` together, each GPU merging the two phases'
/// packets in proportion (each phase's packets in `order`); a step ends when everything has
/// drained, so a Combine never overtakes its Dispatch. Every packet and memory access is
/// checked against the golden model, as in [`replay_rtl`].
#[allow(clippy::too_many_arguments)]
pub fn replay_rtl_fused(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
    order: InjectOrder,
    tile: usize,
    seed: u64,
    check_thread: bool,
    mut progress: impl FnMut(&str, Progress),
) -> Result<RtlReplayReport, RtlReplayError> {
    if tile == 0 {
        return Err(err("--tile must be at least 1 token per GPU"));
    }
    let Setup {
        model,
        epp_model,
        latency,
        mut b,
        cfg,
        mtok,
        row,
    } = setup(tokens, topk, opts, seed, check_thread)?;
    let chunks = row.chunks();
    let expected = account(&mtok, opts.ep, epp_model, row);
    // Tile of each token: its position among its GPU's tokens, over `tile`.
    let mut seen = vec![
        0usize;
        opts.ep
            .max(mtok.iter().map(|t| t.src + 1).max().unwrap_or(0))
    ];
    let tile_of: Vec<usize> = mtok
        .iter()
        .map(|t| {
            let k = seen[t.src];
            seen[t.src] += 1;
            k / tile
        })
        .collect();
    let tiles = tile_of.iter().copied().max().map_or(0, |m| m + 1);
    let remote: Vec<Vec<u16>> = mtok.iter().map(|t| t.remote(epp_model)).collect();
    let traffic: Vec<_> = (0..tiles)
        .map(|i| {
            let tt: Vec<Token> = mtok
                .iter()
                .zip(&tile_of)
                .filter(|(_, &k)| k == i)
                .map(|(t, _)| t.clone())
                .collect();
            account(&tt, opts.ep, epp_model, row)
        })
        .collect();
    let links: Vec<(u64, usize, bool)> = (0..=tiles)
        .map(|s| {
            let mut parts = Vec::new();
            if s < tiles {
                parts.push(&traffic[s].dispatch);
            }
            if s > 0 {
                parts.push(&traffic[s - 1].combine);
            }
            step_bound(&parts)
        })
        .collect();
    let bounds: Vec<u64> = links.iter().map(|l| l.0).collect();
    let fused_bound: u64 = bounds.iter().sum();
    let start = std::time::Instant::now();
    let mut buf = Vec::new();
    let mut steps = Vec::new();
    let mut total = 0u64;
    let mut packets_d = 0u64;
    let mut packets_c = 0u64;
    let ports = seen.len();
    for (s, &bound) in bounds.iter().enumerate() {
        let d_tile = (s < tiles).then_some(s);
        let c_tile = s.checked_sub(1);
        for src in 0..ports {
            let pick = |want: Option<usize>| -> Vec<usize> {
                match want {
                    None => Vec::new(),
                    Some(w) => (0..mtok.len())
                        .filter(|&i| mtok[i].src == src && tile_of[i] == w && !remote[i].is_empty())
                        .collect(),
                }
            };
            let d = order.sequence(&pick(d_tile), chunks.len());
            let c = order.sequence(&pick(c_tile), chunks.len());
            // Merge the two by progress: the next packet comes from the phase that is
            // further behind in its own list, so the Combine requests spread over the step
            // as the Dispatch packets do (alternating one for one would send every Combine
            // request in the first tenth of the step).
            let (mut kd, mut kc) = (0usize, 0usize);
            while kd < d.len() || kc < c.len() {
                let take_d = kc >= c.len() || (kd < d.len() && kd * c.len() <= kc * d.len());
                let (dk, ck) = if take_d {
                    (Some(kd), None)
                } else {
                    (None, Some(kc))
                };
                if take_d {
                    kd += 1;
                } else {
                    kc += 1;
                }
                if let Some(&(i, ch)) = dk.and_then(|k| d.get(k)) {
                    let t = &mtok[i];
                    token_row(opts.dtype, opts.seed, t.aidx, opts.hidden, &mut buf);
                    b.push(
                        t.src,
                        &dispatch_packet(&cfg, t, &remote[i], ch, chunks[ch], opts.dtype, &buf),
                    );
                    packets_d += 1;
                }
                if let Some(&(i, ch)) = ck.and_then(|k| c.get(k)) {
                    let t = &mtok[i];
                    b.push(
                        t.src,
                        &combine_packet(
                            &cfg,
                            t,
                            &remote[i],
                            ch,
                            chunks.len(),
                            chunks[ch],
                            opts.dtype,
                        ),
                    );
                    packets_c += 1;
                }
            }
        }
        let c0 = b.cycles();
        let mut last_report = c0;
        let limit = 50 * bound + 100_000;
        while b.queued() > 0 || !b.is_drained()? {
            b.step()?;
            if b.cycles() - last_report >= 10_000 {
                last_report = b.cycles();
                progress(
                    "fused",
                    Progress {
                        phase_cycles: b.cycles() - c0,
                        cycles: total + b.cycles() - c0,
                        lower_bound: fused_bound,
                    },
                );
            }
            if b.cycles() - c0 > limit {
                return Err(TbError::Timeout {
                    cycle: b.cycles(),
                    limit,
                    pending: format!("fused step {s}: {} frames unsent", b.queued()),
                }
                .into());
            }
        }
        b.check_counters()?;
        let cycles = b.cycles() - c0;
        total += cycles;
        steps.push(FusedStep {
            dispatch_tile: d_tile,
            combine_tile: c_tile,
            cycles,
            bound_cycles: bound,
            bound_link: format!(
                "port {} {}",
                links[s].1,
                if links[s].2 { "uplink" } else { "downlink" }
            ),
            cycles_over_bound: if bound == 0 {
                0.0
            } else {
                cycles as f64 / bound as f64
            },
        });
    }
    let secs = start.elapsed().as_secs_f64();
    b.close();
    let stats = b.stats();
    let c1 = b.counters();
    let (tlb_hit_rate, errors) = hit_rate_and_errors(&c1);
    let phase = |t: &PhaseTraffic, packets: u64| RtlPhase {
        traffic: t.clone(),
        cycles: 0,
        cycles_over_lower_bound: 0.0,
        packets,
    };
    Ok(RtlReplayReport {
        engine: "rtl".into(),
        model: model.into(),
        shape: ReplayShape::new(tokens.len(), topk, opts),
        dispatch: phase(&expected.dispatch, packets_d),
        combine: phase(&expected.combine, packets_c),
        cycles: total,
        mismatches: 0,
        stops_at_first_mismatch: true,
        packets_checked: stats.packets_checked,
        mem_checked: stats.mem_checked,
        tlb_hit_rate,
        errors,
        zero_load_latency: latency,
        cycles_per_second: total as f64 / secs.max(1e-9),
        check_thread,
        inject: order.name(),
        fused: Some(FusedReport {
            tile,
            steps,
            cycles: total,
            fused_bound_cycles: fused_bound,
            cycles_over_fused_bound: if fused_bound == 0 {
                0.0
            } else {
                total as f64 / fused_bound as f64
            },
            sequential_bound_cycles: expected.dispatch.lower_bound_cycles
                + expected.combine.lower_bound_cycles,
        }),
    })
}

/// The AL-TLB hit rate over every hub (1 without a lookup) and the error counts summed over
/// the ports, from the RTL's counters at the end of a run.
fn hit_rate_and_errors(c: &RtlCounters) -> (f64, Vec<u64>) {
    let hits: u64 = c.tlb_hits.iter().sum();
    let misses: u64 = c.tlb_misses.iter().sum();
    let rate = if hits + misses == 0 {
        1.0
    } else {
        hits as f64 / (hits + misses) as f64
    };
    let errors = c
        .errors
        .iter()
        .fold(vec![0u64; ErrorCode::COUNT], |mut acc, p| {
            for (a, n) in acc.iter_mut().zip(p) {
                *a += n;
            }
            acc
        });
    (rate, errors)
}

#[cfg(test)]
mod tests {
    use super::InjectOrder;

    #[test]
    fn injection_orders() {
        let toks = [0, 1, 2, 3, 4];
        let seq = |o: InjectOrder| o.sequence(&toks, 2);
        assert_eq!(
            seq(InjectOrder::Token),
            vec![
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (2, 0),
                (2, 1),
                (3, 0),
                (3, 1),
                (4, 0),
                (4, 1)
            ]
        );
        assert_eq!(
            seq(InjectOrder::Chunk),
            vec![
                (0, 0),
                (1, 0),
                (2, 0),
                (3, 0),
                (4, 0),
                (0, 1),
                (1, 1),
                (2, 1),
                (3, 1),
                (4, 1)
            ]
        );
        assert_eq!(
            seq(InjectOrder::Interleave(2)),
            vec![
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (2, 0),
                (3, 0),
                (2, 1),
                (3, 1),
                (4, 0),
                (4, 1)
            ]
        );
        assert_eq!(InjectOrder::default(), InjectOrder::Interleave(32));
        for s in ["token", "chunk", "interleave:7"] {
            assert_eq!(s.parse::<InjectOrder>().unwrap().to_string(), s);
        }
        for bad in ["interleave:0", "interleave:x", "interleave", "sideways"] {
            let e = bad.parse::<InjectOrder>().unwrap_err();
            assert!(e.contains(bad) && e.contains("interleave:W"), "{e}");
        }
    }
}

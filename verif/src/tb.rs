//! The Rust testbench around `dysharp_top`: GPU port models (packet sources with
//! an injection rate, response sinks and GPU memories with random backpressure
//! and latency) and a scoreboard that checks every packet leaving the switch and
//! every memory access against the golden model.
//!
//! The golden model is driven in the RTL's own order where order is the RTL's
//! choice: the switch model sees frames as the RTL accepts them, and each golden
//! hub sees requests in the order the RTL hub received them (observed on the
//! `hub_req_mon_*` taps of the verification wrapper
//! `verif/harness/dysharp_top_tb.sv`), so allocation order and TLB state are
//! comparable access by access.

use crate::scoreboard::{beat_spans, BeatLines, Checker, Event, Scoreboard};
use crate::sim::{Port, Sim, SimError};
use dysharp_sim::config::{Config, HubConfig};
use dysharp_sim::fabric::Fabric;
use dysharp_sim::hub::MemAccess;
use dysharp_sim::memory::{Reserve, SparseMemory};
use dysharp_sim::packet::{ErrorCode, Flit, Packet};
use rand::distributions::Bernoulli;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc;

/// Flits reserved for the frames a port receives (a DYN_ST of 8 targets is 19 flits): the buffers
/// serve frame after frame (the scoreboard copies each) without reallocating.
const FRAME_CAP: usize = 32;

/// Bytes of a memory reserve made for a GPU memory on the feeder thread ([`ReserveFeed`]).
const RESERVE_BYTES: usize = 2 << 20;

/// Zeroed memory for the GPU memories, faulted in on a thread of its own. The stimulus writes
/// every new token to memory the GPU has not touched yet, and a page fault on the bench's thread
/// costs more than the bench's own work per cycle (`dysharp bench-sim`; docs/perf.md). A GPU
/// memory with no reserve waiting takes one if one is ready (if none is, it faults its own pages
/// in as before); the thread ends when the bench is dropped.
struct ReserveFeed(mpsc::Receiver<Reserve>);

impl ReserveFeed {
    /// Starts the feeder thread for `gpus` memories (`None` if it cannot be started: the
    /// memories fault in their own pages). It stays one reserve per memory ahead.
    fn start(gpus: usize) -> Option<ReserveFeed> {
        let (tx, rx) = mpsc::sync_channel(gpus.max(1));
        std::thread::Builder::new()
            .name("gpu-memory".into())
            .spawn(move || while tx.send(Reserve::new(RESERVE_BYTES)).is_ok() {})
            .ok()?;
        Some(ReserveFeed(rx))
    }

    /// Gives `mem` a reserve if it has none waiting and one is ready: it then never needs new
    /// memory of its own while the feeder keeps up.
    fn top_up(&self, mem: &mut SparseMemory) {
        if !mem.has_reserve() {
            if let Ok(r) = self.0.try_recv() {
                mem.add_reserve(r);
            }
        }
    }
}

/// How the GPU side behaves.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Model name (`top_p8`, `top_p4`, `top_p16`).
    pub model: String,
    /// Seed of the port models and the model's random initial state.
    pub seed: u64,
    /// Hub configuration driven on the `cfg_*` inputs.
    pub hub: HubConfig,
    /// Static group table (group id → port mask).
    pub groups: Vec<u32>,
    /// Probability that a source offers its next flit in a cycle (1.0 = line rate).
    pub inject_rate: f64,
    /// Probability that an SM accepts a response flit in a cycle.
    pub sm_ready_rate: f64,
    /// Probability that a GPU memory accepts a request in a cycle.
    pub mem_ready_rate: f64,
    /// Read latency range in cycles (inclusive).
    pub mem_latency: (u64, u64),
    /// Write a VCD waveform here.
    pub vcd: Option<PathBuf>,
    /// When set, every memory write must land in a mapped AL region (an AL
    /// table line, or a data slot its expert has allocated) or in one of these
    /// `[start, end)` ranges (the identity-addressed scratch of WRITE/MC_ST);
    /// any other write fails the run. `None`: no region check.
    pub write_regions: Option<Vec<(u64, u64)>>,
    /// Record the model's input words of every cycle from reset on
    /// ([`Bench::take_recording`], for `dysharp bench-sim`).
    pub record_inputs: bool,
    /// Check what the bench observes (the default). `false`: the events are dropped and
    /// nothing is checked ([`Scoreboard::off`]; `dysharp bench-sim` measures the bench's own
    /// cost so); `check_thread` then only moves the GPU memories' page faults. Only for
    /// measuring: [`Bench::run`] and the counter checks compare the RTL with a golden model
    /// that has seen nothing.
    pub check: bool,
    /// Run the scoreboard on a thread of its own ([`Scoreboard::threaded`]: the same checks,
    /// beside the simulation instead of between its cycles; the bench then uses two cores),
    /// and fault in the GPU memories' pages on another ([`ReserveFeed`]).
    pub check_thread: bool,
}

impl BenchConfig {
    /// Line-rate defaults for a model.
    pub fn new(model: &str, seed: u64) -> Self {
        BenchConfig {
            model: model.into(),
            seed,
            hub: HubConfig::default(),
            groups: vec![0; 16],
            inject_rate: 1.0,
            sm_ready_rate: 1.0,
            mem_ready_rate: 1.0,
            mem_latency: (1, 1),
            vcd: None,
            write_regions: None,
            record_inputs: false,
            check: true,
            check_thread: false,
        }
    }
}

/// A scoreboard or protocol failure.
#[derive(Debug, thiserror::Error)]
pub enum TbError {
    /// The simulator reported an assertion failure, or a port is missing.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// Something the RTL did differs from the golden model.
    #[error("cycle {cycle}: {what}")]
    Mismatch {
        /// Cycle of the observation.
        cycle: u64,
        /// What differed (both values).
        what: String,
    },
    /// The run did not drain in time.
    #[error("cycle {cycle}: not drained after {limit} cycles: {pending}")]
    Timeout {
        /// Cycle reached.
        cycle: u64,
        /// The bound.
        limit: u64,
        /// What was still outstanding.
        pending: String,
    },
    /// The bench configuration cannot drive this model.
    #[error("bench configuration: {0}")]
    Config(String),
}

struct Ports {
    rst: Port,
    group: Port,
    mbase: Port,
    al_base: Port,
    data_base: Port,
    log2_bsize: Port,
    log2_al: Port,
    log2_slots: Port,
    req_valid: Port,
    req_ready: Port,
    req_data: Port,
    req_last: Port,
    rsp_valid: Port,
    rsp_ready: Port,
    rsp_data: Port,
    rsp_last: Port,
    mem_valid: Port,
    mem_ready: Port,
    mem_we: Port,
    mem_addr: Port,
    mem_lines: Port,
    mem_wdata: Port,
    mem_wstrb: Port,
    mrsp_valid: Port,
    mrsp_ready: Port,
    mrsp_rdata: Port,
    mon_valid: Port,
    mon_data: Port,
    mon_last: Port,
    err: Port,
    up_flits: Port,
    dn_flits: Port,
    up_payload: Port,
    dn_payload: Port,
    tlb_hits: Port,
    tlb_misses: Port,
}

impl Ports {
    fn new(s: &Sim) -> Result<Self, SimError> {
        Ok(Ports {
            rst: s.input("rst_ni")?,
            group: s.input("cfg_group_mask_i")?,
            mbase: s.input("cfg_mbase_i")?,
            al_base: s.input("cfg_al_base_i")?,
            data_base: s.input("cfg_data_base_i")?,
            log2_bsize: s.input("cfg_log2_bsize_i")?,
            log2_al: s.input("cfg_log2_al_entries_i")?,
            log2_slots: s.input("cfg_log2_slots_i")?,
            req_valid: s.input("sm_req_valid_i")?,
            req_ready: s.output("sm_req_ready_o")?,
            req_data: s.input("sm_req_data_i")?,
            req_last: s.input("sm_req_last_i")?,
            rsp_valid: s.output("sm_rsp_valid_o")?,
            rsp_ready: s.input("sm_rsp_ready_i")?,
            rsp_data: s.output("sm_rsp_data_o")?,
            rsp_last: s.output("sm_rsp_last_o")?,
            mem_valid: s.output("mem_req_valid_o")?,
            mem_ready: s.input("mem_req_ready_i")?,
            mem_we: s.output("mem_req_we_o")?,
            mem_addr: s.output("mem_req_addr_o")?,
            mem_lines: s.output("mem_req_lines_o")?,
            mem_wdata: s.output("mem_req_wdata_o")?,
            mem_wstrb: s.output("mem_req_wstrb_o")?,
            mrsp_valid: s.input("mem_rsp_valid_i")?,
            mrsp_ready: s.output("mem_rsp_ready_o")?,
            mrsp_rdata: s.input("mem_rsp_rdata_i")?,
            mon_valid: s.output("hub_req_mon_valid_o")?,
            mon_data: s.output("hub_req_mon_data_o")?,
            mon_last: s.output("hub_req_mon_last_o")?,
            err: s.output("err_count_o")?,
            up_flits: s.output("up_flits_o")?,
            dn_flits: s.output("dn_flits_o")?,
            up_payload: s.output("up_payload_flits_o")?,
            dn_payload: s.output("dn_payload_flits_o")?,
            tlb_hits: s.output("tlb_hits_o")?,
            tlb_misses: s.output("tlb_misses_o")?,
        })
    }
}

/// One GPU port's state in the bench.
#[derive(Default)]
struct Gpu {
    /// Frames waiting to be sent, flit by flit.
    source: VecDeque<Vec<Flit>>,
    /// Index of the next flit of the head frame.
    next: usize,
    /// Whether `valid` is raised (it stays up until the flit is taken).
    offering: bool,
    /// Flits of the response being received.
    rsp: Vec<Flit>,
    /// Flits of the request being received by the hub (monitor tap).
    mon: Vec<Flit>,
    /// The RTL's memory.
    mem: SparseMemory,
    /// Read response beats in flight: (cycle ready, lines).
    reads: VecDeque<(u64, smallvec::SmallVec<[u128; 4]>)>,
    /// The port's request data input was last driven with zero (and need not be again).
    req_data_zero: bool,
    /// The port's read data input lines were last driven with zeros (and need not be again).
    rdata_zero: bool,
}

/// Two memory accesses are the same if address, kind and strobes agree and the
/// strobed bytes of a write agree (unstrobed data bytes are don't-care).
pub fn same_access(a: &MemAccess, b: &MemAccess) -> bool {
    match (a, b) {
        (MemAccess::Read { addr: x }, MemAccess::Read { addr: y }) => x == y,
        (
            MemAccess::Write {
                addr: x,
                data: dx,
                strobe: sx,
            },
            MemAccess::Write {
                addr: y,
                data: dy,
                strobe: sy,
            },
        ) => {
            let mask = (0..16).fold(0u128, |m, i| {
                if sx >> i & 1 == 1 {
                    m | (0xFFu128 << (8 * i))
                } else {
                    m
                }
            });
            x == y && sx == sy && dx & mask == dy & mask
        }
        _ => false,
    }
}

/// Per-run results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Cycles run (including reset).
    pub cycles: u64,
    /// Frames injected by the SMs.
    pub frames_in: u64,
    /// Packets checked against the golden model (hub requests and SM responses).
    pub packets_checked: u64,
    /// Memory accesses checked.
    pub mem_checked: u64,
}

/// Counters read from the RTL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtlCounters {
    /// Per port, per error code (index = code - 1).
    pub errors: Vec<[u64; ErrorCode::COUNT]>,
    /// Uplink wire flits per port.
    pub up_flits: Vec<u64>,
    /// Downlink wire flits per port.
    pub dn_flits: Vec<u64>,
    /// Uplink payload flits per port.
    pub up_payload_flits: Vec<u64>,
    /// Downlink payload flits per port.
    pub dn_payload_flits: Vec<u64>,
    /// AL-TLB hits per hub.
    pub tlb_hits: Vec<u64>,
    /// AL-TLB misses per hub.
    pub tlb_misses: Vec<u64>,
}

/// The Verilator top of the models this bench drives: `dysharp_top` in its
/// verification wrapper (`verif/harness/dysharp_top_tb.sv`, the registry's `sim_top`).
pub const BENCH_TOP: &str = "dysharp_top_tb";

/// The bench: RTL model, GPU port models, and the scoreboard (golden model and checks,
/// `crate::scoreboard`), to which the bench reports what it observes.
pub struct Bench {
    sim: Sim,
    p: Ports,
    cfg: BenchConfig,
    /// The golden model's configuration.
    golden_cfg: Config,
    sb: Scoreboard,
    gpus: Vec<Gpu>,
    rng: ChaCha8Rng,
    stats: RunStats,
    n: usize,
    /// Lines per memory beat (the model's `MemLines`) and the width of its count.
    mem_lines: usize,
    lines_w: usize,
    /// Cycle at which the first flit of the most recent frame was accepted.
    first_accept: u64,
    /// Cycle of the most recent memory write or response flit.
    last_effect: u64,
    /// Print every transfer (`DYSHARP_TRACE=1`), for debugging a failing case.
    trace: bool,
    /// Memory for the GPU memories made on another thread (with `check_thread`).
    feed: Option<ReserveFeed>,
    /// The configuration's rates as distributions, made once.
    rates: Rates,
}

/// [`BenchConfig`]'s rates as distributions (a draw of one is `gen_bool` of its rate).
struct Rates {
    inject: Bernoulli,
    sm_ready: Bernoulli,
    mem_ready: Bernoulli,
}

impl Rates {
    fn new(cfg: &BenchConfig) -> Result<Self, TbError> {
        let of = |name: &str, p: f64| {
            Bernoulli::new(p)
                .map_err(|_| TbError::Config(format!("{name} {p} is not a probability in [0, 1]")))
        };
        Ok(Rates {
            inject: of("inject_rate", cfg.inject_rate)?,
            sm_ready: of("sm_ready_rate", cfg.sm_ready_rate)?,
            mem_ready: of("mem_ready_rate", cfg.mem_ready_rate)?,
        })
    }
}

/// What the bench drove in a cycle, one bit per port.
#[derive(Default)]
struct Drive {
    /// The port's source offers a flit (`valid` up).
    offering: u64,
    /// The SM takes a response flit.
    sm_ready: u64,
    /// The GPU memory takes a request.
    mem_ready: u64,
    /// A read response beat is offered.
    mrsp_valid: u64,
}

/// What moved in a cycle, one bit per port.
struct Moved {
    /// A request flit was taken from the SM.
    req: u64,
    /// A response flit reached the SM.
    rsp: u64,
    /// A request flit reached the hub (the monitor tap).
    mon: u64,
    /// The GPU memory took a request.
    mem: u64,
    /// The hub took a read response beat.
    mrsp: u64,
}

/// Ports a bench drives: the handshakes of a cycle are words of one bit per port ([`Drive`]).
const MAX_PORTS: usize = 64;

/// Asks the processor to bring `data` into this core's caches, a 64-byte line at a time,
/// without waiting: data written on another core (a frame drawn on the stimulus thread) is
/// then here by the time it is read, cycles later.
fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = std::mem::size_of_val(data);
        let base = data.as_ptr().cast::<i8>();
        for off in (0..bytes).step_by(64) {
            // SAFETY: a prefetch never faults and has no effect on the program's state; the
            // address is inside `data`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Prints a port's transfers of a cycle (`DYSHARP_TRACE`): a request flit taken, a response or
/// hub request flit delivered (with `last`), a memory request, a read beat taken.
#[cold]
fn trace_port(
    now: u64,
    q: usize,
    req: bool,
    rsp: Option<(Flit, bool)>,
    mon: Option<(Flit, bool)>,
    mem: Option<(bool, u64, usize)>,
    mrsp: bool,
) {
    if req {
        eprintln!("[{now}] sm{q} -> switch flit");
    }
    if let Some((f, last)) = rsp {
        eprintln!("[{now}] switch -> sm{q} {f:032x} last={last}");
    }
    if let Some((f, last)) = mon {
        eprintln!("[{now}] switch -> hub{q} {f:032x} last={last}");
    }
    if let Some((we, addr, lines)) = mem {
        let what = if we { "write" } else { "read" };
        eprintln!("[{now}] hub{q} mem {what} of {lines} lines at {addr:#x} (its beats follow)");
    }
    if mrsp {
        eprintln!("[{now}] mem -> hub{q} read data");
    }
}

/// The golden configuration matching a built model and a bench configuration.
pub fn golden_config(sim: &Sim, cfg: &BenchConfig) -> Config {
    let tlb_entries = sim.param_or("TlbEntries", 512);
    Config {
        num_ports: sim.param_or("NumPorts", 8),
        experts_per_port: sim.param_or("ExpertsPerPort", 32),
        max_targets: sim.param_or("MaxTargets", 32),
        dynamic_ops: sim.param_or("DynamicOps", 1) != 0,
        groups: {
            let mut g = cfg.groups.clone();
            g.resize(sim.param_or("NumGroups", 16), 0);
            g
        },
        hub: HubConfig {
            tlb_entries,
            tlb_ways: sim.param_or("TlbWays", tlb_entries),
            ..cfg.hub.clone()
        },
    }
}

impl Bench {
    /// Builds the model, resets it and programs the configuration.
    pub fn new(cfg: BenchConfig) -> Result<Bench, TbError> {
        let mut sim = Sim::new(&cfg.model, cfg.seed)?;
        if cfg.record_inputs {
            sim.record_inputs();
        }
        let p = Ports::new(&sim)?;
        let gcfg = golden_config(&sim, &cfg);
        if cfg.groups.len() > gcfg.groups.len() {
            return Err(TbError::Config(format!(
                "{} groups, the model has {}",
                cfg.groups.len(),
                gcfg.groups.len()
            )));
        }
        let mut golden = Fabric::new(&gcfg).map_err(|e| TbError::Config(e.to_string()))?;
        golden.enable_logs();
        let n = gcfg.num_ports;
        if n > MAX_PORTS {
            return Err(TbError::Config(format!(
                "the model has {n} ports, the bench drives at most {MAX_PORTS}"
            )));
        }
        let rates = Rates::new(&cfg)?;
        let mem_lines = sim.param_or("MemLines", 4);
        let lines_w = (usize::BITS - mem_lines.leading_zeros()) as usize;
        if let Some(v) = &cfg.vcd {
            sim.open_vcd(v)?;
        }
        let chk = Checker::new(golden, cfg.write_regions.clone());
        let sb = if !cfg.check {
            Scoreboard::off(chk)
        } else if cfg.check_thread {
            Scoreboard::threaded(chk)
        } else {
            Scoreboard::inline(chk)
        };
        let mut b = Bench {
            sim,
            p,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            gpus: (0..n)
                .map(|_| Gpu {
                    rsp: Vec::with_capacity(FRAME_CAP),
                    mon: Vec::with_capacity(FRAME_CAP),
                    ..Gpu::default()
                })
                .collect(),
            golden_cfg: gcfg,
            sb,
            stats: RunStats::default(),
            n,
            mem_lines,
            lines_w,
            first_accept: 0,
            last_effect: 0,
            trace: std::env::var_os("DYSHARP_TRACE").is_some(),
            feed: if cfg.check_thread {
                ReserveFeed::start(n)
            } else {
                None
            },
            rates,
            cfg,
        };
        b.program();
        b.reset(4)?;
        Ok(b)
    }

    fn program(&mut self) {
        let h = &self.cfg.hub;
        let p = &self.p;
        for (g, mask) in self.golden_cfg.groups.clone().iter().enumerate() {
            self.sim
                .set_bits(p.group, self.n * g, self.n, *mask as u128);
        }
        self.sim.set(p.mbase, h.mbase as u128);
        self.sim.set(p.al_base, h.al_base as u128);
        self.sim.set(p.data_base, h.data_base as u128);
        self.sim.set(p.log2_bsize, h.log2_bsize as u128);
        self.sim.set(p.log2_al, h.log2_al_entries as u128);
        self.sim.set(p.log2_slots, h.log2_slots as u128);
    }

    /// The model's input words of every cycle so far, if `record_inputs` was set
    /// (recording stops), and its outputs of the last cycle.
    pub fn take_recording(&mut self) -> (Vec<u32>, Vec<u32>) {
        (self.sim.take_recording(), self.sim.outputs().to_vec())
    }

    /// The model's input words recorded since the bench started or since the last call, if
    /// `record_inputs` was set (recording goes on).
    pub fn drain_recording(&mut self) -> Vec<u32> {
        self.sim.drain_recording()
    }

    /// Holds reset for `cycles` cycles, then releases it.
    pub fn reset(&mut self, cycles: u64) -> Result<(), TbError> {
        self.sim.set(self.p.rst, 0);
        for _ in 0..cycles {
            self.sim.cycle()?;
        }
        self.sim.set(self.p.rst, 1);
        self.sim.cycle()?;
        self.stats.cycles += cycles + 1;
        Ok(())
    }

    /// Asserts reset for `cycles` cycles in the middle of traffic, as a GPU
    /// driver would after a fault: frames partly sent are lost (the rest of the
    /// queues are sent after reset), everything in flight inside the switch and
    /// hubs is forgotten, and the golden model restarts from the GPU memories as
    /// the RTL left them (a hub may have been cut off within a packet). Returns
    /// the number of frames cut off at the sources.
    pub fn reset_midstream(&mut self, cycles: u64) -> Result<u64, TbError> {
        let mut cut = 0;
        for g in &mut self.gpus {
            if g.next > 0 {
                g.source.pop_front();
                cut += 1;
            }
            g.next = 0;
            g.offering = false;
            g.rsp.clear();
            g.mon.clear();
            g.reads.clear();
        }
        let mems = self.gpus.iter().map(|g| g.mem.clone()).collect();
        self.sb.checker()?.restart(mems)?;
        let p = &self.p;
        for q in 0..self.n {
            self.sim.set_bits(p.req_valid, q, 1, 0);
            self.sim.set_bits(p.mrsp_valid, q, 1, 0);
        }
        self.reset(cycles)?;
        Ok(cut)
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.n
    }

    /// Queues a raw frame at SM `port`.
    pub fn push_frame(&mut self, port: usize, frame: Vec<Flit>) {
        if !frame.is_empty() {
            prefetch(&frame);
            self.gpus[port].source.push_back(frame);
        }
    }

    /// Queues a packet at SM `port`.
    pub fn push(&mut self, port: usize, pkt: &Packet) {
        self.push_frame(port, pkt.encode());
    }

    /// Frames still waiting at the sources.
    pub fn queued(&self) -> usize {
        self.gpus.iter().map(|g| g.source.len()).sum()
    }

    /// Statistics so far (with the scoreboard on its thread: once it has caught up).
    pub fn stats(&mut self) -> RunStats {
        let c = self.sb.checker_anyway();
        RunStats {
            cycles: self.stats.cycles,
            frames_in: c.frames_in,
            packets_checked: c.packets_checked,
            mem_checked: c.mem_checked,
        }
    }

    /// The golden model's configuration (the built model's parameters and the bench's).
    pub fn golden_cfg(&self) -> &Config {
        &self.golden_cfg
    }

    /// Whether the scoreboard runs on a thread of its own.
    pub fn check_thread(&self) -> bool {
        self.sb.is_threaded()
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.sim.cycles()
    }

    fn mismatch(&self, what: String) -> TbError {
        TbError::Mismatch {
            cycle: self.sim.cycles(),
            what,
        }
    }

    /// Whether everything injected has been delivered and checked (a mismatch the scoreboard's
    /// thread found meanwhile is returned).
    pub fn is_drained(&mut self) -> Result<bool, TbError> {
        self.drained()
    }

    /// (cycle the most recent frame's first flit was accepted, cycle of the last
    /// memory write or response flit): the span of an isolated packet.
    pub fn last_packet_span(&self) -> (u64, u64) {
        (self.first_accept, self.last_effect)
    }

    fn drained(&mut self) -> Result<bool, TbError> {
        // The bench's own side first: the scoreboard is asked (and on its thread, waited for)
        // only once nothing is left to send or receive.
        let idle = self.gpus.iter().all(|g| {
            g.source.is_empty() && g.rsp.is_empty() && g.mon.is_empty() && g.reads.is_empty()
        });
        Ok(idle && self.sb.checker()?.drained())
    }

    fn pending_summary(&mut self) -> String {
        let mut s = String::new();
        let unsent: Vec<usize> = self.gpus.iter().map(|g| g.source.len()).collect();
        let c = self.sb.checker_anyway();
        for (q, unsent) in unsent.into_iter().enumerate() {
            let (req, rsp, exp, seen) = c.outstanding(q);
            if unsent + req + rsp + exp + seen > 0 {
                s.push_str(&format!(
                    "[port {q}: {unsent} frames unsent, {req} hub requests and {rsp} responses expected, {exp} memory accesses expected, {seen} unpredicted] "
                ));
            }
        }
        s
    }

    /// Runs one cycle of the bench.
    ///
    /// The one-bit handshakes of all ports are driven and read as words, one bit per port, and
    /// only the ports where something moved are visited after the edge (in ascending order, as
    /// the events reach the scoreboard): most ports are idle in most cycles. The random draws are
    /// the same, in the same order, as one port at a time.
    pub fn step(&mut self) -> Result<(), TbError> {
        let now = self.sim.cycles();
        let drive = self.drive(now);
        self.sim.cycle()?;
        self.stats.cycles += 1;
        let (s, p, n) = (&self.sim, &self.p, self.n);
        let word = |port: Port| s.get_bits(port, 0, n) as u64;
        let moved = Moved {
            req: word(p.req_ready) & drive.offering,
            rsp: word(p.rsp_valid) & drive.sm_ready,
            mon: word(p.mon_valid),
            mem: word(p.mem_valid) & drive.mem_ready,
            mrsp: word(p.mrsp_ready) & drive.mrsp_valid,
        };
        let mut ports = moved.req | moved.rsp | moved.mon | moved.mem | moved.mrsp;
        while ports != 0 {
            let q = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            self.port_moved(now, q, &moved)?;
        }
        Ok(())
    }

    /// Drives the model's inputs for the cycle starting at `now`: each port's request flit (if
    /// it offers one), ready signals, and read response beat (if one is due).
    fn drive(&mut self, now: u64) -> Drive {
        let p = &self.p;
        let mut d = Drive::default();
        let (mut valid, mut last) = (0u64, 0u64);
        for (q, g) in self.gpus.iter_mut().enumerate() {
            let bit = 1u64 << q;
            if !g.offering && !g.source.is_empty() && self.rng.sample(self.rates.inject) {
                g.offering = true;
            }
            let data = match (g.offering, g.source.front()) {
                (true, Some(f)) => {
                    valid |= bit;
                    // The flit after this one, in the cache by the time it is offered (a frame's
                    // flits were written on the stimulus thread's core).
                    match f.get(g.next + 1) {
                        Some(after) => prefetch(std::slice::from_ref(after)),
                        None => {
                            last |= bit;
                            if let Some(next) = g.source.get(1) {
                                prefetch(&next[..next.len().min(1)]);
                            }
                        }
                    }
                    f[g.next]
                }
                _ => 0,
            };
            if g.offering {
                d.offering |= bit;
            }
            // The wide data inputs are driven only when they change from zero or to it: the
            // same input words every cycle, fewer writes (a port is idle in most cycles).
            if data != 0 || !g.req_data_zero {
                self.sim.set_bits(p.req_data, 128 * q, 128, data);
                g.req_data_zero = data == 0;
            }
            if self.rng.sample(self.rates.sm_ready) {
                d.sm_ready |= bit;
            }
            if self.rng.sample(self.rates.mem_ready) {
                d.mem_ready |= bit;
            }
            let beat = match g.reads.front() {
                Some((t, lines)) if *t <= now => Some(lines),
                _ => None,
            };
            if beat.is_some() {
                d.mrsp_valid |= bit;
            }
            if beat.is_some() || !g.rdata_zero {
                for i in 0..self.mem_lines {
                    let line = beat.and_then(|d| d.get(i)).copied().unwrap_or(0);
                    self.sim
                        .set_bits(p.mrsp_rdata, 128 * (self.mem_lines * q + i), 128, line);
                }
                g.rdata_zero = beat.is_none();
            }
        }
        let n = self.n;
        self.sim.set_bits(p.req_valid, 0, n, valid as u128);
        self.sim.set_bits(p.req_last, 0, n, last as u128);
        self.sim.set_bits(p.rsp_ready, 0, n, d.sm_ready as u128);
        self.sim.set_bits(p.mem_ready, 0, n, d.mem_ready as u128);
        self.sim.set_bits(p.mrsp_valid, 0, n, d.mrsp_valid as u128);
        d
    }

    /// Acts on what moved at port `q` in the cycle that started at `now`: a request flit taken,
    /// a response flit or a hub request flit delivered, a memory request or read beat taken.
    fn port_moved(&mut self, now: u64, q: usize, moved: &Moved) -> Result<(), TbError> {
        let on = |m: u64| m >> q & 1 == 1;
        let (req_fire, rsp_fire, mon, mem_fire, mrsp_fire) = (
            on(moved.req),
            on(moved.rsp),
            on(moved.mon),
            on(moved.mem),
            on(moved.mrsp),
        );
        let p = &self.p;
        let s = &self.sim;
        // Flits are read only when they move.
        let flit = |on: bool, data: Port, last: Port| {
            if on {
                (s.get_bits(data, 128 * q, 128), s.bit(last, q))
            } else {
                (0, false)
            }
        };
        let rsp_flit = flit(rsp_fire, p.rsp_data, p.rsp_last);
        let mon_flit = flit(mon, p.mon_data, p.mon_last);
        if req_fire {
            if self.gpus[q].next == 0 {
                self.first_accept = now;
            }
            let g = &mut self.gpus[q];
            g.offering = false;
            g.next += 1;
            if g.next == g.source.front().map_or(0, |f| f.len()) {
                g.next = 0;
                let frame = g.source.pop_front().expect("frame");
                self.sb.push(
                    now,
                    Event::FrameIn {
                        port: q,
                        frame: &frame,
                    },
                )?;
            }
        }
        if rsp_fire {
            self.last_effect = now;
            self.gpus[q].rsp.push(rsp_flit.0);
            if rsp_flit.1 {
                let frame = &self.gpus[q].rsp;
                self.sb.push(now, Event::SmResponse { q, frame })?;
                self.gpus[q].rsp.clear();
            }
        }
        if mon {
            self.gpus[q].mon.push(mon_flit.0);
            if mon_flit.1 {
                let frame = &self.gpus[q].mon;
                self.sb.push(now, Event::HubRequest { q, frame })?;
                self.gpus[q].mon.clear();
            }
        }
        if self.trace {
            trace_port(
                now,
                q,
                req_fire,
                rsp_fire.then_some(rsp_flit),
                mon.then_some(mon_flit),
                mem_fire.then(|| self.mem_head(q)),
                mrsp_fire,
            );
        }
        if mrsp_fire {
            self.gpus[q].reads.pop_front();
        }
        if mem_fire {
            self.mem_request(now, q)?;
        }
        Ok(())
    }

    /// The memory request hub `q` made in this cycle: (write, address, line count on the port).
    fn mem_head(&self, q: usize) -> (bool, u64, usize) {
        let (s, p) = (&self.sim, &self.p);
        (
            s.bit(p.mem_we, q),
            s.get_bits(p.mem_addr, 48 * q, 48) as u64,
            s.get_bits(p.mem_lines, self.lines_w * q, self.lines_w) as usize,
        )
    }

    /// Serves the memory request hub `q` made in the cycle that started at `now` (a write lands
    /// in its GPU memory, a read's lines are queued to return after the latency) and reports it
    /// to the scoreboard, [`crate::scoreboard::BEAT_LINES`] lines an event (a read's lines carry
    /// no data). Line i of a beat is at `128 * i` of the port's data.
    fn mem_request(&mut self, now: u64, q: usize) -> Result<(), TbError> {
        let (we, addr, lines) = self.mem_head(q);
        let w = self.mem_lines;
        if lines == 0 || lines > w {
            return Err(self.mismatch(format!(
                "hub {q} memory request of {lines} lines (MemLines = {w})"
            )));
        }
        let g = &mut self.gpus[q];
        if we {
            self.last_effect = now;
            if let Some(f) = &self.feed {
                f.top_up(&mut g.mem);
            }
        } else {
            let mut data = smallvec::smallvec![0u128; lines];
            g.mem.read_lines(addr, &mut data);
            let (lo, hi) = self.cfg.mem_latency;
            let lat = if hi > lo {
                self.rng.gen_range(lo..=hi)
            } else {
                lo
            }
            .max(1);
            let t = (now + lat).max(g.reads.back().map_or(0, |(t, _)| *t));
            g.reads.push_back((t, data));
        }
        // The golden model logs 16-byte lines: a beat is checked line by line.
        let (s, p) = (&self.sim, &self.p);
        for (start, n) in beat_spans(lines) {
            let mut beat = BeatLines::new(addr + 16 * start as u64, we);
            beat.len = n as u8;
            if we {
                for i in 0..n {
                    let line = w * q + start + i;
                    beat.data[i] = s.get_bits(p.mem_wdata, 128 * line, 128);
                    beat.strobe[i] = s.get_bits(p.mem_wstrb, 16 * line, 16) as u16;
                }
                self.gpus[q]
                    .mem
                    .write_lines(beat.addr, &beat.data[..n], &beat.strobe[..n]);
            }
            if self.trace {
                eprintln!("[{now}] hub{q} mem {beat:x?}");
            }
            self.sb.push(now, Event::Mem { q, lines: beat })?;
        }
        Ok(())
    }

    /// Runs until every frame is sent and every expectation met, and the RTL has
    /// been quiet for a few cycles; fails after `limit` cycles.
    pub fn run(&mut self, limit: u64) -> Result<RunStats, TbError> {
        let start = self.sim.cycles();
        let mut quiet = 0;
        loop {
            self.step()?;
            if self.drained()? {
                quiet += 1;
                if quiet >= 16 {
                    break;
                }
            } else {
                quiet = 0;
            }
            if self.sim.cycles() - start > limit {
                return Err(TbError::Timeout {
                    cycle: self.sim.cycles(),
                    limit,
                    pending: self.pending_summary(),
                });
            }
        }
        self.check_counters()?;
        Ok(self.stats())
    }

    /// Reads the RTL's counters.
    pub fn counters(&self) -> RtlCounters {
        let s = &self.sim;
        let p = &self.p;
        let per = |port: Port| -> Vec<u64> {
            (0..self.n)
                .map(|q| s.get_bits(port, 32 * q, 32) as u64)
                .collect()
        };
        RtlCounters {
            errors: (0..self.n)
                .map(|q| {
                    let mut a = [0u64; ErrorCode::COUNT];
                    for (c, slot) in a.iter_mut().enumerate() {
                        *slot = s.get_bits(p.err, 32 * (q * ErrorCode::COUNT + c), 32) as u64;
                    }
                    a
                })
                .collect(),
            up_flits: per(p.up_flits),
            dn_flits: per(p.dn_flits),
            up_payload_flits: per(p.up_payload),
            dn_payload_flits: per(p.dn_payload),
            tlb_hits: per(p.tlb_hits),
            tlb_misses: per(p.tlb_misses),
        }
    }

    /// Compares the RTL's counters with the golden model's.
    pub fn check_counters(&mut self) -> Result<(), TbError> {
        let c = self.counters();
        let cycle = self.sim.cycles();
        self.sb.checker()?.check_counters(&c, cycle)
    }

    /// Finishes the waveform, if any.
    pub fn close(&mut self) {
        self.sim.close_vcd();
    }
}

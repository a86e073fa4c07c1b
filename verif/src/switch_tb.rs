//! The switch-level bench: `dysharp_switch` alone (models `switch_p4`,
//! `switch_p8`) between SM agents and hub agents that misbehave on demand.
//!
//! - **SM agents** inject request frames on `req_in` (legal ones and malformed
//!   ones, from [`crate::stimulus::Stimulus`]) and take `rsp_out` with random
//!   backpressure.
//! - **Hub agents** take `req_out` packets with random backpressure and answer
//!   on `rsp_in` as the golden hub does: each port runs a golden
//!   [`dysharp_sim::hub::Hub`] with its own memory, fed the packets in the order
//!   the RTL delivered them, after a random latency. On demand (per port, per
//!   class, at a rate, see [`Faults`]) a hub also sends frames a GPU must never
//!   send: a request opcode, an orphan `RSP_PARTIAL` (a tag no requester uses),
//!   a second copy of a partial it already sent, a partial for an entry it was
//!   not asked for, a forged `RSP_READ`/`RSP_ERROR` (route to a port with nothing
//!   pending, or ≥ NumPorts), malformed and truncated copies of its responses;
//!   it replaces a partial by one of the wrong `len` (spec §5.6: `ERR_LENGTH`);
//!   it answers late; and it never answers the ld_reduces of chosen requesters
//!   ([`SwitchBenchConfig::dead`]).
//! - **Scoreboard**: the golden [`Switch`] sees every frame the RTL accepts on
//!   `req_in` and `rsp_in` in the RTL's accept order; every packet on `req_out`
//!   must be the next one the golden switch sent on its flow (source port), and
//!   every packet on `rsp_out` one the golden switch sent to that port (matched by
//!   opcode, tag, `src_port`, `maddr`, as results of ld_reduces may leave in any
//!   order, spec §5.3). At the end the per-port error counters must equal the
//!   golden switch's and the flit counters the flits that crossed the ports.
//!
//! Extra frames (every class but `wrong_len` and `dead`) are sent after the
//! response they accompany and use tags the SM stimulus never uses (≥ 0xF00) or
//! keys whose entry cannot accept them, so whatever the RTL's internal timing,
//! they can only be dropped and counted (`ERR_OPCODE` and the §6 codes): the
//! golden switch and the RTL agree on every outcome without modelling time.
//!
//! **Timeouts** (spec §5.3): the golden switch has no time, so the bench orders
//! it by the RTL's load-reduce events (`red_*_o` of `dysharp_switch`). A good
//! `RSP_PARTIAL` frame that the RTL accepted on `rsp_in` is held until the
//! reduction unit takes its flit0 (`red_take_o`), and only then given to the
//! golden switch; a timeout event (`red_timeout_o`) is checked to be plausible
//! (the golden entry is pending and misses the port the RTL names, and was
//! opened at least `RedTimeout` cycles earlier) and then applied
//! ([`Switch::timeout`]), and so is the end of a quarantine (`red_expire_o`,
//! [`Switch::expire`]). Events of a cycle are applied before that cycle's takes
//! (the RTL decides a timeout on the state before the cycle's partials). The
//! result: the golden switch's entries see exactly the partials the RTL's entries
//! saw when they timed out, and the response, the counters, and the fate of every
//! late partial (consumed in quarantine, or an orphan after it) must agree.
//!
//! A hub that never answers (`dead`) therefore only delays its requesters when the
//! model has a timeout (`RedTimeout` > 0): every port's traffic must complete. A
//! model without one keeps the entries pending: the requesters named in `dead`
//! are then excluded from the drain condition, and the run checks that every
//! other port's traffic completes.

use crate::sim::{Port, Sim, SimError};
use crate::stimulus::Stimulus;
use crate::tb::{golden_config, BenchConfig, TbError};
use dysharp_sim::config::Config;
use dysharp_sim::hub::Hub;
use dysharp_sim::numerics::DType;
use dysharp_sim::packet::fields::{self, to_bits};
use dysharp_sim::packet::{decode, with_hcc, ErrorCode, Flit, Opcode, Origin, Packet};
use dysharp_sim::switch::Switch;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

/// `RedTimeout` of `dysharp_switch` when a model does not set it.
pub const RTL_RED_TIMEOUT: usize = 65536;

/// First tag of the range the SM stimulus never reaches in a bench run: forged
/// responses use it, so they never match a real entry.
pub const FORGED_TAG: u16 = 0xF00;

/// Misbehaviour rates of one hub (probabilities per request it receives, or per
/// partial it sends for `wrong_len`). All 0 by default: a legal hub.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    /// A request frame (the request just received) sent back on `rsp_in`.
    pub request_opcode: f64,
    /// An `RSP_PARTIAL` with no pending entry (a forged tag ≥ [`FORGED_TAG`]).
    pub orphan: f64,
    /// A second copy of a partial already sent (the entry has this port's answer).
    pub duplicate: f64,
    /// A partial for a recent ld_reduce whose replicas did not include this port.
    pub not_asked: f64,
    /// A partial replaced by one with a wrong `len` (and payload): `ERR_LENGTH` result.
    pub wrong_len: f64,
    /// A forged `RSP_READ` or `RSP_ERROR` to a random port (sometimes ≥ NumPorts).
    pub forged: f64,
    /// A corrupted copy of a response (header bit flip, truncated, overlong, bad
    /// opcode, len, tcount, dtype, alignment or route).
    pub malformed: f64,
    /// A response delayed by [`SwitchBenchConfig::late_latency`] instead of the normal latency.
    pub late: f64,
}

impl Faults {
    /// Every class at rate `r`.
    pub fn all(r: f64) -> Self {
        Faults {
            request_opcode: r,
            orphan: r,
            duplicate: r,
            not_asked: r,
            wrong_len: r,
            forged: r,
            malformed: r,
            late: r,
        }
    }
}

/// Number of misbehaviour classes counted in [`SwitchStats::faults`].
pub const FAULT_CLASSES: usize = 9;

/// Names of the classes of [`SwitchStats::faults`], in order.
pub const FAULT_NAMES: [&str; FAULT_CLASSES] = [
    "request_opcode",
    "orphan",
    "duplicate",
    "not_asked",
    "wrong_len",
    "forged",
    "malformed",
    "late",
    "withheld",
];

/// How the bench drives the switch.
#[derive(Clone, Debug)]
pub struct SwitchBenchConfig {
    /// Model name (`switch_p4`, `switch_p8`).
    pub model: String,
    /// Seed of the agents and of the model's random initial state.
    pub seed: u64,
    /// Static group table (group id → port mask).
    pub groups: Vec<u32>,
    /// Probability that an SM offers its next flit in a cycle.
    pub inject_rate: f64,
    /// Probability that an SM accepts a response flit in a cycle.
    pub sm_ready_rate: f64,
    /// Probability that a hub accepts a request flit in a cycle.
    pub hub_ready_rate: f64,
    /// Probability that a hub offers its next response flit in a cycle.
    pub hub_inject_rate: f64,
    /// Cycles from receiving a request to its responses being ready (inclusive range).
    pub hub_latency: (u64, u64),
    /// Latency of a late answer (inclusive range).
    pub late_latency: (u64, u64),
    /// Misbehaviour per hub port (missing ports: legal hubs).
    pub faults: Vec<Faults>,
    /// (hub port, requester port): that hub never answers that requester's ld_reduces.
    pub dead: Vec<(usize, usize)>,
    /// Write a VCD waveform here.
    pub vcd: Option<PathBuf>,
}

impl SwitchBenchConfig {
    /// Legal hubs at line rate, short latency.
    pub fn new(model: &str, seed: u64) -> Self {
        SwitchBenchConfig {
            model: model.into(),
            seed,
            groups: vec![0; 16],
            inject_rate: 1.0,
            sm_ready_rate: 1.0,
            hub_ready_rate: 1.0,
            hub_inject_rate: 1.0,
            hub_latency: (1, 8),
            late_latency: (200, 2000),
            faults: Vec::new(),
            dead: Vec::new(),
            vcd: None,
        }
    }

    fn faults_of(&self, port: usize) -> Faults {
        self.faults.get(port).copied().unwrap_or_default()
    }
}

/// Per-run results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Cycles run (including reset).
    pub cycles: u64,
    /// Frames the RTL accepted on `req_in`.
    pub sm_frames: u64,
    /// Frames the RTL accepted on `rsp_in`.
    pub hub_frames: u64,
    /// Packets checked on `req_out` and `rsp_out`.
    pub packets_checked: u64,
    /// Misbehaviours injected per class (see [`FAULT_NAMES`]).
    pub faults: [u64; FAULT_CLASSES],
    /// Errors counted by the RTL (all ports, all codes) at the end.
    pub errors: u64,
    /// Load-reduce entries that timed out (RTL events, checked and applied).
    pub timeouts: u64,
    /// Quarantined entries freed before every port answered.
    pub expired: u64,
    /// Longest time, in cycles, from a timed-out entry's request to its timeout.
    pub max_timeout_age: u64,
}

struct Ports {
    rst: Port,
    group: Port,
    req_in_valid: Port,
    req_in_ready: Port,
    req_in_data: Port,
    req_in_last: Port,
    rsp_in_valid: Port,
    rsp_in_ready: Port,
    rsp_in_data: Port,
    rsp_in_last: Port,
    req_out_valid: Port,
    req_out_ready: Port,
    req_out_data: Port,
    req_out_last: Port,
    rsp_out_valid: Port,
    rsp_out_ready: Port,
    rsp_out_data: Port,
    rsp_out_last: Port,
    err: Port,
    up_flits: Port,
    dn_flits: Port,
    up_payload: Port,
    dn_payload: Port,
    red_take: Port,
    red_timeout: Port,
    red_expire: Port,
    red_tag: Port,
    red_port: Port,
}

impl Ports {
    fn new(s: &Sim) -> Result<Self, SimError> {
        Ok(Ports {
            rst: s.input("rst_ni")?,
            group: s.input("cfg_group_mask_i")?,
            req_in_valid: s.input("req_in_valid_i")?,
            req_in_ready: s.output("req_in_ready_o")?,
            req_in_data: s.input("req_in_data_i")?,
            req_in_last: s.input("req_in_last_i")?,
            rsp_in_valid: s.input("rsp_in_valid_i")?,
            rsp_in_ready: s.output("rsp_in_ready_o")?,
            rsp_in_data: s.input("rsp_in_data_i")?,
            rsp_in_last: s.input("rsp_in_last_i")?,
            req_out_valid: s.output("req_out_valid_o")?,
            req_out_ready: s.input("req_out_ready_i")?,
            req_out_data: s.output("req_out_data_o")?,
            req_out_last: s.output("req_out_last_o")?,
            rsp_out_valid: s.output("rsp_out_valid_o")?,
            rsp_out_ready: s.input("rsp_out_ready_i")?,
            rsp_out_data: s.output("rsp_out_data_o")?,
            rsp_out_last: s.output("rsp_out_last_o")?,
            err: s.output("err_count_o")?,
            up_flits: s.output("up_flits_o")?,
            dn_flits: s.output("dn_flits_o")?,
            up_payload: s.output("up_payload_flits_o")?,
            dn_payload: s.output("dn_payload_flits_o")?,
            red_take: s.output("red_take_o")?,
            red_timeout: s.output("red_timeout_o")?,
            red_expire: s.output("red_expire_o")?,
            red_tag: s.output("red_evt_tag_o")?,
            red_port: s.output("red_evt_port_o")?,
        })
    }
}

/// A stream source: frames sent flit by flit, `valid` held until taken.
#[derive(Default)]
struct Source {
    /// Frames waiting, with the cycle from which each may be sent; sent in
    /// order of that cycle (stable), a frame once started is finished first.
    queue: VecDeque<(u64, Vec<Flit>)>,
    /// The frame being sent and the index of its next flit.
    cur: Option<(Vec<Flit>, usize)>,
    offering: bool,
}

impl Source {
    fn push_at(&mut self, at: u64, frame: Vec<Flit>) {
        if frame.is_empty() {
            return;
        }
        let i = self.queue.partition_point(|(t, _)| *t <= at);
        self.queue.insert(i, (at, frame));
    }

    fn idle(&self) -> bool {
        self.queue.is_empty() && self.cur.is_none()
    }

    /// The flit offered this cycle (valid, data, last).
    fn offer(&mut self, now: u64, rng: &mut ChaCha8Rng, rate: f64) -> (bool, Flit, bool) {
        if self.cur.is_none() && self.queue.front().is_some_and(|(t, _)| *t <= now) {
            let (_, f) = self.queue.pop_front().expect("front");
            self.cur = Some((f, 0));
        }
        let Some((f, i)) = &self.cur else {
            return (false, 0, false);
        };
        if !self.offering && rng.gen_bool(rate) {
            self.offering = true;
        }
        (self.offering, f[*i], *i + 1 == f.len())
    }

    /// The offered flit was taken; returns the frame when it was its last flit.
    fn taken(&mut self) -> Option<Vec<Flit>> {
        self.offering = false;
        let (f, i) = self.cur.as_mut().expect("a frame is being sent");
        *i += 1;
        if *i == f.len() {
            return self.cur.take().map(|(f, _)| f);
        }
        None
    }
}

/// One port's agents and expectations.
struct PortState {
    sm: Source,
    hub: Source,
    /// Flits of the packets being received on `req_out` and `rsp_out`.
    req_rx: Vec<Flit>,
    rsp_rx: Vec<Flit>,
    /// Expected `req_out` packets per source port (flow), in order.
    exp_req: Vec<VecDeque<Packet>>,
    /// Expected `rsp_out` packets (any order).
    exp_rsp: Vec<Packet>,
    /// Every packet received on `rsp_out`, in order.
    delivered: Vec<Packet>,
    /// Cycle at which the last of them arrived.
    last_delivery: u64,
    /// Good `RSP_PARTIAL` frames the RTL accepted on `rsp_in`, not yet taken by
    /// the reduction unit (given to the golden switch at `red_take_o`).
    partials: VecDeque<Vec<Flit>>,
    /// The golden hub of this port (its memory and AL state).
    hub_model: Hub,
    /// Flits observed crossing: uplink (req_in + rsp_in), downlink (req_out + rsp_out).
    up: u64,
    up_pay: u64,
    dn: u64,
    dn_pay: u64,
}

/// A recent ld_reduce: (requester, tag, len, ports asked).
type Asked = (u8, u16, u8, u32);

/// The switch-level bench.
pub struct SwitchBench {
    sim: Sim,
    p: Ports,
    cfg: SwitchBenchConfig,
    /// The golden configuration (for stimulus).
    pub gcfg: Config,
    /// The golden switch: the scoreboard.
    pub golden: Switch,
    ports: Vec<PortState>,
    rng: ChaCha8Rng,
    stats: SwitchStats,
    n: usize,
    /// Recent ld_reduces (for `not_asked` partials).
    asked: VecDeque<Asked>,
    /// Next forged tag.
    forged_tag: u16,
    /// The kind of corruption ([`corrupt`]) the next malformed response gets: they take turns,
    /// so every kind reaches the switch in a run with a few malformed responses.
    next_corruption: usize,
    /// The model's load-reduce timeout in cycles (0: none).
    red_timeout: u64,
    /// Cycle at which the golden switch opened each (requester, tag) entry.
    opened: HashMap<(u8, u16), u64>,
    trace: bool,
}

impl SwitchBench {
    /// Builds the model, resets it and programs the group table.
    pub fn new(cfg: SwitchBenchConfig) -> Result<SwitchBench, TbError> {
        let mut sim = Sim::new(&cfg.model, cfg.seed)?;
        if sim.info().top != "dysharp_switch" {
            return Err(TbError::Config(format!(
                "model {} has top {}, not dysharp_switch",
                cfg.model,
                sim.info().top
            )));
        }
        let p = Ports::new(&sim)?;
        let mut bc = BenchConfig::new(&cfg.model, cfg.seed);
        bc.groups = cfg.groups.clone();
        let gcfg = golden_config(&sim, &bc);
        if cfg.groups.len() > gcfg.groups.len() {
            return Err(TbError::Config(format!(
                "{} groups, the model has {}",
                cfg.groups.len(),
                gcfg.groups.len()
            )));
        }
        gcfg.validate()
            .map_err(|e| TbError::Config(e.to_string()))?;
        let n = gcfg.num_ports;
        if let Some(v) = &cfg.vcd {
            sim.open_vcd(v)?;
        }
        let ports = (0..n)
            .map(|q| PortState {
                sm: Source::default(),
                hub: Source::default(),
                req_rx: Vec::new(),
                rsp_rx: Vec::new(),
                exp_req: vec![VecDeque::new(); n],
                exp_rsp: Vec::new(),
                delivered: Vec::new(),
                last_delivery: 0,
                partials: VecDeque::new(),
                hub_model: Hub::new(q, &gcfg.hub, gcfg.experts_per_port),
                up: 0,
                up_pay: 0,
                dn: 0,
                dn_pay: 0,
            })
            .collect();
        let mut b = SwitchBench {
            sim,
            p,
            golden: Switch::new(&gcfg),
            gcfg,
            ports,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5157_C4B3),
            stats: SwitchStats::default(),
            n,
            asked: VecDeque::new(),
            forged_tag: FORGED_TAG,
            next_corruption: 0,
            red_timeout: 0,
            opened: HashMap::new(),
            trace: std::env::var_os("DYSHARP_TRACE").is_some(),
            cfg,
        };
        b.red_timeout = b.sim.param_or("RedTimeout", RTL_RED_TIMEOUT) as u64;
        for (g, mask) in b.gcfg.groups.clone().iter().enumerate() {
            b.sim.set_bits(b.p.group, n * g, n, *mask as u128);
        }
        b.sim.set(b.p.rst, 0);
        for _ in 0..4 {
            b.sim.cycle()?;
        }
        b.sim.set(b.p.rst, 1);
        b.sim.cycle()?;
        b.stats.cycles = 5;
        Ok(b)
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.n
    }

    /// A stimulus generator for this switch.
    /// Its ld_reduce tags are never reused: this bench's faulty hubs send late and duplicate
    /// partials, which a later ld_reduce with the same (requester, tag) may take as its own
    /// (spec §5.3: the tag is the requester's to manage), so a partial would no longer name the
    /// request it answers. (With reuse on, `switch/adversarial/switch_p4` seed 1 fails with an
    /// unexpected `RSP_REDUCE`; not analysed further.)
    pub fn stimulus(&self, seed: u64) -> Stimulus {
        let mut s = Stimulus::new(&self.gcfg, seed);
        s.reuse_ld_tags = false;
        s
    }

    /// Queues a raw frame at SM `port`.
    pub fn push_frame(&mut self, port: usize, frame: Vec<Flit>) {
        self.ports[port].sm.push_at(0, frame);
    }

    /// Queues a packet at SM `port`.
    pub fn push(&mut self, port: usize, pkt: &Packet) {
        self.push_frame(port, pkt.encode());
    }

    /// Queues a raw frame on hub `port`'s `rsp_in`, not before cycle `at`.
    pub fn push_hub_frame(&mut self, port: usize, at: u64, frame: Vec<Flit>) {
        self.ports[port].hub.push_at(at, frame);
    }

    /// Cycle at which SM `port` received its last response (0: none).
    pub fn last_delivery(&self, port: usize) -> u64 {
        self.ports[port].last_delivery
    }

    /// The packets SM `port` received, in order.
    pub fn delivered(&self, port: usize) -> &[Packet] {
        &self.ports[port].delivered
    }

    /// Statistics so far.
    pub fn stats(&self) -> &SwitchStats {
        &self.stats
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

    fn fault(&mut self, class: usize) {
        self.stats.faults[class] += 1;
    }

    /// Routes golden switch outputs into the expectation queues.
    fn expect(&mut self, outs: Vec<(usize, Packet)>) {
        let mut asked: Option<Asked> = None;
        let now = self.sim.cycles();
        for (q, pkt) in outs {
            if pkt.opcode.is_request() {
                if pkt.opcode.is_ld_reduce() {
                    let a = asked.get_or_insert((pkt.src_port, pkt.tag, pkt.len, 0));
                    a.3 |= 1 << q;
                    self.opened.insert((pkt.src_port, pkt.tag), now);
                }
                let src = pkt.src_port as usize;
                self.ports[q].exp_req[src].push_back(pkt);
            } else {
                self.ports[q].exp_rsp.push(pkt);
            }
        }
        if let Some(a) = asked {
            self.asked.push_back(a);
            if self.asked.len() > 32 {
                self.asked.pop_front();
            }
        }
    }

    /// A frame the RTL accepted completely on `req_in` (SM) or `rsp_in` (hub) of `port`.
    fn frame_in(&mut self, port: usize, origin: Origin, frame: &[Flit]) {
        match origin {
            Origin::Sm => self.stats.sm_frames += 1,
            _ => self.stats.hub_frames += 1,
        }
        let ps = &mut self.ports[port];
        ps.up += frame.len() as u64;
        if let Ok(p) = decode(frame, origin, &self.gcfg.limits()) {
            ps.up_pay += p.payload_flits() as u64;
        }
        if origin == Origin::Hub
            && decode(frame, origin, &self.gcfg.limits())
                .is_ok_and(|p| p.opcode == Opcode::RspPartial)
        {
            // Given to the golden switch when the reduction unit takes it.
            ps.partials.push_back(frame.to_vec());
            return;
        }
        let outs = self.golden.ingress_frame(port, origin, frame);
        self.expect(outs);
    }

    /// Applies the cycle's load-reduce events to the golden switch: timeouts and
    /// quarantine ends first (decided on the state before the cycle's partials),
    /// then the partials the reduction unit took.
    fn red_events(&mut self, now: u64) -> Result<(), TbError> {
        // The event ports are per requester, as wide as flit0's tag and src_port.
        let (tag_w, port_w) = (fields::TAG.width, fields::SRC_PORT.width);
        for q in 0..self.n {
            let timeout = self.sim.bit(self.p.red_timeout, q);
            let expire = self.sim.bit(self.p.red_expire, q);
            if !timeout && !expire {
                continue;
            }
            let tag = self.sim.get_bits(self.p.red_tag, tag_w * q, tag_w) as u16;
            let port = self.sim.get_bits(self.p.red_port, port_w * q, port_w) as usize;
            let what = if timeout { "timeout" } else { "quarantine end" };
            let missing = self.golden.missing(q, tag).unwrap_or_default();
            if missing.first() != Some(&port) {
                return Err(self.mismatch(format!(
                    "{what} of requester {q}, tag {tag:#x}: the RTL names port {port} as the lowest \
                     that did not answer, the golden switch's entry misses {missing:?}"
                )));
            }
            if timeout {
                let age = now - self.opened.get(&(q as u8, tag)).copied().unwrap_or(0);
                if self.red_timeout == 0 || age < self.red_timeout {
                    return Err(self.mismatch(format!(
                        "timeout of requester {q}, tag {tag:#x} after {age} cycles (RedTimeout {})",
                        self.red_timeout
                    )));
                }
                self.stats.max_timeout_age = self.stats.max_timeout_age.max(age);
                self.stats.timeouts += 1;
                let r = self
                    .golden
                    .timeout(q, tag)
                    .map_err(|e| self.mismatch(format!("RTL timeout event: {e}")))?;
                self.expect(vec![r]);
            } else {
                self.stats.expired += 1;
                let outs = self
                    .golden
                    .expire(q, tag)
                    .map_err(|e| self.mismatch(format!("RTL quarantine end: {e}")))?;
                self.expect(outs);
            }
        }
        for p in 0..self.n {
            if !self.sim.bit(self.p.red_take, p) {
                continue;
            }
            let Some(frame) = self.ports[p].partials.pop_front() else {
                return Err(self.mismatch(format!(
                    "the reduction unit took a partial from port {p} that hub {p} never sent"
                )));
            };
            let outs = self.golden.ingress_frame(p, Origin::Hub, &frame);
            self.expect(outs);
        }
        Ok(())
    }

    fn latency(&mut self, (lo, hi): (u64, u64)) -> u64 {
        if hi > lo {
            self.rng.gen_range(lo..=hi)
        } else {
            lo
        }
    }

    /// A request packet received on `req_out` of `q`: checked, then answered by
    /// hub agent `q` (legally or not).
    fn hub_request(&mut self, q: usize, frame: &[Flit], now: u64) -> Result<(), TbError> {
        let limits = self.gcfg.limits();
        let got = crate::diff::decode_any(frame, &limits).map_err(|e| {
            self.mismatch(format!(
                "hub {q} received an illegal frame ({e}): {frame:x?}"
            ))
        })?;
        if !got.opcode.is_request() {
            return Err(self.mismatch(format!("hub {q} received a response: {got:?}")));
        }
        let want = crate::scoreboard::match_flow(&mut self.ports[q].exp_req, q, got, frame)
            .map_err(|e| self.mismatch(e))?;
        self.stats.packets_checked += 1;
        let rsps = self.ports[q].hub_model.handle(&want);
        let f = self.cfg.faults_of(q);
        let n = self.n;
        for mut r in rsps {
            let partial = r.opcode == Opcode::RspPartial;
            if partial && self.cfg.dead.contains(&(q, r.route as usize)) {
                self.fault(8);
                continue;
            }
            if partial && r.ecode == 0 && self.rng.gen_bool(f.wrong_len) {
                let len = loop {
                    let l = self.rng.gen_range(1..=16u8);
                    if l != r.len {
                        break l;
                    }
                };
                r.len = len;
                r.payload.resize(16 * len as usize, 0xA5);
                self.fault(4);
            }
            let lat = if self.rng.gen_bool(f.late) {
                self.fault(7);
                self.latency(self.cfg.late_latency)
            } else {
                self.latency(self.cfg.hub_latency)
            };
            let at = now + lat;
            let frame = r.encode();
            self.ports[q].hub.push_at(at, frame.clone());
            if partial && self.rng.gen_bool(f.duplicate) {
                self.fault(2);
                self.ports[q].hub.push_at(at, frame.clone());
            }
            if self.rng.gen_bool(f.malformed) {
                self.fault(6);
                let kind = self.next_corruption;
                self.next_corruption = (kind + 1) % CORRUPTIONS;
                let bad = corrupt(&mut self.rng, kind, frame);
                self.ports[q].hub.push_at(at, bad);
            }
        }
        let at = now + self.latency(self.cfg.hub_latency);
        if self.rng.gen_bool(f.request_opcode) {
            self.fault(0);
            self.ports[q].hub.push_at(at, want.encode());
        }
        if self.rng.gen_bool(f.orphan) {
            self.fault(1);
            let mut r = Packet::new(Opcode::RspPartial);
            r.route = self.rng.gen_range(0..n) as u8;
            r.tag = self.next_forged_tag();
            r.maddr = 16 * self.rng.gen_range(0..1024u64);
            r.len = self.rng.gen_range(1..=16);
            r.payload = (0..16 * r.len as usize).map(|_| self.rng.gen()).collect();
            self.ports[q].hub.push_at(at, r.encode());
        }
        if self.rng.gen_bool(f.not_asked) {
            let cands: Vec<Asked> = self
                .asked
                .iter()
                .filter(|a| a.3 >> q & 1 == 0)
                .copied()
                .collect();
            if !cands.is_empty() {
                self.fault(3);
                let (req, tag, len, _) = cands[self.rng.gen_range(0..cands.len())];
                let mut r = Packet::new(Opcode::RspPartial);
                r.route = req;
                r.tag = tag;
                r.len = len;
                r.payload = vec![0x3C; 16 * len as usize];
                self.ports[q].hub.push_at(at, r.encode());
            }
        }
        if self.rng.gen_bool(f.forged) {
            self.fault(5);
            let read = self.rng.gen_bool(0.5);
            let mut r = Packet::new(if read {
                Opcode::RspRead
            } else {
                Opcode::RspError
            });
            r.route = self.rng.gen_range(0..n + 2) as u8;
            r.tag = self.next_forged_tag();
            r.maddr = 16 * self.rng.gen_range(0..1024u64);
            if read {
                r.len = self.rng.gen_range(1..=16);
                r.dtype = DType::F32;
                r.payload = (0..16 * r.len as usize).map(|_| self.rng.gen()).collect();
            } else {
                r.ecode = self.rng.gen_range(11..=13);
            }
            self.ports[q].hub.push_at(at, r.encode());
        }
        Ok(())
    }

    fn next_forged_tag(&mut self) -> u16 {
        let t = self.forged_tag;
        self.forged_tag = if t == 0xFFF { FORGED_TAG } else { t + 1 };
        t
    }

    /// A response packet SM `q` received.
    fn sm_response(&mut self, q: usize, frame: &[Flit]) -> Result<(), TbError> {
        let limits = self.gcfg.limits();
        let got = crate::diff::decode_any(frame, &limits)
            .map_err(|e| self.mismatch(format!("SM {q} received a bad frame ({e}): {frame:x?}")))?;
        let exp = &self.ports[q].exp_rsp;
        let key = |w: &Packet| {
            w.opcode == got.opcode
                && w.tag == got.tag
                && w.src_port == got.src_port
                && w.maddr == got.maddr
        };
        // Prefer an identical expected packet (forged responses may share a key).
        let i = exp
            .iter()
            .position(|w| *w == got)
            .or_else(|| exp.iter().position(key));
        let Some(i) = i else {
            return Err(self.mismatch(format!(
                "SM {q} received an unexpected response {got:?}; expected one of {} pending",
                exp.len()
            )));
        };
        let want = self.ports[q].exp_rsp.remove(i);
        crate::scoreboard::check_response(q, &want, &got, frame).map_err(|e| self.mismatch(e))?;
        self.stats.packets_checked += 1;
        self.ports[q].delivered.push(got);
        self.ports[q].last_delivery = self.sim.cycles();
        Ok(())
    }

    /// The requesters whose traffic may stay outstanding (a dead hub holds their
    /// entries, and the model has no timeout to free them).
    fn stuck(&self, q: usize) -> bool {
        self.red_timeout == 0 && self.cfg.dead.iter().any(|(_, r)| *r == q)
    }

    fn drained(&self) -> bool {
        let ports_done = self.ports.iter().enumerate().all(|(q, ps)| {
            (ps.sm.idle() || self.stuck(q))
                && ps.hub.idle()
                && ps.partials.is_empty()
                && ps.req_rx.is_empty()
                && ps.rsp_rx.is_empty()
                && (ps.exp_rsp.is_empty() || self.stuck(q))
                && ps
                    .exp_req
                    .iter()
                    .enumerate()
                    .all(|(s, f)| f.is_empty() || self.stuck(s))
        });
        let stuck = self.red_timeout == 0 && !self.cfg.dead.is_empty();
        ports_done && (stuck || self.golden.pending() == 0)
    }

    /// What is still outstanding, per port.
    pub fn pending_summary(&self) -> String {
        let mut s = format!("golden switch: {} pending; ", self.golden.pending());
        for (q, ps) in self.ports.iter().enumerate() {
            let req: usize = ps.exp_req.iter().map(|f| f.len()).sum();
            let sm = ps.sm.queue.len() + ps.sm.cur.is_some() as usize;
            let hub = ps.hub.queue.len() + ps.hub.cur.is_some() as usize;
            if sm + hub + req + ps.exp_rsp.len() > 0 {
                s.push_str(&format!(
                    "[port {q}{}: {sm} SM frames unsent, {hub} hub frames unsent, {req} requests and {} responses expected] ",
                    if self.stuck(q) { " (stuck requester)" } else { "" },
                    ps.exp_rsp.len()
                ));
            }
        }
        s
    }

    /// Runs one cycle.
    pub fn step(&mut self) -> Result<(), TbError> {
        let now = self.sim.cycles();
        let mut sm_ready = vec![false; self.n];
        let mut hub_ready = vec![false; self.n];
        for q in 0..self.n {
            let (v, d, l) = self.ports[q]
                .sm
                .offer(now, &mut self.rng, self.cfg.inject_rate);
            let p = &self.p;
            self.sim.set_bits(p.req_in_valid, q, 1, v as u128);
            self.sim.set_bits(p.req_in_data, 128 * q, 128, d);
            self.sim.set_bits(p.req_in_last, q, 1, l as u128);
            let (v, d, l) = self.ports[q]
                .hub
                .offer(now, &mut self.rng, self.cfg.hub_inject_rate);
            self.sim.set_bits(p.rsp_in_valid, q, 1, v as u128);
            self.sim.set_bits(p.rsp_in_data, 128 * q, 128, d);
            self.sim.set_bits(p.rsp_in_last, q, 1, l as u128);
            sm_ready[q] = self.rng.gen_bool(self.cfg.sm_ready_rate);
            hub_ready[q] = self.rng.gen_bool(self.cfg.hub_ready_rate);
            self.sim
                .set_bits(p.rsp_out_ready, q, 1, sm_ready[q] as u128);
            self.sim
                .set_bits(p.req_out_ready, q, 1, hub_ready[q] as u128);
        }
        self.sim.cycle()?;
        self.stats.cycles += 1;
        // The reduction unit's events are about frames accepted in earlier cycles
        // (the parser stores and forwards), so they come before this cycle's frames.
        self.red_events(now)?;
        for q in 0..self.n {
            let p = &self.p;
            let s = &self.sim;
            let req_in = s.bit(p.req_in_ready, q) && self.ports[q].sm.offering;
            let rsp_in = s.bit(p.rsp_in_ready, q) && self.ports[q].hub.offering;
            let req_out = s.bit(p.req_out_valid, q) && hub_ready[q];
            let req_flit = (
                s.get_bits(p.req_out_data, 128 * q, 128),
                s.bit(p.req_out_last, q),
            );
            let rsp_out = s.bit(p.rsp_out_valid, q) && sm_ready[q];
            let rsp_flit = (
                s.get_bits(p.rsp_out_data, 128 * q, 128),
                s.bit(p.rsp_out_last, q),
            );
            if self.trace {
                if req_in {
                    eprintln!("[{now}] sm{q} -> switch flit");
                }
                if rsp_in {
                    eprintln!("[{now}] hub{q} -> switch flit");
                }
                if req_out {
                    eprintln!(
                        "[{now}] switch -> hub{q} {:032x} last={}",
                        req_flit.0, req_flit.1
                    );
                }
                if rsp_out {
                    eprintln!(
                        "[{now}] switch -> sm{q} {:032x} last={}",
                        rsp_flit.0, rsp_flit.1
                    );
                }
            }
            if req_in {
                if let Some(frame) = self.ports[q].sm.taken() {
                    self.frame_in(q, Origin::Sm, &frame);
                }
            }
            if rsp_in {
                if let Some(frame) = self.ports[q].hub.taken() {
                    self.frame_in(q, Origin::Hub, &frame);
                }
            }
            if req_out {
                self.ports[q].dn += 1;
                self.ports[q].req_rx.push(req_flit.0);
                if req_flit.1 {
                    let frame = std::mem::take(&mut self.ports[q].req_rx);
                    self.count_dn_payload(q, &frame);
                    self.hub_request(q, &frame, now)?;
                }
            }
            if rsp_out {
                self.ports[q].dn += 1;
                self.ports[q].rsp_rx.push(rsp_flit.0);
                if rsp_flit.1 {
                    let frame = std::mem::take(&mut self.ports[q].rsp_rx);
                    self.count_dn_payload(q, &frame);
                    self.sm_response(q, &frame)?;
                }
            }
        }
        Ok(())
    }

    fn count_dn_payload(&mut self, q: usize, frame: &[Flit]) {
        if let Ok(p) = crate::diff::decode_any(frame, &self.gcfg.limits()) {
            self.ports[q].dn_pay += p.payload_flits() as u64;
        }
    }

    /// Runs until every frame is sent and every expectation met (those of
    /// stuck requesters excepted) and the RTL has been quiet for a while;
    /// fails after `limit` cycles with the pending summary. Then checks the counters.
    pub fn run(&mut self, limit: u64) -> Result<SwitchStats, TbError> {
        let start = self.sim.cycles();
        let mut quiet = 0;
        loop {
            self.step()?;
            if self.drained() {
                quiet += 1;
                if quiet >= 64 {
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
        self.stats.errors = self.errors().iter().flatten().sum();
        Ok(self.stats.clone())
    }

    /// The RTL's error counters, `[port][code - 1]`.
    pub fn errors(&self) -> Vec<[u64; ErrorCode::COUNT]> {
        (0..self.n)
            .map(|q| {
                let mut a = [0u64; ErrorCode::COUNT];
                for (c, slot) in a.iter_mut().enumerate() {
                    *slot = self
                        .sim
                        .get_bits(self.p.err, 32 * (q * ErrorCode::COUNT + c), 32)
                        as u64;
                }
                a
            })
            .collect()
    }

    /// The RTL's error counter of `code` at `port`.
    pub fn error(&self, port: usize, code: ErrorCode) -> u64 {
        self.errors()[port][code as usize - 1]
    }

    /// Compares the RTL's error counters with the golden switch's, and its flit
    /// counters with the flits that crossed each port.
    pub fn check_counters(&self) -> Result<(), TbError> {
        let per = |port: Port| -> Vec<u64> {
            (0..self.n)
                .map(|q| self.sim.get_bits(port, 32 * q, 32) as u64)
                .collect()
        };
        for (q, (rtl, gold)) in self.errors().iter().zip(&self.golden.errors).enumerate() {
            if rtl != gold {
                return Err(self.mismatch(format!(
                    "port {q} error counters: RTL {rtl:?}, golden {gold:?}"
                )));
            }
        }
        let obs = |f: fn(&PortState) -> u64| -> Vec<u64> { self.ports.iter().map(f).collect() };
        for (name, rtl, want) in [
            ("uplink flits", per(self.p.up_flits), obs(|p| p.up)),
            ("downlink flits", per(self.p.dn_flits), obs(|p| p.dn)),
            (
                "uplink payload flits",
                per(self.p.up_payload),
                obs(|p| p.up_pay),
            ),
            (
                "downlink payload flits",
                per(self.p.dn_payload),
                obs(|p| p.dn_pay),
            ),
        ] {
            if rtl != want {
                return Err(self.mismatch(format!("{name}: RTL {rtl:?}, observed {want:?}")));
            }
        }
        Ok(())
    }

    /// Finishes the waveform, if any.
    pub fn close(&mut self) {
        self.sim.close_vcd();
    }
}

/// Kinds of corruption of [`corrupt`].
pub const CORRUPTIONS: usize = 9;

/// A corrupted copy of a response frame, of kind `kind` (0..[`CORRUPTIONS`], the details drawn
/// from `rng`): a header bit flip (`ERR_HCC`), a truncated or overlong frame (`ERR_FRAME`), a bad
/// opcode, `len`, `tcount`, `dtype`, a misaligned `maddr` or a route ≥ NumPorts (some of these
/// are legal on some kinds, e.g. `len` on `RSP_ERROR`: the golden switch decides).
pub fn corrupt(rng: &mut ChaCha8Rng, kind: usize, mut f: Vec<Flit>) -> Vec<Flit> {
    let edit = |f: &mut Vec<Flit>, field: fields::Field, v: u64| {
        let mut b = to_bits(f[0]);
        fields::set(&mut b, field, v);
        f[0] = with_hcc(fields::from_bits(&b));
    };
    match kind % CORRUPTIONS {
        0 => f[0] ^= 1u128 << rng.gen_range(0..128),
        1 if f.len() > 1 => {
            let keep = rng.gen_range(1..f.len());
            f.truncate(keep);
        }
        1 | 2 => {
            let n = rng.gen_range(1..4);
            f.extend((0..n).map(|_| rng.gen::<u128>()));
        }
        3 => edit(
            &mut f,
            fields::OPCODE,
            [0u64, 7, 0xA, 0xC, 0xF][rng.gen_range(0..5)],
        ),
        4 => edit(&mut f, fields::LEN, [0u64, 17, 31][rng.gen_range(0..3)]),
        5 => edit(&mut f, fields::TCOUNT, rng.gen_range(1..4)),
        6 => edit(&mut f, fields::DTYPE, 3),
        7 => {
            let b = to_bits(f[0]);
            let m = fields::get(&b, fields::MADDR);
            edit(&mut f, fields::MADDR, m | 8);
        }
        _ => edit(&mut f, fields::ROUTE, rng.gen_range(32..256)),
    }
    f
}

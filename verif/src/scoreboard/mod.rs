//! The top-level bench's scoreboard ([`crate::tb::Bench`]): the golden model and what it
//! predicts (hub requests per flow, SM responses, memory accesses, link flit counts), checked
//! against what the bench observes on the RTL's outputs.
//!
//! The bench only reports what it observed, as [`Event`]s in the order it observed them; nothing
//! the bench drives depends on the golden model. So the scoreboard can run inline (each event
//! checked in the cycle it was observed) or on a thread of its own ([`Scoreboard::threaded`]):
//! the bench queues events for it ([`thread`]) and goes on simulating, and the thread applies
//! them in the same order, so every check is the same. A mismatch found on the thread carries the
//! cycle of the event that caused it, and the bench returns it at its next step. Whatever needs
//! the golden model's state (drained, counters, a reset) first waits for the thread to catch up.

use crate::tb::{same_access, RtlCounters, TbError};
use dysharp_sim::config::HubConfig;
use dysharp_sim::fabric::Fabric;
use dysharp_sim::hub::MemAccess;
use dysharp_sim::memory::SparseMemory;
use dysharp_sim::packet::{decode, Flit, Origin, Packet};
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};
use thread::Worker;

mod thread;
mod words;

/// Something the bench observed on the RTL (the frames' flits stay the bench's: a threaded
/// scoreboard copies them into its queue, [`words`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A frame the RTL accepted completely at SM `port`.
    FrameIn {
        /// SM port.
        port: usize,
        /// Its flits.
        frame: &'a [Flit],
    },
    /// A request packet hub `q` received (monitor tap).
    HubRequest {
        /// Hub.
        q: usize,
        /// Its flits.
        frame: &'a [Flit],
    },
    /// A response packet SM `q` received.
    SmResponse {
        /// SM port.
        q: usize,
        /// Its flits.
        frame: &'a [Flit],
    },
    /// One memory beat of hub `q`, as 16-byte line accesses.
    Mem {
        /// Hub.
        q: usize,
        /// Its lines.
        lines: BeatLines,
    },
}

/// Lines one [`Event::Mem`] carries at most (`MemLines` ≤ 4 at every registry configuration; a
/// longer beat is sent as several events, its lines in order).
pub const BEAT_LINES: usize = 4;

/// Up to [`BEAT_LINES`] consecutive 16-byte lines of one memory beat, as the bench saw them. Plain
/// arrays rather than a [`MemAccess`] per line: the bench hands several beats per cycle over to
/// the checker (on its thread: through memory the other core reads, [`words`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BeatLines {
    /// Address of the first line.
    pub addr: u64,
    /// Each line's write data (zero for a read).
    pub data: [u128; BEAT_LINES],
    /// Each line's byte strobes (zero for a read).
    pub strobe: [u16; BEAT_LINES],
    /// Lines held, 0..=[`BEAT_LINES`].
    pub len: u8,
    /// Writes, else reads.
    pub write: bool,
}

impl BeatLines {
    /// No lines yet of a beat at `addr`.
    pub fn new(addr: u64, write: bool) -> Self {
        BeatLines {
            addr,
            write,
            ..Default::default()
        }
    }

    /// The line accesses, in address order.
    pub fn accesses(&self) -> impl Iterator<Item = MemAccess> + '_ {
        (0..self.len as usize).map(move |i| {
            let addr = self.addr + 16 * i as u64;
            if self.write {
                MemAccess::Write {
                    addr,
                    data: self.data[i],
                    strobe: self.strobe[i],
                }
            } else {
                MemAccess::Read { addr }
            }
        })
    }
}

/// The events a memory beat of `n` lines takes, in order: (index of the event's first line, its
/// line count), [`BEAT_LINES`] lines an event.
pub fn beat_spans(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n)
        .step_by(BEAT_LINES)
        .map(move |start| (start, (n - start).min(BEAT_LINES)))
}

/// What the golden model expects at one port.
#[derive(Default)]
struct Expect {
    /// Memory accesses the RTL made but the golden hub has not yet predicted.
    mem_seen: VecDeque<MemAccess>,
    /// Expected request packets to this hub, per source port (flow), in order.
    exp_req: Vec<VecDeque<Packet>>,
    /// Expected responses to this SM.
    exp_rsp: Vec<Packet>,
    /// Memory accesses the golden hub made, not yet observed.
    mem_exp: VecDeque<MemAccess>,
}

/// Checks a request hub `q` received (decoded `got` of the wire frame `frame`) against the head
/// of its flow (the packets expected from its source port, in order), field by field and then
/// bit for bit, and returns the expected packet; the error says what differed. Shared by this
/// scoreboard and the switch-level bench's.
pub fn match_flow(
    flows: &mut [VecDeque<Packet>],
    q: usize,
    got: Packet,
    frame: &[Flit],
) -> Result<Packet, String> {
    let src = got.src_port as usize;
    let want = flows
        .get_mut(src)
        .and_then(|f| f.pop_front())
        .ok_or_else(|| format!("hub {q} received an unexpected packet from port {src}: {got:?}"))?;
    if got != want {
        return Err(format!(
            "hub {q}, packet from port {src}: {}",
            crate::diff::packet_diff(&want, &got)
        ));
    }
    if let Some(d) = crate::diff::frame_diff(&want, frame) {
        return Err(format!(
            "hub {q}, packet from port {src}: the frame is not the golden encoding: {d}"
        ));
    }
    Ok(want)
}

/// Checks a response SM `q` received, decoded as `got` from `frame`, against the expected
/// `want`: field by field, then bit for bit. Shared by this scoreboard and the switch-level
/// bench's.
pub fn check_response(q: usize, want: &Packet, got: &Packet, frame: &[Flit]) -> Result<(), String> {
    if want != got {
        return Err(format!(
            "SM {q} response: {}",
            crate::diff::packet_diff(want, got)
        ));
    }
    if let Some(d) = crate::diff::frame_diff(want, frame) {
        return Err(format!(
            "SM {q} response: the frame is not the golden encoding: {d}"
        ));
    }
    Ok(())
}

/// The golden model, its expectations and the checks.
pub struct Checker {
    /// The golden model (its switch and hubs are driven separately, see `tb`'s module docs).
    pub golden: Fabric,
    ports: Vec<Expect>,
    /// Wire flits per port the golden model expects on the uplinks and downlinks.
    exp_up: Vec<u64>,
    exp_dn: Vec<u64>,
    exp_up_pay: Vec<u64>,
    exp_dn_pay: Vec<u64>,
    /// Frames injected by the SMs.
    pub frames_in: u64,
    /// Packets checked (hub requests and SM responses).
    pub packets_checked: u64,
    /// Memory accesses checked.
    pub mem_checked: u64,
    hub: HubConfig,
    write_regions: Option<Vec<(u64, u64)>>,
    /// Cycle of the event being checked (for the errors).
    cycle: u64,
}

impl Checker {
    /// A scoreboard around `golden` (with its logs enabled); see
    /// [`crate::tb::BenchConfig::write_regions`] for `write_regions`.
    pub fn new(golden: Fabric, write_regions: Option<Vec<(u64, u64)>>) -> Self {
        let n = golden.cfg.num_ports;
        Checker {
            hub: golden.cfg.hub.clone(),
            golden,
            ports: (0..n)
                .map(|_| Expect {
                    exp_req: vec![VecDeque::new(); n],
                    ..Expect::default()
                })
                .collect(),
            exp_up: vec![0; n],
            exp_dn: vec![0; n],
            exp_up_pay: vec![0; n],
            exp_dn_pay: vec![0; n],
            frames_in: 0,
            packets_checked: 0,
            mem_checked: 0,
            write_regions,
            cycle: 0,
        }
    }

    fn mismatch(&self, what: String) -> TbError {
        TbError::Mismatch {
            cycle: self.cycle,
            what,
        }
    }

    /// Checks one event observed in `cycle`.
    pub fn apply(&mut self, cycle: u64, ev: Event<'_>) -> Result<(), TbError> {
        self.cycle = cycle;
        match ev {
            Event::FrameIn { port, frame } => {
                self.frame_in(port, frame);
                Ok(())
            }
            Event::HubRequest { q, frame } => self.hub_request(q, frame),
            Event::SmResponse { q, frame } => self.sm_response(q, frame),
            Event::Mem { q, lines } => {
                self.ports[q].mem_seen.extend(lines.accesses());
                self.check_mem(q)
            }
        }
    }

    /// Routes golden switch outputs into the expectation queues.
    fn expect(&mut self, outs: Vec<(usize, Packet)>) {
        for (q, pkt) in outs {
            self.exp_dn[q] += pkt.wire_flits() as u64;
            self.exp_dn_pay[q] += pkt.payload_flits() as u64;
            if pkt.opcode.is_request() {
                let src = pkt.src_port as usize;
                self.ports[q].exp_req[src].push_back(pkt);
            } else {
                self.ports[q].exp_rsp.push(pkt);
            }
        }
    }

    fn frame_in(&mut self, port: usize, frame: &[Flit]) {
        self.frames_in += 1;
        self.exp_up[port] += frame.len() as u64;
        let limits = self.golden.cfg.limits();
        if let Ok(p) = decode(frame, Origin::Sm, &limits) {
            self.exp_up_pay[port] += p.payload_flits() as u64;
        }
        let outs = self.golden.switch.ingress_frame(port, Origin::Sm, frame);
        self.expect(outs);
    }

    fn hub_request(&mut self, q: usize, frame: &[Flit]) -> Result<(), TbError> {
        let limits = self.golden.cfg.limits();
        let got = crate::diff::decode_any(frame, &limits).map_err(|e| {
            self.mismatch(format!(
                "hub {q} received an illegal frame ({e}): {frame:x?}"
            ))
        })?;
        let want =
            match_flow(&mut self.ports[q].exp_req, q, got, frame).map_err(|e| self.mismatch(e))?;
        self.packets_checked += 1;
        let hub = &mut self.golden.hubs[q];
        let rsps = hub.handle(&want);
        let log = hub.log.as_mut().map(std::mem::take).unwrap_or_default();
        self.ports[q].mem_exp.extend(log);
        for r in rsps {
            self.exp_up[q] += r.wire_flits() as u64;
            self.exp_up_pay[q] += r.payload_flits() as u64;
            let outs = self.golden.switch.ingress(q, Origin::Hub, r);
            self.expect(outs);
        }
        self.check_mem(q)
    }

    fn check_mem(&mut self, q: usize) -> Result<(), TbError> {
        while !self.ports[q].mem_exp.is_empty() && !self.ports[q].mem_seen.is_empty() {
            let want = self.ports[q].mem_exp.pop_front().expect("non-empty");
            let got = self.ports[q].mem_seen.pop_front().expect("non-empty");
            if !same_access(&want, &got) {
                return Err(self.mismatch(format!(
                    "hub {q} memory access: golden {want:x?}, RTL {got:x?}"
                )));
            }
            if let MemAccess::Write { addr, .. } = got {
                self.check_write_region(q, addr)?;
            }
            self.mem_checked += 1;
        }
        if self.ports[q].mem_exp.is_empty() && !self.ports[q].mem_seen.is_empty() {
            // The RTL may run ahead of the monitor by at most one packet's accesses.
            let ahead = self.ports[q].mem_seen.len();
            if ahead > 4 * 64 {
                return Err(self.mismatch(format!(
                    "hub {q} made {ahead} memory accesses the golden model did not predict: first {:x?}",
                    self.ports[q].mem_seen.front()
                )));
            }
        }
        Ok(())
    }

    /// The write-region property, checked after the golden hub has handled the packet (so its
    /// allocations count).
    fn check_write_region(&self, q: usize, addr: u64) -> Result<(), TbError> {
        let Some(extra) = &self.write_regions else {
            return Ok(());
        };
        let h = &self.hub;
        let hub = &self.golden.hubs[q];
        let epp = hub.counters.len() as u64;
        let al_end = h.al_base + 4 * (epp << h.log2_al_entries);
        if (h.al_base..al_end).contains(&addr) {
            return Ok(());
        }
        if addr >= h.data_base {
            let slot = (addr - h.data_base) >> h.log2_bsize;
            let local = slot >> h.log2_slots;
            let lidx = slot & ((1u64 << h.log2_slots) - 1);
            if local < epp && lidx < hub.counters[local as usize] as u64 {
                return Ok(());
            }
        }
        if extra.iter().any(|(a, b)| (*a..*b).contains(&addr)) {
            return Ok(());
        }
        Err(self.mismatch(format!(
            "hub {q} wrote {addr:#x}, outside every mapped AL region and scratch range"
        )))
    }

    fn sm_response(&mut self, q: usize, frame: &[Flit]) -> Result<(), TbError> {
        let limits = self.golden.cfg.limits();
        let got = crate::diff::decode_any(frame, &limits)
            .map_err(|e| self.mismatch(format!("SM {q} received a bad frame ({e}): {frame:x?}")))?;
        let Some(i) = self.ports[q].exp_rsp.iter().position(|w| {
            w.opcode == got.opcode
                && w.tag == got.tag
                && w.src_port == got.src_port
                && w.maddr == got.maddr
        }) else {
            return Err(self.mismatch(format!(
                "SM {q} received an unexpected response {got:?}; expected one of {} pending",
                self.ports[q].exp_rsp.len()
            )));
        };
        let want = self.ports[q].exp_rsp.remove(i);
        check_response(q, &want, &got, frame).map_err(|e| self.mismatch(e))?;
        self.packets_checked += 1;
        Ok(())
    }

    /// Whether every expectation has been met and the golden switch holds nothing.
    pub fn drained(&self) -> bool {
        self.ports.iter().all(|e| {
            e.mem_seen.is_empty()
                && e.mem_exp.is_empty()
                && e.exp_rsp.is_empty()
                && e.exp_req.iter().all(|f| f.is_empty())
        }) && self.golden.switch.pending() == 0
    }

    /// What is outstanding at port `q`: (hub requests expected, responses expected, memory
    /// accesses expected, accesses not predicted).
    pub fn outstanding(&self, q: usize) -> (usize, usize, usize, usize) {
        let e = &self.ports[q];
        (
            e.exp_req.iter().map(|f| f.len()).sum(),
            e.exp_rsp.len(),
            e.mem_exp.len(),
            e.mem_seen.len(),
        )
    }

    /// Compares the RTL's counters (read in `cycle`) with the golden model's.
    pub fn check_counters(&self, c: &RtlCounters, cycle: u64) -> Result<(), TbError> {
        let g = self.golden.error_counters();
        let check = |name: &str, rtl: &[u64], gold: &[u64]| -> Result<(), TbError> {
            if rtl != gold {
                return Err(TbError::Mismatch {
                    cycle,
                    what: format!("{name}: RTL {rtl:?}, golden {gold:?}"),
                });
            }
            Ok(())
        };
        for (q, (rtl, gold)) in c.errors.iter().zip(&g).enumerate() {
            check(&format!("port {q} error counters"), rtl, gold)?;
        }
        check("uplink flits", &c.up_flits, &self.exp_up)?;
        check("downlink flits", &c.dn_flits, &self.exp_dn)?;
        check(
            "uplink payload flits",
            &c.up_payload_flits,
            &self.exp_up_pay,
        )?;
        check(
            "downlink payload flits",
            &c.dn_payload_flits,
            &self.exp_dn_pay,
        )?;
        let (hits, misses): (Vec<u64>, Vec<u64>) = self
            .golden
            .hubs
            .iter()
            .map(|h| {
                let tlb = h.stats().tlb;
                (tlb.hits, tlb.misses)
            })
            .unzip();
        check("TLB hits", &c.tlb_hits, &hits)?;
        check("TLB misses", &c.tlb_misses, &misses)?;
        Ok(())
    }

    /// After a reset in the middle of traffic: every expectation is dropped and the golden
    /// model restarts from the GPU memories as the RTL left them (`mems`, one per port).
    pub fn restart(&mut self, mems: Vec<SparseMemory>) -> Result<(), TbError> {
        let mut golden =
            Fabric::new(&self.golden.cfg).map_err(|e| TbError::Config(e.to_string()))?;
        golden.enable_logs();
        for (h, m) in golden.hubs.iter_mut().zip(mems) {
            h.mem = m;
        }
        self.golden = golden;
        for e in &mut self.ports {
            e.mem_seen.clear();
            e.mem_exp.clear();
            e.exp_rsp.clear();
            e.exp_req.iter_mut().for_each(VecDeque::clear);
        }
        for v in [
            &mut self.exp_up,
            &mut self.exp_dn,
            &mut self.exp_up_pay,
            &mut self.exp_dn_pay,
        ] {
            v.iter_mut().for_each(|x| *x = 0);
        }
        Ok(())
    }
}

/// The checker thread's state ([`thread`]).
pub struct Shared {
    chk: Checker,
    /// The first mismatch the thread found, until the bench takes it.
    error: Option<TbError>,
    /// Set at the first mismatch: the thread applies no more events.
    stopped: bool,
    /// Words of whole events the thread has taken from the ring (applied, or skipped once
    /// stopped): the bench waits for this to reach the words it sent.
    applied: u64,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The scoreboard, inline or on a thread of its own.
pub struct Scoreboard(Mode);

enum Mode {
    Inline(Box<Checker>),
    Thread(Worker),
    /// Events dropped, nothing checked: the checker stays as it was made.
    Off(Box<Checker>),
}

/// The checker, once every event sent has been applied.
pub enum CheckerRef<'a> {
    /// Inline.
    Inline(&'a mut Checker),
    /// On its thread (which waits meanwhile).
    Locked(MutexGuard<'a, Shared>),
}

impl Deref for CheckerRef<'_> {
    type Target = Checker;
    fn deref(&self) -> &Checker {
        match self {
            CheckerRef::Inline(c) => c,
            CheckerRef::Locked(g) => &g.chk,
        }
    }
}

impl DerefMut for CheckerRef<'_> {
    fn deref_mut(&mut self) -> &mut Checker {
        match self {
            CheckerRef::Inline(c) => c,
            CheckerRef::Locked(g) => &mut g.chk,
        }
    }
}

impl Scoreboard {
    /// Events checked as they are observed.
    pub fn inline(chk: Checker) -> Self {
        Scoreboard(Mode::Inline(Box::new(chk)))
    }

    /// Events checked on a thread of its own (the bench then uses two cores).
    pub fn threaded(chk: Checker) -> Self {
        Scoreboard(Mode::Thread(Worker::spawn(chk)))
    }

    /// [`Scoreboard::threaded`] through a ring of `ring` words filled every `stage` words.
    #[cfg(test)]
    fn threaded_with(chk: Checker, ring: usize, stage: usize) -> Self {
        Scoreboard(Mode::Thread(Worker::with_sizes(chk, ring, stage)))
    }

    /// Events observed and dropped: nothing is checked (`dysharp bench-sim` measures the bench
    /// without its scoreboard this way). The checker answers as it was made: no packet
    /// checked, nothing expected.
    pub fn off(chk: Checker) -> Self {
        Scoreboard(Mode::Off(Box::new(chk)))
    }

    /// Whether the checker runs on its own thread.
    pub fn is_threaded(&self) -> bool {
        matches!(self.0, Mode::Thread(_))
    }

    /// Checks an event observed in `cycle` (on the thread: queues it, and returns a mismatch
    /// the thread found in an earlier event).
    pub fn push(&mut self, cycle: u64, ev: Event<'_>) -> Result<(), TbError> {
        match &mut self.0 {
            Mode::Inline(c) => c.apply(cycle, ev),
            Mode::Off(_) => Ok(()),
            Mode::Thread(w) => {
                w.push(cycle, &ev);
                match w.take_error() {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            }
        }
    }

    /// The checker after every event so far has been applied, or the first mismatch found.
    pub fn checker(&mut self) -> Result<CheckerRef<'_>, TbError> {
        match &mut self.0 {
            Mode::Inline(c) | Mode::Off(c) => Ok(CheckerRef::Inline(c)),
            Mode::Thread(w) => {
                w.sync();
                if let Some(e) = w.take_error() {
                    return Err(e);
                }
                Ok(CheckerRef::Locked(lock(w.state())))
            }
        }
    }

    /// The checker after every event so far has been applied, even past a mismatch (for
    /// statistics and reports).
    pub fn checker_anyway(&mut self) -> CheckerRef<'_> {
        match &mut self.0 {
            Mode::Inline(c) | Mode::Off(c) => CheckerRef::Inline(c),
            Mode::Thread(w) => {
                w.sync();
                CheckerRef::Locked(lock(w.state()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dysharp_sim::config::Config;
    use dysharp_sim::packet::Opcode;

    fn checker() -> Checker {
        let mut g = Fabric::new(&Config::default()).expect("the default fabric");
        g.enable_logs();
        Checker::new(g, None)
    }

    /// An SM response nobody asked for: the inline scoreboard fails on the event, the threaded
    /// one at a later push or when its state is asked for, with the event's cycle either way.
    #[test]
    fn a_mismatch_is_reported_with_its_cycle_inline_and_threaded() {
        let stray = Packet::new(Opcode::RspRead).encode();
        let mut inline = Scoreboard::inline(checker());
        let e = inline
            .push(
                7,
                Event::SmResponse {
                    q: 1,
                    frame: &stray,
                },
            )
            .unwrap_err();
        assert!(
            matches!(&e, TbError::Mismatch { cycle: 7, what } if what.contains("unexpected response")),
            "{e}"
        );
        let mut t = Scoreboard::threaded(checker());
        assert!(t.is_threaded());
        t.push(
            7,
            Event::SmResponse {
                q: 1,
                frame: &stray,
            },
        )
        .expect("queued, not yet checked");
        let e = match t.checker() {
            Err(e) => e,
            Ok(_) => panic!("the thread's mismatch is returned"),
        };
        assert!(matches!(e, TbError::Mismatch { cycle: 7, .. }), "{e}");
        // After the first mismatch the thread applies nothing more, and statistics still read.
        t.push(
            8,
            Event::SmResponse {
                q: 1,
                frame: &stray,
            },
        )
        .expect("queued");
        assert_eq!(t.checker_anyway().packets_checked, 0);
    }

    /// A beat of six lines is two events, of four lines and of two; a beat of up to four lines
    /// is one; none, none. An event's accesses are its lines in address order with their data and
    /// strobes; a read's are reads.
    #[test]
    fn a_long_beat_splits_into_events_in_order() {
        let spans = |n| beat_spans(n).collect::<Vec<_>>();
        assert_eq!(spans(6), [(0, 4), (4, 2)]);
        assert_eq!(spans(4), [(0, 4)]);
        assert_eq!(spans(1), [(0, 1)]);
        assert_eq!(spans(9), [(0, 4), (4, 4), (8, 1)]);
        assert!(spans(0).is_empty());
        let mut got = Vec::new();
        for (start, n) in beat_spans(6) {
            let mut b = BeatLines::new(0x1000 + 16 * start as u64, true);
            b.len = n as u8;
            for i in 0..n {
                let line = (start + i) as u128;
                (b.data[i], b.strobe[i]) = (0x100 + line, 0xF0 | line as u16);
            }
            got.extend(b.accesses());
        }
        let want: Vec<MemAccess> = (0..6u64)
            .map(|i| MemAccess::Write {
                addr: 0x1000 + 16 * i,
                data: 0x100 + i as u128,
                strobe: 0xF0 | i as u16,
            })
            .collect();
        assert_eq!(got, want);
        let mut read = BeatLines::new(0x40, false);
        read.len = 3;
        assert_eq!(
            read.accesses().collect::<Vec<_>>(),
            [0x40, 0x50, 0x60]
                .map(|addr| MemAccess::Read { addr })
                .to_vec()
        );
    }

    /// Switched off, the scoreboard drops what it is given: a stray response is no mismatch and
    /// nothing is counted.
    #[test]
    fn switched_off_it_checks_nothing() {
        let mut off = Scoreboard::off(checker());
        assert!(!off.is_threaded());
        let stray = Packet::new(Opcode::RspRead).encode();
        off.push(
            7,
            Event::SmResponse {
                q: 1,
                frame: &stray,
            },
        )
        .expect("dropped, not checked");
        let c = off.checker().expect("no mismatch");
        assert_eq!((c.packets_checked, c.frames_in), (0, 0));
        assert!(c.drained());
    }

    /// Through a ring shorter than any event (every event cut in two or more, the bench waiting
    /// for room at each), the thread checks what inline checking does: forty writes in, each
    /// one's expected hub request out, and a stray response at cycle 777 found as a mismatch of
    /// that cycle, with the forty packets checked before it. The default ring does the same.
    #[test]
    fn a_ring_shorter_than_an_event_checks_the_same() {
        let cfg = Config::default();
        let writes: Vec<Vec<Flit>> = (0..40u64)
            .map(|i| {
                let mut w = Packet::new(Opcode::Write);
                w.src_port = 0;
                w.maddr = cfg.hub.mbase + 64 * i;
                w.route = 1;
                w.payload = vec![i as u8; 16];
                w.len = 1;
                w.be = None;
                w.encode()
            })
            .collect();
        assert!(
            writes.iter().all(|f| f.len() + 1 > 3),
            "longer than the ring"
        );
        let stray = Packet::new(Opcode::RspRead).encode();
        let run = |mut sb: Scoreboard| {
            for (i, f) in writes.iter().enumerate() {
                let ev = Event::FrameIn { port: 0, frame: f };
                sb.push(i as u64, ev).expect("a legal write");
            }
            let fwd: Vec<Vec<Flit>> = {
                let c = sb.checker().expect("no mismatch");
                c.ports[1].exp_req[0].iter().map(Packet::encode).collect()
            };
            assert_eq!(fwd.len(), writes.len());
            for (i, f) in fwd.iter().enumerate() {
                let ev = Event::HubRequest { q: 1, frame: f };
                sb.push(100 + i as u64, ev).expect("the expected request");
            }
            let ev = Event::SmResponse {
                q: 1,
                frame: &stray,
            };
            // Inline the mismatch is immediate; on the thread it comes at a later push or here.
            let pushed = sb.push(777, ev);
            let e = match (pushed, sb.checker()) {
                (Err(e), _) | (Ok(()), Err(e)) => e,
                (Ok(()), Ok(_)) => panic!("the stray response is a mismatch"),
            };
            assert!(matches!(e, TbError::Mismatch { cycle: 777, .. }), "{e}");
            let c = sb.checker_anyway();
            (c.packets_checked, c.frames_in, c.outstanding(1))
        };
        let inline = run(Scoreboard::inline(checker()));
        assert_eq!((inline.0, inline.1), (40, 40));
        assert_eq!(run(Scoreboard::threaded_with(checker(), 3, 2)), inline);
        assert_eq!(run(Scoreboard::threaded(checker())), inline);
    }

    /// A legal unicast write through the golden switch: both modes expect the same request at
    /// the hub, and the same memory access, and count the same.
    #[test]
    fn both_modes_check_the_same_events() {
        let cfg = Config::default();
        let mut w = Packet::new(Opcode::Write);
        w.src_port = 0;
        w.maddr = cfg.hub.mbase;
        w.route = 1;
        w.payload = vec![0x5A; 16];
        w.len = 1;
        w.be = None;
        for threaded in [false, true] {
            let chk = checker();
            let mut sb = if threaded {
                Scoreboard::threaded(chk)
            } else {
                Scoreboard::inline(chk)
            };
            sb.push(
                1,
                Event::FrameIn {
                    port: 0,
                    frame: &w.encode(),
                },
            )
            .expect("frame in");
            let (req, _, _, _) = sb.checker().expect("no mismatch").outstanding(1);
            assert_eq!(req, 1, "the golden switch forwards the write to port 1");
            assert!(!sb.checker().expect("no mismatch").drained());
            let fwd = {
                let c = sb.checker().expect("no mismatch");
                c.ports[1].exp_req[0].front().cloned().expect("expected")
            };
            sb.push(
                5,
                Event::HubRequest {
                    q: 1,
                    frame: &fwd.encode(),
                },
            )
            .expect("the expected request");
            let c = sb.checker().expect("no mismatch");
            assert_eq!(c.packets_checked, 1, "threaded: {threaded}");
            assert_eq!(c.frames_in, 1);
            let (_, _, mem_exp, _) = c.outstanding(1);
            assert!(
                mem_exp > 0,
                "the golden hub's write is expected at the memory"
            );
        }
    }
}

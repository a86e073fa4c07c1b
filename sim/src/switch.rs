//! The switch (spec §5): ingress checks, routing and replication with pruned
//! target lists, static groups, and the load-reduce table with its fixed
//! reduction order, and its bounded wait (spec §5.3: a timed-out entry is
//! answered with `ERR_TIMEOUT` and quarantined until its late partials arrive
//! or a second timeout expires).

use crate::config::Config;
use crate::fxhash::FxHashMap;
use crate::hub::{error_response, reduce_with, response};
use crate::numerics::Accumulator;
use crate::packet::{decode, ErrorCode, Flit, Limits, Opcode, Origin, Packet};
use std::collections::VecDeque;
use std::ops::Range;

/// A pending load-reduce: the request and the partials received so far.
#[derive(Clone, Debug)]
struct Pending {
    /// The request (its header: the target list is not kept).
    request: Packet,
    ports: Vec<usize>,
    /// (port, partial or error code), in ascending port order.
    partials: Vec<(usize, Result<Vec<u8>, u8>)>,
    /// Answered with `ERR_TIMEOUT` ([`Switch::timeout`]): the entry is
    /// quarantined. A late partial from a port that had not answered is
    /// consumed without a count; the entry leaves when every port has answered
    /// or at [`Switch::expire`].
    timed_out: bool,
}

/// Why a timeout event cannot apply to the switch's state (the event came
/// from a driver, e.g. the RTL bench, and disagrees with the model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// No load-reduce entry is pending for (requester, tag).
    #[error("no load-reduce entry is pending for requester {requester}, tag {tag:#x}")]
    NotPending {
        /// Requester port.
        requester: usize,
        /// Tag.
        tag: u16,
    },
    /// The entry has every partial: it cannot time out.
    #[error("the entry of requester {requester}, tag {tag:#x} has every partial")]
    Complete {
        /// Requester port.
        requester: usize,
        /// Tag.
        tag: u16,
    },
    /// `timeout` of an entry that already timed out.
    #[error("the entry of requester {requester}, tag {tag:#x} has already timed out")]
    TimedOut {
        /// Requester port.
        requester: usize,
        /// Tag.
        tag: u16,
    },
    /// `expire` of an entry that has not timed out.
    #[error("the entry of requester {requester}, tag {tag:#x} has not timed out")]
    Live {
        /// Requester port.
        requester: usize,
        /// Tag.
        tag: u16,
    },
}

/// The replicas of a dynamic packet: its targets stably sorted by egress port
/// (so in list order within a port), and per replica, in ascending port order,
/// its egress port and its targets' range in `targets`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Replicas {
    /// The targets, grouped by port.
    pub(crate) targets: Vec<u16>,
    /// (egress port, range in `targets`) per replica.
    pub(crate) groups: Vec<(usize, Range<usize>)>,
}

/// Per-port error counters, indexed `[port][code - 1]`.
pub type ErrorCounters = Vec<[u64; ErrorCode::COUNT]>;

/// The switch model.
#[derive(Clone, Debug)]
pub struct Switch {
    limits: Limits,
    experts_per_port: usize,
    pending: FxHashMap<(u8, u16), Pending>,
    /// Per port, the requests that wait behind an ld_reduce whose (`src_port`,
    /// `tag`) entry is still pending (spec §5.3: the second stalls until the
    /// first completes), in arrival order: the port's request path is in order,
    /// so everything after a stalled ld_reduce waits with it.
    deferred: Vec<VecDeque<Packet>>,
    /// Error counters per port (codes 1–10 counted here, at the ingress port;
    /// `ERR_TIMEOUT` at the lowest port that did not answer).
    pub errors: ErrorCounters,
    /// Reused by load-reduces.
    acc: Accumulator,
}

impl Switch {
    /// A switch for `cfg`.
    pub fn new(cfg: &Config) -> Self {
        Switch {
            limits: cfg.limits(),
            experts_per_port: cfg.experts_per_port,
            pending: FxHashMap::default(),
            deferred: vec![VecDeque::new(); cfg.num_ports],
            errors: vec![[0; ErrorCode::COUNT]; cfg.num_ports],
            acc: Accumulator::default(),
        }
    }

    /// Counts an error at `port`.
    pub fn count(&mut self, port: usize, code: ErrorCode) {
        self.errors[port][code as usize - 1] += 1;
    }

    /// Number of load-reduce entries waiting for partials, plus the requests
    /// stalled behind a pending (`src_port`, `tag`) (see [`Switch::stalled`]):
    /// 0 when the switch holds nothing.
    pub fn pending(&self) -> usize {
        self.pending.len() + self.stalled()
    }

    /// Number of requests waiting behind an ld_reduce whose (`src_port`, `tag`)
    /// is still pending (spec §5.3); they leave when that entry completes.
    pub fn stalled(&self) -> usize {
        self.deferred.iter().map(VecDeque::len).sum()
    }

    /// Accepts a raw frame at `port`: checks it (spec §6) and routes it.
    ///
    /// Returns the packets leaving the switch, as (egress port, packet), in order.
    pub fn ingress_frame(
        &mut self,
        port: usize,
        origin: Origin,
        frame: &[Flit],
    ) -> Vec<(usize, Packet)> {
        match decode(frame, origin, &self.limits) {
            Ok(p) => self.ingress(port, origin, p),
            Err(e) => {
                self.count(port, e.code);
                if e.code == ErrorCode::Hcc {
                    return Vec::new();
                }
                let mut req = Packet::new(Opcode::RspError);
                req.maddr = e.maddr;
                req.tag = e.tag;
                req.src_port = port as u8;
                let mut r = error_response(&req, e.code);
                r.src_port = port as u8;
                vec![(port, r)]
            }
        }
    }

    /// Routes a packet that passed the ingress checks (or was built legal by a driver).
    ///
    /// A request from a port whose request path is stalled (an ld_reduce whose
    /// (`src_port`, `tag`) is pending, spec §5.3) waits, with everything after
    /// it, until that entry completes; its packets are then among what the
    /// completing partial returns.
    pub fn ingress(&mut self, port: usize, _origin: Origin, mut p: Packet) -> Vec<(usize, Packet)> {
        p.src_port = port as u8;
        if p.opcode.is_request()
            && port < self.deferred.len()
            && (!self.deferred[port].is_empty() || self.blocked(&p))
        {
            self.deferred[port].push_back(p);
            return Vec::new();
        }
        self.route(p)
    }

    /// Whether `p` is an ld_reduce whose (`src_port`, `tag`) is pending.
    fn blocked(&self, p: &Packet) -> bool {
        p.opcode.is_ld_reduce() && self.pending.contains_key(&(p.src_port, p.tag))
    }

    /// Routes the requests of `port` that waited behind a completed entry, in
    /// order, until one is blocked again.
    fn release(&mut self, port: usize, out: &mut Vec<(usize, Packet)>) {
        while let Some(p) = self.deferred.get(port).and_then(|w| w.front()) {
            if self.blocked(p) {
                break;
            }
            let p = self.deferred[port].pop_front().expect("front exists");
            out.extend(self.route(p));
        }
    }

    /// Routes a packet whose `src_port` is set and that may proceed.
    fn route(&mut self, p: Packet) -> Vec<(usize, Packet)> {
        match p.opcode {
            Opcode::DynSt => self.replicate_dynamic(p),
            Opcode::DynLdReduce => {
                let request = header_only(&p);
                let out = self.replicate_dynamic(p);
                let ports = out.iter().map(|(q, _)| *q).collect();
                self.open(request, ports);
                out
            }
            Opcode::Write | Opcode::Read => vec![(p.route as usize, p)],
            Opcode::McSt => self.members(p.route).map(|q| (q, p.clone())).collect(),
            Opcode::McLdReduce => {
                let ports: Vec<usize> = self.members(p.route).collect();
                let out = ports.iter().map(|q| (*q, p.clone())).collect();
                self.open(p, ports);
                out
            }
            Opcode::RspRead | Opcode::RspError | Opcode::RspReduce => vec![(p.route as usize, p)],
            Opcode::RspPartial => self.partial(p.src_port as usize, p),
        }
    }

    fn members(&self, group: u8) -> impl Iterator<Item = usize> {
        let mask = self.limits.groups.get(group as usize).copied().unwrap_or(0);
        (0..self.limits.num_ports).filter(move |q| mask >> q & 1 == 1)
    }

    /// Splits a dynamic target list by egress port into `r` (see [`Replicas`]).
    fn replicas_into(&self, targets: &[u16], r: &mut Replicas) {
        let epp = self.experts_per_port;
        r.targets.clear();
        r.groups.clear();
        // The ports, ascending, then each port's targets in list order.
        for &t in targets {
            let q = t as usize / epp;
            if let Err(at) = r.groups.binary_search_by_key(&q, |(p, _)| *p) {
                r.groups.insert(at, (q, 0..0));
            }
        }
        for (q, range) in &mut r.groups {
            let start = r.targets.len();
            r.targets
                .extend(targets.iter().filter(|&&t| t as usize / epp == *q));
            *range = start..r.targets.len();
        }
    }

    /// Routes a dynamic packet (`DYN_ST` or `DYN_LD_REDUCE`) that passed the
    /// ingress checks without building its replicas: stamps `src_port` and
    /// describes the replicas in `r`. The replica to a port is `p` with its
    /// `targets` replaced by that port's. A load-reduce opens its pending
    /// entry as [`Switch::ingress`] does. For a driver that runs every request
    /// to completion (the [`crate::fabric::Fabric`]): nothing is ever stalled.
    pub(crate) fn ingress_dynamic(&mut self, port: usize, p: &mut Packet, r: &mut Replicas) {
        p.src_port = port as u8;
        debug_assert!(
            self.stalled() == 0 && !self.blocked(p),
            "ingress_dynamic while stalled"
        );
        self.replicas_into(&p.targets, r);
        if p.opcode == Opcode::DynLdReduce {
            let ports = r.groups.iter().map(|(q, _)| *q).collect();
            self.open(header_only(p), ports);
        }
    }

    fn replicate_dynamic(&self, mut p: Packet) -> Vec<(usize, Packet)> {
        let mut r = Replicas::default();
        self.replicas_into(&p.targets, &mut r);
        p.targets = Vec::new();
        let n = r.groups.len();
        let mut out = Vec::with_capacity(n);
        for (i, (q, range)) in r.groups.into_iter().enumerate() {
            let targets = r.targets[range].to_vec();
            // The last replica takes the packet itself (no payload copy).
            let mut replica = if i + 1 == n {
                std::mem::replace(&mut p, Packet::new(Opcode::DynSt))
            } else {
                p.clone()
            };
            replica.targets = targets;
            out.push((q, replica));
        }
        out
    }

    fn open(&mut self, request: Packet, ports: Vec<usize>) {
        let key = (request.src_port, request.tag);
        self.pending.insert(
            key,
            Pending {
                request,
                partials: Vec::with_capacity(ports.len()),
                ports,
                timed_out: false,
            },
        );
    }

    fn partial(&mut self, port: usize, p: Packet) -> Vec<(usize, Packet)> {
        let key = (p.route, p.tag);
        let Some(entry) = self.pending.get_mut(&key) else {
            self.count(port, ErrorCode::Opcode);
            return Vec::new();
        };
        let at = match entry.partials.binary_search_by_key(&port, |(q, _)| *q) {
            Err(at) if entry.ports.contains(&port) => at,
            _ => {
                self.count(port, ErrorCode::Opcode);
                return Vec::new();
            }
        };
        if entry.timed_out {
            // Quarantined: the late partial is consumed without a count (the
            // timeout was counted once, at the lowest port that had not
            // answered); the entry leaves when every port has answered.
            entry
                .partials
                .insert(at, (port, Err(ErrorCode::Timeout as u8)));
            if entry.partials.len() < entry.ports.len() {
                return Vec::new();
            }
            self.pending.remove(&key);
            let mut out = Vec::new();
            self.release(key.0 as usize, &mut out);
            return out;
        }
        let want_len = 16 * entry.request.len as usize;
        let value = if p.ecode != 0 {
            Err(p.ecode)
        } else if p.payload.len() != want_len {
            // A partial whose length disagrees with the request cannot be reduced.
            Err(ErrorCode::Length as u8)
        } else {
            Ok(p.payload)
        };
        entry.partials.insert(at, (port, value));
        if entry.partials.len() < entry.ports.len() {
            return Vec::new();
        }
        let entry = self.pending.remove(&key).expect("entry present");
        let mut out = self.result(entry);
        self.release(key.0 as usize, &mut out);
        out
    }

    /// The pending entry of (`requester`, `tag`) times out (spec §5.3; the
    /// model has no time, so a driver says when): the requester gets an
    /// `RSP_ERROR` with `ERR_TIMEOUT` and `src_port` the lowest port that has
    /// not answered, `ERR_TIMEOUT` is counted once at that port, and the entry
    /// is quarantined (see [`Switch::expire`]).
    ///
    /// Returns the response as (egress port, packet).
    pub fn timeout(&mut self, requester: usize, tag: u16) -> Result<(usize, Packet), EntryError> {
        let key = (requester as u8, tag);
        let Some(entry) = self.pending.get_mut(&key) else {
            return Err(EntryError::NotPending { requester, tag });
        };
        if entry.timed_out {
            return Err(EntryError::TimedOut { requester, tag });
        }
        let answered = |q: &usize| entry.partials.iter().any(|(a, _)| a == q);
        let Some(missing) = entry.ports.iter().copied().filter(|q| !answered(q)).min() else {
            return Err(EntryError::Complete { requester, tag });
        };
        entry.timed_out = true;
        let mut r = error_response(&entry.request, ErrorCode::Timeout);
        r.src_port = missing as u8;
        self.count(missing, ErrorCode::Timeout);
        Ok((requester, r))
    }

    /// The quarantine of a timed-out entry ends before every port answered:
    /// the entry is freed (a later partial for it is an orphan, `ERR_OPCODE`),
    /// and the requests of `requester` that waited behind its (requester, tag)
    /// proceed; they are returned as (egress port, packet).
    pub fn expire(
        &mut self,
        requester: usize,
        tag: u16,
    ) -> Result<Vec<(usize, Packet)>, EntryError> {
        let key = (requester as u8, tag);
        match self.pending.get(&key) {
            None => return Err(EntryError::NotPending { requester, tag }),
            Some(e) if !e.timed_out => return Err(EntryError::Live { requester, tag }),
            Some(_) => {}
        }
        self.pending.remove(&key);
        let mut out = Vec::new();
        self.release(requester, &mut out);
        Ok(out)
    }

    /// The ports that have not answered the pending entry of (`requester`,
    /// `tag`), ascending (`None` if no entry is pending).
    pub fn missing(&self, requester: usize, tag: u16) -> Option<Vec<usize>> {
        let e = self.pending.get(&(requester as u8, tag))?;
        Some(
            e.ports
                .iter()
                .copied()
                .filter(|q| !e.partials.iter().any(|(a, _)| a == q))
                .collect(),
        )
    }

    /// The result of a completed entry, to its requester.
    fn result(&mut self, entry: Pending) -> Vec<(usize, Packet)> {
        let req = &entry.request;
        let requester = req.src_port as usize;
        // Ascending port order: `partials` is kept sorted.
        if let Some((q, code)) = entry
            .partials
            .iter()
            .find_map(|(q, v)| v.as_ref().err().map(|c| (*q, *c)))
        {
            let mut r =
                error_response(req, ErrorCode::from_code(code).unwrap_or(ErrorCode::Opcode));
            r.ecode = code;
            r.src_port = q as u8;
            return vec![(requester, r)];
        }
        let rows = entry.partials.iter().filter_map(|(_, v)| v.as_deref().ok());
        let mut r = response(req, Opcode::RspReduce);
        r.src_port = requester as u8;
        r.payload = reduce_with(&mut self.acc, req, rows);
        vec![(requester, r)]
    }
}

/// A copy of a packet's header fields (no targets, no payload): what a pending
/// load-reduce keeps of its request.
fn header_only(p: &Packet) -> Packet {
    Packet {
        targets: Vec::new(),
        payload: Vec::new(),
        ..*p
    }
}

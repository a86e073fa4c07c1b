//! The switch (spec §5): ingress checks, routing and replication with pruned
//! target lists, static groups, and the load-reduce table with its fixed
//! reduction order.

use crate::config::Config;
use crate::hub::{error_response, reduce, response};
use crate::packet::{decode, ErrorCode, Flit, Limits, Opcode, Origin, Packet};
use std::collections::{BTreeMap, HashMap};

/// A pending load-reduce: the request and the partials received so far.
#[derive(Clone, Debug)]
struct Pending {
    request: Packet,
    ports: Vec<usize>,
    partials: BTreeMap<usize, Result<Vec<u8>, u8>>,
}

/// Per-port error counters, indexed `[port][code - 1]`.
pub type ErrorCounters = Vec<[u64; ErrorCode::COUNT]>;

/// The switch model.
#[derive(Clone, Debug)]
pub struct Switch {
    limits: Limits,
    experts_per_port: usize,
    pending: HashMap<(u8, u16), Pending>,
    /// Error counters per port (codes 1–10 counted here, at the ingress port).
    pub errors: ErrorCounters,
}

impl Switch {
    /// A switch for `cfg`.
    pub fn new(cfg: &Config) -> Self {
        Switch {
            limits: cfg.limits(),
            experts_per_port: cfg.experts_per_port,
            pending: HashMap::new(),
            errors: vec![[0; ErrorCode::COUNT]; cfg.num_ports],
        }
    }

    /// Counts an error at `port`.
    pub fn count(&mut self, port: usize, code: ErrorCode) {
        self.errors[port][code as usize - 1] += 1;
    }

    /// Number of load-reduce entries waiting for partials.
    pub fn pending(&self) -> usize {
        self.pending.len()
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
    pub fn ingress(&mut self, port: usize, _origin: Origin, mut p: Packet) -> Vec<(usize, Packet)> {
        p.src_port = port as u8;
        match p.opcode {
            Opcode::DynSt => self.replicate_dynamic(p),
            Opcode::DynLdReduce => {
                let out = self.replicate_dynamic(p.clone());
                let ports = out.iter().map(|(q, _)| *q).collect();
                self.open(p, ports);
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
            Opcode::RspPartial => self.partial(port, p),
        }
    }

    fn members(&self, group: u8) -> impl Iterator<Item = usize> {
        let mask = self.limits.groups.get(group as usize).copied().unwrap_or(0);
        (0..self.limits.num_ports).filter(move |q| mask >> q & 1 == 1)
    }

    fn replicate_dynamic(&self, mut p: Packet) -> Vec<(usize, Packet)> {
        let mut by_port: BTreeMap<usize, Vec<u16>> = BTreeMap::new();
        for &t in &p.targets {
            by_port
                .entry(t as usize / self.experts_per_port)
                .or_default()
                .push(t);
        }
        p.targets = Vec::new();
        let n = by_port.len();
        let mut out = Vec::with_capacity(n);
        for (i, (q, targets)) in by_port.into_iter().enumerate() {
            // The last replica takes the packet itself (no payload copy).
            let mut r = if i + 1 == n {
                std::mem::replace(&mut p, Packet::new(Opcode::DynSt))
            } else {
                p.clone()
            };
            r.targets = targets;
            out.push((q, r));
        }
        out
    }

    fn open(&mut self, request: Packet, ports: Vec<usize>) {
        let key = (request.src_port, request.tag);
        self.pending.insert(
            key,
            Pending {
                request,
                ports,
                partials: BTreeMap::new(),
            },
        );
    }

    fn partial(&mut self, port: usize, p: Packet) -> Vec<(usize, Packet)> {
        let key = (p.route, p.tag);
        let Some(entry) = self.pending.get_mut(&key) else {
            self.count(port, ErrorCode::Opcode);
            return Vec::new();
        };
        if !entry.ports.contains(&port) || entry.partials.contains_key(&port) {
            self.count(port, ErrorCode::Opcode);
            return Vec::new();
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
        entry.partials.insert(port, value);
        if entry.partials.len() < entry.ports.len() {
            return Vec::new();
        }
        let entry = self.pending.remove(&key).expect("entry present");
        let req = &entry.request;
        let requester = req.src_port as usize;
        // Ascending port order: BTreeMap iteration order.
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
        let rows: Vec<Vec<u8>> = entry
            .partials
            .into_values()
            .map(|v| v.unwrap_or_default())
            .collect();
        let mut r = response(req, Opcode::RspReduce);
        r.src_port = requester as u8;
        r.payload = reduce(req, &rows);
        vec![(requester, r)]
    }
}

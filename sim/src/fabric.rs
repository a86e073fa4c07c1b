//! The whole modelled system: one switch, one hub per port, and the links between
//! them, processed at transaction level (each injected packet runs to completion).

use crate::config::{Config, ConfigError};
use crate::hub::Hub;
use crate::packet::{wire_flits, Flit, Origin, Packet};
use crate::switch::{ErrorCounters, Replicas, Switch};
use serde::Serialize;
use std::collections::VecDeque;

/// Flit and byte counters of every link, per port.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkCounters {
    /// GPU→switch wire flits.
    pub up_wire_flits: Vec<u64>,
    /// switch→GPU wire flits.
    pub down_wire_flits: Vec<u64>,
    /// GPU→switch payload bytes.
    pub up_payload_bytes: Vec<u64>,
    /// switch→GPU payload bytes.
    pub down_payload_bytes: Vec<u64>,
}

impl LinkCounters {
    /// Zeroed counters for `n` ports.
    pub fn new(n: usize) -> Self {
        LinkCounters {
            up_wire_flits: vec![0; n],
            down_wire_flits: vec![0; n],
            up_payload_bytes: vec![0; n],
            down_payload_bytes: vec![0; n],
        }
    }

    /// Element-wise difference `self - earlier`.
    pub fn since(&self, earlier: &LinkCounters) -> LinkCounters {
        let d = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(x, y)| x - y).collect();
        LinkCounters {
            up_wire_flits: d(&self.up_wire_flits, &earlier.up_wire_flits),
            down_wire_flits: d(&self.down_wire_flits, &earlier.down_wire_flits),
            up_payload_bytes: d(&self.up_payload_bytes, &earlier.up_payload_bytes),
            down_payload_bytes: d(&self.down_payload_bytes, &earlier.down_payload_bytes),
        }
    }
}

/// Switch, hubs and links.
#[derive(Clone, Debug)]
pub struct Fabric {
    /// Configuration.
    pub cfg: Config,
    /// The switch.
    pub switch: Switch,
    /// One hub per port.
    pub hubs: Vec<Hub>,
    /// Link counters.
    pub links: LinkCounters,
    /// Packets delivered to each port's SM (responses), in order, when kept.
    pub delivered: Vec<Vec<Packet>>,
    /// Packets each port's downlink carried (to hub and SM), in order, when kept.
    pub egress: Option<Vec<Vec<Packet>>>,
    /// Reused by dynamic requests.
    replicas: Replicas,
}

impl Fabric {
    /// A fabric for a validated configuration.
    pub fn new(cfg: &Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = cfg.num_ports;
        Ok(Fabric {
            cfg: cfg.clone(),
            switch: Switch::new(cfg),
            hubs: (0..n)
                .map(|p| Hub::new(p, &cfg.hub, cfg.experts_per_port))
                .collect(),
            links: LinkCounters::new(n),
            delivered: vec![Vec::new(); n],
            egress: None,
            replicas: Replicas::default(),
        })
    }

    /// Turns on the per-port egress log and the hubs' memory-access logs.
    pub fn enable_logs(&mut self) {
        self.egress = Some(vec![Vec::new(); self.cfg.num_ports]);
        for h in &mut self.hubs {
            h.log = Some(Vec::new());
        }
    }

    /// Error counters per port: the switch's (codes 1–10 and 14) plus the hubs' (11–13).
    pub fn error_counters(&self) -> ErrorCounters {
        let mut c = self.switch.errors.clone();
        for h in &self.hubs {
            for (slot, n) in c[h.port].iter_mut().zip(h.errors.iter()) {
                *slot += n;
            }
        }
        c
    }

    /// Injects a raw frame from port `port`'s SM and runs it to completion.
    pub fn inject_frame(&mut self, port: usize, frame: &[Flit]) {
        // Payload of a frame that passes the checks counts as payload; a bad frame's does not.
        let payload = crate::packet::decode(frame, Origin::Sm, &self.cfg.limits())
            .map(|p| p.payload_flits())
            .unwrap_or(0);
        self.count_up(port, frame.len(), payload);
        let out = self.switch.ingress_frame(port, Origin::Sm, frame);
        self.run(out);
    }

    /// Injects a packet a driver built legal (the ingress checks are skipped).
    pub fn inject(&mut self, port: usize, mut pkt: Packet) {
        self.inject_ref(port, &mut pkt);
    }

    /// [`Fabric::inject`] of a borrowed packet, so that a driver can reuse its
    /// allocations. The packet is left as the switch received it, with its
    /// `src_port` set to `port`.
    pub fn inject_ref(&mut self, port: usize, pkt: &mut Packet) {
        pkt.src_port = port as u8;
        self.count_up(port, pkt.wire_flits(), pkt.payload_flits());
        if self.egress.is_none() && pkt.opcode.is_dynamic() {
            self.run_dynamic(port, pkt);
            return;
        }
        let out = self.switch.ingress(port, Origin::Sm, pkt.clone());
        self.run(out);
    }

    /// [`Fabric::run`] of a dynamic request's replicas without building them:
    /// each hub handles the request with its own target list. The order of
    /// every effect is `run`'s: the replicas in ascending port order (each
    /// hub's responses entering the switch as it produces them), then what
    /// the switch sent on.
    fn run_dynamic(&mut self, port: usize, pkt: &mut Packet) {
        let mut replicas = std::mem::take(&mut self.replicas);
        self.switch.ingress_dynamic(port, pkt, &mut replicas);
        let pkt = &*pkt;
        let payload = 16 * pkt.payload_flits() as u64;
        let mut out = Vec::new();
        for (q, range) in &replicas.groups {
            let (q, targets) = (*q, &replicas.targets[range.clone()]);
            self.links.down_wire_flits[q] +=
                wire_flits(pkt.opcode, targets.len(), pkt.len as usize, pkt.ecode) as u64;
            self.links.down_payload_bytes[q] += payload;
            for rsp in self.hubs[q].handle_targets(pkt, targets) {
                self.count_up(q, rsp.wire_flits(), rsp.payload_flits());
                out.extend(self.switch.ingress(q, Origin::Hub, rsp));
            }
        }
        self.replicas = replicas;
        if !out.is_empty() {
            self.run(out);
        }
    }

    fn count_up(&mut self, port: usize, flits: usize, payload_flits: usize) {
        self.links.up_wire_flits[port] += flits as u64;
        self.links.up_payload_bytes[port] += 16 * payload_flits as u64;
    }

    fn run(&mut self, first: Vec<(usize, Packet)>) {
        let mut queue: VecDeque<(usize, Packet)> = first.into();
        while let Some((q, pkt)) = queue.pop_front() {
            self.links.down_wire_flits[q] += pkt.wire_flits() as u64;
            self.links.down_payload_bytes[q] += 16 * pkt.payload_flits() as u64;
            if let Some(eg) = &mut self.egress {
                eg[q].push(pkt.clone());
            }
            if pkt.opcode.is_request() {
                for rsp in self.hubs[q].handle(&pkt) {
                    self.count_up(q, rsp.wire_flits(), rsp.payload_flits());
                    queue.extend(self.switch.ingress(q, Origin::Hub, rsp));
                }
            } else {
                self.delivered[q].push(pkt);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HubConfig;
    use crate::numerics::{AccMode, DType, ReduceOp};
    use crate::packet::{ErrorCode, Opcode, Stage};
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The fast path for dynamic requests (no egress log) has exactly the
    /// effects of building and running every replica (egress and hub logs on,
    /// which also reads and writes memory line by line).
    #[test]
    fn dynamic_fast_path_matches_replicas() {
        let cfg = Config {
            num_ports: 8,
            experts_per_port: 4,
            max_targets: 32,
            groups: vec![0; 16],
            dynamic_ops: true,
            hub: HubConfig {
                log2_bsize: 9,
                log2_al_entries: 6,
                log2_slots: 3,
                tlb_entries: 4,
                tlb_ways: 2,
                ..HubConfig::default()
            },
        };
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut fast = Fabric::new(&cfg).expect("valid config");
        let mut logged = Fabric::new(&cfg).expect("valid config");
        logged.enable_logs();
        let experts: Vec<u16> = (0..32).collect();
        for i in 0..3000 {
            let n = rng.gen_range(1..=8);
            let targets: Vec<u16> = experts.choose_multiple(&mut rng, n).copied().collect();
            // AIdx 64..72 is outside the AL table (ERR_RANGE); slots run out (ERR_ALLOC);
            // loads of unwritten entries are ERR_UNMAPPED.
            let aidx = rng.gen_range(0..72u64);
            let len = rng.gen_range(1..=2u8);
            let mut p = if rng.gen_bool(0.5) {
                let mut p = Packet::new(Opcode::DynSt);
                p.be = Some(if rng.gen_bool(0.8) {
                    u128::MAX
                } else {
                    rng.gen()
                });
                p.payload = (0..16 * len as usize).map(|_| rng.gen()).collect();
                p
            } else {
                let mut p = Packet::new(Opcode::DynLdReduce);
                p.stage = Stage::Combine;
                p.dtype = DType::ALL[rng.gen_range(0..3)];
                p.rop = ReduceOp::ALL[rng.gen_range(0..3)];
                p.acc = AccMode::ALL[rng.gen_range(0..2)];
                p
            };
            p.maddr = cfg.hub.mbase + (aidx << 9) + 16 * rng.gen_range(0..2);
            p.tag = i as u16 & 0xFFF;
            p.len = len;
            p.targets = targets;
            let port = rng.gen_range(0..8);
            fast.inject(port, p.clone());
            logged.inject(port, p);
        }
        assert_eq!(fast.delivered, logged.delivered);
        assert!(fast
            .delivered
            .iter()
            .any(|d| d.iter().any(|p| p.opcode == Opcode::RspReduce)));
        assert_eq!(fast.links, logged.links);
        assert_eq!(fast.error_counters(), logged.error_counters());
        for code in [ErrorCode::Unmapped, ErrorCode::Range, ErrorCode::Alloc] {
            let n: u64 = fast
                .error_counters()
                .iter()
                .map(|c| c[code as usize - 1])
                .sum();
            assert!(n > 0, "{code} not exercised");
        }
        assert_eq!(fast.switch.pending(), logged.switch.pending());
        for (a, b) in fast.hubs.iter().zip(&logged.hubs) {
            assert_eq!(a.counters, b.counters);
            assert_eq!(a.stats(), b.stats());
            assert_eq!(a.mem.pages(), b.mem.pages());
        }
    }
}

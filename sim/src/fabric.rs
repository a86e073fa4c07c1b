//! The whole modelled system: one switch, one hub per port, and the links between
//! them, processed at transaction level (each injected packet runs to completion).

use crate::config::{Config, ConfigError};
use crate::hub::Hub;
use crate::packet::{Flit, Origin, Packet};
use crate::switch::{ErrorCounters, Switch};
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
        })
    }

    /// Turns on the per-port egress log and the hubs' memory-access logs.
    pub fn enable_logs(&mut self) {
        self.egress = Some(vec![Vec::new(); self.cfg.num_ports]);
        for h in &mut self.hubs {
            h.log = Some(Vec::new());
        }
    }

    /// Error counters per port: the switch's (codes 1–10) plus the hubs' (11–13).
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
    pub fn inject(&mut self, port: usize, pkt: Packet) {
        self.count_up(port, pkt.wire_flits(), pkt.payload_flits());
        let out = self.switch.ingress(port, Origin::Sm, pkt);
        self.run(out);
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

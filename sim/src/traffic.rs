//! Traffic accounting (spec §8, brief §4): payload and wire bytes per port and
//! direction for DySHARP and the DeepEP-like baseline, and the lower bound on
//! completion cycles.

use crate::packet::{wire_flits, Opcode};
use serde::Serialize;

/// Shape of the rows moved per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowShape {
    /// Bytes per row (`hidden × sizeof(dtype)`), a multiple of 16.
    pub row_bytes: usize,
}

impl RowShape {
    /// Payload flits of each packet a row is split into (≤ 16 each).
    pub fn chunks(&self) -> Vec<usize> {
        let flits = self.row_bytes / 16;
        (0..flits.div_ceil(16))
            .map(|c| (flits - 16 * c).min(16))
            .collect()
    }
}

/// One token's routing as seen by the switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// Source rank (port).
    pub src: usize,
    /// Algebraic index (global token index).
    pub aidx: u32,
    /// Top-k expert IDs in router order.
    pub experts: Vec<u16>,
}

impl Token {
    /// The remote targets (experts not on the source's port), in router order.
    pub fn remote(&self, experts_per_port: usize) -> Vec<u16> {
        self.experts
            .iter()
            .copied()
            .filter(|e| *e as usize / experts_per_port != self.src)
            .collect()
    }
}

/// Bytes per port and direction of one phase (dispatch or combine).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PhaseTraffic {
    /// DySHARP GPU→switch payload bytes per port.
    pub uplink_payload_bytes: Vec<u64>,
    /// DySHARP switch→GPU payload bytes per port.
    pub downlink_payload_bytes: Vec<u64>,
    /// Baseline GPU→switch payload bytes per port.
    pub baseline_uplink_payload_bytes: Vec<u64>,
    /// Baseline switch→GPU payload bytes per port.
    pub baseline_downlink_payload_bytes: Vec<u64>,
    /// DySHARP GPU→switch wire bytes per port.
    pub uplink_wire_bytes: Vec<u64>,
    /// DySHARP switch→GPU wire bytes per port.
    pub downlink_wire_bytes: Vec<u64>,
    /// Baseline GPU→switch wire bytes per port.
    pub baseline_uplink_wire_bytes: Vec<u64>,
    /// Baseline switch→GPU wire bytes per port.
    pub baseline_downlink_wire_bytes: Vec<u64>,
    /// DySHARP lower bound: max over ports and directions of wire flits.
    pub lower_bound_cycles: u64,
    /// Baseline lower bound.
    pub baseline_lower_bound_cycles: u64,
}

impl PhaseTraffic {
    fn new(n: usize) -> Self {
        let z = vec![0; n];
        PhaseTraffic {
            uplink_payload_bytes: z.clone(),
            downlink_payload_bytes: z.clone(),
            baseline_uplink_payload_bytes: z.clone(),
            baseline_downlink_payload_bytes: z.clone(),
            uplink_wire_bytes: z.clone(),
            downlink_wire_bytes: z.clone(),
            baseline_uplink_wire_bytes: z.clone(),
            baseline_downlink_wire_bytes: z,
            lower_bound_cycles: 0,
            baseline_lower_bound_cycles: 0,
        }
    }

    fn finish(&mut self) {
        let max = |a: &[u64], b: &[u64]| a.iter().chain(b).copied().max().unwrap_or(0) / 16;
        self.lower_bound_cycles = max(&self.uplink_wire_bytes, &self.downlink_wire_bytes);
        self.baseline_lower_bound_cycles = max(
            &self.baseline_uplink_wire_bytes,
            &self.baseline_downlink_wire_bytes,
        );
    }

    /// Total DySHARP payload bytes (uplink, downlink).
    pub fn payload_totals(&self) -> (u64, u64) {
        (
            self.uplink_payload_bytes.iter().sum(),
            self.downlink_payload_bytes.iter().sum(),
        )
    }

    /// Total baseline payload bytes (uplink, downlink).
    pub fn baseline_payload_totals(&self) -> (u64, u64) {
        (
            self.baseline_uplink_payload_bytes.iter().sum(),
            self.baseline_downlink_payload_bytes.iter().sum(),
        )
    }
}

/// Accounting of both phases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// Dispatch phase.
    pub dispatch: PhaseTraffic,
    /// Combine phase.
    pub combine: PhaseTraffic,
}

/// Counts the traffic of dispatch and combine for `tokens` (spec §8).
pub fn account(tokens: &[Token], ports: usize, experts_per_port: usize, row: RowShape) -> Traffic {
    let mut d = PhaseTraffic::new(ports);
    let mut c = PhaseTraffic::new(ports);
    let chunks = row.chunks();
    for t in tokens {
        let remote = t.remote(experts_per_port);
        if remote.is_empty() {
            continue;
        }
        let mut dests: Vec<(usize, usize)> = Vec::new(); // (port, targets there)
        for e in &remote {
            let q = *e as usize / experts_per_port;
            match dests.iter_mut().find(|(p, _)| *p == q) {
                Some(d) => d.1 += 1,
                None => dests.push((q, 1)),
            }
        }
        let s = t.src;
        for &len in &chunks {
            let pay = 16 * len as u64;
            let w = |op, tc| 16 * wire_flits(op, tc, len, 0) as u64;
            // Dispatch, DySHARP.
            d.uplink_payload_bytes[s] += pay;
            d.uplink_wire_bytes[s] += w(Opcode::DynSt, remote.len());
            // Combine, DySHARP: request up, result down.
            c.uplink_wire_bytes[s] += w(Opcode::DynLdReduce, remote.len());
            c.downlink_payload_bytes[s] += pay;
            c.downlink_wire_bytes[s] += w(Opcode::RspReduce, 0);
            for &(g, n) in &dests {
                d.downlink_payload_bytes[g] += pay;
                d.downlink_wire_bytes[g] += w(Opcode::DynSt, n);
                d.baseline_uplink_payload_bytes[s] += pay;
                d.baseline_downlink_payload_bytes[g] += pay;
                d.baseline_uplink_wire_bytes[s] += w(Opcode::Write, 0);
                d.baseline_downlink_wire_bytes[g] += w(Opcode::Write, 0);
                c.downlink_wire_bytes[g] += w(Opcode::DynLdReduce, n);
                c.uplink_payload_bytes[g] += pay;
                c.uplink_wire_bytes[g] += w(Opcode::RspPartial, 0);
                c.baseline_uplink_payload_bytes[g] += pay;
                c.baseline_downlink_payload_bytes[s] += pay;
                c.baseline_uplink_wire_bytes[g] += w(Opcode::Write, 0);
                c.baseline_downlink_wire_bytes[s] += w(Opcode::Write, 0);
            }
        }
    }
    d.finish();
    c.finish();
    Traffic {
        dispatch: d,
        combine: c,
    }
}

//! Traffic accounting (spec §8, brief §4): payload and wire bytes per port and
//! direction for DySHARP and the DeepEP-like baseline, and the lower bound on
//! completion cycles; [`account_nvls`] counts the NVLS workaround (static groups) the same way.

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

/// Bytes per port and direction of one phase under one scheme (used for the NVLS workaround,
/// beside the DySHARP and baseline fields of [`PhaseTraffic`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkBytes {
    /// GPU→switch payload bytes per port.
    pub uplink_payload_bytes: Vec<u64>,
    /// Switch→GPU payload bytes per port.
    pub downlink_payload_bytes: Vec<u64>,
    /// GPU→switch wire bytes per port.
    pub uplink_wire_bytes: Vec<u64>,
    /// Switch→GPU wire bytes per port.
    pub downlink_wire_bytes: Vec<u64>,
}

impl LinkBytes {
    fn new(n: usize) -> Self {
        LinkBytes {
            uplink_payload_bytes: vec![0; n],
            downlink_payload_bytes: vec![0; n],
            uplink_wire_bytes: vec![0; n],
            downlink_wire_bytes: vec![0; n],
        }
    }

    /// Total payload bytes (uplink, downlink).
    pub fn payload_totals(&self) -> (u64, u64) {
        (
            self.uplink_payload_bytes.iter().sum(),
            self.downlink_payload_bytes.iter().sum(),
        )
    }

    /// Total wire bytes (uplink, downlink).
    pub fn wire_totals(&self) -> (u64, u64) {
        (
            self.uplink_wire_bytes.iter().sum(),
            self.downlink_wire_bytes.iter().sum(),
        )
    }

    /// Lower bound in cycles: the maximum over ports and directions of wire flits (spec §8).
    pub fn lower_bound_cycles(&self) -> u64 {
        self.uplink_wire_bytes
            .iter()
            .chain(&self.downlink_wire_bytes)
            .copied()
            .max()
            .unwrap_or(0)
            / 16
    }
}

/// Accounting of the NVLS workaround for both phases (see [`account_nvls`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NvlsTraffic {
    /// Dispatch as an AllGather.
    pub dispatch: LinkBytes,
    /// Combine as a Reduce-Scatter.
    pub combine: LinkBytes,
}

/// Counts the traffic of the NVLS workaround (issue 15; static groups, spec §5.5): one static
/// group holding every port, because a static group cannot follow per-token routing.
///
/// - Dispatch is an AllGather: every token row, whatever its routing (even a token whose experts
///   are all local), goes up once per chunk as an `MC_ST` from its source `s` and down to every
///   member port, `s` included (spec §5.5: the source receives a copy when it is a member).
/// - Combine is a Reduce-Scatter: `s` sends one `MC_LD_REDUCE` request per chunk (uplink `s`); the
///   switch sends its replica down to every member (the request carries no payload); every member
///   sends a partial up (`RSP_PARTIAL`, zeros where it holds none of the token's experts) and `s`
///   receives one reduced row (`RSP_REDUCE`).
pub fn account_nvls(tokens: &[Token], ports: usize, row: RowShape) -> NvlsTraffic {
    let mut d = LinkBytes::new(ports);
    let mut c = LinkBytes::new(ports);
    let chunks = row.chunks();
    for t in tokens {
        let s = t.src;
        for &len in &chunks {
            let pay = 16 * len as u64;
            let w = |op| 16 * wire_flits(op, 0, len, 0) as u64;
            d.uplink_payload_bytes[s] += pay;
            d.uplink_wire_bytes[s] += w(Opcode::McSt);
            c.uplink_wire_bytes[s] += w(Opcode::McLdReduce);
            c.downlink_payload_bytes[s] += pay;
            c.downlink_wire_bytes[s] += w(Opcode::RspReduce);
            for g in 0..ports {
                d.downlink_payload_bytes[g] += pay;
                d.downlink_wire_bytes[g] += w(Opcode::McSt);
                c.downlink_wire_bytes[g] += w(Opcode::McLdReduce);
                c.uplink_payload_bytes[g] += pay;
                c.uplink_wire_bytes[g] += w(Opcode::RspPartial);
            }
        }
    }
    NvlsTraffic {
        dispatch: d,
        combine: c,
    }
}

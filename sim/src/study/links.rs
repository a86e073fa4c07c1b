//! Link traffic of one workload under the three schemes, and the communication lower bounds
//! with and without token-interleaved fusion (docs/paper.md, "Accounting").
//!
//! Every number comes from the existing accountings: [`crate::traffic::account`] (DySHARP and
//! the unicast baseline, spec §8) and [`crate::traffic::account_nvls`] (the NVLS workaround).
//! The trace is cut into tiles of `tile` tokens per rank (tile `i` holds tokens
//! `i·tile .. (i+1)·tile` of every rank) and each tile is accounted on its own; the per-phase
//! figures are the sums over tiles.
//!
//! Lower bounds, in cycles of one 16-byte flit per link and direction:
//! - *phase*: the maximum over ports and directions of one phase's wire flits (spec §8);
//! - *sequential*: Dispatch then Combine, `LB(D) + LB(C)` (DeepEP runs them as two kernels
//!   with the experts' compute between them);
//! - *fused*: token interleaving, Dispatch of tile `i` beside Combine of tile `i − 1` on the
//!   links (both directions busy): `Σ_{i=0..N} max_link(D_i + C_{i−1})` with `D_N = C_{−1} = 0`,
//!   so the first Dispatch and the last Combine run alone (pipeline fill and drain).

use crate::traffic::{account, account_nvls, LinkBytes, PhaseTraffic, RowShape, Token};
use serde::Serialize;

/// Totals of one scheme: payload and wire bytes per phase and direction, and lower bounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SchemeTotals {
    /// Dispatch GPU→switch payload bytes, all ports.
    pub dispatch_up: u64,
    /// Dispatch switch→GPU payload bytes.
    pub dispatch_down: u64,
    /// Combine GPU→switch payload bytes.
    pub combine_up: u64,
    /// Combine switch→GPU payload bytes.
    pub combine_down: u64,
    /// Wire bytes of both phases and directions.
    pub wire_total: u64,
    /// Wire bytes GPU→switch, both phases, all ports.
    pub wire_up: u64,
    /// Wire bytes switch→GPU, both phases, all ports.
    pub wire_down: u64,
    /// Dispatch lower bound (cycles).
    pub dispatch_lb: u64,
    /// Combine lower bound (cycles).
    pub combine_lb: u64,
    /// Token-interleaved (fused) lower bound of both phases (cycles); 0 when not modelled.
    pub fused_lb: u64,
    /// Both phases at once on the links, all tokens (no tiles, no fill or drain):
    /// `max_link(D + C)` (cycles). The paper's "pure communication" run.
    pub concurrent_lb: u64,
}

impl SchemeTotals {
    /// Payload bytes of both phases and directions.
    pub fn payload_total(&self) -> u64 {
        self.dispatch_up + self.dispatch_down + self.combine_up + self.combine_down
    }

    /// Dispatch then Combine: `LB(D) + LB(C)`.
    pub fn sequential_lb(&self) -> u64 {
        self.dispatch_lb + self.combine_lb
    }
}

/// Per-port wire bytes of one phase, uplink and downlink.
#[derive(Clone, Debug, Default)]
struct PortWire {
    up: Vec<u64>,
    down: Vec<u64>,
}

impl PortWire {
    fn zero(n: usize) -> Self {
        PortWire {
            up: vec![0; n],
            down: vec![0; n],
        }
    }

    fn add(&mut self, up: &[u64], down: &[u64]) {
        for (a, b) in self.up.iter_mut().zip(up) {
            *a += b;
        }
        for (a, b) in self.down.iter_mut().zip(down) {
            *a += b;
        }
    }

    fn max_flits(&self) -> u64 {
        self.up.iter().chain(&self.down).copied().max().unwrap_or(0) / 16
    }
}

/// `max_link(a + b) / 16`.
fn overlapped_flits(a: &PortWire, b: &PortWire) -> u64 {
    let sum = |x: &[u64], y: &[u64]| x.iter().zip(y).map(|(p, q)| p + q).max().unwrap_or(0);
    sum(&a.up, &b.up).max(sum(&a.down, &b.down)) / 16
}

/// Accumulates per-port payload and wire bytes of one scheme over tiles.
#[derive(Clone, Debug)]
struct Acc {
    d_pay: PortWire,
    c_pay: PortWire,
    d_wire: PortWire,
    c_wire: PortWire,
    fused: u64,
    prev_combine: PortWire,
}

impl Acc {
    fn new(n: usize) -> Self {
        Acc {
            d_pay: PortWire::zero(n),
            c_pay: PortWire::zero(n),
            d_wire: PortWire::zero(n),
            c_wire: PortWire::zero(n),
            fused: 0,
            prev_combine: PortWire::zero(n),
        }
    }

    /// Adds one tile: per-port payload and wire bytes of both phases.
    fn tile(&mut self, d: &LinkBytes, c: &LinkBytes) {
        let (dw, cw) = (wire(d), wire(c));
        self.d_pay
            .add(&d.uplink_payload_bytes, &d.downlink_payload_bytes);
        self.c_pay
            .add(&c.uplink_payload_bytes, &c.downlink_payload_bytes);
        self.d_wire.add(&dw.up, &dw.down);
        self.c_wire.add(&cw.up, &cw.down);
        self.fused += overlapped_flits(&dw, &self.prev_combine);
        self.prev_combine = cw;
    }

    fn finish(self, with_fused: bool) -> SchemeTotals {
        let s = |v: &[u64]| v.iter().sum::<u64>();
        SchemeTotals {
            wire_up: s(&self.d_wire.up) + s(&self.c_wire.up),
            wire_down: s(&self.d_wire.down) + s(&self.c_wire.down),
            concurrent_lb: overlapped_flits(&self.d_wire, &self.c_wire),
            dispatch_up: s(&self.d_pay.up),
            dispatch_down: s(&self.d_pay.down),
            combine_up: s(&self.c_pay.up),
            combine_down: s(&self.c_pay.down),
            wire_total: s(&self.d_wire.up)
                + s(&self.d_wire.down)
                + s(&self.c_wire.up)
                + s(&self.c_wire.down),
            dispatch_lb: self.d_wire.max_flits(),
            combine_lb: self.c_wire.max_flits(),
            fused_lb: if with_fused {
                self.fused + self.prev_combine.max_flits()
            } else {
                0
            },
        }
    }
}

/// DySHARP's side of a [`PhaseTraffic`] as [`LinkBytes`].
fn dysharp_side(p: &PhaseTraffic) -> LinkBytes {
    LinkBytes {
        uplink_payload_bytes: p.uplink_payload_bytes.clone(),
        downlink_payload_bytes: p.downlink_payload_bytes.clone(),
        uplink_wire_bytes: p.uplink_wire_bytes.clone(),
        downlink_wire_bytes: p.downlink_wire_bytes.clone(),
    }
}

/// The unicast baseline's side of a [`PhaseTraffic`] as [`LinkBytes`].
fn unicast_side(p: &PhaseTraffic) -> LinkBytes {
    LinkBytes {
        uplink_payload_bytes: p.baseline_uplink_payload_bytes.clone(),
        downlink_payload_bytes: p.baseline_downlink_payload_bytes.clone(),
        uplink_wire_bytes: p.baseline_uplink_wire_bytes.clone(),
        downlink_wire_bytes: p.baseline_downlink_wire_bytes.clone(),
    }
}

fn wire(l: &LinkBytes) -> PortWire {
    PortWire {
        up: l.uplink_wire_bytes.clone(),
        down: l.downlink_wire_bytes.clone(),
    }
}

/// The three schemes' totals for one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkStudy {
    /// DySHARP (dynamic multicast Dispatch, in-switch reduction Combine).
    pub dysharp: SchemeTotals,
    /// Unicast baseline (DeepEP-like: one copy per remote destination rank).
    pub unicast: SchemeTotals,
    /// NVLS workaround (AllGather Dispatch, Reduce-Scatter Combine over one static group).
    pub nvls: SchemeTotals,
    /// Hottest port's Dispatch downlink payload over the mean port's (DySHARP).
    pub hot_rank_ratio: f64,
    /// Ports (GPUs).
    pub ports: usize,
    /// Token deliveries to a GPU that holds at least one of the token's experts (the source
    /// included), summed over tokens: the deliveries an AllGather needs.
    pub useful_deliveries: u64,
    /// Token deliveries of an AllGather over all `ports` GPUs: `ports` per token.
    pub allgather_deliveries: u64,
}

impl LinkStudy {
    /// DySHARP payload over unicast's, minus 1 (negative: less traffic).
    pub fn dysharp_change(&self) -> f64 {
        ratio(self.dysharp.payload_total(), self.unicast.payload_total()) - 1.0
    }

    /// NVLS-workaround payload over unicast's, minus 1.
    pub fn nvls_vs_unicast(&self) -> f64 {
        ratio(self.nvls.payload_total(), self.unicast.payload_total()) - 1.0
    }

    /// The NVLS workaround's useless traffic: bytes beyond what DySHARP moves (each needed row
    /// once per link), over DySHARP's bytes.
    pub fn nvls_useless(&self) -> f64 {
        ratio(self.nvls.payload_total(), self.dysharp.payload_total()) - 1.0
    }

    /// The NVLS workaround's useless traffic in the paper's convention: deliveries to GPUs that
    /// hold none of the token's experts over deliveries to GPUs that hold one, `r / (1 − r)` with
    /// `r` the share of (token, GPU) pairs where the GPU holds none of the token's experts.
    pub fn nvls_useless_deliveries(&self) -> f64 {
        let useless = self.allgather_deliveries - self.useful_deliveries;
        ratio(useless, self.useful_deliveries)
    }

    /// The NVLS workaround (phases in sequence) against DySHARP fused: NVLS time over DySHARP's.
    pub fn nvls_slowdown(&self) -> f64 {
        ratio(self.nvls.sequential_lb(), self.dysharp.fused_lb)
    }

    /// The volume-over-bandwidth time of a scheme (cycles): its busier link direction's wire
    /// bytes spread evenly over all `ports` links at 16 bytes per cycle.
    pub fn volume_cycles(&self, s: &SchemeTotals) -> f64 {
        if self.ports == 0 {
            return 0.0;
        }
        s.wire_up.max(s.wire_down) as f64 / (16.0 * self.ports as f64)
    }

    /// The paper's "fraction of the ideal" for pure communication: DySHARP's time with
    /// Dispatch and Combine concurrent against "the ideal calculated with traffic volume and
    /// bandwidth" (its own wire volume over the links' bandwidth). Below 1 only by link
    /// imbalance.
    pub fn paper_fraction_of_ideal(&self) -> f64 {
        if self.dysharp.concurrent_lb == 0 {
            return 0.0;
        }
        self.volume_cycles(&self.dysharp) / self.dysharp.concurrent_lb as f64
    }

    /// The same with the fused (tiled, fill and drain) time instead of the concurrent one.
    pub fn paper_fraction_of_ideal_fused(&self) -> f64 {
        if self.dysharp.fused_lb == 0 {
            return 0.0;
        }
        self.volume_cycles(&self.dysharp) / self.dysharp.fused_lb as f64
    }

    /// Share of the unicast baseline's bytes that DySHARP removes (redundant copies).
    pub fn redundant_share(&self) -> f64 {
        -self.dysharp_change()
    }

    /// Ideal communication speed-up: unicast payload over DySHARP payload.
    pub fn ideal_speedup(&self) -> f64 {
        ratio(self.unicast.payload_total(), self.dysharp.payload_total())
    }

    /// Ideal speed-up counted in wire bytes (headers, byte enables, target lists and Combine
    /// requests included): unicast wire bytes over DySHARP's.
    pub fn wire_ideal_speedup(&self) -> f64 {
        ratio(self.unicast.wire_total, self.dysharp.wire_total)
    }

    /// Address translation alone (DySHARP, phases in sequence) against unicast in sequence.
    pub fn addressing_speedup(&self) -> f64 {
        ratio(self.unicast.sequential_lb(), self.dysharp.sequential_lb())
    }

    /// Fusion alone (unicast, phases interleaved) against unicast in sequence.
    pub fn fusion_only_speedup(&self) -> f64 {
        ratio(self.unicast.sequential_lb(), self.unicast.fused_lb)
    }

    /// DySHARP with fusion against unicast in sequence (DeepEP).
    pub fn fused_speedup(&self) -> f64 {
        ratio(self.unicast.sequential_lb(), self.dysharp.fused_lb)
    }

    /// DySHARP with fusion against the better of unicast in sequence and unicast fused.
    pub fn fused_vs_best_unicast(&self) -> f64 {
        let best = self.unicast.sequential_lb().min(self.unicast.fused_lb);
        ratio(best, self.dysharp.fused_lb)
    }

    /// Fused speed-up as a fraction of the wire-byte ideal.
    pub fn fraction_of_wire_ideal(&self) -> f64 {
        let ideal = self.wire_ideal_speedup();
        if ideal > 0.0 {
            self.fused_speedup() / ideal
        } else {
            0.0
        }
    }

    /// Fused speed-up as a fraction of the (payload) ideal.
    pub fn fraction_of_ideal(&self) -> f64 {
        let ideal = self.ideal_speedup();
        if ideal > 0.0 {
            self.fused_speedup() / ideal
        } else {
            0.0
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Accounts `tokens` (rank-major: token `r·tokens_per_rank + j` is token `j` of rank `r`, as
/// [`crate::trace::Trace::replay_tokens`] returns them) in tiles of `tile` tokens per rank.
/// Requires `tokens.len() == ports · tokens_per_rank` and `tile >= 1`.
pub fn study_links(
    tokens: &[Token],
    ports: usize,
    experts_per_port: usize,
    tokens_per_rank: usize,
    tile: usize,
    row: RowShape,
) -> LinkStudy {
    let tile = tile.max(1);
    let mut dys = Acc::new(ports);
    let mut uni = Acc::new(ports);
    let mut nvls = Acc::new(ports);
    let mut start = 0;
    let mut batch: Vec<Token> = Vec::new();
    let useful_deliveries: u64 = tokens
        .iter()
        .map(|t| {
            let mut ranks: Vec<usize> = t
                .experts
                .iter()
                .map(|&e| e as usize / experts_per_port.max(1))
                .collect();
            ranks.sort_unstable();
            ranks.dedup();
            ranks.len() as u64
        })
        .sum();
    while start < tokens_per_rank {
        let end = (start + tile).min(tokens_per_rank);
        batch.clear();
        for r in 0..ports {
            let base = r * tokens_per_rank;
            batch.extend_from_slice(&tokens[base + start..base + end]);
        }
        let t = account(&batch, ports, experts_per_port, row);
        dys.tile(&dysharp_side(&t.dispatch), &dysharp_side(&t.combine));
        uni.tile(&unicast_side(&t.dispatch), &unicast_side(&t.combine));
        let n = account_nvls(&batch, ports, row);
        nvls.tile(&n.dispatch, &n.combine);
        start = end;
    }
    let hot = {
        let d = &dys.d_pay.down;
        let total: u64 = d.iter().sum();
        let max = d.iter().copied().max().unwrap_or(0);
        if total == 0 {
            0.0
        } else {
            max as f64 * ports as f64 / total as f64
        }
    };
    LinkStudy {
        dysharp: dys.finish(true),
        unicast: uni.finish(true),
        nvls: nvls.finish(false),
        hot_rank_ratio: hot,
        ports,
        useful_deliveries,
        allgather_deliveries: (tokens.len() * ports) as u64,
    }
}

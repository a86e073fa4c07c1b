//! AL-TLB hit rate and walks against entries and ways (spec §7; docs/paper.md, "AL-TLB").
//!
//! Each hub has its own [`Tlb`] (the golden model's, round-robin replacement, set index
//! `AIdx mod sets`). A hub translates every (target expert, chunk) of every row it receives:
//! a row of `C` chunks to `n` targets on that hub is `C` passes over its `n` targets in list
//! order, chunk after chunk, as in the golden replay. A miss is a walk (one AL-entry read) and
//! fills the TLB, in Dispatch (allocating) and in Combine (the entry Dispatch wrote) alike.
//! Only remote targets reach a hub (local bypass, brief §3).
//!
//! Rows reach the hubs in a global token order: tokens `j` of ranks `0, 1, …, P−1`, then tokens
//! `j + 1`, … (all ranks send at once). Two schedules:
//! - [`Schedule::Phased`]: every token's Dispatch, then every token's Combine;
//! - [`Schedule::Fused`]: tiles of `tile` tokens per rank; Dispatch of tile `i` interleaved token
//!   by token with Combine of tile `i − 1` (the token-centric fusion), then the last Combine.
//!
//! Lookups never change a TLB's state (no LRU bits), so once a pass over a row's targets hits
//! everywhere every later pass of that row hits too: the sweep simulates passes until one hits
//! throughout and counts the rest as hits, which is exact.

use crate::hub::tlb::Tlb;
use crate::traffic::Token;
use serde::Serialize;

/// The order of Dispatch and Combine rows at the hubs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// All Dispatch, then all Combine.
    Phased,
    /// Token-interleaved: Dispatch of tile `i` beside Combine of tile `i − 1`.
    Fused,
}

impl Schedule {
    /// `phased` or `fused`.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Phased => "phased",
            Schedule::Fused => "fused",
        }
    }
}

/// Per-hub target lists of a trace, in global token order.
#[derive(Clone, Debug)]
pub struct HubStreams {
    ports: usize,
    tokens_per_rank: usize,
    tokens: usize,
    /// Per hub: (token position in global order, AIdx, range into `locals`).
    rows: Vec<Vec<(u32, u32, u32, u32)>>,
    /// Local expert indices of the targets, per row.
    locals: Vec<u32>,
}

impl HubStreams {
    /// Builds the streams of `tokens` (rank-major, `tokens_per_rank` per rank, AIdx as in the
    /// token) for `ports` hubs of `experts_per_port` experts.
    pub fn new(
        tokens: &[Token],
        ports: usize,
        experts_per_port: usize,
        tokens_per_rank: usize,
    ) -> Self {
        let mut rows = vec![Vec::new(); ports];
        let mut locals = Vec::new();
        for j in 0..tokens_per_rank {
            for r in 0..ports {
                let Some(t) = tokens.get(r * tokens_per_rank + j) else {
                    continue;
                };
                let pos = (j * ports + r) as u32;
                for (g, hub_rows) in rows.iter_mut().enumerate() {
                    if g == t.src {
                        continue;
                    }
                    let start = locals.len() as u32;
                    locals.extend(
                        t.experts
                            .iter()
                            .map(|&e| e as usize)
                            .filter(|e| e / experts_per_port == g)
                            .map(|e| (e % experts_per_port) as u32),
                    );
                    let end = locals.len() as u32;
                    if end > start {
                        hub_rows.push((pos, t.aidx, start, end));
                    }
                }
            }
        }
        HubStreams {
            ports,
            tokens_per_rank,
            tokens: tokens.len(),
            rows,
            locals,
        }
    }
}

/// Counters of one phase over all hubs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PhaseLookups {
    /// Translations (one per target and chunk).
    pub lookups: u64,
    /// Misses (walks).
    pub walks: u64,
    /// Rows × targets whose first chunk missed.
    pub first_chunk_walks: u64,
    /// Rows × targets (translations of a row's first chunk).
    pub row_targets: u64,
}

impl PhaseLookups {
    /// Hit rate over all translations (1 with none).
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            1.0
        } else {
            1.0 - self.walks as f64 / self.lookups as f64
        }
    }

    /// Share of row targets whose first chunk hit (1 with none).
    pub fn row_hit_rate(&self) -> f64 {
        if self.row_targets == 0 {
            1.0
        } else {
            1.0 - self.first_chunk_walks as f64 / self.row_targets as f64
        }
    }
}

/// One AL-TLB configuration's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TlbResult {
    /// Entries per hub.
    pub entries: usize,
    /// Ways.
    pub ways: usize,
    /// Schedule.
    pub schedule: Schedule,
    /// Tile (tokens per rank) of the fused schedule.
    pub tile: usize,
    /// Dispatch counters.
    pub dispatch: PhaseLookups,
    /// Combine counters.
    pub combine: PhaseLookups,
    /// Walks of both phases per token of the trace.
    pub walks_per_token: f64,
    /// Hit rate over both phases.
    pub hit_rate: f64,
    /// Lowest hit rate of one hub (both phases).
    pub worst_hub_hit_rate: f64,
}

/// One row on one hub: `C` passes over its targets.
fn translate_row(
    tlb: &mut Tlb,
    aidx: u32,
    locals: &[u32],
    chunks: usize,
    ph: &mut PhaseLookups,
) -> u64 {
    let n = locals.len() as u64;
    ph.lookups += n * chunks as u64;
    ph.row_targets += n;
    let mut walks = 0;
    for pass in 0..chunks {
        let mut missed = 0;
        for &l in locals {
            if tlb.lookup(l, aidx).is_none() {
                tlb.fill(l, aidx, 0);
                missed += 1;
            }
        }
        if pass == 0 {
            ph.first_chunk_walks += missed;
        }
        walks += missed;
        if missed == 0 {
            break;
        }
    }
    ph.walks += walks;
    walks
}

/// Runs one configuration over `streams`. `entries / ways` must be a power of two (spec §7);
/// `chunks` is the number of packets per row (`⌈row bytes / 256⌉`).
pub fn sweep_one(
    streams: &HubStreams,
    entries: usize,
    ways: usize,
    schedule: Schedule,
    tile: usize,
    chunks: usize,
) -> TlbResult {
    let mut dispatch = PhaseLookups::default();
    let mut combine = PhaseLookups::default();
    let mut worst: f64 = 1.0;
    let tile_positions = (tile.max(1) * streams.ports) as u32;
    for hub_rows in &streams.rows {
        let mut tlb = Tlb::new(entries, ways);
        let (mut d, mut c) = (PhaseLookups::default(), PhaseLookups::default());
        let row = |i: usize| {
            let (_, aidx, a, b) = hub_rows[i];
            (aidx, &streams.locals[a as usize..b as usize])
        };
        match schedule {
            Schedule::Phased => {
                for i in 0..hub_rows.len() {
                    let (aidx, l) = row(i);
                    translate_row(&mut tlb, aidx, l, chunks, &mut d);
                }
                for i in 0..hub_rows.len() {
                    let (aidx, l) = row(i);
                    translate_row(&mut tlb, aidx, l, chunks, &mut c);
                }
            }
            Schedule::Fused => {
                // Merge Dispatch rows of tile i with Combine rows of tile i - 1 by position
                // within the tile: at equal offsets the Dispatch row goes first.
                let (mut di, mut ci) = (0usize, 0usize);
                let n = hub_rows.len();
                while di < n || ci < n {
                    let d_key = hub_rows
                        .get(di)
                        .map(|r| (r.0 / tile_positions, r.0 % tile_positions));
                    let c_key = hub_rows
                        .get(ci)
                        .map(|r| (r.0 / tile_positions + 1, r.0 % tile_positions));
                    let take_d = match (d_key, c_key) {
                        (Some(dk), Some(ck)) => dk <= ck,
                        (Some(_), None) => true,
                        _ => false,
                    };
                    if take_d {
                        let (aidx, l) = row(di);
                        translate_row(&mut tlb, aidx, l, chunks, &mut d);
                        di += 1;
                    } else {
                        let (aidx, l) = row(ci);
                        translate_row(&mut tlb, aidx, l, chunks, &mut c);
                        ci += 1;
                    }
                }
            }
        }
        let lookups = d.lookups + c.lookups;
        if lookups > 0 {
            worst = worst.min(1.0 - (d.walks + c.walks) as f64 / lookups as f64);
        }
        for (acc, ph) in [(&mut dispatch, d), (&mut combine, c)] {
            acc.lookups += ph.lookups;
            acc.walks += ph.walks;
            acc.first_chunk_walks += ph.first_chunk_walks;
            acc.row_targets += ph.row_targets;
        }
    }
    let lookups = dispatch.lookups + combine.lookups;
    let walks = dispatch.walks + combine.walks;
    TlbResult {
        entries,
        ways,
        schedule,
        tile,
        dispatch,
        combine,
        walks_per_token: if streams.tokens == 0 {
            0.0
        } else {
            walks as f64 / streams.tokens as f64
        },
        hit_rate: if lookups == 0 {
            1.0
        } else {
            1.0 - walks as f64 / lookups as f64
        },
        worst_hub_hit_rate: worst,
    }
}

impl HubStreams {
    /// Tokens per rank of the trace.
    pub fn tokens_per_rank(&self) -> usize {
        self.tokens_per_rank
    }
}

//! Trace replay through the golden model: Dispatch (`DYN_ST`) then Combine
//! (`DYN_LD_REDUCE`) of every token, with the traffic counted on the modelled
//! links and every Combine result checked against a direct computation.

use crate::config::{Config, ConfigError, HubConfig};
use crate::fabric::{Fabric, LinkCounters};
use crate::hub::tlb::TlbStats;
use crate::memory::Reserve;
use crate::numerics::{reduce_lanes, AccMode, DType, ReduceOp};
use crate::packet::{Opcode, Packet, Stage};
use crate::traffic::{account, PhaseTraffic, RowShape, Token, Traffic};
use serde::Serialize;
use std::sync::mpsc::{self, TrySendError};

/// Token rows the reference thread may run ahead of Dispatch.
const STREAM_DEPTH: usize = 64;

/// Size of the memory reserves the reference thread makes for the hubs.
const RESERVE_BYTES: usize = 2 << 20;

/// What to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Number of ranks (ports).
    pub ep: usize,
    /// Number of experts.
    pub experts: usize,
    /// Hidden size (elements per row).
    pub hidden: usize,
    /// Element type.
    pub dtype: DType,
    /// Seed of the token data.
    pub seed: u64,
}

/// Why a replay cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The shape does not fit the switch or the spec's field widths.
    #[error("{0}")]
    Shape(String),
    /// The derived switch configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// One phase of a replay: analytic accounting plus what the model's links counted.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseReport {
    /// The accounting (spec §8) of this phase.
    #[serde(flatten)]
    pub traffic: PhaseTraffic,
    /// Packets injected by the SMs in this phase.
    pub packets: u64,
}

/// The workload a replay ran (shared by the golden and RTL reports; flattened into
/// their JSON).
#[derive(Clone, Debug, Serialize)]
pub struct ReplayShape {
    /// Tokens replayed.
    pub tokens: usize,
    /// EP ranks.
    pub ep: usize,
    /// Experts.
    pub experts: usize,
    /// Top-k.
    pub topk: usize,
    /// Hidden size actually replayed.
    pub hidden: usize,
    /// Element type.
    pub dtype: DType,
    /// Bytes of one token row.
    pub payload_bytes_per_token: usize,
}

impl ReplayShape {
    /// The shape of replaying `tokens` tokens of top-`topk` with `opts`.
    pub fn new(tokens: usize, topk: usize, opts: &ReplayOptions) -> Self {
        ReplayShape {
            tokens,
            ep: opts.ep,
            experts: opts.experts,
            topk,
            hidden: opts.hidden,
            dtype: opts.dtype,
            payload_bytes_per_token: opts.hidden * opts.dtype.bytes(),
        }
    }
}

/// Result of a replay.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    /// Engine name.
    pub engine: String,
    /// The workload replayed.
    #[serde(flatten)]
    pub shape: ReplayShape,
    /// Dispatch phase.
    pub dispatch: PhaseReport,
    /// Combine phase.
    pub combine: PhaseReport,
    /// Differences found: Combine results, AL allocation counts and link counters
    /// that differ from the direct computation.
    pub mismatches: u64,
    /// Combine results checked.
    pub results_checked: u64,
    /// AL-TLB counters summed over hubs.
    pub tlb: TlbStats,
    /// AL-TLB hit rate.
    pub tlb_hit_rate: f64,
    /// Error counters summed over ports, per code (index = code - 1).
    pub errors: Vec<u64>,
}

/// Number of bits to hold `n` distinct values (at least 1).
fn bits_for(n: usize) -> u32 {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1)
}

/// The switch configuration a replay of this shape uses.
pub fn replay_config(
    opts: &ReplayOptions,
    tokens: usize,
    topk: usize,
) -> Result<Config, ReplayError> {
    if opts.ep == 0 || opts.experts == 0 || !opts.experts.is_multiple_of(opts.ep) {
        return Err(ReplayError::Shape(format!(
            "{} experts cannot be split evenly over {} ranks",
            opts.experts, opts.ep
        )));
    }
    let row_bytes = opts.hidden * opts.dtype.bytes();
    if row_bytes == 0 || !row_bytes.is_multiple_of(16) {
        return Err(ReplayError::Shape(format!(
            "hidden {} x {} = {row_bytes} bytes is not a positive multiple of 16 bytes (one flit)",
            opts.hidden,
            opts.dtype.name()
        )));
    }
    let epp = opts.experts / opts.ep;
    let hub = HubConfig {
        log2_bsize: bits_for(row_bytes).max(4),
        log2_al_entries: bits_for(tokens),
        log2_slots: bits_for(tokens),
        ..HubConfig::default()
    };
    let top = hub.data_base as u128 + ((epp as u128) << (hub.log2_slots + hub.log2_bsize));
    if top >> 48 != 0 {
        return Err(ReplayError::Shape(format!(
            "{tokens} tokens of {row_bytes} bytes for {epp} experts per rank overflow the 48-bit address space"
        )));
    }
    Ok(Config {
        num_ports: opts.ep,
        experts_per_port: epp,
        max_targets: topk.max(32),
        groups: vec![0; 16],
        dynamic_ops: true,
        hub,
    })
}

/// Deterministic token row data: finite values of moderate range (|x| in
/// [2^-8, 2^8)), both signs, random mantissas, generated directly in `dtype`.
pub fn token_row(dtype: DType, seed: u64, aidx: u32, hidden: usize, out: &mut Vec<u8>) {
    out.clear();
    out.reserve(hidden * dtype.bytes());
    let mut x = seed ^ (aidx as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    for _ in 0..hidden {
        // splitmix64
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let sign = (z >> 63) as u32;
        let e = (z >> 59) as u32 & 15; // exponent offset 0..15 → 2^-8 .. 2^7
        match dtype {
            DType::Bf16 => {
                let v = (sign << 15) | ((127 - 8 + e) << 7) | (z as u32 & 0x7F);
                out.extend_from_slice(&(v as u16).to_le_bytes());
            }
            DType::F16 => {
                let v = (sign << 15) | ((15 - 8 + e) << 10) | (z as u32 & 0x3FF);
                out.extend_from_slice(&(v as u16).to_le_bytes());
            }
            DType::F32 => {
                let v = (sign << 31) | ((127 - 8 + e) << 23) | (z as u32 & 0x7F_FFFF);
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// The multimem address of chunk `chunk` of token `aidx`'s row.
pub fn chunk_maddr(cfg: &Config, aidx: u32, chunk: usize) -> u64 {
    cfg.hub.mbase + ((aidx as u64) << cfg.hub.log2_bsize) + 256 * chunk as u64
}

/// The transaction tag of a chunk (12 bits, wrapping).
fn chunk_tag(aidx: u32, chunk: usize, chunks: usize) -> u16 {
    (aidx as usize * chunks + chunk) as u16 & 0xFFF
}

/// The Dispatch `DYN_ST` of chunk `chunk` (of `len` flits) of a token's `row`.
pub fn dispatch_packet(
    cfg: &Config,
    t: &Token,
    remote: &[u16],
    chunk: usize,
    len: usize,
    dtype: DType,
    row: &[u8],
) -> Packet {
    let mut p = Packet::new(Opcode::DynSt);
    p.dtype = dtype;
    p.targets = remote.to_vec();
    p.be = Some(u128::MAX);
    set_dispatch_chunk(cfg, &mut p, t, chunk, len, row);
    p
}

/// Makes `p`, a [`dispatch_packet`] of token `t`, that of chunk `chunk` (of `len` flits).
fn set_dispatch_chunk(
    cfg: &Config,
    p: &mut Packet,
    t: &Token,
    chunk: usize,
    len: usize,
    row: &[u8],
) {
    p.maddr = chunk_maddr(cfg, t.aidx, chunk);
    p.tag = chunk_tag(t.aidx, chunk, row.len().div_ceil(256));
    p.len = len as u8;
    p.payload.clear();
    p.payload
        .extend_from_slice(&row[256 * chunk..256 * chunk + 16 * len]);
}

/// The Combine `DYN_LD_REDUCE` of chunk `chunk` of `chunks` (of `len` flits) of a token.
pub fn combine_packet(
    cfg: &Config,
    t: &Token,
    remote: &[u16],
    chunk: usize,
    chunks: usize,
    len: usize,
    dtype: DType,
) -> Packet {
    let mut p = Packet::new(Opcode::DynLdReduce);
    p.stage = Stage::Combine;
    p.dtype = dtype;
    p.targets = remote.to_vec();
    set_combine_chunk(cfg, &mut p, t, chunk, chunks, len);
    p
}

/// Makes `p`, a [`combine_packet`] of token `t`, that of chunk `chunk` (of `len` flits).
fn set_combine_chunk(
    cfg: &Config,
    p: &mut Packet,
    t: &Token,
    chunk: usize,
    chunks: usize,
    len: usize,
) {
    p.maddr = chunk_maddr(cfg, t.aidx, chunk);
    p.tag = chunk_tag(t.aidx, chunk, chunks);
    p.len = len as u8;
}

/// Replays `tokens` (one (step, layer)) through the golden model.
///
/// `progress` is called with (tokens done, total) during each phase.
pub fn replay_golden(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
    mut progress: impl FnMut(&str, usize, usize),
) -> Result<ReplayReport, ReplayError> {
    let cfg = replay_config(opts, tokens.len(), topk)?;
    if let Some(t) = tokens
        .iter()
        .find(|t| t.src >= opts.ep || t.experts.iter().any(|e| *e as usize >= opts.experts))
    {
        return Err(ReplayError::Shape(format!(
            "token {} (rank {}) names an expert or rank outside {} experts / {} ranks",
            t.aidx, t.src, opts.experts, opts.ep
        )));
    }
    let mut fabric = Fabric::new(&cfg)?;
    let epp = cfg.experts_per_port;
    let row = RowShape {
        row_bytes: opts.hidden * opts.dtype.bytes(),
    };
    let chunks = row.chunks();
    let expected: Traffic = account(tokens, opts.ep, epp, row);
    // Row bytes each hub will hold: one block per remote (expert, token) pair.
    let mut need = vec![0usize; opts.ep];
    for t in tokens {
        for e in t.remote(epp) {
            need[e as usize / epp] += 1 << cfg.hub.log2_bsize;
        }
    }
    let mut mismatches = 0u64;
    let lost = || ReplayError::Shape("the reference thread panicked".into());
    std::thread::scope(|scope| -> Result<ReplayReport, ReplayError> {
        // While the fabric runs Dispatch, a second thread makes the token rows
        // (streamed to Dispatch in token order through a bounded queue, so they
        // are never all held at once) and computes the direct Combine results.
        // Whenever that queue is full, and after the last row, the thread faults
        // in memory for the hubs' rows (`Reserve`s, up to what Dispatch will
        // write), which Dispatch hands to the hubs: the page faults of the
        // modelled memories are much of Dispatch's cost.
        let (row_tx, row_rx) = mpsc::sync_channel::<Vec<u8>>(STREAM_DEPTH);
        let (reserve_tx, reserve_rx) = mpsc::channel::<Reserve>();
        let reserve_total: usize = need.iter().sum();
        let reference_thread = scope.spawn(move || {
            let mut references = Vec::with_capacity(tokens.len());
            let mut reserved = 0;
            // Makes one reserve; false when enough are made or Dispatch is over.
            let mut reserve = || {
                reserved < reserve_total && {
                    reserved += RESERVE_BYTES;
                    reserve_tx.send(Reserve::new(RESERVE_BYTES)).is_ok()
                }
            };
            for t in tokens {
                let mut row = Vec::new();
                token_row(opts.dtype, opts.seed, t.aidx, opts.hidden, &mut row);
                let per_port = targets_per_port(&t.remote(epp), epp);
                let mut out = Vec::new();
                if !per_port.is_empty() {
                    direct_combine(opts.dtype, &row, &per_port, &mut out);
                }
                references.push(out);
                loop {
                    match row_tx.try_send(row) {
                        Ok(()) => break,
                        Err(TrySendError::Full(r)) if reserve() => row = r,
                        Err(TrySendError::Full(r)) => {
                            if row_tx.send(r).is_err() {
                                return references;
                            }
                            break;
                        }
                        Err(TrySendError::Disconnected(_)) => return references,
                    }
                }
            }
            drop(row_tx);
            while reserve() {}
            references
        });

        // Dispatch.
        let mut dispatch_packets = 0u64;
        let before = fabric.links.clone();
        // Set when the reference thread stops early (it panicked): the thread is
        // joined below before reporting it.
        let mut rows_lost = false;
        for (i, t) in tokens.iter().enumerate() {
            while let Ok(r) = reserve_rx.try_recv() {
                give_reserve(&mut fabric, &need, r);
            }
            let Ok(buf) = row_rx.recv() else {
                rows_lost = true;
                break;
            };
            let remote = t.remote(epp);
            if remote.is_empty() {
                continue;
            }
            // One packet per token, reused for each chunk (the fabric borrows it).
            let mut p = dispatch_packet(&cfg, t, &remote, 0, chunks[0], opts.dtype, &buf);
            for (c, &len) in chunks.iter().enumerate() {
                set_dispatch_chunk(&cfg, &mut p, t, c, len, &buf);
                fabric.inject_ref(t.src, &mut p);
                dispatch_packets += 1;
            }
            if i % 256 == 0 {
                progress("dispatch", i, tokens.len());
            }
        }
        // Stops the reserves.
        drop(reserve_rx);
        let references = reference_thread.join().map_err(|_| lost())?;
        if rows_lost {
            return Err(lost());
        }
        let dispatch_links = fabric.links.since(&before);
        mismatches += compare_links(&dispatch_links, &expected.dispatch);

        // Every remote (expert, token) pair allocated exactly one slot.
        let mut want_alloc = vec![0u32; opts.experts];
        for t in tokens {
            for e in t.remote(epp) {
                want_alloc[e as usize] += 1;
            }
        }
        for (e, want) in want_alloc.iter().enumerate() {
            if fabric.hubs[e / epp].counters[e % epp] != *want {
                mismatches += 1;
            }
        }

        // Combine. The experts are the identity: each reads back the row it received.
        let mut combine_packets = 0u64;
        let mut results_checked = 0u64;
        let before = fabric.links.clone();
        for (i, t) in tokens.iter().enumerate() {
            let remote = t.remote(epp);
            if remote.is_empty() {
                continue;
            }
            let mut p = combine_packet(&cfg, t, &remote, 0, chunks.len(), chunks[0], opts.dtype);
            for (c, &len) in chunks.iter().enumerate() {
                set_combine_chunk(&cfg, &mut p, t, c, chunks.len(), len);
                fabric.inject_ref(t.src, &mut p);
                combine_packets += 1;
                let got = fabric.delivered[t.src].pop();
                let reference = &references[i][256 * c..256 * c + 16 * len];
                results_checked += 1;
                match got {
                    Some(r) if r.opcode == Opcode::RspReduce && r.payload == reference => {}
                    _ => mismatches += 1,
                }
            }
            if i % 256 == 0 {
                progress("combine", i, tokens.len());
            }
        }
        let combine_links = fabric.links.since(&before);
        mismatches += compare_links(&combine_links, &expected.combine);
        mismatches += fabric.delivered.iter().map(|d| d.len() as u64).sum::<u64>();

        let mut tlb = TlbStats::default();
        for h in &fabric.hubs {
            let s = h.stats().tlb;
            tlb.hits += s.hits;
            tlb.misses += s.misses;
            tlb.evictions += s.evictions;
        }
        let errors = fabric.error_counters().iter().fold(
            vec![0u64; crate::packet::ErrorCode::COUNT],
            |mut acc, p| {
                for (a, n) in acc.iter_mut().zip(p) {
                    *a += n;
                }
                acc
            },
        );
        Ok(ReplayReport {
            engine: "golden".into(),
            shape: ReplayShape::new(tokens.len(), topk, opts),
            dispatch: PhaseReport {
                traffic: expected.dispatch,
                packets: dispatch_packets,
            },
            combine: PhaseReport {
                traffic: expected.combine,
                packets: combine_packets,
            },
            mismatches,
            results_checked,
            tlb_hit_rate: tlb.hit_rate(),
            tlb,
            errors,
        })
    })
}

/// Gives a memory reserve to the hub whose memory is furthest from holding
/// `need` bytes (drops it if every hub's is).
fn give_reserve(fabric: &mut Fabric, need: &[usize], r: Reserve) {
    let short = |(q, h): (usize, &crate::hub::Hub)| {
        let have = h.mem.resident_bytes() + h.mem.free_bytes();
        (need[q].saturating_sub(have), q)
    };
    let (missing, q) = fabric
        .hubs
        .iter()
        .enumerate()
        .map(short)
        .max()
        .unwrap_or((0, 0));
    if missing > 0 {
        fabric.hubs[q].mem.add_reserve(r);
    }
}

/// Targets per port, ascending port order: (port, number of targets there).
fn targets_per_port(remote: &[u16], epp: usize) -> Vec<(usize, usize)> {
    let mut per_port: Vec<(usize, usize)> = Vec::new();
    for e in remote {
        let q = *e as usize / epp;
        match per_port.iter_mut().find(|(p, _)| *p == q) {
            Some(x) => x.1 += 1,
            None => per_port.push((q, 1)),
        }
    }
    per_port.sort();
    per_port
}

/// The Combine result computed directly: each port reduces its copies of the row
/// (identity experts) in list order, then the ports' partials are reduced in
/// ascending port order (spec §9).
fn direct_combine(dtype: DType, chunk: &[u8], per_port: &[(usize, usize)], out: &mut Vec<u8>) {
    let partials: Vec<Vec<u8>> = per_port
        .iter()
        .map(|&(_, n)| {
            let inputs = vec![chunk; n];
            let mut o = vec![0u8; chunk.len()];
            reduce_lanes(dtype, ReduceOp::Add, AccMode::F32, &inputs, &mut o)
                .expect("equal non-empty rows");
            o
        })
        .collect();
    let inputs: Vec<&[u8]> = partials.iter().map(|p| p.as_slice()).collect();
    out.clear();
    out.resize(chunk.len(), 0);
    reduce_lanes(dtype, ReduceOp::Add, AccMode::F32, &inputs, out).expect("equal non-empty rows");
}

/// Counts the per-port entries where the links disagree with the accounting.
fn compare_links(links: &LinkCounters, want: &PhaseTraffic) -> u64 {
    let diff = |a: &[u64], b: &[u64]| a.iter().zip(b).filter(|(x, y)| x != y).count() as u64;
    let flits_to_bytes = |v: &[u64]| v.iter().map(|f| 16 * f).collect::<Vec<_>>();
    diff(&links.up_payload_bytes, &want.uplink_payload_bytes)
        + diff(&links.down_payload_bytes, &want.downlink_payload_bytes)
        + diff(
            &flits_to_bytes(&links.up_wire_flits),
            &want.uplink_wire_bytes,
        )
        + diff(
            &flits_to_bytes(&links.down_wire_flits),
            &want.downlink_wire_bytes,
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{generate, DistSpec};

    /// A small replay of each element type checks clean: every Combine result
    /// equals the direct computation and the links carry what the accounting
    /// says (with the reserves, the row stream and the fast path all in play).
    #[test]
    fn small_replays_check_clean() {
        for (dist, dtype, hidden) in [
            ("uniform", DType::Bf16, 2048),
            ("zipf:1.5", DType::F16, 136),
            ("uniform", DType::F32, 64),
        ] {
            let spec: DistSpec = dist.parse().expect("dist");
            let trace = generate(&spec, 600, 32, 4, 4, 3).expect("trace");
            let (tokens, _) = trace.replay_tokens();
            let opts = ReplayOptions {
                ep: 4,
                experts: 32,
                hidden,
                dtype,
                seed: 9,
            };
            let r = replay_golden(&tokens, 4, &opts, |_, _, _| {}).expect("replay");
            let chunks = RowShape {
                row_bytes: hidden * dtype.bytes(),
            }
            .chunks()
            .len() as u64;
            let sent = tokens.iter().filter(|t| !t.remote(8).is_empty()).count() as u64;
            assert_eq!(r.mismatches, 0, "{dist} {dtype:?}");
            assert_eq!(r.results_checked, sent * chunks);
            assert_eq!(r.dispatch.packets, sent * chunks);
            assert!(r.errors.iter().all(|n| *n == 0));
        }
    }
}

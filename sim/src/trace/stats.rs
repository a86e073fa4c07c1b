//! Routing-imbalance statistics of one (step, layer) of a trace.
//!
//! With `E` experts over `P` EP ranks, rank `j` holds experts `j*E/P .. (j+1)*E/P`. Every
//! token→expert assignment from a token of rank `i` to an expert held by rank `j` adds one to the
//! send matrix entry `S[i][j]` (the diagonal counts local assignments, which never cross the
//! switch). The per-rank receive counts are the column sums of `S`; the collective finishes when
//! the busiest rank has received everything, so max/mean and the Gini coefficient of the column
//! sums measure the straggler.
//!
//! Gini (eq. 1 of the routing-imbalance study, seed 004), values sorted ascending
//! `c_(1) <= ... <= c_(P)`:
//!
//! `G = Σ_j (2j − P − 1) c_(j) / (P Σ_j c_j)`, and `G = 0` when `Σ c = 0`.
//!
//! It is 0 for equal loads and `(P − 1)/P` when one entry holds everything.

use crate::trace::format::{LineError, RecordChecker, Trace, TraceRecord};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest EP degree the statistics accept (the send matrix has `ep * ep` entries).
pub const MAX_EP: usize = 4096;

/// Largest number of experts (16-bit expert IDs).
const MAX_EXPERTS: usize = 1 << 16;

/// Imbalance statistics of one (step, layer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStats {
    /// The step analysed.
    pub step: u64,
    /// The layer analysed.
    pub layer: u64,
    /// Number of tokens in the (step, layer), over all ranks.
    pub tokens: usize,
    /// EP degree `P`.
    pub ep: usize,
    /// Number of experts `E`.
    pub experts: usize,
    /// Experts per token.
    pub topk: usize,
    /// `S[i][j]`: token→expert assignments from rank `i` to experts held by rank `j`
    /// (diagonal included).
    pub send_matrix: Vec<Vec<u64>>,
    /// Row sums of `S`: assignments originating at each rank (`tokens_i * topk`).
    pub rank_send: Vec<u64>,
    /// Column sums of `S`: assignments received by each rank.
    pub rank_receive: Vec<u64>,
    /// Gini coefficient (eq. 1) of `rank_receive`.
    pub gini_rank: f64,
    /// max / mean of `rank_receive` (0 if nothing is received).
    pub max_mean_rank: f64,
    /// Assignments received by each expert.
    pub expert_load: Vec<u64>,
    /// max / mean of `expert_load` (0 if there is no assignment).
    pub max_mean_expert: f64,
    /// Gini coefficient (eq. 1) of `expert_load`.
    pub gini_expert: f64,
    /// Mean over tokens of `|R_t|`, the number of distinct remote destination ranks of token `t`
    /// (ranks other than the token's own that hold one of its experts). 0 if there are no tokens.
    pub fanout_mean: f64,
    /// `fanout_hist[n]`: number of tokens with `|R_t| = n`, for `n = 0..=P-1`.
    pub fanout_hist: Vec<u64>,
    /// Provenance label: the first label on the analysed records, else the trace's label.
    pub label: Option<String>,
}

/// An error computing statistics.
#[derive(Debug, Error)]
pub enum StatsError {
    /// `ep` is 0 or above [`MAX_EP`].
    #[error("ep = {0} must be between 1 and {MAX_EP}")]
    BadEp(usize),
    /// `experts` is 0 or above 65536.
    #[error("experts = {0} must be between 1 and 65536 (16-bit expert IDs)")]
    BadExperts(usize),
    /// `experts` is not a multiple of `ep`.
    #[error("experts = {experts} is not divisible by ep = {ep}")]
    ExpertsNotDivisible {
        /// Number of experts.
        experts: usize,
        /// EP degree.
        ep: usize,
    },
    /// The trace has no record at all.
    #[error("the trace has no records")]
    EmptyTrace,
    /// The trace has no record for the requested (step, layer).
    #[error("no records for step {step}, layer {layer}")]
    NoRecords {
        /// Requested step.
        step: u64,
        /// Requested layer.
        layer: u64,
    },
    /// A record's source rank is not below `ep`.
    #[error("record {record}: field \"rank\": rank {rank} out of range for ep = {ep}")]
    RankOutOfRange {
        /// 1-based record number in the trace (= line in the file).
        record: usize,
        /// The rank found.
        rank: u32,
        /// EP degree.
        ep: usize,
    },
    /// A record breaks the trace rules (for example an expert ID `>= experts`).
    #[error("record {record}: {error}")]
    InvalidRecord {
        /// 1-based record number in the trace (= line in the file).
        record: usize,
        /// What is wrong.
        error: LineError,
    },
}

/// Gini coefficient (eq. 1) of non-negative counts: 0 for equal values, `(n-1)/n` when one of
/// `n` entries holds everything, and 0 for an empty slice or an all-zero one. Exact integer
/// arithmetic up to the final division.
pub fn gini(values: &[u64]) -> f64 {
    let n = values.len();
    let total: u128 = values.iter().map(|&v| u128::from(v)).sum();
    if n == 0 || total == 0 {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n_i = n as i128;
    let numerator = sorted.iter().enumerate().try_fold(0i128, |acc, (j, &c)| {
        let coef = 2 * (j as i128 + 1) - n_i - 1;
        coef.checked_mul(i128::from(c))
            .and_then(|term| acc.checked_add(term))
    });
    match numerator {
        Some(num) => num as f64 / (n as f64 * total as f64),
        None => {
            let as_f64: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            gini_f64(&as_f64)
        }
    }
}

/// Gini coefficient (eq. 1) of non-negative real values; 0 for an empty slice or when the sum
/// is not positive (including NaN sums).
pub fn gini_f64(values: &[f64]) -> f64 {
    let n = values.len();
    let total: f64 = values.iter().sum();
    if n == 0 || total.is_nan() || total <= 0.0 {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let numerator: f64 = sorted
        .iter()
        .enumerate()
        .map(|(j, &c)| (2.0 * (j as f64 + 1.0) - n as f64 - 1.0) * c)
        .sum();
    numerator / (n as f64 * total)
}

/// max / mean of counts; 0 for an empty slice or an all-zero one.
pub fn max_mean(values: &[u64]) -> f64 {
    let total: u128 = values.iter().map(|&v| u128::from(v)).sum();
    if values.is_empty() || total == 0 {
        return 0.0;
    }
    let max = values.iter().copied().max().unwrap_or(0);
    max as f64 * values.len() as f64 / total as f64
}

/// Per-rank load from per-expert load (index = expert ID) with `ep` ranks owning contiguous
/// blocks of `expert_load.len() / ep` experts.
pub fn rank_loads(expert_load: &[u64], ep: usize) -> Result<Vec<u64>, StatsError> {
    let experts = expert_load.len();
    if ep == 0 || ep > MAX_EP {
        return Err(StatsError::BadEp(ep));
    }
    if experts == 0 || experts > MAX_EXPERTS {
        return Err(StatsError::BadExperts(experts));
    }
    if !experts.is_multiple_of(ep) {
        return Err(StatsError::ExpertsNotDivisible { experts, ep });
    }
    Ok(expert_load
        .chunks(experts / ep)
        .map(|block| block.iter().sum())
        .collect())
}

impl TraceStats {
    /// Statistics of the trace's records for (`step`, `layer`) with `experts` experts over `ep`
    /// ranks. The records are checked first (topk, token counts, expert IDs `< experts`,
    /// distinct experts per token, ranks `< ep`); nothing panics on a malformed trace.
    pub fn compute(
        trace: &Trace,
        step: u64,
        layer: u64,
        experts: usize,
        ep: usize,
    ) -> Result<TraceStats, StatsError> {
        if ep == 0 || ep > MAX_EP {
            return Err(StatsError::BadEp(ep));
        }
        if experts == 0 || experts > MAX_EXPERTS {
            return Err(StatsError::BadExperts(experts));
        }
        if !experts.is_multiple_of(ep) {
            return Err(StatsError::ExpertsNotDivisible { experts, ep });
        }
        // Every record obeys the limits, wherever it stands in the file, not only those of the
        // (step, layer) the statistics are of.
        let mut checker = RecordChecker::new(Some(experts));
        for (i, r) in trace.records.iter().enumerate() {
            let record = i + 1;
            checker
                .check(r, record)
                .map_err(|error| StatsError::InvalidRecord { record, error })?;
            if r.rank as usize >= ep {
                return Err(StatsError::RankOutOfRange {
                    record,
                    rank: r.rank,
                    ep,
                });
            }
        }
        let selected: Vec<(usize, &TraceRecord)> = trace
            .records
            .iter()
            .enumerate()
            .filter(|(_, r)| r.step == step && r.layer == layer)
            .map(|(i, r)| (i + 1, r))
            .collect();
        if selected.is_empty() {
            return Err(StatsError::NoRecords { step, layer });
        }
        let per = experts / ep;
        let mut send = vec![vec![0u64; ep]; ep];
        let mut expert_load = vec![0u64; experts];
        let mut fanout_hist = vec![0u64; ep];
        // seen[j] == stamp: rank j already counted for the current token.
        let mut seen = vec![0usize; ep];
        let mut stamp = 0usize;
        let mut fanout_sum = 0u64;
        for &(_, r) in &selected {
            let src = r.rank as usize;
            for ids in &r.top_indices {
                stamp += 1;
                let mut fan = 0usize;
                for &e in ids {
                    let e = usize::from(e);
                    expert_load[e] += 1;
                    let dst = e / per;
                    send[src][dst] += 1;
                    if dst != src && seen[dst] != stamp {
                        seen[dst] = stamp;
                        fan += 1;
                    }
                }
                fanout_hist[fan] += 1;
                fanout_sum += fan as u64;
            }
        }
        let tokens = stamp;
        let rank_send: Vec<u64> = send.iter().map(|row| row.iter().sum()).collect();
        let rank_receive: Vec<u64> = (0..ep)
            .map(|j| send.iter().map(|row| row[j]).sum())
            .collect();
        Ok(TraceStats {
            step,
            layer,
            tokens,
            ep,
            experts,
            topk: selected[0].1.topk,
            gini_rank: gini(&rank_receive),
            max_mean_rank: max_mean(&rank_receive),
            max_mean_expert: max_mean(&expert_load),
            gini_expert: gini(&expert_load),
            fanout_mean: if tokens == 0 {
                0.0
            } else {
                fanout_sum as f64 / tokens as f64
            },
            send_matrix: send,
            rank_send,
            rank_receive,
            expert_load,
            fanout_hist,
            label: selected
                .iter()
                .find_map(|(_, r)| r.label.clone())
                .or_else(|| trace.label.clone()),
        })
    }

    /// Statistics of the trace's default (step, layer): the one of its first record.
    pub fn compute_default(
        trace: &Trace,
        experts: usize,
        ep: usize,
    ) -> Result<TraceStats, StatsError> {
        let (step, layer) = trace.default_step_layer().ok_or(StatsError::EmptyTrace)?;
        Self::compute(trace, step, layer, experts, ep)
    }
}

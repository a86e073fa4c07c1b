//! The send matrix of one (step, layer) in bytes, as nccl-tests' `alltoallv_perf` reads it.
//!
//! nccl-tests' `alltoallv_perf` replays an arbitrary all-to-all-v pattern from the file named
//! by `NCCL_TESTS_ALLTOALLV_MATRIX_FILE`: a square, whitespace-separated matrix, one row per
//! line, where cell `[i][j]` is the number of bytes rank `i` sends to rank `j`, aligned to 16
//! bytes. Writing a trace's Dispatch in that form lets the same workload run as a baseline on
//! real GPUs (`-b` and `-e` both at least the largest row or column sum).
//!
//! Two ways to count, [`MatrixCount`]:
//! * `tokens` (default): one copy of a token row per distinct destination rank, as DeepEP
//!   sends and as this project's unicast baseline counts (docs/spec.md, traffic accounting);
//! * `assignments`: one copy per token→expert assignment, as Megatron-core's all-to-all token
//!   dispatcher sends (the statistics' send matrix `S`).
//!
//! The diagonal holds the rank's own copies (an all-to-all-v sends them too, as a local copy);
//! the switch never carries them. A token row is `hidden × dtype` bytes rounded up to a whole
//! 16-byte flit, so every cell is 16-byte aligned, as nccl-tests requires.

use crate::trace::format::Trace;
use crate::trace::stats::{StatsError, TraceStats};
use std::fmt::Write as _;
use std::str::FromStr;

/// What one matrix cell counts (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixCount {
    /// One row copy per distinct destination rank of a token (DeepEP, the unicast baseline).
    Tokens,
    /// One row copy per token→expert assignment (Megatron-core's all-to-all dispatcher).
    Assignments,
}

impl FromStr for MatrixCount {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tokens" => Ok(MatrixCount::Tokens),
            "assignments" => Ok(MatrixCount::Assignments),
            _ => Err(format!("`{s}`: expected tokens or assignments")),
        }
    }
}

/// Bytes of one token row on the wire: `row_bytes` rounded up to 16.
pub fn aligned_row_bytes(row_bytes: u64) -> u64 {
    row_bytes.div_ceil(16).saturating_mul(16)
}

/// The Dispatch send matrix of (`step`, `layer`) in bytes: cell `[i][j]` = bytes rank `i`
/// sends to rank `j`. The records are validated as [`TraceStats::compute`] does.
pub fn send_matrix_bytes(
    trace: &Trace,
    step: u64,
    layer: u64,
    experts: usize,
    ep: usize,
    count: MatrixCount,
    row_bytes: u64,
) -> Result<Vec<Vec<u64>>, StatsError> {
    let stats = TraceStats::compute(trace, step, layer, experts, ep)?;
    let row = aligned_row_bytes(row_bytes);
    let counts = match count {
        MatrixCount::Assignments => stats.send_matrix,
        MatrixCount::Tokens => {
            let per_rank = experts / ep;
            let mut m = vec![vec![0u64; ep]; ep];
            let mut seen = vec![usize::MAX; ep];
            for (n, (rank, _, ids)) in trace.tokens(step, layer).into_iter().enumerate() {
                for &e in ids {
                    let dst = e as usize / per_rank;
                    if seen[dst] != n {
                        seen[dst] = n;
                        m[rank as usize][dst] += 1;
                    }
                }
            }
            m
        }
    };
    Ok(counts
        .into_iter()
        .map(|r| r.into_iter().map(|c| c.saturating_mul(row)).collect())
        .collect())
}

/// The matrix as nccl-tests reads it: one row per line, cells separated by one space.
pub fn render_matrix(m: &[Vec<u64>]) -> String {
    let mut s = String::new();
    for row in m {
        let cells: Vec<String> = row.iter().map(u64::to_string).collect();
        let _ = writeln!(s, "{}", cells.join(" "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::TraceRecord;

    fn trace(recs: &[(u32, Vec<Vec<u16>>)]) -> Trace {
        Trace::new(
            recs.iter()
                .map(|(rank, t)| TraceRecord {
                    step: 0,
                    layer: 0,
                    rank: *rank,
                    num_tokens: t.len(),
                    topk: 2,
                    top_indices: t.clone(),
                    label: None,
                })
                .collect(),
            None,
        )
    }

    #[test]
    fn counts_tokens_once_per_rank_and_assignments_per_expert() {
        // 4 experts over 2 ranks: rank 0 holds 0,1; rank 1 holds 2,3.
        let t = trace(&[
            (0, vec![vec![2, 3], vec![0, 2]]),
            (1, vec![vec![0, 1], vec![3, 2]]),
        ]);
        let tok = send_matrix_bytes(&t, 0, 0, 4, 2, MatrixCount::Tokens, 14).unwrap();
        assert_eq!(tok, vec![vec![16, 32], vec![16, 16]]);
        let asg = send_matrix_bytes(&t, 0, 0, 4, 2, MatrixCount::Assignments, 32).unwrap();
        assert_eq!(asg, vec![vec![32, 96], vec![64, 64]]);
        assert_eq!(render_matrix(&asg), "32 96\n64 64\n");
        assert!(send_matrix_bytes(&t, 0, 1, 4, 2, MatrixCount::Tokens, 32).is_err());
        // Rank 1's record does not fit one rank.
        assert!(send_matrix_bytes(&t, 0, 0, 4, 1, MatrixCount::Tokens, 32).is_err());
        assert!(send_matrix_bytes(&t, 0, 0, 3, 2, MatrixCount::Tokens, 32).is_err());
        assert_eq!(aligned_row_bytes(14336), 14336);
        assert_eq!(aligned_row_bytes(17), 32);
        assert_eq!("tokens".parse(), Ok(MatrixCount::Tokens));
        assert!("rows".parse::<MatrixCount>().is_err());
    }
}

//! MoE routing traces: the file format, seeded generators and imbalance statistics.
//!
//! A trace records, for each (step, layer, EP rank), the top-k expert IDs chosen for every
//! token of that rank. The format ([`format`](mod@format)) is JSON Lines compatible with the routing traces
//! Megatron-core can dump: one object per (step, layer, rank) with the keys `step`, `layer`,
//! `rank`, `num_tokens`, `topk` and `top_indices`, plus an optional `label` saying where the data
//! came from (for example `"calibrated-synthetic: counts OLMoE-1B-7B/github/7"`).
//!
//! * [`format`](mod@format): [`Trace`], [`TraceRecord`], the reader with file/line/field errors, the writer.
//! * [`gen`]: seeded synthetic traces from a [`DistSpec`] (`uniform`, `zipf:A`, `dirichlet:A`,
//!   `share-std:S`, `normal:S`, `counts:FILE:MODEL:CORPUS:LAYER`).
//! * [`counts`]: the per-expert marginal table (`model,corpus,layer,expert,count` CSV).
//! * [`stats`]: the send matrix, per-rank and per-expert load, Gini (eq. 1 of the
//!   routing-imbalance study), max/mean and remote fan-out of one (step, layer).
//!
//! Experts are owned by EP ranks in contiguous blocks: with `E` experts and `P` ranks the rank of
//! expert `e` is `e / (E / P)`.

pub mod alltoallv;
pub mod counts;
pub mod format;
pub mod gen;
pub mod npy;
pub mod stats;

pub use alltoallv::{render_matrix, send_matrix_bytes, MatrixCount};
pub use counts::{CountsError, CountsTable, Selection};
pub use format::{LineError, Trace, TraceError, TraceRecord, MAX_EXPERT_ID};
pub use gen::{generate, share_std_concentration, DistSpec, GenError, ParseDistSpecError};
pub use npy::{read_npy, read_npy_from, NpyError};
pub use stats::{gini, gini_f64, max_mean, rank_loads, StatsError, TraceStats, MAX_EP};

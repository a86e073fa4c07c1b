//! Seeded synthetic routing traces.
//!
//! [`generate`] makes one (step 0, layer 0) of routing for `tokens` tokens split evenly over
//! `ep` ranks, every token choosing `topk` distinct experts out of `experts`, from a popularity
//! model given by a [`DistSpec`]:
//!
//! * `uniform`: DeepEP's mock routing. Each token scores every expert with `|N(0,1)| + 1` and
//!   takes the `topk` highest scores (in descending score order).
//! * `zipf:A` (A >= 0): expert popularity `p_i ∝ rank_i^-A`, where `rank_i` is the 1-based rank of
//!   expert `i` in a seeded random permutation of the experts.
//! * `dirichlet:A` (A > 0): one popularity vector for the whole step drawn from a symmetric
//!   Dirichlet with concentration `A` (as normalized `Gamma(A, 1)` draws).
//! * `share-std:S` (S > 0): training-like routing (issue 15). One popularity vector `p` for the
//!   whole step is drawn from a symmetric Dirichlet whose concentration is chosen so that the
//!   expected standard deviation over experts of the per-expert token share `k·p_i` (the fraction
//!   of tokens that pick expert `i`; mean `k/E`) is `S`:
//!   `Var(p_i) = (E−1) / (E² (Eα+1))`, so `α = (k²(E−1) / (E² S²) − 1) / E` (see
//!   [`share_std_concentration`]). Tokens are then drawn like `counts` (exact inclusion
//!   probabilities `π_i = k p_i`), so the realized shares keep the drawn spread. The DySHARP
//!   paper's training routing has `S` in 0.01–0.05 (default 0.032); the paper draws it from a
//!   *normal* distribution, which is `normal:S` below.
//! * `normal:S` (S > 0): the DySHARP paper's training routing ("standard deviation of token
//!   distribution across experts from 0.01 to 0.05, based on normal distribution std = 0.032").
//!   One per-expert token share for the whole step, `s_i = k/E + S·z_i` with `z_i ~ N(0, 1)`
//!   (the share is the fraction of tokens that pick expert `i`, mean `k/E`), clipped to
//!   `[0, 1]`; tokens are then drawn like `counts` with inclusion probabilities `π_i ∝ s_i`
//!   (`Σπ = k`). Clipping narrows the spread when `S` is near `k/E` (DeepSeek-V3 top-8:
//!   `k/E` = 0.031, so at `S` = 0.032 about 16% of the experts get no token); the realized
//!   std is what reports state.
//! * `counts:FILE:MODEL:CORPUS:LAYER`: real per-expert marginals from a counts CSV (see
//!   [`crate::trace::counts`]). The trace is labelled
//!   `calibrated-synthetic: counts MODEL/CORPUS/LAYER`, in the [`Trace`] and in every record:
//!   marginals are real, per-token combinations are not.
//!
//! `zipf` and `dirichlet` tokens draw their `topk` experts by sequential weighted sampling
//! without replacement: draw one expert with probability proportional to its weight, remove it,
//! repeat. If every remaining expert has weight 0 (a Dirichlet draw with tiny `A` can underflow),
//! the rest are drawn uniformly among the remaining experts.
//!
//! `counts` tokens do *not* use sequential sampling, because it flattens the marginals: an
//! expert with a share `c_i / Σc` of the assignments is in a token's list with probability
//! `π_i = k c_i / Σc`, but sequential sampling includes the popular experts less often than that
//! (OLMoE github layer 7: the hottest expert has `π = 0.77`, sequential sampling gives 0.61, and
//! the busiest-rank/mean at EP8 drops from 2.14 to 1.93). Instead each token is drawn by
//! randomized systematic sampling with inclusion probabilities exactly `π_i`: shuffle the
//! experts, lay the `π_i` end to end on `[0, k)`, draw `u` uniform in `[0, 1)` and take the
//! experts covering `u, u+1, ..., u+k-1`. This yields `k` distinct experts with
//! `P(i chosen) = π_i`, so the expected expert load equals the CSV's marginals (scaled to the
//! generated token count). An expert with `π_i > 1` (more assignments than tokens, impossible
//! for real top-k data) is capped at 1 and the excess spread over the others in proportion to
//! their counts; if fewer than `k` experts have a non-zero count the remaining slots are spread
//! uniformly over the zero-count ones.
//!
//! Randomness: one `ChaCha8Rng` seeded with `seed` (`SeedableRng::seed_from_u64`). Draw order:
//! the permutation (zipf), the Dirichlet draw or the normal shares first, then the tokens of rank 0, rank 1, ... in
//! order (a `counts` token uses one shuffle and one uniform). Uniform floats and indices are derived from the raw 64-bit ChaCha output by this module,
//! normal and gamma variates by `rand_distr` 0.4 (value-stable within 0.4). The same seed gives
//! the same trace on any machine; the only platform dependence is the last-bit accuracy of the
//! libm `exp`/`ln`/`powf` used by the normal, gamma and Zipf weights, which could in principle
//! tip a draw that falls exactly on a boundary.

use crate::trace::counts::{CountsError, CountsTable};
use crate::trace::format::{Trace, TraceRecord};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma, StandardNormal};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use thiserror::Error;

/// Largest number of experts (16-bit expert IDs).
const MAX_EXPERTS: usize = 1 << 16;

/// A routing popularity model; parse one from a string with [`str::parse`].
#[derive(Debug, Clone, PartialEq)]
pub enum DistSpec {
    /// `uniform`: DeepEP's mock, top-k of `|N(0,1)| + 1` scores.
    Uniform,
    /// `zipf:A`: popularity `∝ rank^-alpha` over a seeded random permutation of the experts.
    Zipf {
        /// Zipf exponent, finite and `>= 0` (0 is uniform popularity).
        alpha: f64,
    },
    /// `dirichlet:A`: popularity drawn once from a symmetric Dirichlet.
    Dirichlet {
        /// Concentration, finite and `> 0`; small values concentrate load on few experts.
        alpha: f64,
    },
    /// `share-std:S`: Dirichlet popularity with the concentration that gives a per-expert
    /// token-share standard deviation of `S` (training-like routing).
    ShareStd {
        /// Target standard deviation of the per-expert token share, finite and `> 0`.
        std: f64,
    },
    /// `normal:S`: per-expert token share `k/E + S·N(0, 1)`, clipped to `[0, 1]` (the
    /// DySHARP paper's training routing).
    Normal {
        /// Standard deviation of the per-expert token share before clipping, finite and `> 0`.
        std: f64,
    },
    /// `counts:FILE:MODEL:CORPUS:LAYER`: popularity from real per-expert marginals.
    Counts {
        /// The counts CSV (`model,corpus,layer,expert,count`).
        file: PathBuf,
        /// Model name as in the CSV.
        model: String,
        /// Corpus name as in the CSV.
        corpus: String,
        /// Layer as in the CSV.
        layer: u64,
    },
}

/// Most tokens one generated trace holds (2^24 = 16.7 M: 64 GPUs × 16,384 tokens is 1 M; a
/// trace this size is ~1 GB of JSON at top-8), so a mistyped count fails at once instead of
/// filling memory.
pub const MAX_GEN_TOKENS: usize = 1 << 24;

/// The accepted forms, for error messages.
const USAGE: &str =
    "uniform, zipf:A, dirichlet:A, share-std:S, normal:S or counts:FILE:MODEL:CORPUS:LAYER";

/// An error parsing a [`DistSpec`] from a string.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseDistSpecError {
    /// The kind before the first `:` is not known.
    #[error("unknown distribution \"{0}\": expected {USAGE}")]
    Unknown(String),
    /// `uniform` was given a parameter.
    #[error("distribution \"uniform\" takes no parameter, found \"{0}\"")]
    UnexpectedParameter(String),
    /// `zipf`, `dirichlet` or `share-std` without its parameter.
    #[error("distribution \"{kind}\" needs a parameter: {kind}:A")]
    MissingParameter {
        /// `zipf`, `dirichlet` or `share-std`.
        kind: &'static str,
    },
    /// The parameter of `zipf`, `dirichlet` or `share-std` is not an acceptable number.
    #[error("distribution \"{kind}\": invalid parameter \"{value}\": expected {expected}")]
    BadParameter {
        /// `zipf`, `dirichlet` or `share-std`.
        kind: &'static str,
        /// The text found.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// A malformed `counts:` specification.
    #[error("invalid counts distribution \"{spec}\": {reason}")]
    BadCounts {
        /// The whole specification.
        spec: String,
        /// What is wrong.
        reason: String,
    },
}

const ZIPF_EXPECTED: &str = "a finite number >= 0";
const DIRICHLET_EXPECTED: &str = "a finite number > 0";
const SHARE_STD_EXPECTED: &str = "a finite number > 0";

fn zipf_alpha_ok(a: f64) -> bool {
    a.is_finite() && a >= 0.0
}

fn dirichlet_alpha_ok(a: f64) -> bool {
    a.is_finite() && a > 0.0
}

impl FromStr for DistSpec {
    type Err = ParseDistSpecError;

    /// Parses `uniform`, `zipf:A`, `dirichlet:A` or `counts:FILE:MODEL:CORPUS:LAYER`. For
    /// `counts`, the last three `:`-separated fields are MODEL, CORPUS and LAYER; everything
    /// between `counts:` and them is FILE.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, param) = match s.split_once(':') {
            Some((k, p)) => (k, Some(p)),
            None => (s, None),
        };
        match kind {
            "uniform" => match param {
                None => Ok(DistSpec::Uniform),
                Some(_) => Err(ParseDistSpecError::UnexpectedParameter(s.to_string())),
            },
            "zipf" | "dirichlet" | "share-std" | "normal" => {
                let (kind, expected, ok): (&'static str, &'static str, fn(f64) -> bool) = match kind
                {
                    "zipf" => ("zipf", ZIPF_EXPECTED, zipf_alpha_ok),
                    "dirichlet" => ("dirichlet", DIRICHLET_EXPECTED, dirichlet_alpha_ok),
                    "normal" => ("normal", SHARE_STD_EXPECTED, dirichlet_alpha_ok),
                    _ => ("share-std", SHARE_STD_EXPECTED, dirichlet_alpha_ok),
                };
                let value = param
                    .filter(|p| !p.is_empty())
                    .ok_or(ParseDistSpecError::MissingParameter { kind })?;
                let alpha = value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|&a| ok(a))
                    .ok_or_else(|| ParseDistSpecError::BadParameter {
                        kind,
                        value: value.to_string(),
                        expected,
                    })?;
                Ok(match kind {
                    "zipf" => DistSpec::Zipf { alpha },
                    "dirichlet" => DistSpec::Dirichlet { alpha },
                    "normal" => DistSpec::Normal { std: alpha },
                    _ => DistSpec::ShareStd { std: alpha },
                })
            }
            "counts" => {
                let bad = |reason: String| ParseDistSpecError::BadCounts {
                    spec: s.to_string(),
                    reason,
                };
                let rest = param.unwrap_or("");
                let parts: Vec<&str> = rest.rsplitn(4, ':').collect();
                if parts.len() != 4 {
                    return Err(bad(
                        "expected counts:FILE:MODEL:CORPUS:LAYER (four fields after \"counts:\")"
                            .to_string(),
                    ));
                }
                let (layer, corpus, model, file) = (parts[0], parts[1], parts[2], parts[3]);
                for (name, v) in [("FILE", file), ("MODEL", model), ("CORPUS", corpus)] {
                    if v.is_empty() {
                        return Err(bad(format!("{name} is empty")));
                    }
                }
                let layer = layer
                    .parse::<u64>()
                    .map_err(|_| bad(format!("LAYER \"{layer}\" is not a non-negative integer")))?;
                Ok(DistSpec::Counts {
                    file: PathBuf::from(file),
                    model: model.to_string(),
                    corpus: corpus.to_string(),
                    layer,
                })
            }
            _ => Err(ParseDistSpecError::Unknown(kind.to_string())),
        }
    }
}

impl fmt::Display for DistSpec {
    /// The string form accepted by [`DistSpec::from_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistSpec::Uniform => write!(f, "uniform"),
            DistSpec::Zipf { alpha } => write!(f, "zipf:{alpha}"),
            DistSpec::Dirichlet { alpha } => write!(f, "dirichlet:{alpha}"),
            DistSpec::ShareStd { std } => write!(f, "share-std:{std}"),
            DistSpec::Normal { std } => write!(f, "normal:{std}"),
            DistSpec::Counts {
                file,
                model,
                corpus,
                layer,
            } => write!(f, "counts:{}:{model}:{corpus}:{layer}", file.display()),
        }
    }
}

/// An error generating a trace.
#[derive(Debug, Error)]
pub enum GenError {
    /// `ep` is 0.
    #[error("ep must be at least 1")]
    ZeroEp,
    /// `tokens` is above [`MAX_GEN_TOKENS`].
    #[error("tokens = {0} is above the generator's limit of {MAX_GEN_TOKENS} (2^24)")]
    TooManyTokens(usize),
    /// `experts` is 0 or above 65536.
    #[error("experts = {0} must be between 1 and 65536 (16-bit expert IDs)")]
    BadExperts(usize),
    /// `tokens` is not a multiple of `ep`.
    #[error("tokens = {tokens} is not divisible by ep = {ep}")]
    TokensNotDivisible {
        /// Requested tokens.
        tokens: usize,
        /// Requested EP degree.
        ep: usize,
    },
    /// `experts` is not a multiple of `ep`.
    #[error("experts = {experts} is not divisible by ep = {ep}")]
    ExpertsNotDivisible {
        /// Requested experts.
        experts: usize,
        /// Requested EP degree.
        ep: usize,
    },
    /// `topk` is 0 or above `experts`.
    #[error("topk = {topk} must be between 1 and experts = {experts}")]
    BadTopk {
        /// Requested top-k.
        topk: usize,
        /// Requested experts.
        experts: usize,
    },
    /// A [`DistSpec`] built in code holds an invalid parameter.
    #[error("distribution \"{spec}\": parameter must be {expected}")]
    BadParameter {
        /// The specification.
        spec: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// The counts CSV could not be read or lacks the selection.
    #[error(transparent)]
    Counts(#[from] CountsError),
    /// The counts CSV's selection has a different number of experts than requested.
    #[error("{file}: {selection} has {found} experts, but experts = {expected} was requested")]
    CountsExperts {
        /// The counts file.
        file: String,
        /// `MODEL/CORPUS/LAYER`.
        selection: String,
        /// Experts in the CSV.
        found: usize,
        /// Requested experts.
        expected: usize,
    },
}

/// How tokens pick their experts.
enum Sampler {
    /// DeepEP's mock: top-k of `|N(0,1)| + 1` scores.
    Mock,
    /// Sequential weighted sampling without replacement from these weights.
    Sequential(Vec<f64>),
    /// Randomized systematic sampling with these inclusion probabilities.
    Exact(Vec<f64>),
}

/// Uniform `f64` in `[0, 1)` from the top 53 bits of one 64-bit output.
fn unit_f64(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform index in `0..n` (`n >= 1`), unbiased (Lemire's multiply-and-reject).
fn index(rng: &mut ChaCha8Rng, n: usize) -> usize {
    let n = n as u64;
    let threshold = n.wrapping_neg() % n;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(n);
        if (m as u64) >= threshold {
            return (m >> 64) as usize;
        }
    }
}

/// Draws `k` distinct indices with probability proportional to `weights`, sequentially without
/// replacement, appending them to `out`. `scratch` is reused between calls. Weights must be
/// non-negative and finite; `k <= weights.len()`.
fn draw_weighted(
    rng: &mut ChaCha8Rng,
    weights: &[f64],
    k: usize,
    scratch: &mut Vec<f64>,
    out: &mut Vec<u16>,
) {
    // Chosen experts are marked with -1 in the scratch copy.
    scratch.clear();
    scratch.extend_from_slice(weights);
    let positive_sum = |s: &[f64]| -> f64 { s.iter().filter(|&&w| w > 0.0).sum() };
    let mut total = positive_sum(scratch);
    for _ in 0..k {
        let pick = if total > 0.0 && total.is_finite() {
            let target = unit_f64(rng) * total;
            let mut acc = 0.0;
            let mut chosen = None;
            let mut last_positive = 0;
            for (i, &w) in scratch.iter().enumerate() {
                if w > 0.0 {
                    acc += w;
                    last_positive = i;
                    if target < acc {
                        chosen = Some(i);
                        break;
                    }
                }
            }
            // Rounding may leave target >= acc at the end: take the last positive weight.
            chosen.unwrap_or(last_positive)
        } else {
            // All remaining weight is zero: uniform among the experts not yet chosen.
            let remaining = scratch.iter().filter(|&&w| w >= 0.0).count();
            let nth = index(rng, remaining.max(1));
            scratch
                .iter()
                .enumerate()
                .filter(|(_, &w)| w >= 0.0)
                .nth(nth)
                .map_or(0, |(i, _)| i)
        };
        out.push(pick as u16);
        let removed = scratch[pick].max(0.0);
        scratch[pick] = -1.0;
        // Keep the running total; recompute it exactly if cancellation made it unreliable.
        total -= removed;
        if total <= removed * 1e-9 {
            total = positive_sum(scratch);
        }
    }
}

/// Inclusion probabilities `π_i = k w_i / Σw` with the `π_i > 1` capped at 1 and their excess
/// spread over the rest in proportion to weight; when the positive weights cannot fill `k`
/// slots, the remaining slots are spread uniformly over the zero-weight entries. `Σπ = k` and
/// every `π_i` is in `[0, 1]`. Requires `1 <= k <= weights.len()`.
fn inclusion_probabilities(weights: &[f64], k: usize) -> Vec<f64> {
    let n = weights.len();
    let mut capped = vec![false; n];
    let mut pi = vec![0.0; n];
    loop {
        let slots = (k - capped.iter().filter(|&&c| c).count()) as f64;
        let free_total: f64 = (0..n).filter(|&i| !capped[i]).map(|i| weights[i]).sum();
        if free_total.is_nan() || free_total <= 0.0 {
            let free = (0..n).filter(|&i| !capped[i]).count().max(1) as f64;
            for i in 0..n {
                pi[i] = if capped[i] { 1.0 } else { slots / free };
            }
            return pi;
        }
        let mut newly_capped = false;
        for i in 0..n {
            if capped[i] {
                pi[i] = 1.0;
                continue;
            }
            pi[i] = slots * weights[i] / free_total;
            if pi[i] >= 1.0 {
                capped[i] = true;
                newly_capped = true;
            }
        }
        if !newly_capped {
            return pi;
        }
    }
}

/// Draws `k` distinct indices with inclusion probabilities `pi` (each in `[0, 1]`, summing to
/// `k`) by randomized systematic sampling, appending them to `out`. `order` is reused between
/// calls.
fn draw_systematic(
    rng: &mut ChaCha8Rng,
    pi: &[f64],
    k: usize,
    order: &mut Vec<usize>,
    out: &mut Vec<u16>,
) {
    let n = pi.len();
    order.clear();
    order.extend(0..n);
    for i in (1..n).rev() {
        let j = index(rng, i + 1);
        order.swap(i, j);
    }
    let start = out.len();
    let u = unit_f64(rng);
    let mut next = 0usize; // index of the next threshold u + next
    let mut acc = 0.0;
    for (pos, &e) in order.iter().enumerate() {
        if next == k {
            break;
        }
        acc += pi[e];
        // The last expert closes the interval at exactly k, whatever the rounding.
        let end = if pos + 1 == n { f64::INFINITY } else { acc };
        if u + (next as f64) < end {
            out.push(e as u16);
            next += 1;
        }
    }
    // Rounding could in principle leave a slot empty; fill it with the most probable experts
    // not yet chosen, so a token always has k distinct experts.
    while out.len() - start < k {
        let chosen = &out[start..];
        let best = (0..n)
            .filter(|&e| !chosen.contains(&(e as u16)))
            .max_by(|&a, &b| pi[a].total_cmp(&pi[b]).then(b.cmp(&a)));
        match best {
            Some(e) => out.push(e as u16),
            None => break,
        }
    }
}

/// The symmetric-Dirichlet concentration `α` whose draws give an expected standard deviation
/// `std` of the per-expert token share `topk·p_i` over `experts` experts:
/// `α = (topk²(E−1) / (E² std²) − 1) / E`. `None` if no positive `α` reaches `std` (the spread
/// asked for is at least that of `α → 0`, where one expert takes everything) or an argument is
/// out of range.
pub fn share_std_concentration(std: f64, experts: usize, topk: usize) -> Option<f64> {
    if !(std.is_finite() && std > 0.0) || experts < 2 || topk == 0 {
        return None;
    }
    let e = experts as f64;
    let k = topk as f64;
    let alpha = (k * k * (e - 1.0) / (e * e * std * std) - 1.0) / e;
    (alpha.is_finite() && alpha > 0.0).then_some(alpha)
}

/// Draws a popularity vector from a symmetric Dirichlet (normalization is left to the
/// sampler): `experts` `Gamma(alpha, 1)` draws, non-finite or non-positive draws as 0.
fn dirichlet_weights(rng: &mut ChaCha8Rng, gamma: &Gamma<f64>, experts: usize) -> Vec<f64> {
    (0..experts)
        .map(|_| {
            let g: f64 = gamma.sample(rng);
            if g.is_finite() && g > 0.0 {
                g
            } else {
                0.0
            }
        })
        .collect()
}

/// Per-expert token shares `k/E + std·z_i`, `z_i ~ N(0, 1)`, clipped to `[0, 1]`
/// (`normal:S`).
fn normal_shares(rng: &mut ChaCha8Rng, std: f64, experts: usize, topk: usize) -> Vec<f64> {
    let mean = topk as f64 / experts as f64;
    (0..experts)
        .map(|_| {
            let z: f64 = rng.sample(StandardNormal);
            (mean + std * z).clamp(0.0, 1.0)
        })
        .collect()
}

/// DeepEP's mock: scores `|N(0,1)| + 1`, top-k in descending score order (ties by lower ID).
fn draw_uniform_mock(
    rng: &mut ChaCha8Rng,
    experts: usize,
    k: usize,
    scores: &mut Vec<(f64, u16)>,
    out: &mut Vec<u16>,
) {
    scores.clear();
    for e in 0..experts {
        let z: f64 = rng.sample(StandardNormal);
        scores.push((z.abs() + 1.0, e as u16));
    }
    let order = |a: &(f64, u16), b: &(f64, u16)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if k < scores.len() {
        scores.select_nth_unstable_by(k, order);
    }
    let top = &mut scores[..k];
    top.sort_unstable_by(order);
    out.extend(top.iter().map(|&(_, e)| e));
}

/// Generates a seeded synthetic trace: step 0, layer 0, one record per EP rank, `tokens / ep`
/// tokens per rank, each with `topk` distinct experts drawn from `spec`.
///
/// Requires `ep >= 1`, `1 <= experts <= 65536`, `tokens % ep == 0`, `experts % ep == 0` and
/// `1 <= topk <= experts`; a `counts:` spec must name a selection with exactly `experts` experts.
/// The same arguments give the same trace on any machine.
pub fn generate(
    spec: &DistSpec,
    tokens: usize,
    experts: usize,
    topk: usize,
    ep: usize,
    seed: u64,
) -> Result<Trace, GenError> {
    if ep == 0 {
        return Err(GenError::ZeroEp);
    }
    if tokens > MAX_GEN_TOKENS {
        return Err(GenError::TooManyTokens(tokens));
    }
    if experts == 0 || experts > MAX_EXPERTS {
        return Err(GenError::BadExperts(experts));
    }
    if !tokens.is_multiple_of(ep) {
        return Err(GenError::TokensNotDivisible { tokens, ep });
    }
    if !experts.is_multiple_of(ep) {
        return Err(GenError::ExpertsNotDivisible { experts, ep });
    }
    if topk == 0 || topk > experts {
        return Err(GenError::BadTopk { topk, experts });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut label = None;
    let sampler = match spec {
        DistSpec::Uniform => Sampler::Mock,
        DistSpec::Zipf { alpha } => {
            if !zipf_alpha_ok(*alpha) {
                return Err(GenError::BadParameter {
                    spec: spec.to_string(),
                    expected: ZIPF_EXPECTED,
                });
            }
            let mut perm: Vec<usize> = (0..experts).collect();
            for i in (1..experts).rev() {
                let j = index(&mut rng, i + 1);
                perm.swap(i, j);
            }
            let mut w = vec![0.0; experts];
            for (rank0, &e) in perm.iter().enumerate() {
                w[e] = ((rank0 + 1) as f64).powf(-alpha);
            }
            Sampler::Sequential(w)
        }
        DistSpec::Dirichlet { alpha } => {
            let bad = || GenError::BadParameter {
                spec: spec.to_string(),
                expected: DIRICHLET_EXPECTED,
            };
            if !dirichlet_alpha_ok(*alpha) {
                return Err(bad());
            }
            let gamma = Gamma::new(*alpha, 1.0).map_err(|_| bad())?;
            Sampler::Sequential(dirichlet_weights(&mut rng, &gamma, experts))
        }
        DistSpec::ShareStd { std } => {
            let bad = || GenError::BadParameter {
                spec: spec.to_string(),
                expected: "a finite number > 0, below the spread of one expert taking every token",
            };
            let alpha = share_std_concentration(*std, experts, topk).ok_or_else(bad)?;
            let gamma = Gamma::new(alpha, 1.0).map_err(|_| bad())?;
            let w = dirichlet_weights(&mut rng, &gamma, experts);
            Sampler::Exact(inclusion_probabilities(&w, topk))
        }
        DistSpec::Normal { std } => {
            if !dirichlet_alpha_ok(*std) {
                return Err(GenError::BadParameter {
                    spec: spec.to_string(),
                    expected: SHARE_STD_EXPECTED,
                });
            }
            Sampler::Exact(inclusion_probabilities(
                &normal_shares(&mut rng, *std, experts, topk),
                topk,
            ))
        }
        DistSpec::Counts {
            file,
            model,
            corpus,
            layer,
        } => {
            let table = CountsTable::read(file)?;
            let counts = table.get(model, corpus, *layer)?;
            if counts.len() != experts {
                return Err(GenError::CountsExperts {
                    file: table.file().to_string(),
                    selection: format!("{model}/{corpus}/{layer}"),
                    found: counts.len(),
                    expected: experts,
                });
            }
            label = Some(format!(
                "calibrated-synthetic: counts {model}/{corpus}/{layer}"
            ));
            let w: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
            Sampler::Exact(inclusion_probabilities(&w, topk))
        }
    };
    let per_rank = tokens / ep;
    let mut scratch = Vec::with_capacity(experts);
    let mut scores = Vec::with_capacity(experts);
    let mut order = Vec::with_capacity(experts);
    let mut records = Vec::with_capacity(ep);
    for rank in 0..ep {
        let mut top_indices = Vec::with_capacity(per_rank.min(1 << 20));
        for _ in 0..per_rank {
            let mut ids = Vec::with_capacity(topk);
            match &sampler {
                Sampler::Mock => draw_uniform_mock(&mut rng, experts, topk, &mut scores, &mut ids),
                Sampler::Sequential(w) => draw_weighted(&mut rng, w, topk, &mut scratch, &mut ids),
                Sampler::Exact(pi) => draw_systematic(&mut rng, pi, topk, &mut order, &mut ids),
            }
            top_indices.push(ids);
        }
        records.push(TraceRecord {
            step: 0,
            layer: 0,
            // ep <= experts <= 65536, so every rank fits in u32.
            rank: rank as u32,
            num_tokens: per_rank,
            topk,
            top_indices,
            label: label.clone(),
        });
    }
    Ok(Trace { records, label })
}

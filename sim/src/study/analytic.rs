//! Closed-form expectations under uniform routing (docs/paper.md, "Accounting"): every set of
//! `k` distinct experts out of `E` equally likely, `P` ranks holding `E/P` experts each.
//!
//! For a token of rank `s`, with `m = E/P` experts per rank:
//! - `q = Pr(R_t ≠ ∅) = 1 − C(m, k) / C(E, k)` (some expert is remote);
//! - `f = E|R_t| = (P − 1) (1 − C(E − m, k) / C(E, k))` (expected remote distinct ranks);
//! - `r = C(E − m, k) / C(E, k)`: the chance that a given GPU holds none of a token's experts.
//!   An AllGather delivers every token to all `P` GPUs, `P (1 − r)` of them useful, so the NVLS
//!   workaround's useless deliveries over useful ones are `r / (1 − r)` (the paper's "340%
//!   useless traffic": 340.4% for DeepSeek-V3 top-8 on 32 GPUs).
//!
//! Payload per token, in rows (spec §8, [`crate::traffic::account`] and
//! [`crate::traffic::account_nvls`]): DySHARP `q + f` per phase, unicast `2f` per phase, the
//! NVLS workaround `1 + P` per phase. With balanced links and both phases overlapped, each link
//! carries `q + f` rows per token under DySHARP against `2f` for unicast run phase after phase,
//! so the ideal speed-up is `2f / (q + f)`. These are the figures the study extends to EP 64,
//! beyond the switch's 32 ports.

use serde::Serialize;

/// `C(a, k) / C(b, k)` for `a <= b`, as a product (0 when `a < k`).
fn binom_ratio(a: usize, b: usize, k: usize) -> f64 {
    if a < k {
        return 0.0;
    }
    (0..k).map(|i| (a - i) as f64 / (b - i) as f64).product()
}

/// Expected per-token figures of one shape under uniform routing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UniformExpectation {
    /// Experts `E`.
    pub experts: usize,
    /// Top-k.
    pub topk: usize,
    /// Ranks `P`.
    pub ep: usize,
    /// `q`: probability that a token has a remote expert.
    pub p_remote: f64,
    /// `f`: expected number of remote distinct destination ranks.
    pub remote_ranks: f64,
    /// DySHARP payload of both phases over unicast's, minus 1 (negative = saving).
    pub dysharp_traffic_change: f64,
    /// NVLS-workaround payload over DySHARP's, minus 1.
    pub nvls_useless: f64,
    /// `r`: the chance that a given GPU holds none of a token's experts.
    pub p_none: f64,
    /// The paper's convention: AllGather deliveries to GPUs holding none of the token's experts
    /// over deliveries to GPUs holding one, `r / (1 − r)`.
    pub nvls_useless_deliveries: f64,
    /// NVLS-workaround payload over unicast's, minus 1.
    pub nvls_vs_unicast: f64,
    /// Ideal communication speed-up of fused DySHARP over unicast: `2f / (q + f)`.
    pub ideal_speedup: f64,
}

/// The closed-form expectation for `experts` experts, top-`topk`, `ep` ranks. Requires
/// `ep >= 1`, `experts % ep == 0` and `1 <= topk <= experts`; returns `None` otherwise.
pub fn uniform_expectation(experts: usize, topk: usize, ep: usize) -> Option<UniformExpectation> {
    if ep == 0 || experts == 0 || !experts.is_multiple_of(ep) || topk == 0 || topk > experts {
        return None;
    }
    let m = experts / ep;
    let q = 1.0 - binom_ratio(m, experts, topk);
    let r = binom_ratio(experts - m, experts, topk);
    let f = (ep - 1) as f64 * (1.0 - r);
    let dys = 2.0 * (q + f);
    let uni = 4.0 * f;
    let nvls = 2.0 * (1.0 + ep as f64);
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b - 1.0 } else { 0.0 };
    Some(UniformExpectation {
        experts,
        topk,
        ep,
        p_remote: q,
        remote_ranks: f,
        dysharp_traffic_change: ratio(dys, uni),
        nvls_useless: ratio(nvls, dys),
        p_none: r,
        nvls_useless_deliveries: if r < 1.0 { r / (1.0 - r) } else { 0.0 },
        nvls_vs_unicast: ratio(nvls, uni),
        ideal_speedup: if q + f > 0.0 { 2.0 * f / (q + f) } else { 1.0 },
    })
}

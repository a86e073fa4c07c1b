//! A layer-time model (`dysharp study --layer`, docs/paper.md "The layer-time model"): the
//! communication lower bounds of the study carried to the time of one MoE layer, with expert
//! and attention compute from FLOPs and a named GPU's stated peak, under the three schedules the
//! paper compares:
//!
//! - *DeepEP-like sequential*: attention, Dispatch (unicast), experts, Combine (unicast), one
//!   after the other;
//! - *COMET-like overlap*: unicast communication overlapped with the expert GEMMs tile by tile
//!   (Dispatch of tile `i` and Combine of tile `i − 1` share the links: the unicast fused bound);
//! - *DySHARP fused*: the same pipeline with DySHARP's multicast Dispatch and in-switch Combine
//!   (the DySHARP fused bound).
//!
//! A pipeline of communication `c` and compute `e` over `n` tiles takes
//! `max(c, e) + min(c, e) / n` (the first tile's transfer or the last tile's compute cannot be
//! hidden), plus the links' latency once. Training is forward plus backward: the backward pass
//! moves the same bytes again (the gradient of Combine is a Dispatch and vice versa) and does
//! twice the forward FLOPs.
//!
//! Every parameter has its source in [`Assumption`]; [`sensitivity`] moves each one and reports
//! which moves the result most.

use super::links::LinkStudy;
use serde::Serialize;

/// One parameter of the model with its value and where it comes from.
#[derive(Clone, Debug, Serialize)]
pub struct Assumption {
    /// Short name.
    pub name: &'static str,
    /// Value (in `unit`).
    pub value: f64,
    /// Unit.
    pub unit: &'static str,
    /// Where the value comes from.
    pub source: &'static str,
}

/// The model's parameters.
#[derive(Clone, Debug, Serialize)]
pub struct LayerParams {
    /// GPU named for its stated peak.
    pub gpu: &'static str,
    /// Dense BF16 tensor peak, FLOP/s.
    pub peak_flops: f64,
    /// Fraction of the peak the GEMMs reach (model FLOPs utilization).
    pub mfu: f64,
    /// Link bandwidth per direction, bytes/s.
    pub link_bytes_per_s: f64,
    /// Latency of one link, seconds.
    pub link_latency_s: f64,
    /// Flit size, bytes.
    pub flit_bytes: f64,
    /// Fraction of the link rate the unicast baseline reaches (1 = the lower bound).
    pub unicast_link_efficiency: f64,
    /// Hidden size.
    pub hidden: f64,
    /// Expert intermediate size (SwiGLU: three matrices of hidden × this).
    pub expert_intermediate: f64,
    /// Shared experts per token (computed locally).
    pub shared_experts: f64,
    /// Attention FLOPs per token, forward (0 leaves attention out: the MoE block alone).
    pub attention_flops_per_token: f64,
    /// Tiles of the overlapped pipelines.
    pub tiles: f64,
    /// Backward FLOPs over forward FLOPs (2 for training; 0 for a forward pass only).
    pub backward_factor: f64,
}

/// DeepSeek-V3's MLA attention, forward FLOPs per token at context `ctx` (causal: on average
/// `ctx / 2` keys): the projections (2 FLOPs per weight) plus the scores and the weighted sum.
/// Config (DeepSeek-V3 `config.json`): hidden 7168, 128 heads, q LoRA rank 1536, KV LoRA rank
/// 512, q/k head dim 128 + 64 (RoPE), v head dim 128.
pub fn dsv3_attention_flops(ctx: f64) -> f64 {
    let (h, heads, qr, kvr, nope, rope, v) = (7168.0, 128.0, 1536.0, 512.0, 128.0, 64.0, 128.0);
    let weights = h * qr // q down
        + qr * heads * (nope + rope) // q up
        + h * (kvr + rope) // kv down (+ shared RoPE key)
        + kvr * heads * (nope + v) // kv up
        + heads * v * h; // output
    let scores = 2.0 * heads * (nope + rope) * ctx / 2.0 + 2.0 * heads * v * ctx / 2.0;
    2.0 * weights + scores
}

impl LayerParams {
    /// DeepSeek-V3 on the paper's GH200 NVL32 links, with attention at a context of `ctx`
    /// tokens.
    pub fn dsv3(ctx: usize) -> Self {
        LayerParams {
            gpu: "H100 SXM5 / GH200 (Hopper)",
            peak_flops: 989.4e12,
            mfu: 0.5,
            link_bytes_per_s: 450e9,
            link_latency_s: 250e-9,
            flit_bytes: 16.0,
            unicast_link_efficiency: 1.0,
            hidden: 7168.0,
            expert_intermediate: 2048.0,
            shared_experts: 1.0,
            attention_flops_per_token: dsv3_attention_flops(ctx as f64),
            tiles: 16.0,
            backward_factor: 2.0,
        }
    }

    /// The parameters with their sources.
    pub fn assumptions(&self) -> Vec<Assumption> {
        let a = |name, value, unit, source| Assumption {
            name,
            value,
            unit,
            source,
        };
        vec![
            a("peak_flops", self.peak_flops / 1e12, "TFLOP/s", "NVIDIA H100 SXM5 datasheet: 989.4 TFLOP/s dense BF16 tensor (GH200 has the same Hopper GPU); the paper's GPUs are simulated H100-class (Accel-Sim)"),
            a("mfu", self.mfu, "fraction of peak", "assumption (not in the paper): the share of the peak the expert and attention GEMMs reach; swept in the sensitivity table"),
            a("link_bandwidth", self.link_bytes_per_s / 1e9, "GB/s per direction", "the paper: NVLink 4.0, 900 GB/s bidirectional per GPU (450 each way)"),
            a("link_latency", self.link_latency_s * 1e9, "ns per link", "the paper: 250 ns per link"),
            a("flit", self.flit_bytes, "bytes", "the paper: 16-byte flits; the study's bounds count flits of this size"),
            a("unicast_link_efficiency", self.unicast_link_efficiency, "fraction of link rate", "assumption: 1 gives the baseline its lower bound; DeepEP reports 153-158 GB/s of an H800's 200 GB/s per direction (0.77-0.79), swept in the sensitivity table"),
            a("hidden", self.hidden, "elements", "DeepSeek-V3 config.json: hidden_size 7168"),
            a("expert_intermediate", self.expert_intermediate, "elements", "DeepSeek-V3 config.json: moe_intermediate_size 2048, SwiGLU (three matrices)"),
            a("shared_experts", self.shared_experts, "per token", "DeepSeek-V3 config.json: n_shared_experts 1 (computed where the token is, no communication)"),
            a("attention_flops", self.attention_flops_per_token / 1e6, "MFLOP per token, forward", "DeepSeek-V3 MLA (q_lora_rank 1536, kv_lora_rank 512, 128 heads, head dims 128 + 64, v 128), causal context = tokens per GPU"),
            a("tiles", self.tiles, "tiles per layer", "the study's fused schedule: tiles of 128 tokens per GPU at 2,048 tokens per GPU"),
            a("backward_factor", self.backward_factor, "× forward FLOPs", "training: backward does twice the forward FLOPs and moves the same bytes again"),
        ]
    }

    /// Seconds of one link cycle (one flit per direction).
    fn cycle_s(&self) -> f64 {
        self.flit_bytes / self.link_bytes_per_s
    }

    /// Forward expert FLOPs per GPU: `tokens_per_gpu` tokens × (top-k routed + shared) experts ×
    /// 3 matrices × 2 FLOPs per weight.
    fn expert_flops(&self, tokens_per_gpu: f64, topk: f64) -> f64 {
        tokens_per_gpu
            * (topk + self.shared_experts)
            * 3.0
            * 2.0
            * self.hidden
            * self.expert_intermediate
    }
}

/// One schedule's time of a layer.
#[derive(Clone, Debug, Serialize)]
pub struct ScheduleTime {
    /// `deepep`, `comet` or `dysharp`.
    pub schedule: &'static str,
    /// Milliseconds of one layer (forward and backward when training).
    pub ms: f64,
    /// Of which on the links with nothing else running, ms.
    pub exposed_comm_ms: f64,
}

/// The model's result for one workload.
#[derive(Clone, Debug, Serialize)]
pub struct LayerRow {
    /// Family label of the traffic row.
    pub family: String,
    /// GPUs.
    pub ep: usize,
    /// Tokens per GPU.
    pub tokens_per_rank: usize,
    /// Whether attention is in the layer time.
    pub with_attention: bool,
    /// Compute per GPU per layer (experts, and attention when included), ms.
    pub compute_ms: f64,
    /// DeepEP's communication alone (Dispatch + Combine, phases in sequence), ms.
    pub deepep_comm_ms: f64,
    /// Communication's share of DeepEP's layer time.
    pub deepep_comm_share: f64,
    /// The three schedules.
    pub schedules: Vec<ScheduleTime>,
    /// DySHARP's speed-up over DeepEP.
    pub speedup_vs_deepep: f64,
    /// DySHARP's speed-up over COMET.
    pub speedup_vs_comet: f64,
}

/// The time of each schedule for one traffic row.
pub fn layer_row(
    p: &LayerParams,
    family: &str,
    tokens_per_rank: usize,
    topk: usize,
    l: &LinkStudy,
    with_attention: bool,
) -> LayerRow {
    let passes = 1.0 + if p.backward_factor > 0.0 { 1.0 } else { 0.0 };
    let flop_factor = 1.0 + p.backward_factor;
    let t = tokens_per_rank as f64;
    let rate = p.peak_flops * p.mfu;
    let expert = flop_factor * p.expert_flops(t, topk as f64) / rate;
    let attn = if with_attention {
        flop_factor * t * p.attention_flops_per_token / rate
    } else {
        0.0
    };
    let cyc = p.cycle_s();
    let ue = p.unicast_link_efficiency.max(1e-9);
    // Link latency: GPU→switch→GPU is two links; Combine's reduction is a request down and the
    // partials up before the result comes back (four links).
    let lat2 = 2.0 * p.link_latency_s;
    let deepep_comm = passes * (l.unicast.sequential_lb() as f64 * cyc / ue + 2.0 * lat2);
    let deepep = attn + expert + deepep_comm;
    let pipe = |c: f64, e: f64| c.max(e) + c.min(e) / p.tiles.max(1.0);
    let comet_comm = passes * l.unicast.fused_lb as f64 * cyc / ue;
    let comet = attn + pipe(comet_comm, expert) + passes * 2.0 * lat2;
    let dys_comm = passes * l.dysharp.fused_lb as f64 * cyc;
    let dysharp = attn + pipe(dys_comm, expert) + passes * 3.0 * lat2;
    let ms = 1e3;
    let exposed = |total: f64| ((total - attn - expert) * ms).max(0.0);
    LayerRow {
        family: family.to_string(),
        ep: l.ports,
        tokens_per_rank,
        with_attention,
        compute_ms: (attn + expert) * ms,
        deepep_comm_ms: deepep_comm * ms,
        deepep_comm_share: deepep_comm / deepep,
        schedules: vec![
            ScheduleTime {
                schedule: "deepep",
                ms: deepep * ms,
                exposed_comm_ms: exposed(deepep),
            },
            ScheduleTime {
                schedule: "comet",
                ms: comet * ms,
                exposed_comm_ms: exposed(comet),
            },
            ScheduleTime {
                schedule: "dysharp",
                ms: dysharp * ms,
                exposed_comm_ms: exposed(dysharp),
            },
        ],
        speedup_vs_deepep: deepep / dysharp,
        speedup_vs_comet: comet / dysharp,
    }
}

/// One assumption moved over a range, and what it does to the speed-ups.
#[derive(Clone, Debug, Serialize)]
pub struct Sensitivity {
    /// The assumption.
    pub name: &'static str,
    /// The values tried (in the assumption's unit).
    pub values: Vec<f64>,
    /// DySHARP over DeepEP at each value.
    pub speedup_vs_deepep: Vec<f64>,
    /// DySHARP over COMET at each value.
    pub speedup_vs_comet: Vec<f64>,
    /// DeepEP's communication share at each value.
    pub deepep_comm_share: Vec<f64>,
    /// Largest minus smallest speed-up over DeepEP.
    pub spread_vs_deepep: f64,
}

/// Moves each assumption over a plausible range (the rest at `base`), on one traffic row.
pub fn sensitivity(
    base: &LayerParams,
    family: &str,
    tokens_per_rank: usize,
    topk: usize,
    l: &LinkStudy,
) -> Vec<Sensitivity> {
    type Set = fn(&mut LayerParams, f64);
    let knobs: [(&'static str, Vec<f64>, Set); 6] = [
        ("mfu", vec![0.1, 0.25, 0.5, 0.75, 1.0], |p, v| p.mfu = v),
        ("link_bandwidth_GBps", vec![225.0, 450.0, 900.0], |p, v| {
            p.link_bytes_per_s = v * 1e9
        }),
        ("unicast_link_efficiency", vec![0.6, 0.78, 1.0], |p, v| {
            p.unicast_link_efficiency = v
        }),
        ("tiles", vec![4.0, 16.0, 64.0], |p, v| p.tiles = v),
        ("backward_factor", vec![0.0, 2.0], |p, v| {
            p.backward_factor = v
        }),
        (
            "expert_intermediate",
            vec![1024.0, 2048.0, 4096.0],
            |p, v| p.expert_intermediate = v,
        ),
    ];
    let mut out = Vec::new();
    for (name, values, set) in knobs {
        let mut s = Sensitivity {
            name,
            values: values.clone(),
            speedup_vs_deepep: Vec::new(),
            speedup_vs_comet: Vec::new(),
            deepep_comm_share: Vec::new(),
            spread_vs_deepep: 0.0,
        };
        for v in values {
            let mut p = base.clone();
            set(&mut p, v);
            let r = layer_row(&p, family, tokens_per_rank, topk, l, false);
            s.speedup_vs_deepep.push(r.speedup_vs_deepep);
            s.speedup_vs_comet.push(r.speedup_vs_comet);
            s.deepep_comm_share.push(r.deepep_comm_share);
        }
        let lo = s
            .speedup_vs_deepep
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let hi = s
            .speedup_vs_deepep
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        s.spread_vs_deepep = hi - lo;
        out.push(s);
    }
    out
}

/// The MFU at which the model's DeepEP communication share equals `share` (bisection over
/// 0.001..=1; `None` if outside).
pub fn mfu_for_comm_share(
    base: &LayerParams,
    tokens_per_rank: usize,
    topk: usize,
    l: &LinkStudy,
    share: f64,
) -> Option<f64> {
    let at = |m: f64| {
        let mut p = base.clone();
        p.mfu = m;
        layer_row(&p, "", tokens_per_rank, topk, l, false).deepep_comm_share
    };
    let (mut lo, mut hi) = (0.001, 1.0);
    // The share grows as the MFU grows (compute gets faster).
    if !(at(lo) <= share && share <= at(hi)) {
        return None;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if at(mid) < share {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// The factor by which communication must be slower (every link's bandwidth divided by it,
/// the compute unchanged) for DeepEP's communication to take `share` of the MoE block's time
/// (bisection over 0.01..=1000; `None` if outside).
pub fn comm_scale_for_share(
    base: &LayerParams,
    tokens_per_rank: usize,
    topk: usize,
    l: &LinkStudy,
    share: f64,
) -> Option<f64> {
    let at = |x: f64| {
        let mut p = base.clone();
        p.link_bytes_per_s = base.link_bytes_per_s / x;
        layer_row(&p, "", tokens_per_rank, topk, l, false).deepep_comm_share
    };
    let (mut lo, mut hi) = (0.01f64, 1000.0f64);
    if !(at(lo) <= share && share <= at(hi)) {
        return None;
    }
    for _ in 0..80 {
        let mid = (lo * hi).sqrt();
        if at(mid) < share {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo * hi).sqrt())
}

/// The layer section of a study.
#[derive(Clone, Debug, Serialize)]
pub struct LayerReport {
    /// The parameters and their sources.
    pub assumptions: Vec<Assumption>,
    /// One row per family, with and without attention.
    pub rows: Vec<LayerRow>,
    /// Each assumption moved on the paper's default workload (MoE block, no attention).
    pub sensitivity: Vec<Sensitivity>,
    /// The assumption with the largest spread of the speed-up over DeepEP.
    pub moves_most: String,
    /// The MFU at which DeepEP's communication is 70.4% of the MoE block's time (the paper's
    /// figure), on the paper's default workload.
    pub mfu_for_paper_comm_share: Option<f64>,
    /// How many times slower communication must be (link bandwidth divided by this, compute as
    /// assumed) for DeepEP's communication to be 70.4% of the MoE block's time.
    pub comm_scale_for_paper_share: Option<f64>,
    /// The paper's regime: the default workload with the links slowed by
    /// `comm_scale_for_paper_share`, MoE block only.
    pub paper_regime: Option<LayerRow>,
}

/// The layer section from DeepSeek-V3 top-`topk` traffic rows (`(family, tokens per GPU,
/// links)`); the sensitivity runs on the row whose family is `default_family` (the first row
/// if none is).
pub fn layer_report(
    base: &LayerParams,
    topk: usize,
    rows: &[(String, usize, LinkStudy)],
    default_family: &str,
) -> LayerReport {
    let mut out = Vec::new();
    for (family, tokens, l) in rows {
        for att in [false, true] {
            out.push(layer_row(base, family, *tokens, topk, l, att));
        }
    }
    let def = rows.iter().find(|r| r.0 == default_family).or(rows.first());
    let (sens, mfu70, scale70, regime) = match def {
        Some((f, t, l)) => {
            let scale = comm_scale_for_share(base, *t, topk, l, 0.704);
            let regime = scale.map(|x| {
                let mut p = base.clone();
                p.link_bytes_per_s = base.link_bytes_per_s / x;
                layer_row(&p, f, *t, topk, l, false)
            });
            (
                sensitivity(base, f, *t, topk, l),
                mfu_for_comm_share(base, *t, topk, l, 0.704),
                scale,
                regime,
            )
        }
        None => (Vec::new(), None, None, None),
    };
    let moves_most = sens
        .iter()
        .max_by(|a, b| a.spread_vs_deepep.total_cmp(&b.spread_vs_deepep))
        .map_or(String::new(), |s| s.name.to_string());
    LayerReport {
        assumptions: base.assumptions(),
        rows: out,
        sensitivity: sens,
        moves_most,
        mfu_for_paper_comm_share: mfu70,
        comm_scale_for_paper_share: scale70,
        paper_regime: regime,
    }
}

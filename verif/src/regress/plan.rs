//! The regression plan: which cases exist, their names, sizes and shards.

use dysharp_registry::{Registry, Use};
use std::fmt;
use std::str::FromStr;

/// The RTL configurations the regression covers: the registry's `regress`
/// models (`rtl/models.toml`), in file order.
pub fn models() -> Vec<&'static str> {
    Registry::builtin().names(Use::Regress)
}

/// The switch-level configurations (`dysharp_switch` alone) of the adversarial
/// cases: the registry's `sim` models whose top is `dysharp_switch`, in file order.
pub fn switch_models() -> Vec<&'static str> {
    Registry::builtin()
        .with(Use::Sim)
        .filter(|m| m.top == "dysharp_switch")
        .map(|m| m.name.as_str())
        .collect()
}

/// How big each case is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// The CI size (`--quick`).
    Quick,
    /// The nightly size.
    Full,
}

/// A trace-replay case: a workload shape and a routing distribution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceCase {
    /// Shape name (see [`SHAPES`]).
    pub shape: &'static str,
    /// Tokens at this size.
    pub tokens: usize,
    /// Experts.
    pub experts: usize,
    /// Experts per token.
    pub topk: usize,
    /// EP ranks (switch ports).
    pub ep: usize,
    /// Distribution: `uniform`, `zipf:A`, `dirichlet:A`, or `counts:MODEL:CORPUS:LAYER`
    /// (from the counts file, see [`super::counts_file`]).
    pub dist: String,
}

/// Hidden size of every trace replay: the RTL runs 128 elements per row (one
/// 256-byte bf16 packet per token row), 56× less than the paper's 7168, so the
/// nightly run fits in minutes; the row's packet count is the only thing
/// hidden changes in the switch.
pub const TRACE_HIDDEN: usize = 128;

/// A workload shape: name, tokens (full, quick), experts, top-k, EP.
struct Shape {
    name: &'static str,
    tokens: (usize, usize),
    experts: usize,
    topk: usize,
    ep: usize,
    /// Distributions (full, quick).
    dists: (&'static [&'static str], &'static [&'static str]),
}

/// The shapes DeepEP and the paper use.
const SHAPES: &[Shape] = &[
    Shape {
        // DeepEP's normal kernels / the paper's default: 4096 tokens, 256 experts, top-8, EP 8.
        name: "deepep",
        tokens: (4096, 512),
        experts: 256,
        topk: 8,
        ep: 8,
        dists: (
            &[
                "uniform",
                "zipf:0.5",
                "zipf:1.5",
                "zipf:2.5",
                "dirichlet:0.3",
            ],
            &["uniform", "zipf:2.5", "dirichlet:0.3"],
        ),
    },
    Shape {
        // DeepEP's low-latency kernels: 128 tokens.
        name: "lowlat",
        tokens: (128, 128),
        experts: 256,
        topk: 8,
        ep: 8,
        dists: (&["uniform", "zipf:1.5"], &["uniform"]),
    },
    Shape {
        // OLMoE: 64 experts, top-8.
        name: "e64k8",
        tokens: (4096, 256),
        experts: 64,
        topk: 8,
        ep: 8,
        dists: (
            &[
                "uniform",
                "counts:OLMoE-1B-7B:c4:0",
                "counts:OLMoE-1B-7B:arxiv:7",
                "counts:OLMoE-1B-7B:github:15",
            ],
            &["counts:OLMoE-1B-7B:github:15"],
        ),
    },
    Shape {
        // Mixtral: 8 experts, top-2, EP 4.
        name: "e8k2ep4",
        tokens: (4096, 256),
        experts: 8,
        topk: 2,
        ep: 4,
        dists: (
            &[
                "uniform",
                "counts:Mixtral-8x7B-v0.1:c4:0",
                "counts:Mixtral-8x7B-v0.1:github:15",
            ],
            &["counts:Mixtral-8x7B-v0.1:c4:0"],
        ),
    },
    Shape {
        name: "k16",
        tokens: (4096, 256),
        experts: 256,
        topk: 16,
        ep: 8,
        dists: (&["uniform", "zipf:1.5"], &["uniform"]),
    },
    Shape {
        name: "k32",
        tokens: (2048, 128),
        experts: 256,
        topk: 32,
        ep: 8,
        dists: (&["uniform"], &["uniform"]),
    },
];

/// What a case does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Property-based random packet streams of every op, dtype and payload edge
    /// case, with random backpressure and memory latency.
    Stream {
        /// Model name.
        model: String,
    },
    /// Property-based operation sequences over a reference state (mapping,
    /// dispatch, re-dispatch, combine of mapped and unmapped tokens, AL-TLB
    /// pressure, drains).
    Sequence {
        /// Model name.
        model: String,
    },
    /// Malformed frames of every kind interleaved with legal traffic.
    BadInput {
        /// Model name.
        model: String,
    },
    /// Reset asserted in the middle of traffic, repeatedly.
    Reset {
        /// Model name.
        model: String,
    },
    /// A trace replay through the RTL and the golden model.
    Trace(TraceCase),
    /// `dysharp_switch` alone against misbehaving hubs (the switch-level bench,
    /// `crate::switch_tb`).
    Adversarial {
        /// Model name (a `dysharp_switch` model).
        model: String,
    },
}

/// One case of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// What it does.
    pub kind: Kind,
    /// Seed (non-zero).
    pub seed: u64,
    /// Size.
    pub size: Size,
}

impl Case {
    /// The case's name, e.g. `stream/top_p8` or `trace/deepep/zipf:1.5`.
    pub fn name(&self) -> String {
        match &self.kind {
            Kind::Stream { model } => format!("stream/{model}"),
            Kind::Sequence { model } => format!("sequence/{model}"),
            Kind::BadInput { model } => format!("badinput/{model}"),
            Kind::Reset { model } => format!("reset/{model}"),
            Kind::Trace(t) => format!("trace/{}/{}", t.shape, t.dist),
            Kind::Adversarial { model } => format!("switch/adversarial/{model}"),
        }
    }

    /// The case called `name` (as [`Case::name`] prints it).
    pub fn from_name(name: &str, seed: u64, size: Size) -> Result<Case, String> {
        let (head, rest) = name
            .split_once('/')
            .ok_or_else(|| format!("case \"{name}\": expected KIND/..."))?;
        let model = |m: &str| -> Result<String, String> {
            if models().contains(&m) {
                Ok(m.to_string())
            } else {
                Err(format!(
                    "case \"{name}\": unknown model \"{m}\" (models: {})",
                    models().join(", ")
                ))
            }
        };
        let kind = match head {
            "stream" => Kind::Stream {
                model: model(rest)?,
            },
            "sequence" => Kind::Sequence {
                model: model(rest)?,
            },
            "badinput" => Kind::BadInput {
                model: model(rest)?,
            },
            "reset" => Kind::Reset {
                model: model(rest)?,
            },
            "switch" => {
                let m = rest.strip_prefix("adversarial/").ok_or_else(|| {
                    format!("case \"{name}\": expected switch/adversarial/MODEL")
                })?;
                if !switch_models().contains(&m) {
                    return Err(format!(
                        "case \"{name}\": unknown switch model \"{m}\" (models: {})",
                        switch_models().join(", ")
                    ));
                }
                Kind::Adversarial {
                    model: m.to_string(),
                }
            }
            "trace" => {
                let (shape, dist) = rest
                    .split_once('/')
                    .ok_or_else(|| format!("case \"{name}\": expected trace/SHAPE/DIST"))?;
                let s = SHAPES.iter().find(|s| s.name == shape).ok_or_else(|| {
                    format!(
                        "case \"{name}\": unknown shape \"{shape}\" (shapes: {})",
                        SHAPES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                    )
                })?;
                Kind::Trace(trace_case(s, dist, size))
            }
            _ => {
                return Err(format!(
                    "case \"{name}\": unknown kind \"{head}\" (stream, sequence, badinput, reset, switch, trace)"
                ))
            }
        };
        if seed == 0 {
            return Err("seed must be non-zero".into());
        }
        Ok(Case { kind, seed, size })
    }
}

fn trace_case(s: &Shape, dist: &str, size: Size) -> TraceCase {
    TraceCase {
        shape: s.name,
        tokens: match size {
            Size::Full => s.tokens.0,
            Size::Quick => s.tokens.1,
        },
        experts: s.experts,
        topk: s.topk,
        ep: s.ep,
        dist: dist.to_string(),
    }
}

/// A shard `index` of `count` (1-based): cases `i` with `i % count == index - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 1, count: 1 }
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("shard \"{s}\": expected K/N with 1 <= K <= N");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What to plan.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Case size.
    pub size: Size,
    /// Seeds per case (1..=seeds).
    pub seeds: u64,
    /// Keep only cases whose name contains this.
    pub filter: Option<String>,
    /// The shard to keep.
    pub shard: Shard,
}

/// The ordered list of cases (then filtered and sharded).
pub fn plan(o: &PlanOptions) -> Vec<Case> {
    let mut all = Vec::new();
    for seed in 1..=o.seeds.max(1) {
        for m in models() {
            let model = m.to_string();
            for kind in [
                Kind::Stream {
                    model: model.clone(),
                },
                Kind::Sequence {
                    model: model.clone(),
                },
                Kind::BadInput {
                    model: model.clone(),
                },
                Kind::Reset {
                    model: model.clone(),
                },
            ] {
                all.push(Case {
                    kind,
                    seed,
                    size: o.size,
                });
            }
        }
        for m in switch_models() {
            all.push(Case {
                kind: Kind::Adversarial {
                    model: m.to_string(),
                },
                seed,
                size: o.size,
            });
        }
        for s in SHAPES {
            let dists = match o.size {
                Size::Full => s.dists.0,
                Size::Quick => s.dists.1,
            };
            for d in dists {
                all.push(Case {
                    kind: Kind::Trace(trace_case(s, d, o.size)),
                    seed,
                    size: o.size,
                });
            }
        }
    }
    all.into_iter()
        .filter(|c| {
            o.filter
                .as_ref()
                .is_none_or(|f| c.name().contains(f.as_str()))
        })
        .enumerate()
        .filter(|(i, _)| i % o.shard.count == o.shard.index - 1)
        .map(|(_, c)| c)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(size: Size, seeds: u64, shard: Shard) -> PlanOptions {
        PlanOptions {
            size,
            seeds,
            filter: None,
            shard,
        }
    }

    #[test]
    fn shards_partition_the_plan() {
        let all = plan(&opts(Size::Full, 3, Shard::default()));
        for n in 1..=7 {
            let mut union: Vec<String> = Vec::new();
            for k in 1..=n {
                let part = plan(&opts(Size::Full, 3, Shard { index: k, count: n }));
                union.extend(part.iter().map(|c| format!("{}#{}", c.name(), c.seed)));
            }
            let mut want: Vec<String> = all
                .iter()
                .map(|c| format!("{}#{}", c.name(), c.seed))
                .collect();
            union.sort();
            want.sort();
            assert_eq!(union, want, "{n} shards");
        }
    }

    #[test]
    fn every_name_parses_back() {
        for size in [Size::Quick, Size::Full] {
            for c in plan(&opts(size, 2, Shard::default())) {
                assert_eq!(Case::from_name(&c.name(), c.seed, size).unwrap(), c);
            }
        }
    }

    #[test]
    fn bad_names_and_shards_are_errors() {
        assert!(Case::from_name("stream/top_p9", 1, Size::Quick).is_err());
        assert!(Case::from_name("trace/nope/uniform", 1, Size::Quick).is_err());
        assert!(Case::from_name("fly/top_p8", 1, Size::Quick).is_err());
        assert!(Case::from_name("switch/adversarial/top_p8", 1, Size::Quick).is_err());
        assert!(Case::from_name("switch/top_p8", 1, Size::Quick).is_err());
        assert!(Case::from_name("stream/top_p8", 0, Size::Quick).is_err());
        for s in ["0/2", "3/2", "1", "a/b", "1/0"] {
            assert!(s.parse::<Shard>().is_err(), "{s}");
        }
        assert_eq!(
            "2/5".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 5 }
        );
    }
}

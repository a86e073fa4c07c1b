//! The workloads of the study: model shapes and routing families (docs/paper.md, "Workloads").
//!
//! Families follow the DySHARP paper's sensitivity study: DeepEP's mock (uniform) routing,
//! *training* routing (the paper's default workload: "standard deviation of token distribution
//! across experts from 0.01 to 0.05, based on normal distribution std = 0.032", as per-expert
//! token shares `k/E + S·N(0, 1)`: [`DistSpec::Normal`]), *inference* routing (power law, Zipf
//! α 0.5–2.5) and calibrated-real routing (per-expert marginals of real models,
//! [`DistSpec::Counts`]).

use crate::trace::DistSpec;
use serde::Serialize;
use std::path::Path;

/// A model shape: row size, expert count and top-k.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ModelShape {
    /// Name, e.g. `DeepSeek-V3`.
    pub name: String,
    /// Hidden size (bf16 elements per token row).
    pub hidden: usize,
    /// Experts.
    pub experts: usize,
    /// Experts per token.
    pub topk: usize,
}

impl ModelShape {
    /// A shape.
    pub fn new(name: &str, hidden: usize, experts: usize, topk: usize) -> Self {
        ModelShape {
            name: name.to_string(),
            hidden,
            experts,
            topk,
        }
    }

    /// DeepSeek-V3: hidden 7168, 256 experts, top-`topk` (8 is the model's own).
    pub fn deepseek_v3(topk: usize) -> Self {
        Self::new("DeepSeek-V3", 7168, 256, topk)
    }

    /// Bytes of one bf16 token row.
    pub fn row_bytes(&self) -> usize {
        2 * self.hidden
    }
}

/// Which of the paper's routing families a workload belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FamilyKind {
    /// DeepEP's mock routing (uniform).
    Mock,
    /// Training routing (near-uniform).
    Training,
    /// Inference routing (power law).
    Inference,
    /// Calibrated-real routing (real marginals, synthetic combinations).
    Real,
}

impl FamilyKind {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            FamilyKind::Mock => "mock",
            FamilyKind::Training => "training",
            FamilyKind::Inference => "inference",
            FamilyKind::Real => "real",
        }
    }
}

/// A routing family member: its kind and generator.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// Kind.
    pub kind: FamilyKind,
    /// Generator.
    pub dist: DistSpec,
    /// The shape this family is bound to (real marginals fix experts and top-k), if any.
    pub shape: Option<ModelShape>,
}

impl Family {
    /// A synthetic family, usable with any shape.
    pub fn synthetic(kind: FamilyKind, dist: DistSpec) -> Self {
        Family {
            kind,
            dist,
            shape: None,
        }
    }

    /// Short label: `mock uniform`, `training normal:0.032`, `inference zipf:1.5`, `real M/C/L`.
    pub fn label(&self) -> String {
        match &self.dist {
            DistSpec::Counts {
                model,
                corpus,
                layer,
                ..
            } => format!("real {model}/{corpus}/{layer}"),
            DistSpec::Uniform => "mock uniform".to_string(),
            d => format!("{} {d}", self.kind.name()),
        }
    }
}

/// The paper's synthetic families: mock, training (normal) std 0.01/0.032/0.05, inference α
/// 0.5/1.5/2.5.
pub fn synthetic_families() -> Vec<Family> {
    let mut v = vec![Family::synthetic(FamilyKind::Mock, DistSpec::Uniform)];
    for std in [0.01, 0.032, 0.05] {
        v.push(Family::synthetic(
            FamilyKind::Training,
            DistSpec::Normal { std },
        ));
    }
    for alpha in [0.5, 1.5, 2.5] {
        v.push(Family::synthetic(
            FamilyKind::Inference,
            DistSpec::Zipf { alpha },
        ));
    }
    v
}

/// Calibrated-real families from a counts CSV (`../shared/data/routing/expert_counts.csv`):
/// OLMoE-1B-7B (hidden 2048, 64 experts, top-8) github/7 (the most skewed), c4/7 and
/// wikipedia/15, and Mixtral-8x7B (hidden 4096, 8 experts, top-2) github/7.
pub fn real_families(file: &Path) -> Vec<Family> {
    let olmoe = ModelShape::new("OLMoE-1B-7B", 2048, 64, 8);
    let mixtral = ModelShape::new("Mixtral-8x7B", 4096, 8, 2);
    let sel = [
        (&olmoe, "OLMoE-1B-7B", "github", 7),
        (&olmoe, "OLMoE-1B-7B", "c4", 7),
        (&olmoe, "OLMoE-1B-7B", "wikipedia", 15),
        (&mixtral, "Mixtral-8x7B-v0.1", "github", 7),
    ];
    sel.iter()
        .map(|(shape, model, corpus, layer)| Family {
            kind: FamilyKind::Real,
            dist: DistSpec::Counts {
                file: file.to_path_buf(),
                model: model.to_string(),
                corpus: corpus.to_string(),
                layer: *layer,
            },
            shape: Some((*shape).clone()),
        })
        .collect()
}

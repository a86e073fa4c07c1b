//! `dysharp study`: the DySHARP paper's claims held against this model (issue 15;
//! docs/paper.md states the accounting and lists every claim beside our figure).
//!
//! * [`workload`]: model shapes and routing families (mock, training, inference, real).
//! * [`links`]: traffic per direction of DySHARP, the unicast baseline and the NVLS workaround,
//!   and the communication lower bounds phase by phase and token-interleaved (the fusion).
//! * [`tlb_sweep`]: AL-TLB hit rate and walks against entries, ways and schedule.
//! * [`analytic`]: closed forms under uniform routing (EP 64, beyond the switch's 32 ports).
//! * [`layer`]: the layer-time model (compute from FLOPs, links from the paper, three schedules).
//! * [`plan`]: the grids ([`Grid::Quick`], [`Grid::Default`], [`Grid::Full`]) and the runner.
//! * [`report`]: rows, CSV, the 99% knees of the TLB sweep and the claim table.
//!
//! All traffic numbers come from [`crate::traffic::account`] and
//! [`crate::traffic::account_nvls`]; all TLB numbers from [`crate::hub::tlb::Tlb`].

pub mod analytic;
pub mod layer;
pub mod links;
pub mod plan;
pub mod report;
pub mod tlb_sweep;
pub mod workload;

pub use analytic::{uniform_expectation, UniformExpectation};
pub use layer::{LayerParams, LayerReport, LayerRow};
pub use links::{study_links, LinkStudy, SchemeTotals};
pub use plan::{run, Grid, Progress, StudyError, StudyOptions};
pub use report::{claims, Claim, InSwitchRow, Ratios, StudyReport, TlbKnee, TlbRow, TrafficRow};
pub use tlb_sweep::{sweep_one, HubStreams, Schedule, TlbResult};
pub use workload::{Family, FamilyKind, ModelShape};

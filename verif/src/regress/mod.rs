//! The regression: property-based differential streams and operation
//! sequences, a bad-input campaign, reset in the middle of traffic and
//! trace replays, each over the built RTL configurations and checked packet by
//! packet and memory access by memory access against the golden model.
//!
//! A *case* is one (kind, model or shape, seed); every case is deterministic
//! given its name, seed and size, so any failure re-runs exactly with
//! `dysharp regress --case NAME --seed S [--quick] --vcd FILE`. The plan is a
//! fixed, ordered list, so `--shard K/N` splits it over machines.

mod adversarial;
mod badinput;
mod plan;
mod props;
mod traces;

pub use plan::{models, plan, switch_models, Case, Kind, PlanOptions, Shard, Size, TraceCase};

use crate::tb::TbError;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// What one case checked.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Checked {
    /// Packets leaving the switch checked against the golden model (hub
    /// requests and SM responses).
    pub packets: u64,
    /// GPU memory accesses checked.
    pub mem_accesses: u64,
    /// Legal packets injected.
    pub legal_injected: u64,
    /// Malformed frames injected (frames the golden decoder rejects).
    pub malformed_injected: u64,
    /// Frames cut off by a reset in the middle of traffic.
    pub cut_by_reset: u64,
    /// Cycles simulated.
    pub cycles: u64,
}

impl Checked {
    fn add(&mut self, o: &Checked) {
        self.packets += o.packets;
        self.mem_accesses += o.mem_accesses;
        self.legal_injected += o.legal_injected;
        self.malformed_injected += o.malformed_injected;
        self.cut_by_reset += o.cut_by_reset;
        self.cycles += o.cycles;
    }
}

/// How a case failed.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    /// The RTL differed from the golden model.
    Mismatch,
    /// The run did not drain within its bound.
    Hang,
    /// An SVA assertion fired, or the model could not be built or driven.
    Error,
}

impl FailKind {
    fn of(e: &TbError) -> FailKind {
        match e {
            TbError::Mismatch { .. } => FailKind::Mismatch,
            TbError::Timeout { .. } => FailKind::Hang,
            _ => FailKind::Error,
        }
    }
}

/// A case's failure.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    /// Kind of failure.
    pub kind: FailKind,
    /// The first error.
    pub message: String,
    /// The smallest failing input found by shrinking (property cases).
    pub shrunk: Option<String>,
    /// The command that re-runs exactly this case, writing a waveform.
    pub rerun: String,
}

/// The outcome of one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// Case name.
    pub name: String,
    /// Seed.
    pub seed: u64,
    /// What it checked (up to the failure).
    #[serde(flatten)]
    pub checked: Checked,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Why it was skipped (a missing input file), if it was.
    pub skipped: Option<String>,
    /// The failure, if any.
    pub failure: Option<Failure>,
}

/// The outcome of a regression run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// `quick` or `full`.
    pub size: String,
    /// The shard run (`K/N`).
    pub shard: String,
    /// Cases run (not skipped).
    pub cases_run: usize,
    /// Cases skipped.
    pub cases_skipped: usize,
    /// Cases failed.
    pub cases_failed: usize,
    /// Packets checked against the golden model.
    pub packets_checked: u64,
    /// Memory accesses checked.
    pub mem_checked: u64,
    /// Legal packets injected.
    pub legal_injected: u64,
    /// Malformed frames injected.
    pub malformed_injected: u64,
    /// Cases that failed on a difference from the golden model.
    pub mismatches: usize,
    /// Cases that did not drain within their bound.
    pub hangs: usize,
    /// Cycles simulated.
    pub cycles: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Every case.
    pub cases: Vec<CaseResult>,
}

/// Where the calibrated-real routing counts are looked for when
/// `DYSHARP_COUNTS` is not set: `../shared/data/routing/expert_counts.csv`
/// from the current folder, then from the source tree.
pub fn counts_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DYSHARP_COUNTS") {
        return Some(PathBuf::from(p));
    }
    let rel = "../shared/data/routing/expert_counts.csv";
    let candidates = [
        PathBuf::from(rel),
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(rel),
    ];
    candidates.into_iter().find(|p| p.is_file())
}

/// The command line that re-runs one case.
pub fn rerun_command(case: &Case) -> String {
    format!(
        "dysharp regress --case {} --seed {}{} --vcd {}.vcd",
        case.name(),
        case.seed,
        if case.size == Size::Quick {
            " --quick"
        } else {
            ""
        },
        case.name().replace(['/', ':'], "_")
    )
}

/// Runs one case; `vcd` writes its waveform.
pub fn run_case(case: &Case, vcd: Option<PathBuf>) -> CaseResult {
    let start = Instant::now();
    let mut checked = Checked::default();
    let outcome = match &case.kind {
        Kind::Stream { model } | Kind::Sequence { model } => {
            props::ops_case(model, case, vcd, &mut checked)
        }
        Kind::BadInput { model } => badinput::campaign(model, case, vcd, &mut checked),
        Kind::Reset { model } => badinput::resets(model, case, vcd, &mut checked),
        Kind::Trace(t) => traces::replay(t, case.seed, &mut checked),
        Kind::Adversarial { model } => adversarial::campaign(model, case, vcd, &mut checked),
    };
    let (skipped, failure) = match outcome {
        Ok(Outcome::Passed) => (None, None),
        Ok(Outcome::Skipped(why)) => (Some(why), None),
        Err(f) => (
            None,
            Some(Failure {
                kind: f.kind,
                message: f.message,
                shrunk: f.shrunk,
                rerun: rerun_command(case),
            }),
        ),
    };
    CaseResult {
        name: case.name(),
        seed: case.seed,
        checked,
        seconds: start.elapsed().as_secs_f64(),
        skipped,
        failure,
    }
}

/// A case body's result.
pub(crate) enum Outcome {
    Passed,
    Skipped(String),
}

/// A case body's failure.
pub(crate) struct CaseFail {
    kind: FailKind,
    message: String,
    shrunk: Option<String>,
}

impl From<TbError> for CaseFail {
    fn from(e: TbError) -> Self {
        CaseFail {
            kind: FailKind::of(&e),
            message: e.to_string(),
            shrunk: None,
        }
    }
}

impl CaseFail {
    fn error(message: String) -> Self {
        CaseFail {
            kind: FailKind::Error,
            message,
            shrunk: None,
        }
    }
}

/// Runs `cases` on `jobs` threads; `each` sees every result as it completes.
pub fn run_cases(
    cases: &[Case],
    jobs: usize,
    size: Size,
    shard: Shard,
    each: &(dyn Fn(&CaseResult) + Sync),
) -> Summary {
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, CaseResult)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(cases.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let r = run_case(case, None);
                each(&r);
                results.lock().expect("no panics hold it").push((i, r));
            });
        }
    });
    let mut results = results.into_inner().expect("no panics hold it");
    results.sort_by_key(|(i, _)| *i);
    let cases: Vec<CaseResult> = results.into_iter().map(|(_, r)| r).collect();
    let mut total = Checked::default();
    for c in &cases {
        total.add(&c.checked);
    }
    let failed = |k: FailKind| {
        cases
            .iter()
            .filter(|c| c.failure.as_ref().is_some_and(|f| f.kind == k))
            .count()
    };
    Summary {
        size: match size {
            Size::Quick => "quick".into(),
            Size::Full => "full".into(),
        },
        shard: format!("{}/{}", shard.index, shard.count),
        cases_run: cases.iter().filter(|c| c.skipped.is_none()).count(),
        cases_skipped: cases.iter().filter(|c| c.skipped.is_some()).count(),
        cases_failed: cases.iter().filter(|c| c.failure.is_some()).count(),
        packets_checked: total.packets,
        mem_checked: total.mem_accesses,
        legal_injected: total.legal_injected,
        malformed_injected: total.malformed_injected,
        mismatches: failed(FailKind::Mismatch),
        hangs: failed(FailKind::Hang),
        cycles: total.cycles,
        seconds: start.elapsed().as_secs_f64(),
        cases,
    }
}

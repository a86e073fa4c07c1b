//! The study's grids and runner (docs/paper.md, "Running the study").
//!
//! A run is a list of independent jobs (one traffic row, or one TLB sweep of a family, sequence
//! length and schedule), executed on `threads` worker threads; the caller sees each finished
//! job through a [`Progress`] callback on its own thread. Results come back in plan order, so
//! a run is deterministic whatever the thread count.

use super::analytic::uniform_expectation;
use super::layer::{layer_report, LayerParams, LayerReport};
use super::links::{study_links, LinkStudy};
use super::report::{
    in_switch_rows, knees, payload_efficiency, AnalyticRow, Section, StudyReport, TlbRow,
    TrafficRow,
};
use super::tlb_sweep::{sweep_one, HubStreams, Schedule};
use super::workload::{real_families, synthetic_families, Family, ModelShape};
use crate::trace::{generate, DistSpec, GenError, Trace};
use crate::traffic::{RowShape, Token};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;
use thiserror::Error;

/// Largest EP degree the switch model supports (spec: up to 32 ports).
pub const MAX_STUDY_EP: usize = 32;

/// How big a study to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// A few rows, for tests (seconds).
    Quick,
    /// The grid of docs/paper.md (minutes).
    Default,
    /// More shapes and top-k values, longer sequences in every row.
    Full,
}

/// What to run. [`StudyOptions::new`] fills in the grid's defaults; fields may then be changed
/// and are checked by [`run`].
#[derive(Clone, Debug)]
pub struct StudyOptions {
    /// Grid.
    pub grid: Grid,
    /// EP degrees of the traffic rows (2..=32, each dividing the shape's experts).
    pub eps: Vec<usize>,
    /// Tokens per rank of the traffic grid.
    pub tokens_per_rank: usize,
    /// Tokens per rank of the sequence-length sensitivity rows.
    pub seq_lens: Vec<usize>,
    /// Tokens per rank per tile of the fused schedule.
    pub tile: usize,
    /// AL-TLB entries swept (powers of two).
    pub tlb_entries: Vec<usize>,
    /// AL-TLB ways swept (powers of two; 0 = fully associative).
    pub tlb_ways: Vec<usize>,
    /// EP degree of the TLB sweep.
    pub tlb_ep: usize,
    /// Tokens per rank of the TLB sweep.
    pub tlb_seq_lens: Vec<usize>,
    /// Tiles (tokens per rank) of the fused schedule in the TLB sweep. `tlb_ways` is swept at
    /// the first tile; the other tiles and the phased schedule are fully associative.
    pub tlb_tiles: Vec<usize>,
    /// Counts CSV for the calibrated-real families (skipped when `None`).
    pub counts: Option<PathBuf>,
    /// Trace seed.
    pub seed: u64,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Run only the rows of the layer-time model (DeepSeek-V3 top-8 at the largest EP under
    /// mock, normal std 0.032 and zipf 1.5), no sequence-length rows and no TLB sweep.
    pub layer_only: bool,
}

impl StudyOptions {
    /// The defaults of `grid`.
    pub fn new(grid: Grid) -> Self {
        let pow2 = |a: u32, b: u32| (a..=b).map(|i| 1usize << i).collect::<Vec<_>>();
        let (tokens_per_rank, seq_lens, tlb_entries, tlb_seq_lens, eps) = match grid {
            Grid::Quick => (
                256,
                vec![64, 256],
                vec![16, 64, 256],
                vec![64, 256],
                vec![4, 8],
            ),
            Grid::Default => (
                2048,
                pow2(10, 14),
                pow2(4, 12),
                vec![1024, 4096, 16384],
                vec![4, 8, 16, 32],
            ),
            Grid::Full => (
                8192,
                pow2(10, 14),
                pow2(4, 12),
                vec![1024, 4096, 16384],
                vec![4, 8, 16, 32],
            ),
        };
        StudyOptions {
            grid,
            eps,
            tokens_per_rank,
            seq_lens,
            tile: if grid == Grid::Quick { 32 } else { 128 },
            tlb_entries,
            tlb_ways: vec![1, 4, 16, 0],
            tlb_ep: 8,
            tlb_seq_lens,
            tlb_tiles: if grid == Grid::Quick {
                vec![32]
            } else {
                vec![32, 64, 128]
            },
            counts: None,
            seed: 1,
            threads: 1,
            layer_only: false,
        }
    }

    /// Model shapes of the traffic grid.
    pub fn shapes(&self) -> Vec<ModelShape> {
        let mut v = vec![ModelShape::deepseek_v3(8)];
        if self.grid == Grid::Quick {
            return v;
        }
        v.push(ModelShape::deepseek_v3(16));
        v.push(ModelShape::deepseek_v3(32));
        let topks: &[usize] = if self.grid == Grid::Full {
            &[8, 16, 32]
        } else {
            &[8]
        };
        for &k in topks {
            v.push(ModelShape::new("paper-4096/128", 4096, 128, k));
            v.push(ModelShape::new("paper-2048/64", 2048, 64, k));
        }
        v
    }

    /// Routing families of the traffic grid (synthetic, plus real ones with a counts file).
    pub fn families(&self) -> Vec<Family> {
        let mut v = synthetic_families();
        if self.grid == Grid::Quick {
            v.retain(|f| {
                matches!(
                    f.dist,
                    DistSpec::Uniform | DistSpec::Normal { .. } | DistSpec::Zipf { .. }
                )
            });
            v.dedup_by(|a, b| a.kind == b.kind);
        }
        if let Some(file) = &self.counts {
            v.extend(real_families(file));
        }
        v
    }

    /// Families of the sequence-length rows and the TLB sweep: mock, training std 0.032,
    /// inference α 1.5 (and α 2.5 for the TLB), and the most skewed real one.
    fn sensitivity_families(&self, tlb: bool) -> Vec<Family> {
        self.families()
            .into_iter()
            .filter(|f| match &f.dist {
                DistSpec::Uniform => true,
                DistSpec::Normal { std } => (*std - 0.032).abs() < 1e-9,
                DistSpec::Zipf { alpha } => {
                    (*alpha - 1.5).abs() < 1e-9 || (tlb && (*alpha - 2.5).abs() < 1e-9)
                }
                DistSpec::Counts { corpus, model, .. } => {
                    tlb && corpus == "github" && model.starts_with("OLMoE")
                }
                _ => false,
            })
            .collect()
    }

    fn check(&self) -> Result<(), StudyError> {
        let bad = |flag: &'static str, msg: String| Err(StudyError::Option { flag, msg });
        if self.eps.is_empty() {
            return bad("eps", "needs at least one EP degree".into());
        }
        for &ep in self.eps.iter().chain([&self.tlb_ep]) {
            if !(2..=MAX_STUDY_EP).contains(&ep) {
                let flag = if ep == self.tlb_ep && !self.eps.contains(&ep) {
                    "tlb-ep"
                } else {
                    "eps"
                };
                return bad(
                    flag,
                    format!("EP {ep} is outside 2..={MAX_STUDY_EP} (the switch's port limit; EP 64 is analytic only)"),
                );
            }
        }
        if 256 % self.tlb_ep != 0 {
            return bad(
                "tlb-ep",
                format!("{} does not divide 256 experts", self.tlb_ep),
            );
        }
        if self.tokens_per_rank == 0 {
            return bad("tokens", "must be at least 1".into());
        }
        if self.seq_lens.contains(&0) {
            return bad("seq-lens", "every length must be at least 1".into());
        }
        if self.tlb_seq_lens.is_empty() || self.tlb_seq_lens.contains(&0) {
            return bad("tlb-seq-lens", "needs lengths of at least 1".into());
        }
        if self.tile == 0 {
            return bad("tile", "must be at least 1".into());
        }
        if self.tlb_tiles.is_empty() || self.tlb_tiles.contains(&0) {
            return bad("tlb-tiles", "needs tiles of at least 1 token".into());
        }
        if self.tlb_entries.is_empty() || self.tlb_entries.iter().any(|e| !e.is_power_of_two()) {
            return bad("tlb-entries", "needs powers of two".into());
        }
        if self.tlb_ways.is_empty()
            || self
                .tlb_ways
                .iter()
                .any(|&w| w != 0 && !w.is_power_of_two())
        {
            return bad(
                "tlb-ways",
                "needs powers of two, or 0 for fully associative".into(),
            );
        }
        if self.threads == 0 {
            return bad("threads", "must be at least 1".into());
        }
        Ok(())
    }
}

/// Why a study cannot run.
#[derive(Debug, Error)]
pub enum StudyError {
    /// An option is out of range; `flag` names the command-line flag.
    #[error("invalid value for --{flag}: {msg}")]
    Option {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        msg: String,
    },
    /// A trace could not be generated (for example an unreadable counts file).
    #[error("{family}: {source}")]
    Gen {
        /// The family's label.
        family: String,
        /// The generator's error (boxed: it is large).
        #[source]
        source: Box<GenError>,
    },
}

/// A finished job, for progress reporting.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Jobs finished so far.
    pub done: usize,
    /// Jobs in the plan.
    pub total: usize,
    /// What the finished job was.
    pub label: String,
}

/// One unit of work.
#[derive(Clone, Debug)]
enum Job {
    Traffic {
        section: Section,
        shape: ModelShape,
        family: Family,
        ep: usize,
        tokens_per_rank: usize,
    },
    Tlb {
        shape: ModelShape,
        family: Family,
        ep: usize,
        tokens_per_rank: usize,
        schedule: Schedule,
        tile: usize,
        ways: Vec<usize>,
    },
}

impl Job {
    fn label(&self) -> String {
        match self {
            Job::Traffic {
                section,
                shape,
                family,
                ep,
                tokens_per_rank,
            } => format!(
                "{} {} top-{} {} EP {ep} {tokens_per_rank} tok/rank",
                section.name(),
                shape.name,
                shape.topk,
                family.label()
            ),
            Job::Tlb {
                family,
                ep,
                tokens_per_rank,
                schedule,
                tile,
                ..
            } => format!(
                "tlb {} EP {ep} {tokens_per_rank} tok/rank {} tile {tile}",
                family.label(),
                schedule.name()
            ),
        }
    }
}

enum JobOut {
    Traffic(Box<TrafficRow>),
    Tlb(Vec<TlbRow>),
}

/// The jobs of a plan, in report order.
fn jobs(opts: &StudyOptions) -> Vec<Job> {
    let mut v = Vec::new();
    let fits = |shape: &ModelShape, ep: usize| shape.experts.is_multiple_of(ep);
    if opts.layer_only {
        let shape = ModelShape::deepseek_v3(8);
        let ep = opts.eps.iter().copied().max().unwrap_or(2);
        for family in opts.sensitivity_families(false) {
            if family.shape.is_none() && fits(&shape, ep) {
                v.push(Job::Traffic {
                    section: Section::Grid,
                    shape: shape.clone(),
                    family,
                    ep,
                    tokens_per_rank: opts.tokens_per_rank,
                });
            }
        }
        return v;
    }
    for family in opts.families() {
        let shapes = match &family.shape {
            Some(s) => vec![s.clone()],
            None => opts.shapes(),
        };
        for shape in shapes {
            for &ep in &opts.eps {
                if fits(&shape, ep) {
                    v.push(Job::Traffic {
                        section: Section::Grid,
                        shape: shape.clone(),
                        family: family.clone(),
                        ep,
                        tokens_per_rank: opts.tokens_per_rank,
                    });
                }
            }
        }
    }
    for family in opts.sensitivity_families(false) {
        let shape = ModelShape::deepseek_v3(8);
        for &ep in &opts.eps {
            for &len in &opts.seq_lens {
                v.push(Job::Traffic {
                    section: Section::SeqLen,
                    shape: shape.clone(),
                    family: family.clone(),
                    ep,
                    tokens_per_rank: len,
                });
            }
        }
    }
    for family in opts.sensitivity_families(true) {
        let shape = family
            .shape
            .clone()
            .unwrap_or_else(|| ModelShape::deepseek_v3(8));
        if !fits(&shape, opts.tlb_ep) {
            continue;
        }
        for &len in &opts.tlb_seq_lens {
            let job = |schedule, tile, ways: &[usize]| Job::Tlb {
                shape: shape.clone(),
                family: family.clone(),
                ep: opts.tlb_ep,
                tokens_per_rank: len,
                schedule,
                tile,
                ways: ways.to_vec(),
            };
            v.push(job(Schedule::Phased, len, &[0]));
            // Associativity is swept at the first tile; the others are fully associative
            // (a direct-mapped TLB thrashes, and simulating every chunk of it is the slow part).
            for (i, &tile) in opts.tlb_tiles.iter().enumerate() {
                let ways: &[usize] = if i == 0 { &opts.tlb_ways } else { &[0] };
                v.push(job(Schedule::Fused, tile, ways));
            }
        }
    }
    v
}

/// Generates the trace of a job and returns its tokens (rank-major).
fn tokens_of(
    family: &Family,
    shape: &ModelShape,
    ep: usize,
    tokens_per_rank: usize,
    seed: u64,
) -> Result<Vec<Token>, StudyError> {
    let trace: Trace = generate(
        &family.dist,
        tokens_per_rank * ep,
        shape.experts,
        shape.topk,
        ep,
        seed,
    )
    .map_err(|source| StudyError::Gen {
        family: family.label(),
        source: Box::new(source),
    })?;
    Ok(trace.replay_tokens().0)
}

/// Standard deviation over experts of the per-expert token share (the fraction of tokens
/// that pick each expert).
pub fn share_std(tokens: &[Token], experts: usize) -> f64 {
    if tokens.is_empty() || experts == 0 {
        return 0.0;
    }
    let mut load = vec![0u64; experts];
    for t in tokens {
        for &e in &t.experts {
            if let Some(l) = load.get_mut(e as usize) {
                *l += 1;
            }
        }
    }
    let n = tokens.len() as f64;
    let shares: Vec<f64> = load.iter().map(|&l| l as f64 / n).collect();
    let mean = shares.iter().sum::<f64>() / experts as f64;
    (shares.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / experts as f64).sqrt()
}

fn run_job(job: &Job, opts: &StudyOptions) -> Result<JobOut, StudyError> {
    match job {
        Job::Traffic {
            section,
            shape,
            family,
            ep,
            tokens_per_rank,
        } => {
            let tokens = tokens_of(family, shape, *ep, *tokens_per_rank, opts.seed)?;
            let row = RowShape {
                row_bytes: shape.row_bytes(),
            };
            let links = study_links(
                &tokens,
                *ep,
                shape.experts / ep,
                *tokens_per_rank,
                opts.tile,
                row,
            );
            Ok(JobOut::Traffic(Box::new(TrafficRow::new(
                *section,
                shape,
                family,
                *ep,
                *tokens_per_rank,
                opts.tile,
                share_std(&tokens, shape.experts),
                links,
            ))))
        }
        Job::Tlb {
            shape,
            family,
            ep,
            tokens_per_rank,
            schedule,
            tile,
            ways,
        } => {
            let tokens = tokens_of(family, shape, *ep, *tokens_per_rank, opts.seed)?;
            let streams = HubStreams::new(&tokens, *ep, shape.experts / ep, *tokens_per_rank);
            let chunks = shape.row_bytes().div_ceil(256);
            let mut rows = Vec::new();
            for &ways in ways {
                for &entries in &opts.tlb_entries {
                    let w = if ways == 0 { entries } else { ways };
                    if w > entries {
                        continue;
                    }
                    let r = sweep_one(&streams, entries, w, *schedule, *tile, chunks);
                    rows.push(TlbRow {
                        model: shape.name.clone(),
                        family: family.label(),
                        kind: family.kind,
                        ep: *ep,
                        tokens_per_rank: *tokens_per_rank,
                        chunks,
                        fully_associative: ways == 0,
                        result: r,
                    });
                }
            }
            Ok(JobOut::Tlb(rows))
        }
    }
}

/// The layer-time model on the DeepSeek-V3 top-8 grid rows at the largest EP of the run (mock,
/// normal std 0.032, zipf 1.5), with attention at a context of the grid's tokens per GPU.
fn layer_section(traffic: &[TrafficRow], opts: &StudyOptions) -> Option<LayerReport> {
    let ep = opts.eps.iter().copied().max()?;
    let rows: Vec<(String, usize, LinkStudy)> = traffic
        .iter()
        .filter(|t| {
            t.section == Section::Grid
                && t.model == "DeepSeek-V3"
                && t.topk == 8
                && t.ep == ep
                && [
                    "mock uniform",
                    "training normal:0.032",
                    "inference zipf:1.5",
                ]
                .contains(&t.family.as_str())
        })
        .map(|t| (t.family.clone(), t.tokens_per_rank, t.links.clone()))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut p = LayerParams::dsv3(opts.tokens_per_rank);
    p.tiles = opts.tokens_per_rank.div_ceil(opts.tile.max(1)) as f64;
    Some(layer_report(&p, 8, &rows, "training normal:0.032"))
}

/// Runs the study, calling `progress` on this thread after each job.
pub fn run(
    opts: &StudyOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<StudyReport, StudyError> {
    opts.check()?;
    let start = Instant::now();
    let plan = jobs(opts);
    let total = plan.len();
    let next = AtomicUsize::new(0);
    let mut outs: Vec<Option<JobOut>> = (0..total).map(|_| None).collect();
    let mut first_err: Option<(usize, StudyError)> = None;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..opts.threads.min(total.max(1)) {
            let tx = tx.clone();
            let (plan, next) = (&plan, &next);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= plan.len() {
                    break;
                }
                let out = run_job(&plan[i], opts);
                if tx.send((i, out)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (n, (i, out)) in rx.into_iter().enumerate() {
            let done = n + 1;
            match out {
                Ok(o) => outs[i] = Some(o),
                Err(e) => {
                    // Stop handing out jobs; keep the first error in plan order.
                    next.store(total, Ordering::Relaxed);
                    if first_err.as_ref().is_none_or(|(j, _)| i < *j) {
                        first_err = Some((i, e));
                    }
                }
            }
            progress(&Progress {
                done,
                total,
                label: plan[i].label(),
            });
        }
    });
    if let Some((_, e)) = first_err {
        return Err(e);
    }
    let mut traffic = Vec::new();
    let mut tlb = Vec::new();
    for o in outs.into_iter().flatten() {
        match o {
            JobOut::Traffic(r) => traffic.push(*r),
            JobOut::Tlb(rows) => tlb.extend(rows),
        }
    }
    let mut analytic = Vec::new();
    let mut shapes = opts.shapes();
    shapes.dedup();
    for shape in &shapes {
        for ep in [4, 8, 16, 32, 64] {
            if let Some(x) = uniform_expectation(shape.experts, shape.topk, ep) {
                analytic.push(AnalyticRow {
                    model: shape.name.clone(),
                    expectation: x,
                });
            }
        }
    }
    let knees = knees(&tlb);
    let in_switch = in_switch_rows(&traffic);
    let in_switch_skipped = opts.counts.is_none().then(|| {
        "no --counts file: the calibrated-real rows (OLMoE-1B-7B and Mixtral-8x7B marginals) \
need a counts CSV such as ../shared/data/routing/expert_counts.csv"
            .to_string()
    });
    let layer = layer_section(&traffic, opts);
    let mut report = StudyReport {
        grid: if opts.layer_only {
            "layer".to_string()
        } else {
            format!("{:?}", opts.grid).to_lowercase()
        },
        tile: opts.tile,
        seed: opts.seed,
        traffic,
        analytic,
        tlb,
        knees,
        in_switch,
        in_switch_skipped,
        payload_efficiency: payload_efficiency(),
        layer,
        claims: Vec::new(),
        seconds: 0.0,
    };
    report.claims = super::report::claims(&report);
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

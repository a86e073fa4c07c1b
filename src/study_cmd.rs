//! `dysharp study`: the DySHARP paper's claims against this model (issue 15, docs/paper.md).
//! Runs the golden-model study of [`dysharp_sim::study`], shows progress, prints the claim
//! table and writes CSV, JSON and SVG charts.

use crate::chart::{line_chart, Series};
use dysharp_sim::study::{
    run, Grid, Progress, Schedule, StudyError, StudyOptions, StudyReport, TrafficRow,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Arguments of `dysharp study`.
#[derive(clap::Args, Debug, Clone)]
pub struct StudyArgs {
    /// Folder for the CSV, JSON, Markdown and SVG outputs (created if missing).
    #[arg(long, default_value = "target/study")]
    out_dir: PathBuf,
    /// A few rows only (seconds; for tests).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Larger grid: 8,192 tokens per rank in the traffic grid, top-k 8/16/32 for every shape.
    #[arg(long)]
    full: bool,
    /// EP degrees of the traffic rows (2..=32; EP 64 is in the analytic table only).
    #[arg(long, value_delimiter = ',')]
    eps: Option<Vec<usize>>,
    /// Tokens per rank of the traffic grid.
    #[arg(long)]
    tokens: Option<usize>,
    /// Tokens per rank of the sequence-length rows.
    #[arg(long, value_delimiter = ',')]
    seq_lens: Option<Vec<usize>>,
    /// Tokens per rank per tile of the fused (token-interleaved) schedule [default: 128, 32
    /// with --quick].
    #[arg(long)]
    tile: Option<usize>,
    /// AL-TLB entries to sweep (powers of two).
    #[arg(long, value_delimiter = ',')]
    tlb_entries: Option<Vec<usize>>,
    /// AL-TLB ways to sweep at the first --tlb-tiles value (powers of two; 0 = fully
    /// associative).
    #[arg(long, value_delimiter = ',')]
    tlb_ways: Option<Vec<usize>>,
    /// EP degree of the AL-TLB sweep.
    #[arg(long, default_value_t = 8)]
    tlb_ep: usize,
    /// Tokens per rank of the AL-TLB sweep.
    #[arg(long, value_delimiter = ',')]
    tlb_seq_lens: Option<Vec<usize>>,
    /// Tiles (tokens per rank) of the fused schedule in the AL-TLB sweep.
    #[arg(long, value_delimiter = ',')]
    tlb_tiles: Option<Vec<usize>>,
    /// Counts CSV (model,corpus,layer,expert,count) for the calibrated-real families, e.g.
    /// ../shared/data/routing/expert_counts.csv; without it those rows are skipped.
    #[arg(long)]
    counts: Option<PathBuf>,
    /// Trace seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print the report as JSON on standard output instead of the text summary.
    #[arg(long)]
    json: bool,
    /// The layer-time model only: DeepSeek-V3 top-8 at the largest --eps value under uniform,
    /// normal std 0.032 and zipf 1.5 routing, carried to a layer's time under DeepEP-like,
    /// COMET-like and DySHARP schedules (seconds; no sequence-length rows, no AL-TLB sweep).
    #[arg(long)]
    layer: bool,
}

/// Errors of `dysharp study`.
#[derive(Debug, thiserror::Error)]
pub enum StudyCmdError {
    /// The study cannot run.
    #[error(transparent)]
    Study(#[from] StudyError),
    /// An output could not be written.
    #[error("cannot write {path}: {err}")]
    Write {
        /// File or folder.
        path: String,
        /// Cause.
        err: std::io::Error,
    },
    /// The counts file named by --counts does not exist.
    #[error("invalid value for --counts: {0} does not exist")]
    Counts(String),
}

impl StudyArgs {
    fn options(&self) -> Result<StudyOptions, StudyCmdError> {
        let grid = if self.quick {
            Grid::Quick
        } else if self.full {
            Grid::Full
        } else {
            Grid::Default
        };
        let mut o = StudyOptions::new(grid);
        if let Some(v) = &self.eps {
            o.eps = v.clone();
        }
        if let Some(v) = self.tokens {
            o.tokens_per_rank = v;
        }
        if let Some(v) = &self.seq_lens {
            o.seq_lens = v.clone();
        }
        if let Some(v) = &self.tlb_entries {
            o.tlb_entries = v.clone();
        }
        if let Some(v) = &self.tlb_ways {
            o.tlb_ways = v.clone();
        }
        if let Some(v) = &self.tlb_seq_lens {
            o.tlb_seq_lens = v.clone();
        }
        if let Some(v) = &self.tlb_tiles {
            o.tlb_tiles = v.clone();
        }
        if let Some(c) = &self.counts {
            if !c.is_file() {
                return Err(StudyCmdError::Counts(c.display().to_string()));
            }
            o.counts = Some(c.clone());
        }
        if let Some(t) = self.tile {
            o.tile = t;
        }
        o.tlb_ep = self.tlb_ep;
        o.seed = self.seed;
        o.layer_only = self.layer;
        o.threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        Ok(o)
    }
}

fn write(dir: &Path, name: &str, contents: &str) -> Result<PathBuf, StudyCmdError> {
    let path = dir.join(name);
    std::fs::write(&path, contents).map_err(|err| StudyCmdError::Write {
        path: path.display().to_string(),
        err,
    })?;
    Ok(path)
}

/// `dysharp study`.
pub fn run_study(args: &StudyArgs) -> Result<(), StudyCmdError> {
    let opts = args.options()?;
    std::fs::create_dir_all(&args.out_dir).map_err(|err| StudyCmdError::Write {
        path: args.out_dir.display().to_string(),
        err,
    })?;
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template("study [{bar:40}] {pos}/{len} jobs {elapsed} {msg}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let report = run(&opts, &mut |p: &Progress| {
        pb.set_length(p.total as u64);
        pb.set_position(p.done as u64);
        pb.set_message(p.label.clone());
    })?;
    pb.finish_and_clear();
    let json = serde_json::to_string_pretty(&report).expect("the report serializes");
    let mut files = vec![
        write(&args.out_dir, "study.json", &json)?,
        write(&args.out_dir, "traffic.csv", &report.traffic_csv())?,
        write(&args.out_dir, "analytic.csv", &report.analytic_csv())?,
        write(&args.out_dir, "tlb.csv", &report.tlb_csv())?,
        write(&args.out_dir, "tlb_knees.csv", &report.knees_csv())?,
        write(&args.out_dir, "claims.md", &report.claims_markdown())?,
        write(&args.out_dir, "in_switch.csv", &in_switch_csv(&report))?,
    ];
    for (name, svg) in charts(&report) {
        files.push(write(&args.out_dir, name, &svg)?);
    }
    if !report.in_switch.is_empty() {
        files.push(write(
            &args.out_dir,
            "in_switch.svg",
            &in_switch_chart(&report),
        )?);
    }
    if let Some(svg) = layer_chart(&report) {
        files.push(write(&args.out_dir, "layer.svg", &svg)?);
    }
    if args.json {
        outln!("{json}");
    } else {
        out!("{}", summary(&report, &files));
    }
    Ok(())
}

/// The in-switch rows as CSV.
fn in_switch_csv(r: &StudyReport) -> String {
    let mut s = String::from(
        "family,model,topk,ep,fused_vs_best_unicast,best_unicast,fused_speedup,fusion_only_speedup\n",
    );
    for t in &r.in_switch {
        let _ = writeln!(
            s,
            "{},{},{},{},{:.4},{},{:.4},{:.4}",
            t.family,
            t.model,
            t.topk,
            t.ep,
            t.fused_vs_best_unicast,
            t.best_unicast,
            t.fused_speedup,
            t.fusion_only_speedup
        );
    }
    s
}

/// The in-switch chart: DySHARP fused over the better unicast schedule against EP, one line
/// per family.
fn in_switch_chart(r: &StudyReport) -> String {
    let mut series: Vec<Series> = Vec::new();
    for t in &r.in_switch {
        let name = format!("{} ({} top-{})", t.family, t.model, t.topk);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((t.ep as f64, t.fused_vs_best_unicast)),
            None => series.push(Series {
                name,
                points: vec![(t.ep as f64, t.fused_vs_best_unicast)],
                dashed: t.family.starts_with("real"),
            }),
        }
    }
    series.truncate(8);
    line_chart(
        "The in-switch part on its own: DySHARP fused / the better unicast schedule",
        "GPUs (EP)",
        "speed-up (×)",
        &series,
        true,
    )
}

/// The layer chart: DySHARP's speed-up over DeepEP and COMET against the GEMMs' share of the
/// GPU's peak (the assumption that moves it most), on the paper's default workload.
fn layer_chart(r: &StudyReport) -> Option<String> {
    let l = r.layer.as_ref()?;
    let s = l.sensitivity.iter().find(|s| s.name == "mfu")?;
    let pts = |v: &[f64]| s.values.iter().copied().zip(v.iter().copied()).collect();
    Some(line_chart(
        "Layer-time model, DeepSeek-V3 top-8, normal std 0.032: DySHARP speed-up against MFU",
        "GEMM share of the H100's BF16 peak (MFU)",
        "speed-up (×)",
        &[
            Series {
                name: "over DeepEP-like (sequential)".into(),
                points: pts(&s.speedup_vs_deepep),
                dashed: false,
            },
            Series {
                name: "over COMET-like (overlap)".into(),
                points: pts(&s.speedup_vs_comet),
                dashed: false,
            },
        ],
        false,
    ))
}

/// DeepSeek-V3 top-8 mock rows of the grid, by EP.
fn dsv3_rows<'a>(r: &'a StudyReport, family: &'a str) -> impl Iterator<Item = &'a TrafficRow> {
    r.grid_rows()
        .filter(move |t| t.model == "DeepSeek-V3" && t.topk == 8 && t.family == family)
}

fn families(r: &StudyReport) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for t in r.grid_rows() {
        if t.model == "DeepSeek-V3" && t.topk == 8 && !v.contains(&t.family) {
            v.push(t.family.clone());
        }
    }
    v
}

/// The SVG charts: traffic against EP, speed-ups against EP, against sequence length, and
/// the AL-TLB hit rate against entries.
fn charts(r: &StudyReport) -> Vec<(&'static str, String)> {
    // One family of each kind where the run has them (mock, training std 0.032, inference
    // α 1.5 and 2.5), else the first four.
    let all = families(r);
    let preferred = [
        "mock uniform",
        "training normal:0.032",
        "inference zipf:1.5",
        "inference zipf:2.5",
    ];
    let mut fams: Vec<String> = preferred
        .iter()
        .filter(|p| all.iter().any(|f| f == *p))
        .map(|p| p.to_string())
        .collect();
    if fams.len() < 2 {
        fams = all.into_iter().take(4).collect();
    }
    let mut traffic = Vec::new();
    for f in &fams {
        let pts = |g: &dyn Fn(&TrafficRow) -> f64| {
            dsv3_rows(r, f)
                .map(|t| (t.ep as f64, g(t)))
                .collect::<Vec<_>>()
        };
        traffic.push(Series {
            name: format!("DySHARP {f}"),
            points: pts(&|t| 1.0 + t.links.dysharp_change()),
            dashed: false,
        });
        traffic.push(Series {
            name: format!("NVLS {f}"),
            points: pts(&|t| 1.0 + t.links.nvls_vs_unicast()),
            dashed: true,
        });
    }
    let mut speed = Vec::new();
    for f in &fams {
        speed.push(Series {
            name: format!("fused {f}"),
            points: dsv3_rows(r, f)
                .map(|t| (t.ep as f64, t.links.fused_speedup()))
                .collect(),
            dashed: false,
        });
    }
    if let Some(f) = fams.first() {
        speed.push(Series {
            name: format!("addressing only {f}"),
            points: dsv3_rows(r, f)
                .map(|t| (t.ep as f64, t.links.addressing_speedup()))
                .collect(),
            dashed: false,
        });
    }
    speed.push(Series {
        name: "ideal, uniform (analytic)".into(),
        points: r
            .analytic
            .iter()
            .filter(|a| a.model == "DeepSeek-V3" && a.expectation.topk == 8)
            .map(|a| (a.expectation.ep as f64, a.expectation.ideal_speedup))
            .collect(),
        dashed: true,
    });
    let max_ep = r
        .traffic
        .iter()
        .filter(|t| t.section.name() == "seqlen")
        .map(|t| t.ep)
        .max()
        .unwrap_or(0);
    let mut seq = Vec::new();
    for f in &fams {
        let pts: Vec<(f64, f64)> = r
            .traffic
            .iter()
            .filter(|t| t.section.name() == "seqlen" && t.ep == max_ep && &t.family == f)
            .map(|t| (t.tokens_per_rank as f64, t.links.fused_speedup()))
            .collect();
        if !pts.is_empty() {
            seq.push(Series {
                name: format!("fused {f}"),
                points: pts,
                dashed: false,
            });
        }
    }
    let mut tlb = Vec::new();
    let mid_len = {
        let mut lens: Vec<usize> = r.tlb.iter().map(|t| t.tokens_per_rank).collect();
        lens.sort_unstable();
        lens.dedup();
        lens.get(lens.len() / 2).copied().unwrap_or(0)
    };
    let mut tlb_fams: Vec<String> = Vec::new();
    for t in &r.tlb {
        if !tlb_fams.contains(&t.family) {
            tlb_fams.push(t.family.clone());
        }
    }
    for f in &tlb_fams {
        for sched in [Schedule::Fused, Schedule::Phased] {
            let pts: Vec<(f64, f64)> = r
                .tlb
                .iter()
                .filter(|t| {
                    &t.family == f
                        && t.tokens_per_rank == mid_len
                        && t.fully_associative
                        && t.result.schedule == sched
                })
                .map(|t| (t.result.entries as f64, t.result.combine.row_hit_rate()))
                .collect();
            if !pts.is_empty() && tlb.len() < 8 {
                tlb.push(Series {
                    name: format!("{} {f}", sched.name()),
                    points: pts,
                    dashed: sched == Schedule::Phased,
                });
            }
        }
    }
    vec![
        (
            "traffic.svg",
            line_chart(
                "DeepSeek-V3 top-8: payload of both phases / unicast (DeepEP)",
                "GPUs (EP)",
                "bytes / unicast bytes",
                &traffic,
                true,
            ),
        ),
        (
            "speedup.svg",
            line_chart(
                "DeepSeek-V3 top-8: communication lower-bound speed-up over unicast",
                "GPUs (EP)",
                "speed-up (×)",
                &speed,
                true,
            ),
        ),
        (
            "seqlen.svg",
            line_chart(
                &format!(
                    "DeepSeek-V3 top-8, EP {max_ep}: fused speed-up against sequence length (tile {})",
                    r.tile
                ),
                "tokens per GPU",
                "speed-up (×)",
                &seq,
                true,
            ),
        ),
        (
            "tlb.svg",
            line_chart(
                &format!(
                    "AL-TLB, fully associative, {mid_len} tokens/GPU: Combine rows served without a walk"
                ),
                "entries per hub",
                "Combine row hit rate",
                &tlb,
                true,
            ),
        ),
    ]
}

/// The text summary: key rows, TLB knees, claims, files.
fn summary(r: &StudyReport, files: &[PathBuf]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "dysharp study ({} grid, seed {}, tile {} tokens/GPU): {} traffic rows, {} TLB rows in {:.1} s",
        r.grid,
        r.seed,
        r.tile,
        r.traffic.len(),
        r.tlb.len(),
        r.seconds
    );
    let _ = writeln!(
        s,
        "\nDeepSeek-V3 top-8 (payload change vs unicast; NVLS useless over useful deliveries, r/(1 - r); \
lower-bound speed-ups vs unicast in sequence; in-switch: fused vs the better unicast schedule; \
paper-ideal: DySHARP's volume/bandwidth over its concurrent time):"
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>3} {:>9} {:>9} {:>7} {:>7} {:>7} {:>9} {:>11}",
        "family", "EP", "DySHARP", "NVLS", "ideal", "addr", "fused", "in-switch", "paper-ideal"
    );
    for f in families(r) {
        for t in dsv3_rows(r, &f) {
            let x = &t.ratios;
            let _ = writeln!(
                s,
                "  {:<28} {:>3} {:>+8.1}% {:>+8.1}% {:>6.3}× {:>6.3}× {:>6.3}× {:>8.3}× {:>10.1}%",
                t.family,
                t.ep,
                100.0 * x.dysharp_change,
                100.0 * x.nvls_useless_deliveries,
                x.ideal_speedup,
                x.addressing_speedup,
                x.fused_speedup,
                x.fused_vs_best_unicast,
                100.0 * x.paper_fraction_of_ideal
            );
        }
    }
    if !r.knees.is_empty() {
        let _ = writeln!(
            s,
            "\nAL-TLB: smallest entries with hit rate ≥ 99% (all translations / Combine rows), hit rate at 512:"
        );
        for k in &r.knees {
            let e = |v: Option<usize>| v.map_or(">max".to_string(), |e| e.to_string());
            let _ = writeln!(
                s,
                "  {:<34} {:>6} tok/GPU {:<6} tile {:>5} ways {:<4} {:>5} / {:>5}  {}",
                k.family,
                k.tokens_per_rank,
                k.schedule.name(),
                k.tile,
                k.ways,
                e(k.entries_for_99),
                e(k.entries_for_99_combine_rows),
                k.hit_rate_at_512
                    .map_or(String::new(), |h| format!("{:.4}", h))
            );
        }
    }
    if !r.in_switch.is_empty() {
        let _ = writeln!(
            s,
            "\nThe in-switch part on its own (DySHARP fused / the better unicast schedule):"
        );
        for t in &r.in_switch {
            let _ = writeln!(
                s,
                "  {:<36} {:<13} top-{:<2} EP {:>2} {:>6.3}× (best unicast {}; over DeepEP {:.3}×)",
                t.family,
                t.model,
                t.topk,
                t.ep,
                t.fused_vs_best_unicast,
                t.best_unicast,
                t.fused_speedup
            );
        }
    }
    if let Some(why) = &r.in_switch_skipped {
        let _ = writeln!(s, "  calibrated-real rows skipped: {why}");
    }
    if let Some(l) = &r.layer {
        let _ = writeln!(
            s,
            "\nLayer-time model (one layer, forward and backward; ms per GPU):"
        );
        let _ = writeln!(
            s,
            "  {:<24} {:>3} {:>5} {:>8} {:>8} {:>8} {:>8} {:>7} {:>8} {:>8}",
            "family",
            "EP",
            "attn",
            "compute",
            "DeepEP",
            "COMET",
            "DySHARP",
            "comm%",
            "/DeepEP",
            "/COMET"
        );
        for x in &l.rows {
            let ms = |n: &str| {
                x.schedules
                    .iter()
                    .find(|s| s.schedule == n)
                    .map_or(0.0, |s| s.ms)
            };
            let _ = writeln!(
                s,
                "  {:<24} {:>3} {:>5} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>6.1}% {:>7.2}× {:>7.2}×",
                x.family,
                x.ep,
                if x.with_attention { "yes" } else { "no" },
                x.compute_ms,
                ms("deepep"),
                ms("comet"),
                ms("dysharp"),
                100.0 * x.deepep_comm_share,
                x.speedup_vs_deepep,
                x.speedup_vs_comet
            );
        }
        let _ = writeln!(
            s,
            "  sensitivity (MoE block, DySHARP over DeepEP / over COMET):"
        );
        for v in &l.sensitivity {
            let cells: Vec<String> = v
                .values
                .iter()
                .zip(v.speedup_vs_deepep.iter().zip(&v.speedup_vs_comet))
                .map(|(x, (d, c))| format!("{x}: {d:.2}×/{c:.2}×"))
                .collect();
            let _ = writeln!(s, "    {:<24} {}", v.name, cells.join(", "));
        }
        let _ = writeln!(
            s,
            "  moved most by: {}; DeepEP's communication is 70.4% of the MoE block at MFU {}, or with links {} slower",
            l.moves_most,
            l.mfu_for_paper_comm_share
                .map_or("(none up to 1)".to_string(), |m| format!("{m:.3}")),
            l.comm_scale_for_paper_share
                .map_or("(none)".to_string(), |m| format!("{m:.1}×"))
        );
        if let Some(x) = &l.paper_regime {
            let _ = writeln!(
                s,
                "  in that regime ({}): DySHARP {:.2}× over DeepEP, {:.2}× over COMET",
                x.family, x.speedup_vs_deepep, x.speedup_vs_comet
            );
        }
    }
    let _ = writeln!(s, "\nClaims:\n{}", r.claims_markdown());
    let _ = writeln!(s, "Wrote:");
    for f in files {
        let _ = writeln!(s, "  {}", f.display());
    }
    s
}

//! The subcommands of `dysharp`.

use crate::chart;
use crate::ShapeArgs;
use dysharp_sim::numerics::DType;
use dysharp_sim::packet::svpkg;
use dysharp_sim::replay::{replay_golden, ReplayError, ReplayOptions, ReplayReport};
use dysharp_sim::trace::{generate, DistSpec, GenError, StatsError, Trace, TraceError, TraceStats};
use dysharp_sim::traffic::Token;
use dysharp_verif::replay_rtl::{replay_rtl, RtlReplayError, RtlReplayReport};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// Errors of the command-line tool (printed, never a panic).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad trace file.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// Bad generator arguments.
    #[error(transparent)]
    Gen(#[from] GenError),
    /// Bad statistics arguments.
    #[error(transparent)]
    Stats(#[from] StatsError),
    /// The replay cannot run.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The RTL replay cannot run or failed.
    #[error(transparent)]
    Rtl(#[from] RtlReplayError),
    /// A flag's value is invalid.
    #[error("invalid value for --{flag}: {msg}")]
    Flag {
        /// Flag name.
        flag: &'static str,
        /// What is wrong.
        msg: String,
    },
    /// A command that reports its errors as text (coverage).
    #[error("{0}")]
    Message(String),
    /// An output file could not be written.
    #[error("cannot write {path}: {err}")]
    Write {
        /// File.
        path: String,
        /// Cause.
        err: std::io::Error,
    },
}

fn write_file(path: &Path, contents: &str) -> Result<(), CliError> {
    std::fs::write(path, contents).map_err(|err| CliError::Write {
        path: path.display().to_string(),
        err,
    })
}

fn parse_dist(s: &str) -> Result<DistSpec, CliError> {
    s.parse()
        .map_err(|e: dysharp_sim::trace::ParseDistSpecError| CliError::Flag {
            flag: "dist",
            msg: e.to_string(),
        })
}

/// `dysharp gen`.
pub fn gen(
    tokens: usize,
    shape: &ShapeArgs,
    topk: usize,
    dist: &str,
    seed: u64,
    out: &Path,
) -> Result<(), CliError> {
    let spec = parse_dist(dist)?;
    let trace = generate(&spec, tokens, shape.experts, topk, shape.ep, seed)?;
    trace.write_file(out)?;
    eprintln!(
        "wrote {} ({} tokens, {} records, dist {dist}, seed {seed})",
        out.display(),
        tokens,
        trace.records.len()
    );
    Ok(())
}

/// `dysharp stats`.
pub fn stats(path: &Path, shape: &ShapeArgs, json_out: bool) -> Result<(), CliError> {
    let trace = Trace::read(path, Some(shape.experts))?;
    let s = TraceStats::compute_default(&trace, shape.experts, shape.ep)?;
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(&s).expect("stats serialize")
        );
        return Ok(());
    }
    println!(
        "{}: step {} layer {}: {} tokens, top-{}, {} experts over {} ranks{}",
        path.display(),
        s.step,
        s.layer,
        s.tokens,
        s.topk,
        s.experts,
        s.ep,
        s.label
            .as_deref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default()
    );
    println!("send matrix S (row = source rank, column = destination rank):");
    for row in &s.send_matrix {
        println!(
            "  {}",
            row.iter().map(|v| format!("{v:>7}")).collect::<String>()
        );
    }
    println!("rank receive: {:?}", s.rank_receive);
    println!(
        "gini(rank) {:.4}  max/mean(rank) {:.3}  max/mean(expert) {:.3}  gini(expert) {:.4}  mean remote fan-out {:.3}",
        s.gini_rank, s.max_mean_rank, s.max_mean_expert, s.gini_expert, s.fanout_mean
    );
    Ok(())
}

fn progress_bar(total: usize) -> ProgressBar {
    let pb = ProgressBar::new(2 * total as u64);
    pb.set_style(
        ProgressStyle::with_template("{msg:>9} [{bar:40}] {pos}/{len} tokens")
            .expect("static template")
            .progress_chars("=> "),
    );
    pb
}

fn run_replay(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
) -> Result<(ReplayReport, f64), CliError> {
    let pb = progress_bar(tokens.len());
    let start = Instant::now();
    let report = replay_golden(tokens, topk, opts, |phase, done, total| {
        pb.set_message(phase.to_string());
        let base = if phase == "combine" { total } else { 0 };
        pb.set_position((base + done) as u64);
    })?;
    let secs = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    Ok((report, secs))
}

/// Runs the RTL engine with a progress spinner.
pub fn run_rtl(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
    seed: u64,
) -> Result<RtlReplayReport, CliError> {
    let pb = ProgressBar::new_spinner();
    let r = replay_rtl(tokens, topk, opts, seed, |phase, cycles| {
        pb.set_message(format!("RTL {phase}: {cycles} cycles"));
        pb.tick();
    });
    pb.finish_and_clear();
    Ok(r?)
}

/// `dysharp replay`.
#[allow(clippy::too_many_arguments)]
pub fn replay(
    path: &Path,
    shape: &ShapeArgs,
    hidden: usize,
    dtype: &str,
    engine: &str,
    seed: u64,
    json_out: bool,
) -> Result<(), CliError> {
    let dtype: DType = dtype.parse().map_err(|e| CliError::Flag {
        flag: "dtype",
        msg: format!("{e}"),
    })?;
    if engine != "golden" && engine != "rtl" {
        return Err(CliError::Flag {
            flag: "engine",
            msg: format!("`{engine}` is not an engine; engines: golden, rtl"),
        });
    }
    let trace = Trace::read(path, Some(shape.experts))?;
    let (tokens, topk) = trace.replay_tokens();
    let opts = ReplayOptions {
        ep: shape.ep,
        experts: shape.experts,
        hidden,
        dtype,
        seed,
    };
    if engine == "rtl" {
        let report = run_rtl(&tokens, topk, &opts, seed)?;
        if json_out {
            println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        } else {
            print!("{}", chart::rtl_summary(&report));
        }
        return Ok(());
    }
    let (report, secs) = run_replay(&tokens, topk, &opts)?;
    if json_out {
        let mut v = serde_json::to_value(&report).expect("report serializes");
        v["elapsed_s"] = json!(secs);
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", chart::text_summary(&report, secs));
    }
    Ok(())
}

/// `dysharp demo`: the default workload (4096 tokens, hidden 7168, bf16, 256 experts,
/// top-8, EP 8) under each distribution, through the golden engine.
pub fn demo(out_dir: &Path, dists: &str, seed: u64) -> Result<(), CliError> {
    let (tokens_n, experts, topk, ep, hidden) = (4096, 256, 8, 8, 7168);
    std::fs::create_dir_all(out_dir).map_err(|err| CliError::Write {
        path: out_dir.display().to_string(),
        err,
    })?;
    println!(
        "dysharp demo: {tokens_n} tokens, hidden {hidden}, bf16, {experts} experts, top-{topk}, EP {ep}; engine golden"
    );
    let mut runs = Vec::new();
    for dist in dists.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let spec = parse_dist(dist)?;
        let trace = generate(&spec, tokens_n, experts, topk, ep, seed)?;
        let stats = TraceStats::compute_default(&trace, experts, ep)?;
        let (tokens, topk) = trace.replay_tokens();
        let opts = ReplayOptions {
            ep,
            experts,
            hidden,
            dtype: DType::Bf16,
            seed,
        };
        let (report, secs) = run_replay(&tokens, topk, &opts)?;
        println!(
            "\n== workload {dist} (seed {seed}): gini(rank) {:.3}, max/mean(rank) {:.3}, mean remote fan-out {:.2}",
            stats.gini_rank, stats.max_mean_rank, stats.fanout_mean
        );
        print!("{}", chart::text_summary(&report, secs));
        runs.push((dist.to_string(), stats, report, secs));
    }
    // The RTL beside the golden model, on the first workload with a reduced row:
    // the Verilator model runs a few thousand cycles per second, so the full row
    // (56 packets per token) would take tens of minutes.
    let mut rtl_json = serde_json::Value::Null;
    if let Some(dist) = dists.split(',').map(str::trim).find(|d| !d.is_empty()) {
        let rtl_hidden = 128;
        let trace = generate(&parse_dist(dist)?, tokens_n, experts, topk, ep, seed)?;
        let (tokens, topk) = trace.replay_tokens();
        let opts = ReplayOptions {
            ep,
            experts,
            hidden: rtl_hidden,
            dtype: DType::Bf16,
            seed,
        };
        println!(
            "\n== RTL engine (Verilator model of rtl/, checked against the golden model) on workload {dist}, \
             hidden reduced from {hidden} to {rtl_hidden} (one 256-byte packet per token row) to keep the demo under a minute"
        );
        let report = run_rtl(&tokens, topk, &opts, seed)?;
        print!("{}", chart::rtl_summary(&report));
        rtl_json = json!({"dist": dist, "hidden_reduced_from": hidden, "replay": report});
    }
    let json_runs: Vec<_> = runs
        .iter()
        .map(|(dist, stats, report, secs)| {
            json!({"dist": dist, "seed": seed, "stats": stats, "replay": report, "elapsed_s": secs})
        })
        .collect();
    let json_path = out_dir.join("report.json");
    let svg_path = out_dir.join("report.svg");
    write_file(
        &json_path,
        &serde_json::to_string_pretty(&json!({ "workloads": json_runs, "rtl": rtl_json }))
            .expect("json"),
    )?;
    let panels: Vec<_> = runs.iter().map(|(d, _, r, _)| (d.as_str(), r)).collect();
    write_file(&svg_path, &chart::svg(&panels))?;
    println!("\nwrote {} and {}", json_path.display(), svg_path.display());
    Ok(())
}

/// `dysharp gen-pkg`.
pub fn gen_pkg(out: Option<&Path>) -> Result<(), CliError> {
    let text = svpkg::render();
    match out {
        Some(p) => write_file(p, &text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

//! The subcommands of `dysharp`.

use crate::chart;
use crate::{ShapeArgs, TraceArgs};
use dysharp_sim::numerics::DType;
use dysharp_sim::packet::svpkg;
use dysharp_sim::replay::{replay_golden, ReplayError, ReplayOptions, ReplayReport};
use dysharp_sim::trace::{
    generate, read_npy, render_matrix, send_matrix_bytes, DistSpec, GenError, MatrixCount,
    NpyError, StatsError, Trace, TraceError, TraceStats,
};
use dysharp_sim::traffic::Token;
#[cfg(feature = "rtl")]
use dysharp_verif::replay_rtl::{
    replay_rtl, replay_rtl_fused, InjectOrder, RtlReplayError, RtlReplayReport,
};
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
    /// Bad vLLM routed-experts array.
    #[error(transparent)]
    Npy(#[from] NpyError),
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
    #[cfg(feature = "rtl")]
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
    /// A command that reports its errors as text (coverage, study).
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

/// Reads the trace of `args` (JSON Lines, or `.npy` split over `shape.ep` ranks) and picks
/// its (step, layer) group: the one `--step`/`--layer` name, else the first. Says on stderr
/// which group is used when the trace holds more than one and the flags left a choice.
pub fn load_trace(args: &TraceArgs, shape: &ShapeArgs) -> Result<(Trace, (u64, u64)), CliError> {
    let path = &args.trace;
    let npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let trace = if npy {
        read_npy(path, shape.experts, shape.ep)?
    } else {
        Trace::read_for_ep(path, Some(shape.experts), shape.ep)?
    };
    let groups = trace.step_layers();
    let chosen = groups
        .iter()
        .copied()
        .find(|&(s, l)| args.step.is_none_or(|x| x == s) && args.layer.is_none_or(|x| x == l));
    let Some(group) = chosen else {
        let list: Vec<String> = groups
            .iter()
            .take(8)
            .map(|(s, l)| format!("step {s} layer {l}"))
            .collect();
        let more = if groups.len() > 8 { ", ..." } else { "" };
        return Err(CliError::Flag {
            flag: if args.layer.is_some() {
                "layer"
            } else {
                "step"
            },
            msg: format!(
                "{}: no records for {}{}; the trace holds {}{more}",
                path.display(),
                args.step.map(|s| format!("step {s} ")).unwrap_or_default(),
                args.layer.map(|l| format!("layer {l}")).unwrap_or_default(),
                list.join(", ")
            ),
        });
    };
    if groups.len() > 1 && (args.step.is_none() || args.layer.is_none()) {
        eprintln!(
            "note: {} holds {} (step, layer) groups; using step {} layer {} (choose with --step/--layer)",
            path.display(),
            groups.len(),
            group.0,
            group.1
        );
    }
    Ok((trace, group))
}

/// `dysharp stats`; `matrix` = (file, count, hidden, dtype) of `--alltoallv-matrix`.
pub fn stats(
    args: &TraceArgs,
    shape: &ShapeArgs,
    json_out: bool,
    matrix: Option<(&Path, &str, usize, &str)>,
) -> Result<(), CliError> {
    let (trace, (step, layer)) = load_trace(args, shape)?;
    let s = TraceStats::compute(&trace, step, layer, shape.experts, shape.ep)?;
    if let Some((file, count, hidden, dtype)) = matrix {
        let count: MatrixCount = count
            .parse()
            .map_err(|msg| CliError::Flag { flag: "count", msg })?;
        let dtype: DType = dtype.parse().map_err(|e| CliError::Flag {
            flag: "dtype",
            msg: format!("{e}"),
        })?;
        let row = (hidden as u64).saturating_mul(dtype.bytes() as u64);
        let m = send_matrix_bytes(&trace, step, layer, shape.experts, shape.ep, count, row)?;
        write_file(file, &render_matrix(&m))?;
        let max_row = m.iter().map(|r| r.iter().sum::<u64>()).max().unwrap_or(0);
        let max_col = (0..m.len())
            .map(|j| m.iter().map(|r| r[j]).sum::<u64>())
            .max()
            .unwrap_or(0);
        eprintln!(
            "wrote {} ({}x{} bytes; run alltoallv_perf with -b and -e at least {})",
            file.display(),
            m.len(),
            m.len(),
            max_row.max(max_col)
        );
    }
    let path = &args.trace;
    if json_out {
        outln!(
            "{}",
            serde_json::to_string_pretty(&s).expect("stats serialize")
        );
        return Ok(());
    }
    outln!(
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
    outln!("send matrix S (row = source rank, column = destination rank):");
    for row in &s.send_matrix {
        outln!(
            "  {}",
            row.iter().map(|v| format!("{v:>7}")).collect::<String>()
        );
    }
    outln!("rank receive: {:?}", s.rank_receive);
    outln!(
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

/// The RTL replay's progress bar: cycles against `bound`, the speed and the time left.
#[cfg(feature = "rtl")]
fn rtl_progress(bound: &str) -> ProgressBar {
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "RTL {{msg:>8}} [{{bar:40}}] {{pos}}/{{len}} cycles ({bound}), {{per_sec}}, {{eta}} left"
        ))
        .expect("static template")
        .progress_chars("=> "),
    );
    pb
}

/// Whether the scoreboard checks on a thread of its own: one replay at a time, so it takes a
/// second core where there is one (unless the scoreboard is asked inline).
#[cfg(feature = "rtl")]
fn check_on_a_thread(inline_scoreboard: bool) -> bool {
    !inline_scoreboard && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// Runs the RTL engine with a progress bar over the cycles' lower bound (the run ends near it),
/// the simulation speed and the time left.
#[cfg(feature = "rtl")]
pub fn run_rtl(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
    order: InjectOrder,
    seed: u64,
    inline_scoreboard: bool,
) -> Result<RtlReplayReport, CliError> {
    let pb = rtl_progress("lower bound");
    let check_thread = check_on_a_thread(inline_scoreboard);
    let r = replay_rtl(tokens, topk, opts, order, seed, check_thread, |phase, p| {
        pb.set_length(p.lower_bound.max(p.cycles));
        pb.set_message(phase.to_string());
        pb.set_position(p.cycles);
    });
    pb.finish_and_clear();
    Ok(r?)
}

/// Runs the RTL engine in the fused schedule (`--fused --tile T`) with a progress bar over the
/// fused lower bound.
#[cfg(feature = "rtl")]
pub fn run_rtl_fused(
    tokens: &[Token],
    topk: usize,
    opts: &ReplayOptions,
    order: InjectOrder,
    tile: usize,
    seed: u64,
    inline_scoreboard: bool,
) -> Result<RtlReplayReport, CliError> {
    let pb = rtl_progress("fused lower bound");
    let check_thread = check_on_a_thread(inline_scoreboard);
    let r = replay_rtl_fused(
        tokens,
        topk,
        opts,
        order,
        tile,
        seed,
        check_thread,
        |phase, p| {
            pb.set_length(p.lower_bound.max(p.cycles));
            pb.set_message(phase.to_string());
            pb.set_position(p.cycles);
        },
    );
    pb.finish_and_clear();
    Ok(r?)
}

/// `dysharp replay`.
#[allow(clippy::too_many_arguments)]
pub fn replay(
    args: &TraceArgs,
    shape: &ShapeArgs,
    hidden: usize,
    dtype: &str,
    engine: &str,
    inject: Option<&str>,
    fused: Option<usize>,
    seed: u64,
    inline_scoreboard: bool,
    json_out: bool,
) -> Result<(), CliError> {
    let dtype: DType = dtype.parse().map_err(|e| CliError::Flag {
        flag: "dtype",
        msg: format!("{e}"),
    })?;
    #[cfg(feature = "rtl")]
    let order: Option<InjectOrder> =
        inject
            .map(str::parse)
            .transpose()
            .map_err(|msg| CliError::Flag {
                flag: "inject",
                msg,
            })?;
    if inject.is_some() && engine != "rtl" {
        return Err(CliError::Flag {
            flag: "inject",
            msg: "only the rtl engine takes an injection order (the golden engine's accounting does not depend on it)".into(),
        });
    }
    if fused.is_some() && engine != "rtl" {
        return Err(CliError::Flag {
            flag: "fused",
            msg: "only the rtl engine runs the fused schedule (the study's fused bound is `dysharp study`)".into(),
        });
    }
    if fused == Some(0) {
        return Err(CliError::Flag {
            flag: "tile",
            msg: "must be at least 1 token per GPU".into(),
        });
    }
    if inline_scoreboard && engine != "rtl" {
        return Err(CliError::Flag {
            flag: "inline-scoreboard",
            msg: "only the rtl engine has a scoreboard".into(),
        });
    }
    if engine != "golden" && engine != "rtl" {
        return Err(CliError::Flag {
            flag: "engine",
            msg: format!("`{engine}` is not an engine; engines: golden, rtl"),
        });
    }
    let (trace, (step, layer)) = load_trace(args, shape)?;
    let (tokens, topk) = trace.replay_tokens_at(step, layer);
    let opts = ReplayOptions {
        ep: shape.ep,
        experts: shape.experts,
        hidden,
        dtype,
        seed,
    };
    if engine == "rtl" {
        #[cfg(feature = "rtl")]
        {
            let order = order.unwrap_or_default();
            let report = match fused {
                Some(tile) => {
                    run_rtl_fused(&tokens, topk, &opts, order, tile, seed, inline_scoreboard)?
                }
                None => run_rtl(&tokens, topk, &opts, order, seed, inline_scoreboard)?,
            };
            if json_out {
                outln!("{}", serde_json::to_string_pretty(&report).expect("json"));
            } else {
                out!("{}", chart::rtl_summary(&report));
            }
            return Ok(());
        }
        #[cfg(not(feature = "rtl"))]
        return Err(CliError::Flag {
            flag: "engine",
            msg: NO_RTL.to_string(),
        });
    }
    let (report, secs) = run_replay(&tokens, topk, &opts)?;
    if json_out {
        let mut v = serde_json::to_value(&report).expect("report serializes");
        v["elapsed_s"] = json!(secs);
        outln!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        out!("{}", chart::text_summary(&report, secs));
    }
    Ok(())
}

/// `dysharp demo`: the default workload (4096 tokens, hidden 7168, bf16, 256 experts,
/// top-8, EP 8) under each distribution, through the golden engine.
pub fn demo(out_dir: &Path, dists: &str, seed: u64) -> Result<(), CliError> {
    let (tokens_n, experts, topk, ep, hidden) = (4096, 256, 8, 8, 7168);
    // Every distribution is checked before anything runs.
    let list: Vec<&str> = dists
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect();
    if list.is_empty() {
        return Err(CliError::Flag {
            flag: "dists",
            msg: format!("`{dists}` names no distribution (e.g. uniform,zipf:1.5)"),
        });
    }
    for d in &list {
        parse_dist(d)?;
    }
    std::fs::create_dir_all(out_dir).map_err(|err| CliError::Write {
        path: out_dir.display().to_string(),
        err,
    })?;
    outln!(
        "dysharp demo: {tokens_n} tokens, hidden {hidden}, bf16, {experts} experts, top-{topk}, EP {ep}; engine golden"
    );
    let mut runs = Vec::new();
    for &dist in &list {
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
        outln!(
            "\n== workload {dist} (seed {seed}): gini(rank) {:.3}, max/mean(rank) {:.3}, mean remote fan-out {:.2}",
            stats.gini_rank, stats.max_mean_rank, stats.fanout_mean
        );
        out!("{}", chart::text_summary(&report, secs));
        runs.push((dist.to_string(), stats, report, secs));
    }
    let rtl_json = demo_rtl(dists, seed, (tokens_n, experts, topk, ep, hidden))?;
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
    outln!("\nwrote {} and {}", json_path.display(), svg_path.display());
    Ok(())
}

/// What `replay --engine rtl` and `demo` say in a build without the RTL engine.
#[cfg(not(feature = "rtl"))]
const NO_RTL: &str = "this dysharp was built without the RTL engine (cargo feature `rtl`); \
                      engines: golden. Build with default features for `--engine rtl`";

/// The demo's RTL part: the RTL beside the golden model, on the first workload
/// with a reduced row (the Verilator model runs a few thousand cycles per
/// second, so the full row of 56 packets per token would take tens of
/// minutes). `shape` is (tokens, experts, top-k, EP, hidden).
#[cfg(feature = "rtl")]
fn demo_rtl(
    dists: &str,
    seed: u64,
    (tokens_n, experts, topk, ep, hidden): (usize, usize, usize, usize, usize),
) -> Result<serde_json::Value, CliError> {
    let Some(dist) = dists.split(',').map(str::trim).find(|d| !d.is_empty()) else {
        return Ok(serde_json::Value::Null);
    };
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
    outln!(
            "\n== RTL engine (Verilator model of rtl/, checked against the golden model) on workload {dist}, \
             hidden reduced from {hidden} to {rtl_hidden} (one 256-byte packet per token row) to keep the demo under a minute"
        );
    let report = run_rtl(&tokens, topk, &opts, InjectOrder::Token, seed, false)?;
    out!("{}", chart::rtl_summary(&report));
    Ok(json!({"dist": dist, "hidden_reduced_from": hidden, "replay": report}))
}

/// The demo's RTL part in a golden-only build: says so, and records it in the report.
#[cfg(not(feature = "rtl"))]
fn demo_rtl(
    _dists: &str,
    _seed: u64,
    _shape: (usize, usize, usize, usize, usize),
) -> Result<serde_json::Value, CliError> {
    outln!("\n== RTL engine: not in this build ({NO_RTL})");
    Ok(json!({ "skipped": NO_RTL }))
}

/// `dysharp gen-wrapper`.
pub fn gen_wrapper(out: Option<&Path>) -> Result<(), CliError> {
    let text = dysharp_registry::wrapper::render(dysharp_registry::wrapper::TOP_SV)
        .map_err(|e| CliError::Message(e.to_string()))?;
    match out {
        Some(p) => write_file(p, &text),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}

/// `dysharp gen-pkg`.
pub fn gen_pkg(out: Option<&Path>) -> Result<(), CliError> {
    let text = svpkg::render();
    match out {
        Some(p) => write_file(p, &text),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}

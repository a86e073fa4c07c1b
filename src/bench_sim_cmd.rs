//! `dysharp bench-sim`: simulation speed of one RTL model under the bench, without
//! it, and in a bare C++ loop (`dysharp_verif::bench_sim`; docs/perf.md).

use crate::commands::CliError;
use dysharp_verif::bench_sim::{bench_sim, BenchSimReport};
use dysharp_verif::sim::{ModelInfo, MODELS};
use dysharp_verif::BENCH_TOP;

/// Arguments of `dysharp bench-sim`.
#[derive(clap::Args, Debug)]
pub struct BenchSimArgs {
    /// A built model whose top is `dysharp_top`: `top_p4`, `top_p8`, `top_p16`, with feature
    /// `speed` also `top_p8_fast`, `top_p16_fast`, with feature `threads` `top_p16_mt`, `top_p32_mt`.
    #[arg(long, default_value = "top_p8")]
    model: String,
    /// Cycles of traffic the bench runs (after reset).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    cycles: u64,
    /// Seed of the stimulus and of the model's random initial state (non-zero).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `dysharp bench-sim`.
pub fn run(args: &BenchSimArgs) -> Result<(), CliError> {
    let flag = |msg: String| CliError::Flag { flag: "model", msg };
    // Every built variant (`_fast`, `_mt`) too; coverage models are for `dysharp coverage`.
    let tops: Vec<&str> = MODELS
        .iter()
        .filter(|m| m.top == BENCH_TOP && !m.coverage)
        .map(|m| m.name)
        .collect();
    match ModelInfo::find(&args.model) {
        None => {
            return Err(flag(format!(
                "`{}` is not a built model; built dysharp_top models: {}",
                args.model,
                tops.join(", ")
            )))
        }
        Some(m) if m.top != BENCH_TOP => {
            return Err(flag(format!(
                "`{}` has top {}; bench-sim drives dysharp_top models (built as {BENCH_TOP}): {}",
                args.model,
                m.top,
                tops.join(", ")
            )))
        }
        Some(_) => {}
    }
    eprintln!(
        "bench-sim {}: {} cycles through the scoreboard (inline, then on its thread), then twice replayed ...",
        args.model, args.cycles
    );
    let r = bench_sim(&args.model, args.cycles, args.seed)
        .map_err(|e| CliError::Message(format!("bench-sim {}: {e}", args.model)))?;
    if args.json {
        let text = serde_json::to_string_pretty(&r).expect("the report serialises");
        outln!("{text}");
    } else {
        print_text(&r);
    }
    Ok(())
}

fn print_text(r: &BenchSimReport) {
    let load = r
        .load_average
        .map_or("unknown".into(), |l| format!("{l:.2}"));
    outln!(
        "{}: {} cycles of random legal traffic at line rate, {} packets checked (load average {load})",
        r.model,
        r.cycles,
        r.packets_checked
    );
    if r.check_thread {
        outln!(
            "  Rust bench, scoreboard thread    {:>10.0} cycles/s",
            r.rust_cycles_per_s
        );
    }
    outln!(
        "  Rust bench, scoreboard inline    {:>10.0} cycles/s",
        r.rust_inline_cycles_per_s
    );
    outln!(
        "  Rust loop, recorded inputs       {:>10.0} cycles/s",
        r.rust_bare_cycles_per_s
    );
    outln!(
        "  C++ loop, recorded inputs        {:>10.0} cycles/s",
        r.cpp_cycles_per_s
    );
    outln!(
        "  ratio scoreboard / C++ {:.2}, bare Rust / C++ {:.2}",
        r.ratio,
        r.bare_ratio
    );
}

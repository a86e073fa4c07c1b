//! `dysharp bench-sim`: simulation speed of one RTL model under the bench, without
//! it, and in a bare C++ loop (`dysharp_verif::bench_sim`; docs/perf.md).

use crate::commands::CliError;
use dysharp_verif::bench_sim::{bench_sim, BenchSimReport, BenchSimRun};
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
    /// Cycles every way runs first, untimed (after reset): the speeds are a long run's, without
    /// what a run pays once when it starts (first pages of memory, the allocators' first blocks).
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(0..=100_000_000))]
    warmup: u64,
    /// Seed of the stimulus and of the model's random initial state (non-zero).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    seed: u64,
    /// Run the whole measurement this many times and report each speed's median (every
    /// run's figures are in the JSON's `runs`): a shared or virtual machine's speed drifts
    /// between runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    repeat: u64,
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
        "bench-sim {}: {} cycles each way after {} untimed, the ways taking turns (the bench with its scoreboard \
         inline and on its thread where a core is left for it, without it, and two replays of its \
         inputs){} ...",
        args.model,
        args.cycles,
        args.warmup,
        if args.repeat > 1 {
            format!("; {} times", args.repeat)
        } else {
            String::new()
        }
    );
    let r = bench_sim(
        &args.model,
        args.cycles,
        args.warmup,
        args.seed,
        args.repeat as usize,
    )
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
        "{}, {}: {} cycles of random legal traffic at line rate after {} of warm-up, {} packets checked (load average {load})",
        r.model,
        r.profile.describe(),
        r.cycles,
        r.warmup_cycles,
        r.packets_checked
    );
    if r.repeat > 1 {
        outln!(
            "  median of {} runs (the lowest and highest run in brackets)",
            r.repeat
        );
    }
    // A speed, with the spread of the runs where there were several.
    let line = |what: &str, median: f64, of: fn(&BenchSimRun) -> f64| {
        let spread = if r.runs.len() > 1 {
            let lo = r.runs.iter().map(of).fold(f64::INFINITY, f64::min);
            let hi = r.runs.iter().map(of).fold(0.0, f64::max);
            format!("  [{lo:.0}-{hi:.0}]")
        } else {
            String::new()
        };
        outln!("  {what:<32} {median:>10.0} cycles/s{spread}");
    };
    if r.check_thread {
        line("Rust bench, scoreboard thread", r.rust_cycles_per_s, |x| {
            x.rust_cycles_per_s
        });
    }
    line(
        "Rust bench, scoreboard inline",
        r.rust_inline_cycles_per_s,
        |x| x.rust_inline_cycles_per_s,
    );
    line(
        "Rust bench, no scoreboard",
        r.rust_unchecked_cycles_per_s,
        |x| x.rust_unchecked_cycles_per_s,
    );
    line(
        "Rust loop, recorded inputs",
        r.rust_bare_cycles_per_s,
        |x| x.rust_bare_cycles_per_s,
    );
    line("C++ loop, recorded inputs", r.cpp_cycles_per_s, |x| {
        x.cpp_cycles_per_s
    });
    outln!(
        "  ratio scoreboard / C++ {:.2}, bare Rust / C++ {:.2}",
        r.ratio,
        r.bare_ratio
    );
}

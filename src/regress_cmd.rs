//! `dysharp regress`: the RTL-versus-golden regression, whole or sharded.

use dysharp_verif::regress::{
    plan, rerun_command, run_case, run_cases, Case, CaseResult, PlanOptions, Shard, Size,
};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `dysharp regress`.
#[derive(clap::Args, Debug)]
pub struct RegressArgs {
    /// The CI size (small cases); without it, the nightly size.
    #[arg(long)]
    quick: bool,
    /// Seeds per case, 1..=N (default: $PROPTEST_CASES, else 1 with --quick and 4 without).
    #[arg(long)]
    seeds: Option<u64>,
    /// Run shard K of N (1-based), e.g. 2/4: cases i with i % N == K-1.
    #[arg(long, default_value = "1/1")]
    shard: String,
    /// Only cases whose name contains this (e.g. `badinput`, `top_p16`, `trace/deepep`).
    #[arg(long)]
    only: Option<String>,
    /// Run exactly one case (as a failure names it), with --seed.
    #[arg(long, requires = "seed")]
    case: Option<String>,
    /// Seed of --case.
    #[arg(long, requires = "case")]
    seed: Option<u64>,
    /// Write the waveform of --case here.
    #[arg(long, requires = "case")]
    vcd: Option<PathBuf>,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// List the cases instead of running them.
    #[arg(long)]
    list: bool,
    /// Print the summary as JSON on standard output (progress goes to standard error).
    #[arg(long)]
    json: bool,
    /// Also write the results as JUnit XML here (one test case per case and seed, failures
    /// with the re-run command), for CI systems.
    #[arg(long, conflicts_with_all = ["list", "case"])]
    junit: Option<PathBuf>,
}

fn print_result(r: &CaseResult) {
    let c = &r.checked;
    let status = match (&r.failure, &r.skipped) {
        (Some(_), _) => "FAIL",
        (None, Some(_)) => "SKIP",
        _ => "pass",
    };
    let mut e = std::io::stderr().lock();
    let _ = writeln!(
        e,
        "{status} {:<36} seed {:<3} {:>8} packets {:>9} mem {:>7} malformed {:>9} cycles {:>6.1} s",
        r.name, r.seed, c.packets, c.mem_accesses, c.malformed_injected, c.cycles, r.seconds
    );
    if let Some(why) = &r.skipped {
        let _ = writeln!(e, "     skipped: {why}");
    }
    if let Some(f) = &r.failure {
        let _ = writeln!(e, "     {:?}: {}", f.kind, f.message);
        if let Some(s) = &f.shrunk {
            let _ = writeln!(e, "     shrunk {s}");
        }
        let _ = writeln!(e, "     re-run: {}", f.rerun);
    }
}

/// The workload of `dysharp coverage`: the regression (quick or nightly size,
/// `--seeds`), on all cores, without trace replays of calibrated data skipped
/// silently (a skipped case is reported like any other).
pub fn coverage_workload(a: &crate::coverage_cmd::CoverageArgs) -> Result<(), String> {
    let size = if a.quick { Size::Quick } else { Size::Full };
    let cases = plan(&PlanOptions {
        size,
        seeds: a.seeds.unwrap_or(1).max(1),
        filter: None,
        shard: Shard::default(),
    });
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let s = run_cases(&cases, jobs, size, Shard::default(), &print_result);
    if s.cases_failed > 0 {
        return Err(format!(
            "{} of {} regression cases failed under coverage",
            s.cases_failed,
            s.cases.len()
        ));
    }
    Ok(())
}

/// Runs `dysharp regress`.
pub fn run(a: RegressArgs) -> Result<bool, String> {
    let size = if a.quick { Size::Quick } else { Size::Full };
    if let (Some(name), Some(seed)) = (&a.case, a.seed) {
        let case = Case::from_name(name, seed, size)?;
        let r = run_case(&case, a.vcd.clone());
        print_result(&r);
        if a.json {
            outln!(
                "{}",
                serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?
            );
        }
        if r.failure.is_none() {
            if let Some(v) = &a.vcd {
                eprintln!("waveform: {}", v.display());
            }
        }
        return Ok(r.failure.is_none());
    }
    let shard: Shard = a.shard.parse()?;
    let seeds = match a.seeds {
        Some(0) => return Err("--seeds must be at least 1".into()),
        Some(n) => n,
        None => match std::env::var("PROPTEST_CASES") {
            Ok(v) => v
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("PROPTEST_CASES=\"{v}\": expected a positive number"))?,
            Err(_) => match size {
                Size::Quick => 1,
                Size::Full => 4,
            },
        },
    };
    let cases = plan(&PlanOptions {
        size,
        seeds,
        filter: a.only.clone(),
        shard,
    });
    if a.list {
        for c in &cases {
            outln!("{} --seed {}", c.name(), c.seed);
        }
        return Ok(true);
    }
    if cases.is_empty() {
        return Err("no case matches".into());
    }
    let jobs = match a.jobs {
        Some(0) => return Err("--jobs must be at least 1".into()),
        Some(j) => j,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    eprintln!(
        "dysharp regress: {} cases ({}, {seeds} seed(s), shard {shard}) on {jobs} thread(s)",
        cases.len(),
        if a.quick { "quick" } else { "nightly size" },
    );
    // Open the JUnit file first, so that a bad path fails before the run, not after it.
    let mut junit_file = match &a.junit {
        Some(p) => {
            Some(std::fs::File::create(p).map_err(|e| format!("--junit {}: {e}", p.display()))?)
        }
        None => None,
    };
    let s = run_cases(&cases, jobs, size, shard, &print_result);
    eprintln!(
        "{} cases run, {} skipped, {} failed ({} mismatches, {} hangs); {} packets and {} memory accesses checked, {} legal and {} malformed packets injected, {} cycles in {:.1} s",
        s.cases_run,
        s.cases_skipped,
        s.cases_failed,
        s.mismatches,
        s.hangs,
        s.packets_checked,
        s.mem_checked,
        s.legal_injected,
        s.malformed_injected,
        s.cycles,
        s.seconds
    );
    for c in s.cases.iter().filter(|c| c.failure.is_some()) {
        let case = Case::from_name(&c.name, c.seed, size)?;
        eprintln!(
            "FAILED {} seed {}: {}",
            c.name,
            c.seed,
            rerun_command(&case)
        );
    }
    if let (Some(f), Some(path)) = (junit_file.as_mut(), &a.junit) {
        f.write_all(crate::junit::junit(&s).as_bytes())
            .map_err(|e| format!("--junit {}: {e}", path.display()))?;
        eprintln!("JUnit XML: {}", path.display());
    }
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?
        );
    }
    Ok(s.cases_failed == 0)
}

//! `dysharp coverage`: Verilator line and toggle coverage of the RTL.
//!
//! Runs a workload with `DYSHARP_COVERAGE_DIR=<out>/dat`, so every `Sim` of
//! a model with the use `coverage` in `rtl/models.toml` uses its coverage model (`<name>_cov`, built with
//! `--features coverage`) and writes a `coverage.dat` on drop. A merger thread
//! folds those files into one (`dysharp_verif::coverage`) and deletes them as
//! they appear (each is tens of MB); at the end the command writes
//! `<out>/coverage.dat` (merged, Verilator's format), `<out>/coverage.info`
//! (lcov), `<out>/html/index.html` and `<out>/summary.json`, and prints one row
//! per RTL file. While the workload runs, the merger writes the same files for
//! what it has merged so far (at most once a minute, after a model run
//! finished), so a run that is stopped still leaves the coverage of the cases
//! that finished.

use dysharp_registry::{Registry, Use};
use dysharp_verif::coverage::Coverage;
use dysharp_verif::sim::{COVERAGE_DIR_ENV, COVERAGE_SUFFIX};
use dysharp_verif::ModelInfo;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The shortest time between two checkpoints of the reports during a run.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(60);

/// Arguments of `dysharp coverage`.
#[derive(clap::Args, Debug, Clone)]
pub struct CoverageArgs {
    /// Output folder: coverage.info, summary.json, html/ and the raw dat/ files.
    #[arg(long, default_value = "target/coverage")]
    pub out: PathBuf,
    /// A short workload (smoke test) instead of the full one.
    #[arg(long)]
    pub quick: bool,
    /// Seeds per workload case (default: the workload's own).
    #[arg(long)]
    pub seeds: Option<u64>,
}

/// The repository root (where `rtl/` is); coverage paths are made relative to it.
fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// Runs `workload` with coverage collection on, then merges and writes the
/// reports and prints the per-file table.
///
/// The workload is any code that creates `Sim`s (directly or through `Bench`)
/// in this process or in child processes (they inherit the environment); it is
/// given these arguments for `--quick` and `--seeds`. If it fails, the coverage
/// it collected is still reported and its error is returned afterwards.
pub fn run(
    args: &CoverageArgs,
    workload: &dyn Fn(&CoverageArgs) -> Result<(), String>,
) -> Result<(), String> {
    // The models that have coverage variants (`coverage` in rtl/models.toml).
    let wanted = Registry::builtin().names(Use::Coverage);
    let built: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|m| ModelInfo::coverage_variant(m).is_some())
        .collect();
    if built.is_empty() {
        return Err(format!(
            "no coverage models ({}) are built into this binary: build with `--features coverage`, \
             e.g. `cargo run --release --features coverage -- coverage` or `make coverage`",
            wanted
                .iter()
                .map(|m| format!("{m}{COVERAGE_SUFFIX}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if built.len() < wanted.len() {
        eprintln!(
            "warning: only {} have coverage models (DYSHARP_MODELS?); the others run without coverage",
            built.join(", ")
        );
    }
    let dat = args.out.join("dat");
    let html = args.out.join("html");
    for d in [&dat, &html] {
        if d.exists() {
            fs::remove_dir_all(d).map_err(|e| format!("cannot clean {}: {e}", d.display()))?;
        }
    }
    fs::create_dir_all(&dat).map_err(|e| format!("cannot create {}: {e}", dat.display()))?;
    // Absolute, so workloads that change directory or spawn processes agree.
    let dat = dat
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", dat.display()))?;
    let previous = std::env::var_os(COVERAGE_DIR_ENV);
    std::env::set_var(COVERAGE_DIR_ENV, &dat);
    // Each model run writes tens of MB (one record per toggle bit), so a merger
    // folds finished files in and deletes them while the workload runs.
    let done = AtomicBool::new(false);
    let (outcome, merged) = std::thread::scope(|s| {
        let merger = s.spawn(|| -> Result<(Coverage, usize), String> {
            let mut cov = Coverage::new();
            let mut files = 0;
            let (mut written, mut last_write) = (0, Instant::now());
            loop {
                let last = done.load(Ordering::Acquire);
                files += merge_finished(&mut cov, &dat)?;
                if last {
                    return Ok((cov, files));
                }
                if files > written && last_write.elapsed() >= CHECKPOINT_EVERY {
                    write_reports(&cov, &args.out)?;
                    (written, last_write) = (files, Instant::now());
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        let outcome = workload(args);
        done.store(true, Ordering::Release);
        let merged = merger
            .join()
            .unwrap_or_else(|_| Err("the coverage merger panicked".into()));
        (outcome, merged)
    });
    match previous {
        Some(v) => std::env::set_var(COVERAGE_DIR_ENV, v),
        None => std::env::remove_var(COVERAGE_DIR_ENV),
    }
    let (cov, files) = merged?;
    if files == 0 {
        return Err(match outcome {
            Err(e) => format!("workload failed before any coverage was written: {e}"),
            Ok(()) => format!(
                "the workload wrote no coverage into {} (did it run top_p4/p8/p16?)",
                dat.display()
            ),
        });
    }
    let merged_dat = args.out.join("coverage.dat");
    let report = write_reports(&cov, &args.out)?;
    out!("{}", report.table());
    outln!(
        "{files} coverage file(s) merged; wrote {}, {}, {}, {}",
        merged_dat.display(),
        args.out.join("coverage.info").display(),
        args.out.join("summary.json").display(),
        html.join("index.html").display()
    );
    outcome.map_err(|e| format!("workload failed (coverage above is partial): {e}"))
}

/// Writes `out`/coverage.dat (merged) and the reports of `cov`; returns the report.
fn write_reports(cov: &Coverage, out: &Path) -> Result<dysharp_verif::coverage::Report, String> {
    let merged_dat = out.join("coverage.dat");
    fs::write(&merged_dat, cov.to_dat())
        .map_err(|e| format!("cannot write {}: {e}", merged_dat.display()))?;
    let root = repo_root();
    let report = cov.report(&root);
    report
        .write_all(&root, out, "dysharp")
        .map_err(|e| e.to_string())?;
    Ok(report)
}

/// Merges the finished `*.dat` files of `dir` into `cov` and deletes them;
/// returns how many.
fn merge_finished(cov: &mut Coverage, dir: &Path) -> Result<usize, String> {
    let rd = fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dat"))
        .collect();
    files.sort();
    for f in &files {
        cov.add_file(f).map_err(|e| e.to_string())?;
        fs::remove_file(f).map_err(|e| format!("cannot remove {}: {e}", f.display()))?;
    }
    Ok(files.len())
}

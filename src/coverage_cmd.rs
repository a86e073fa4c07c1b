//! `dysharp coverage`: Verilator line and toggle coverage of the RTL.
//!
//! Runs a workload with `DYSHARP_COVERAGE_DIR=<out>/dat`, so every `Sim` of
//! `top_p4`/`top_p8`/`top_p16` uses its coverage model (`<name>_cov`, built with
//! `--features coverage`) and writes a `coverage.dat` on drop. A merger thread
//! folds those files into one (`dysharp_verif::coverage`) and deletes them as
//! they appear (each is tens of MB); at the end the command writes
//! `<out>/coverage.dat` (merged, Verilator's format), `<out>/coverage.info`
//! (lcov), `<out>/html/index.html` and `<out>/summary.json`, and prints one row
//! per RTL file.

use dysharp_sim::numerics::{AccMode, DType, ReduceOp};
use dysharp_sim::packet::{Opcode, Packet, Stage};
use dysharp_verif::coverage::Coverage;
use dysharp_verif::sim::{COVERAGE_DIR_ENV, COVERAGE_SUFFIX};
use dysharp_verif::stimulus::{Stimulus, SCRATCH};
use dysharp_verif::{Bench, BenchConfig, ModelInfo};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The models that have coverage variants.
pub const COVERAGE_BASE_MODELS: [&str; 3] = ["top_p4", "top_p8", "top_p16"];

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
    /// Run the built-in directed workload (`directed_workload`) instead of the
    /// regression.
    #[arg(long)]
    pub directed: bool,
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
/// given these arguments for `--quick` and `--seeds`. With `--directed`,
/// [`directed_workload`] runs instead. If it fails, the coverage
/// it collected is still reported and its error is returned afterwards.
pub fn run(
    args: &CoverageArgs,
    workload: &dyn Fn(&CoverageArgs) -> Result<(), String>,
) -> Result<(), String> {
    let built: Vec<&str> = COVERAGE_BASE_MODELS
        .iter()
        .copied()
        .filter(|m| ModelInfo::coverage_variant(m).is_some())
        .collect();
    if built.is_empty() {
        return Err(format!(
            "no coverage models ({}) are built into this binary: build with `--features coverage`, \
             e.g. `cargo run --release --features coverage -- coverage` or `make coverage`",
            COVERAGE_BASE_MODELS.map(|m| format!("{m}{COVERAGE_SUFFIX}")).join(", ")
        ));
    }
    if built.len() < COVERAGE_BASE_MODELS.len() {
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
            loop {
                let last = done.load(Ordering::Acquire);
                files += merge_finished(&mut cov, &dat)?;
                if last {
                    return Ok((cov, files));
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        let outcome = if args.directed {
            directed_workload(args)
        } else {
            workload(args)
        };
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
    fs::write(&merged_dat, cov.to_dat())
        .map_err(|e| format!("cannot write {}: {e}", merged_dat.display()))?;
    let root = repo_root();
    let report = cov.report(&root);
    report
        .write_all(&root, &args.out, "dysharp")
        .map_err(|e| e.to_string())?;
    print!("{}", report.table());
    println!(
        "{files} coverage file(s) merged; wrote {}, {}, {}, {}",
        merged_dat.display(),
        args.out.join("coverage.info").display(),
        args.out.join("summary.json").display(),
        html.join("index.html").display()
    );
    outcome.map_err(|e| format!("workload failed (coverage above is partial): {e}"))
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

/// Group table of the directed workload: a 3-port group, an empty one, all ports.
fn groups(ports: usize) -> Vec<u32> {
    vec![0b1011, 0, u32::MAX >> (32 - ports)]
}

/// Runs one bench case and reports errors with the re-run coordinates.
fn bench_case(
    name: &str,
    mut cfg: BenchConfig,
    body: impl FnOnce(&mut Bench, &mut Stimulus),
) -> Result<(), String> {
    let ports = match cfg.model.as_str() {
        "top_p4" => 4,
        "top_p16" => 16,
        _ => 8,
    };
    cfg.groups = groups(ports);
    let (model, seed) = (cfg.model.clone(), cfg.seed);
    let mut b = Bench::new(cfg).map_err(|e| format!("{name} on {model} (seed {seed:#x}): {e}"))?;
    let mut s = Stimulus::new(&b.golden.cfg, seed);
    body(&mut b, &mut s);
    b.run(2_000_000)
        .map_err(|e| format!("{name} on {model} (seed {seed:#x}): {e}"))?;
    b.close();
    Ok(())
}

/// A directed workload over `top_p4`, `top_p8` and `top_p16`: legal packets of
/// every kind mixed with malformed frames, backpressure on every stream,
/// reduction over every dtype/op/accumulation with shuffled arrival, AL-TLB
/// pressure with slow walks, NVLS and unicast ops. `--seeds` (default 1) runs
/// each case with that many seeds; `--quick` uses fewer packets.
pub fn directed_workload(args: &CoverageArgs) -> Result<(), String> {
    let n = if args.quick { 40 } else { 200 };
    for seed in 1..=args.seeds.unwrap_or(1).max(1) {
        for model in COVERAGE_BASE_MODELS {
            let base = seed * 0x100;
            eprintln!("coverage workload: {model}, seed {seed}");
            bench_case(
                "mixed_legal_and_malformed",
                BenchConfig::new(model, base + 1),
                |b, s| {
                    if model == "top_p16" {
                        s.max_k = 16;
                    }
                    for _ in 0..n {
                        let (p, pkt) = s.any_legal();
                        b.push(p, &pkt);
                        let (p, f) = s.malformed();
                        b.push_frame(p, f);
                    }
                },
            )?;
            let mut cfg = BenchConfig::new(model, base + 2);
            cfg.inject_rate = 0.6;
            cfg.sm_ready_rate = 0.3;
            cfg.mem_ready_rate = 0.3;
            cfg.mem_latency = (1, 25);
            bench_case("backpressure", cfg, |b, s| {
                for _ in 0..n {
                    let (p, pkt) = s.any_legal();
                    b.push(p, &pkt);
                }
            })?;
            let mut cfg = BenchConfig::new(model, base + 3);
            cfg.mem_latency = (30, 60);
            bench_case("tlb_pressure_slow_walks", cfg, tlb_pressure)?;
            let mut cfg = BenchConfig::new(model, base + 4);
            cfg.mem_latency = (1, 40);
            bench_case("reduction_all_dtypes_ops", cfg, reductions)?;
            bench_case("nvls_unicast", BenchConfig::new(model, base + 5), |b, s| {
                for _ in 0..n / 4 {
                    let (p, pkt) = s.unicast(true);
                    b.push(p, &pkt);
                    let (p, pkt) = s.unicast(false);
                    b.push(p, &pkt);
                    if let Some((p, pkt)) = s.multicast(true) {
                        b.push(p, &pkt);
                    }
                    if let Some((p, pkt)) = s.multicast(false) {
                        b.push(p, &pkt);
                    }
                }
                let mut r = Packet::new(Opcode::Read);
                r.route = 2;
                r.maddr = SCRATCH;
                r.len = 4;
                b.push(b.ports() - 1, &r);
            })?;
        }
    }
    Ok(())
}

/// Many distinct tokens to one expert (overflowing the TLB), read back in reverse.
fn tlb_pressure(b: &mut Bench, s: &mut Stimulus) {
    let hub = b.golden.cfg.hub.clone();
    let last = b.ports() - 1;
    for aidx in 0..64u64 {
        let mut p = Packet::new(Opcode::DynSt);
        p.targets = vec![1];
        p.maddr = hub.mbase + (aidx << hub.log2_bsize);
        p.len = 1;
        p.be = Some(u128::MAX);
        p.payload = s.payload(1, DType::F32);
        p.tag = aidx as u16;
        b.push(last, &p);
    }
    for aidx in (0..64u64).rev() {
        let mut p = Packet::new(Opcode::DynLdReduce);
        p.stage = Stage::Combine;
        p.targets = vec![1];
        p.maddr = hub.mbase + (aidx << hub.log2_bsize);
        p.len = 1;
        p.tag = 0x100 + aidx as u16;
        b.push(last, &p);
    }
}

/// A store to six experts, then a load-reduce of it for every dtype × op × accumulation.
fn reductions(b: &mut Bench, s: &mut Stimulus) {
    let hub = b.golden.cfg.hub.clone();
    let epp = b.golden.cfg.experts_per_port as u16;
    let ports = b.ports() as u16;
    // Six experts on ports other than the source (0), some ports twice.
    let targets: Vec<u16> = [ports - 1, 1, 3, ports / 2 + 1, 2, ports - 2]
        .iter()
        .enumerate()
        .map(|(i, p)| p * epp + (i as u16 % epp))
        .collect();
    for (i, dt) in DType::ALL.iter().enumerate() {
        let mut st = Packet::new(Opcode::DynSt);
        st.maddr = hub.mbase + ((i as u64) << hub.log2_bsize);
        st.targets = targets.clone();
        st.len = 16;
        st.be = Some(u128::MAX);
        st.dtype = *dt;
        st.payload = s.payload(16, *dt);
        b.push(0, &st);
        for op in ReduceOp::ALL {
            for acc in AccMode::ALL {
                let mut ld = Packet::new(Opcode::DynLdReduce);
                ld.stage = Stage::Combine;
                ld.maddr = st.maddr;
                ld.targets = targets.clone();
                ld.len = 16;
                ld.dtype = *dt;
                ld.rop = op;
                ld.acc = acc;
                ld.tag = (16 * i + 4 * op.code() as usize + acc.code() as usize) as u16;
                b.push(0, &ld);
            }
        }
    }
}

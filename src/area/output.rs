//! Text table, CSV and SVG charts of `dysharp area` reports.

use super::AreaReport;
use std::fmt::Write;

fn indent(r: &AreaReport, i: usize) -> usize {
    let mut d = 0;
    let mut p = r.blocks[i].parent.clone();
    while let Some(name) = p {
        d += 1;
        p = r
            .blocks
            .iter()
            .find(|b| b.name == name)
            .and_then(|b| b.parent.clone());
    }
    d
}

/// A report's parameter overrides as `K=V ...` ("RTL defaults" when none) and its target's name.
fn config_words(r: &AreaReport) -> (String, String) {
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let params = if params.is_empty() {
        "RTL defaults".to_string()
    } else {
        params.join(" ")
    };
    (params, format!("{:?}", r.target).to_lowercase())
}

/// The FPGA resources of a report of an FPGA target.
fn fpga_table(r: &AreaReport, f: &super::fpga::FpgaReport) -> String {
    let mut s = String::new();
    let (params, target) = config_words(r);
    let how = if f.blocks.is_empty() {
        "flat"
    } else {
        "every block on its own, summed over its instances"
    };
    let _ = writeln!(
        s,
        "{} ({}) {} [{}], block {} ({}, {how}), device {}, {:.0} s",
        r.config, r.top, params, target, f.block, f.module, f.device, r.seconds
    );
    let ecp5 = f.available.is_some();
    let names: [&str; 4] = if ecp5 {
        ["LUT4", "TRELLIS_FF", "DP16KD (EBR)", "MULT18X18D"]
    } else {
        ["LUT", "FD*", "RAMB18/36", "DSP48E1"]
    };
    if ecp5 {
        let _ = writeln!(
            s,
            "{:<16} {:>10} {:>10} {:>7} {:>10}",
            "resource",
            if f.placed { "placed" } else { "-" },
            "available",
            "use%",
            "yosys"
        );
    } else {
        let _ = writeln!(s, "{:<16} {:>10}", "resource", "yosys");
    }
    let rows = [
        (f.luts, f.available.as_ref().map(|a| a.luts), f.yosys.luts),
        (f.ffs, f.available.as_ref().map(|a| a.ffs), f.yosys.ffs),
        (
            f.brams,
            f.available.as_ref().map(|a| a.brams),
            f.yosys.brams,
        ),
        (f.dsps, f.available.as_ref().map(|a| a.dsps), f.yosys.dsps),
    ];
    for (name, (used, avail, y)) in names.iter().zip(rows) {
        let placed = if f.placed {
            used.to_string()
        } else {
            "-".into()
        };
        let Some(a) = avail else {
            let _ = writeln!(s, "{name:<16} {y:>10}");
            continue;
        };
        let n = if f.placed { used } else { y };
        let pct = format!("{:.1}%", 100.0 * n as f64 / a.max(1) as f64);
        let _ = writeln!(s, "{name:<16} {placed:>10} {a:>10} {pct:>7} {y:>10}");
    }
    let _ = writeln!(s, "block RAM: {} Kbit", f.bram_kbits);
    match f.fmax_mhz {
        Some(x) => {
            let _ = writeln!(s, "fmax: {x:.2} MHz ({})", f.fmax_note);
        }
        None => {
            let _ = writeln!(s, "fmax: {}", f.fmax_note);
        }
    }
    if let Some(e) = &f.error {
        let _ = writeln!(s, "error: {e}");
    }
    if !f.blocks.is_empty() {
        let _ = writeln!(
            s,
            "\nper instance, sub-blocks included:\n{:<28} {:>5} {:>9} {:>9} {:>9} {:>6}",
            "block", "inst", "LUT", "FD*", "RAMB18/36", "DSP"
        );
        for b in &f.blocks {
            let t = &b.total;
            let _ = writeln!(
                s,
                "{:<28} {:>5} {:>9} {:>9} {:>9} {:>6}{}",
                b.name,
                b.instances,
                t.luts,
                t.ffs,
                t.brams,
                t.dsps,
                b.error
                    .as_ref()
                    .map(|e| format!("  error: {e}"))
                    .unwrap_or_default()
            );
        }
    }
    s
}

/// The per-block table (figures per instance, sub-blocks included); for an FPGA target the
/// resources of the block synthesized.
pub fn table(r: &AreaReport) -> String {
    if let Some(f) = &r.fpga {
        return fpga_table(r, f);
    }
    let mut s = String::new();
    let (params, target) = config_words(r);
    let _ = writeln!(
        s,
        "{} ({}) {} [{}], cells: {}, memories: {:?}, {:.0} s",
        r.config, r.top, params, target, r.cell_model, r.memories, r.seconds
    );
    let _ = writeln!(
        s,
        "{:<34} {:>5} {:>9} {:>12} {:>12} {:>7} {:>10} {:>12} {:>10} {:>6}",
        "block (per instance)",
        "inst",
        "cells",
        "area_um2",
        "seq_um2",
        "seq%",
        "ge",
        "flop_bits",
        "mem_bits",
        "levels"
    );
    for (i, b) in r.blocks.iter().enumerate() {
        if b.error.as_deref() == Some("not selected") && b.total.cells == 0 {
            continue;
        }
        let name = format!("{}{}", "  ".repeat(indent(r, i)), b.name);
        let t = &b.total;
        let seq = if t.area_um2 > 0.0 {
            100.0 * t.seq_area_um2 / t.area_um2
        } else {
            0.0
        };
        let _ = write!(
            s,
            "{:<34} {:>5} {:>9} {:>12.0} {:>12.0} {:>6.1}% {:>10.0} {:>12} {:>10} {:>6}",
            name,
            b.instances,
            t.cells,
            t.area_um2,
            t.seq_area_um2,
            seq,
            t.ge,
            t.flop_storage_bits,
            t.mem_bits,
            b.levels
                .map(|l| l.to_string())
                .unwrap_or_else(|| "-".into())
        );
        if let Some(e) = &b.error {
            let _ = write!(s, "  [{e}]");
        } else if !b.sub_blocks_missing.is_empty() {
            let _ = write!(
                s,
                "  [without {} sub-blocks not synthesized: {}]",
                b.sub_blocks_missing.len(),
                b.sub_blocks_missing.join(", ")
            );
        }
        s.push('\n');
    }
    if let Some(top) = r.blocks.first() {
        let t = &top.total;
        let _ = writeln!(
            s,
            "total: {:.3} mm2 standard cells ({:.3} mm2 sequential), {:.3} mm2 memories by the memory model ({} bits, each the least of a sky130 SRAM macro tiling and flip-flops), {} flip-flop bits",
            t.area_um2 / 1e6,
            t.seq_area_um2 / 1e6,
            t.mem_area_um2 / 1e6,
            t.mem_bits,
            t.flop_storage_bits
        );
    }
    if let Some(f) = &r.flat {
        match (&f.figures, f.ratio, &f.error) {
            (Some(fig), Some(ratio), _) => {
                let _ = writeln!(
                    s,
                    "flat (--flat, the whole configuration in one piece): {:.3} mm2 standard cells, \
                     {} cells, {} flip-flop bits, {} SRAM bits; flat / blocks = {:.3} ({:+.1} %)",
                    fig.area_um2 / 1e6,
                    fig.cells,
                    fig.flop_storage_bits,
                    fig.mem_bits,
                    ratio,
                    100.0 * (ratio - 1.0)
                );
            }
            (_, _, e) => {
                let _ = writeln!(
                    s,
                    "flat (--flat): failed: {}",
                    e.as_deref().unwrap_or("no figures")
                );
            }
        }
    }
    if let Some(tm) = &r.timing {
        let _ = writeln!(s, "{}", tm.summary());
    }
    if let Some(p) = &r.power {
        s += &super::power::summary(p);
    }
    s
}

/// CSV of every block of every report.
pub fn csv(reports: &[AreaReport]) -> String {
    let mut s = String::from(
        "config,params,block,module,instances,cells,ge,area_um2,seq_area_um2,comb_area_um2,mem_bits,mem_area_um2,flop_storage_bits,mem_flop_bits,own_area_um2,levels,error\n",
    );
    for r in reports {
        let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for b in &r.blocks {
            let t = &b.total;
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{:.1},{:.3},{:.3},{:.3},{},{:.3},{},{},{:.3},{},{}",
                r.config,
                params.join(" "),
                b.name,
                b.module,
                b.instances,
                t.cells,
                t.ge,
                t.area_um2,
                t.seq_area_um2,
                t.comb_area_um2,
                t.mem_bits,
                t.mem_area_um2,
                t.flop_storage_bits,
                t.mem_flop_bits,
                b.own.area_um2,
                b.levels.map(|l| l.to_string()).unwrap_or_default(),
                b.error.as_deref().unwrap_or("").replace([',', '\n'], ";")
            );
        }
    }
    s
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Horizontal bars: area of every block, all its instances together (standard cells
/// sequential / combinational, and SRAM), for the top's direct children and theirs.
pub fn blocks_svg(r: &AreaReport) -> String {
    let rows: Vec<(String, f64, f64, f64)> = r
        .blocks
        .iter()
        .enumerate()
        .filter(|(i, _)| indent(r, *i) <= 2)
        .map(|(i, b)| {
            let n = b.instances as f64;
            (
                format!("{}{} x{}", "  ".repeat(indent(r, i)), b.name, b.instances),
                n * b.total.seq_area_um2,
                n * b.total.comb_area_um2,
                n * b.total.mem_area_um2,
            )
        })
        .collect();
    let max = rows.iter().map(|r| r.1 + r.2 + r.3).fold(1.0_f64, f64::max);
    let (w, row, left) = (900.0, 18.0, 260.0);
    let h = 60.0 + row * rows.len() as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"10\" y=\"16\" font-size=\"13\">{} area per block (all instances): sequential, combinational, SRAM model; µm²</text>\n",
        esc(&r.config)
    );
    let scale = (w - left - 90.0) / max;
    for (i, (name, seq, comb, mem)) in rows.iter().enumerate() {
        let y = 30.0 + row * i as f64;
        let _ = writeln!(
            s,
            "<text x=\"10\" y=\"{:.1}\" xml:space=\"preserve\">{}</text>",
            y + 12.0,
            esc(name)
        );
        let mut x = left;
        for (v, c) in [(seq, COLORS[0]), (comb, COLORS[1]), (mem, COLORS[2])] {
            let wd = v * scale;
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{wd:.1}\" height=\"{:.1}\" fill=\"{c}\"/>",
                row - 4.0
            );
            x += wd;
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">{:.3e}</text>",
            x + 4.0,
            y + 12.0,
            seq + comb + mem
        );
    }
    let y = h - 14.0;
    for (i, (l, c)) in [
        ("sequential", COLORS[0]),
        ("combinational", COLORS[1]),
        ("SRAM model", COLORS[2]),
    ]
    .iter()
    .enumerate()
    {
        let x = left + 130.0 * i as f64;
        let _ = writeln!(s, "<rect x=\"{x}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{c}\"/><text x=\"{:.1}\" y=\"{:.1}\">{l}</text>", y - 9.0, x + 14.0, y);
    }
    s.push_str("</svg>\n");
    s
}

/// Lines: standard-cell area of the top and of its direct children (all instances) against the
/// swept value, and the SRAM model area.
pub fn sweep_svg(param: &str, values: &[i64], reports: &[AreaReport]) -> String {
    let mut series: Vec<(String, Vec<f64>)> = Vec::new();
    if let Some(first) = reports.first() {
        series.push((
            "top std cells".into(),
            reports.iter().map(|r| r.blocks[0].total.area_um2).collect(),
        ));
        series.push((
            "top SRAM model".into(),
            reports
                .iter()
                .map(|r| r.blocks[0].total.mem_area_um2)
                .collect(),
        ));
        for b in first
            .blocks
            .iter()
            .filter(|b| b.parent.as_deref() == Some(first.blocks[0].name.as_str()))
        {
            let ys = reports
                .iter()
                .map(|r| {
                    r.blocks
                        .iter()
                        .find(|x| x.name == b.name)
                        .map(|x| x.instances as f64 * x.total.area_um2)
                        .unwrap_or(0.0)
                })
                .collect();
            series.push((format!("{} (all)", b.name), ys));
        }
    }
    let (w, h, l, t, rpad, bpad) = (760.0, 420.0, 80.0, 30.0, 170.0, 40.0);
    let max = series
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .fold(1.0_f64, f64::max);
    let n = values.len().max(2) as f64 - 1.0;
    let px = |i: usize| l + (w - l - rpad) * i as f64 / n;
    let py = |v: f64| t + (h - t - bpad) * (1.0 - v / max);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"10\" y=\"16\" font-size=\"13\">{} area against {} (µm²)</text>\n",
        esc(reports.first().map(|r| r.config.as_str()).unwrap_or("")),
        esc(param)
    );
    let _ = writeln!(
        s,
        "<line x1=\"{l}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>",
        h - bpad,
        w - rpad,
        h - bpad
    );
    let _ = writeln!(
        s,
        "<line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{:.1}\" stroke=\"black\"/>",
        h - bpad
    );
    for k in 0..=4 {
        let v = max * k as f64 / 4.0;
        let _ = writeln!(s, "<text x=\"4\" y=\"{:.1}\">{:.2e}</text>", py(v) + 4.0, v);
    }
    for (i, v) in values.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v}</text>",
            px(i),
            h - bpad + 16.0
        );
    }
    for (j, (name, ys)) in series.iter().enumerate() {
        let c = COLORS[j % COLORS.len()];
        let pts: Vec<String> = ys
            .iter()
            .enumerate()
            .map(|(i, y)| format!("{:.1},{:.1}", px(i), py(*y)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>",
            pts.join(" ")
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{c}\">{}</text>",
            w - rpad + 8.0,
            t + 14.0 * j as f64 + 8.0,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

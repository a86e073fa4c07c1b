//! Human-readable replay summaries and the SVG chart of per-port bytes.

use dysharp_sim::replay::ReplayReport;
use dysharp_sim::traffic::PhaseTraffic;
#[cfg(feature = "rtl")]
use dysharp_verif::replay_rtl::RtlReplayReport;
use std::fmt::Write;

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn saving(d: u64, b: u64) -> String {
    if b == 0 {
        "n/a".into()
    } else {
        format!("{:+.1}%", 100.0 * (d as f64 - b as f64) / b as f64)
    }
}

/// The hottest (port, direction, wire bytes) of a phase.
fn hottest(t: &PhaseTraffic) -> (usize, &'static str, u64) {
    let up = t
        .uplink_wire_bytes
        .iter()
        .enumerate()
        .map(|(p, b)| (p, "uplink", *b));
    let down = t
        .downlink_wire_bytes
        .iter()
        .enumerate()
        .map(|(p, b)| (p, "downlink", *b));
    up.chain(down)
        .max_by_key(|x| x.2)
        .unwrap_or((0, "uplink", 0))
}

/// A short text report of a replay.
pub fn text_summary(r: &ReplayReport, secs: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "replay ({}): {} tokens, {} B per token row, top-{}, {} experts, EP {}: {:.3} s",
        r.engine,
        r.shape.tokens,
        r.shape.payload_bytes_per_token,
        r.shape.topk,
        r.shape.experts,
        r.shape.ep,
        secs
    );
    let _ = writeln!(
        s,
        "  {:<9} {:<9} {:>12} {:>12} {:>8}",
        "phase", "direction", "DySHARP MiB", "baseline MiB", "change"
    );
    for (name, ph) in [
        ("dispatch", &r.dispatch.traffic),
        ("combine", &r.combine.traffic),
    ] {
        let (du, dd) = ph.payload_totals();
        let (bu, bd) = ph.baseline_payload_totals();
        for (dir, d, b) in [("uplink", du, bu), ("downlink", dd, bd)] {
            let _ = writeln!(
                s,
                "  {:<9} {:<9} {:>12.1} {:>12.1} {:>8}",
                name,
                dir,
                mib(d),
                mib(b),
                saving(d, b)
            );
        }
        let (port, dir, bytes) = hottest(ph);
        let _ = writeln!(
            s,
            "  {name}: hottest port {port} {dir} ({:.1} MiB on the wire); lower bound {} cycles (baseline {}, {})",
            mib(bytes),
            ph.lower_bound_cycles,
            ph.baseline_lower_bound_cycles,
            saving(ph.lower_bound_cycles, ph.baseline_lower_bound_cycles)
        );
    }
    let _ = writeln!(
        s,
        "  checked {} Combine results: {} mismatches; AL-TLB hit rate {:.4}",
        r.results_checked, r.mismatches, r.tlb_hit_rate
    );
    s
}

/// A short text report of an RTL replay.
#[cfg(feature = "rtl")]
pub fn rtl_summary(r: &RtlReplayReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "replay (rtl, model {}): {} tokens, hidden {}, {} B per token row, top-{}, {} experts, EP {}",
        r.model,
        r.shape.tokens,
        r.shape.hidden,
        r.shape.payload_bytes_per_token,
        r.shape.topk,
        r.shape.experts,
        r.shape.ep
    );
    let _ = writeln!(s, "  injection order: {}", r.inject);
    for (name, ph) in [("dispatch", &r.dispatch), ("combine", &r.combine)] {
        let (du, dd) = ph.traffic.payload_totals();
        let (bu, bd) = ph.traffic.baseline_payload_totals();
        let _ = writeln!(
            s,
            "  {name}: {} cycles, lower bound {}, cycles/lower bound {:.3}; payload MiB up {:.2} (baseline {:.2}), down {:.2} (baseline {:.2})",
            ph.cycles,
            ph.traffic.lower_bound_cycles,
            ph.cycles_over_lower_bound,
            mib(du),
            mib(bu),
            mib(dd),
            mib(bd)
        );
    }
    let lat: Vec<String> = r
        .zero_load_latency
        .iter()
        .map(|l| format!("{} {}", l.op, l.cycles))
        .collect();
    if let Some(f) = &r.fused {
        let _ = writeln!(
            s,
            "  fused, tile {} tokens per GPU: {} cycles, fused lower bound {} (fill and drain included), cycles/bound {:.3}; phases in sequence would be bound by {}",
            f.tile, f.cycles, f.fused_bound_cycles, f.cycles_over_fused_bound, f.sequential_bound_cycles
        );
        let worst = f
            .steps
            .iter()
            .max_by(|a, b| a.cycles_over_bound.total_cmp(&b.cycles_over_bound));
        if let Some(w) = worst {
            let _ = writeln!(
                s,
                "  {} steps; worst step: Dispatch tile {:?}, Combine tile {:?}, {} cycles, bound {}, {:.3}",
                f.steps.len(),
                w.dispatch_tile,
                w.combine_tile,
                w.cycles,
                w.bound_cycles,
                w.cycles_over_bound
            );
        }
    }
    let _ = writeln!(s, "  zero-load latency (cycles): {}", lat.join(", "));
    let _ = writeln!(
        s,
        "  scoreboard: {} packets and {} memory accesses checked, {} mismatches (a mismatch stops the replay); AL-TLB hit rate {:.4}; errors {:?}; {:.0} cycles/s",
        r.packets_checked, r.mem_checked, r.mismatches, r.tlb_hit_rate, r.errors, r.cycles_per_second
    );
    s
}

/// An SVG chart: for each workload, four panels (dispatch/combine × up/down) of
/// per-port payload bytes, DySHARP beside baseline.
pub fn svg(runs: &[(&str, &ReplayReport)]) -> String {
    let (pw, ph, margin) = (300.0, 180.0, 40.0);
    let width = 4.0 * (pw + margin) + margin;
    let height = runs.len() as f64 * (ph + 2.0 * margin) + margin;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r##"<rect x="{margin}" y="8" width="10" height="10" fill="#1f77b4"/><text x="{}" y="17">DySHARP</text><rect x="{}" y="8" width="10" height="10" fill="#bbbbbb"/><text x="{}" y="17">baseline (unicast per remote GPU); payload MiB per port</text>"##,
        margin + 14.0,
        margin + 80.0,
        margin + 94.0
    );
    for (row, (name, r)) in runs.iter().enumerate() {
        let y0 = margin + row as f64 * (ph + 2.0 * margin);
        let panels: [(&str, &[u64], &[u64]); 4] = [
            (
                "dispatch uplink",
                &r.dispatch.traffic.uplink_payload_bytes,
                &r.dispatch.traffic.baseline_uplink_payload_bytes,
            ),
            (
                "dispatch downlink",
                &r.dispatch.traffic.downlink_payload_bytes,
                &r.dispatch.traffic.baseline_downlink_payload_bytes,
            ),
            (
                "combine uplink",
                &r.combine.traffic.uplink_payload_bytes,
                &r.combine.traffic.baseline_uplink_payload_bytes,
            ),
            (
                "combine downlink",
                &r.combine.traffic.downlink_payload_bytes,
                &r.combine.traffic.baseline_downlink_payload_bytes,
            ),
        ];
        let vmax = panels
            .iter()
            .flat_map(|(_, a, b)| a.iter().chain(b.iter()))
            .copied()
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        for (i, (title, d, b)) in panels.iter().enumerate() {
            let x0 = margin + i as f64 * (pw + margin);
            let _ = writeln!(
                s,
                r#"<text x="{x0}" y="{}" font-weight="bold">{name}: {title}</text>"#,
                y0 + 12.0
            );
            let base = y0 + 20.0 + ph;
            let _ = writeln!(
                s,
                r#"<line x1="{x0}" y1="{base}" x2="{}" y2="{base}" stroke="black"/>"#,
                x0 + pw
            );
            let n = d.len().max(1) as f64;
            let slot = pw / n;
            for (p, (dv, bv)) in d.iter().zip(b.iter()).enumerate() {
                let x = x0 + p as f64 * slot;
                let bar = |v: u64| ph * v as f64 / vmax;
                let _ = writeln!(
                    s,
                    r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#1f77b4"><title>port {p}: {:.2} MiB</title></rect>"##,
                    x + 0.1 * slot,
                    base - bar(*dv),
                    0.4 * slot,
                    bar(*dv),
                    mib(*dv)
                );
                let _ = writeln!(
                    s,
                    r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#bbbbbb"><title>port {p} baseline: {:.2} MiB</title></rect>"##,
                    x + 0.5 * slot,
                    base - bar(*bv),
                    0.4 * slot,
                    bar(*bv),
                    mib(*bv)
                );
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{p}</text>"#,
                    x + 0.5 * slot,
                    base + 12.0
                );
            }
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{:.1}" text-anchor="end">{:.1} MiB</text>"#,
                x0 + pw,
                y0 + 28.0,
                mib(vmax as u64)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// One line of a [`line_chart`]: a name and its (x, y) points.
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points, drawn in order.
    pub points: Vec<(f64, f64)>,
    /// Dashed line (for analytic or reference series).
    pub dashed: bool,
}

/// Colours of successive series.
const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// An SVG line chart with a legend; `log2_x` spaces x by log2 (for EP degrees, entries and
/// sequence lengths). The y axis runs from `min(0, ymin)` to the largest y.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log2_x: bool,
) -> String {
    let (w, h, left, top, pw, ph) = (760.0, 420.0, 70.0, 40.0, 440.0, 320.0);
    let tx = |x: f64| if log2_x { x.max(1e-9).log2() } else { x };
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y0, mut y1) = (0.0f64, f64::NEG_INFINITY);
    for &(x, y) in pts() {
        x0 = x0.min(tx(x));
        x1 = x1.max(tx(x));
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() || !x1.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if !y1.is_finite() || y1 <= y0 {
        y1 = y0 + 1.0;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    y1 += 0.05 * (y1 - y0);
    let px = |x: f64| left + pw * (tx(x) - x0) / (x1 - x0);
    let py = |y: f64| top + ph * (1.0 - (y - y0) / (y1 - y0));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="20" font-weight="bold" font-size="13">{}</text>"#,
        esc(title)
    );
    let _ = writeln!(
        s,
        r#"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    for i in 0..=5 {
        let y = y0 + (y1 - y0) * i as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{py:.1}" x2="{}" y2="{py:.1}" stroke="#dddddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + pw,
            left - 4.0,
            py(y) + 4.0,
            tick(y),
            py = py(y)
        );
    }
    let mut xs: Vec<f64> = pts().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for x in xs.iter().take(16) {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(*x),
            top + ph + 14.0,
            tick(*x)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        top + ph + 32.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">{}</text>"#,
        top + ph / 2.0,
        top + ph / 2.0,
        esc(y_label)
    );
    for (i, ser) in series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let dash = if ser.dashed {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        };
        let path: Vec<String> = ser
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>"#,
            path.join(" ")
        );
        for &(x, y) in &ser.points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{colour}"><title>{}: ({}, {:.4})</title></circle>"#,
                px(x),
                py(y),
                esc(&ser.name),
                tick(x),
                y
            );
        }
        let ly = top + 10.0 + 16.0 * i as f64;
        let lx = left + pw + 14.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"#,
            lx + 18.0,
            lx + 22.0,
            ly + 4.0,
            esc(&ser.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// A short axis label.
fn tick(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e7 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Escapes text for SVG.
fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

//! Power of the synthesized netlists with OpenSTA's `report_power` at the typical corner,
//! from a stated switching activity (docs/area.md, "Power").
//!
//! OpenSTA 2.0.17 reads no waveform, so every net without a clock toggles at one stated rate
//! per clock cycle ([`DEFAULT_ACTIVITY`], `--activity`), with a duty of one half; the clock
//! toggles twice a cycle. Internal power comes from the cells' Liberty tables, switching power
//! from each net's load (pins and the wire-load model), leakage from the Liberty. Memories
//! kept as SRAM macros are cells with OpenRAM's leakage (`sram_timing`); their accesses, each
//! port at the same stated rate per cycle, cost OpenRAM's energy per bit of width, added here
//! (as internal power) to OpenSTA's figures.
//!
//! Each block is measured on its own netlist (its own logic, per instance) and the whole
//! design linked from them: the top's figure is the linked design's when it could be linked.

use serde::Serialize;
use std::path::Path;

/// Transitions per clock cycle of every data net when `--activity` is not given (a flip-flop
/// output changing on one cycle in twenty).
pub const DEFAULT_ACTIVITY: f64 = 0.1;

/// One `report_power` total, W.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Watts {
    /// Internal power of the cells (their Liberty tables).
    pub internal: f64,
    /// Switching power of the nets' loads.
    pub switching: f64,
    /// Leakage.
    pub leakage: f64,
    /// Their sum.
    pub total: f64,
    /// The part of `total` in flip-flops and latches.
    pub sequential: f64,
    /// The part of `total` in memories kept as SRAM macros.
    pub memories: f64,
}

impl Watts {
    fn add_scaled(&mut self, o: &Watts, k: f64) {
        self.internal += o.internal * k;
        self.switching += o.switching * k;
        self.leakage += o.leakage * k;
        self.total += o.total * k;
        self.sequential += o.sequential * k;
        self.memories += o.memories * k;
    }
}

/// Reads the group totals of `report_power` (`Sequential`, `Total` rows: internal,
/// switching, leakage, total power in W) and, from the per-instance report of the memory cells
/// that follows it ([`report_tcl`]), their sum. (OpenSTA 2.0.17 puts cells marked
/// `is_macro_cell` in its `Combinational` group, so the memories are reported by instance.)
pub fn parse(text: &str) -> Option<Watts> {
    let row = |name: &str| -> Option<[f64; 4]> {
        let l = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))?;
        let v: Vec<f64> = l
            .split_whitespace()
            .skip(1)
            .take(4)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        (v.len() == 4).then(|| [v[0], v[1], v[2], v[3]])
    };
    let t = row("Total")?;
    Some(Watts {
        internal: t[0],
        switching: t[1],
        leakage: t[2],
        total: t[3],
        sequential: row("Sequential").map_or(0.0, |r| r[3]),
        memories: text
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let v: Vec<f64> = f.iter().take(4).filter_map(|x| x.parse().ok()).collect();
                (f.len() == 5 && v.len() == 4).then(|| v[3])
            })
            .sum(),
    })
}

/// The OpenSTA commands that set the activity and write `report_power` at `corner` to `rpt`,
/// then each memory cell's (`sram_timing`).
pub fn report_tcl(corner: &str, activity: f64, rpt: &Path) -> String {
    format!(
        "set_power_activity -global -activity {activity} -duty 0.5\n\
         report_power -corner {corner} -digits 6 > {{{rpt}}}\n\
         set mems [get_cells -quiet -hier -filter \"ref_name =~ {generic}*\"]\n\
         if {{[llength $mems]}} {{\n\
           report_power -corner {corner} -digits 6 -instances $mems >> {{{rpt}}}\n\
         }}\n",
        rpt = rpt.display(),
        generic = super::sram_timing::GENERIC,
    )
}

/// One block's power, mW: per instance.
#[derive(Clone, Debug, Serialize)]
pub struct BlockPower {
    /// Block.
    pub name: String,
    /// Instances in the design.
    pub instances: usize,
    /// Per instance, sub-blocks included.
    pub total_mw: f64,
    /// Per instance, its own logic only.
    pub own_mw: f64,
    /// Per instance, memories kept as macros (sub-blocks included).
    pub memories_mw: f64,
}

/// Power of a configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Power {
    /// Corner (the typical one).
    pub corner: String,
    /// Clock, MHz.
    pub clock_mhz: f64,
    /// Transitions per clock cycle of every data net.
    pub activity: f64,
    /// Whether the totals are the linked design's (else the blocks' sum).
    pub linked: bool,
    /// The whole design, mW.
    pub total_mw: f64,
    /// Its internal power, mW.
    pub internal_mw: f64,
    /// Its switching power, mW.
    pub switching_mw: f64,
    /// Its leakage, mW.
    pub leakage_mw: f64,
    /// Its flip-flops and latches, mW.
    pub sequential_mw: f64,
    /// Its memories kept as macros, mW.
    pub memories_mw: f64,
    /// Energy per clock cycle, pJ.
    pub energy_per_cycle_pj: f64,
    /// Each block, top first.
    pub blocks: Vec<BlockPower>,
    /// What the figures cover and leave out.
    pub scope: String,
}

/// One block for [`combine`]: its own power per instance, its instances and its parent.
pub struct Part<'a> {
    /// Block name.
    pub name: &'a str,
    /// Instances.
    pub instances: usize,
    /// Parent's index (parents come first).
    pub parent: Option<usize>,
    /// Its own netlist's power, if measured.
    pub own: Option<Watts>,
    /// The widths of its own memories kept as macros (two ports each).
    pub memory_widths: Vec<u64>,
}

/// The access power of a memory `width` bits wide with two ports each accessed `activity`
/// times per cycle at `clock_mhz`, W.
pub fn access_watts(width: u64, activity: f64, clock_mhz: f64) -> f64 {
    2.0 * activity * clock_mhz * 1e6 * width as f64 * super::sram_timing::ACCESS_PJ_PER_BIT * 1e-12
}

/// The configuration's power from each block's own figures (sub-blocks added up the
/// hierarchy, as the areas are) and the linked design's, if measured.
pub fn combine(
    parts: &[Part],
    linked: Option<Watts>,
    corner: &str,
    clock_mhz: f64,
    activity: f64,
) -> Option<Power> {
    if parts.iter().all(|p| p.own.is_none()) && linked.is_none() {
        return None;
    }
    // each block's own memory accesses, added to what OpenSTA measured
    let access: Vec<f64> = parts
        .iter()
        .map(|p| {
            p.memory_widths
                .iter()
                .map(|w| access_watts(*w, activity, clock_mhz))
                .sum()
        })
        .collect();
    let with_access = |w: Watts, a: f64| Watts {
        internal: w.internal + a,
        total: w.total + a,
        memories: w.memories + a,
        ..w
    };
    let owns: Vec<Option<Watts>> = parts
        .iter()
        .zip(&access)
        .map(|(p, a)| p.own.map(|w| with_access(w, *a)))
        .collect();
    let mut totals: Vec<Watts> = owns.iter().map(|o| o.unwrap_or_default()).collect();
    let mut all_access = access.clone();
    for i in (0..parts.len()).rev() {
        if let Some(p) = parts[i].parent {
            let per_parent = (parts[i].instances / parts[p].instances.max(1)) as f64;
            all_access[p] += all_access[i] * per_parent;
        }
    }
    let linked = linked.map(|w| with_access(w, all_access.first().copied().unwrap_or(0.0)));
    for i in (0..parts.len()).rev() {
        if let Some(p) = parts[i].parent {
            let per_parent = (parts[i].instances / parts[p].instances.max(1)) as f64;
            let child = totals[i];
            totals[p].add_scaled(&child, per_parent);
        }
    }
    let whole = linked
        .or_else(|| totals.first().copied())
        .unwrap_or_default();
    let mw = |w: f64| w * 1e3;
    Some(Power {
        corner: corner.to_string(),
        clock_mhz,
        activity,
        linked: linked.is_some(),
        total_mw: mw(whole.total),
        internal_mw: mw(whole.internal),
        switching_mw: mw(whole.switching),
        leakage_mw: mw(whole.leakage),
        sequential_mw: mw(whole.sequential),
        memories_mw: mw(whole.memories),
        energy_per_cycle_pj: whole.total / (clock_mhz * 1e6) * 1e12,
        blocks: parts
            .iter()
            .zip(&totals)
            .zip(&owns)
            .filter(|((p, _), _)| p.own.is_some())
            .map(|((p, t), o)| BlockPower {
                name: p.name.to_string(),
                instances: p.instances,
                total_mw: mw(t.total),
                own_mw: mw(o.map_or(0.0, |o| o.total)),
                memories_mw: mw(t.memories),
            })
            .collect(),
        scope: format!(
            "OpenSTA report_power at {corner}, {clock_mhz} MHz: every data net {activity} \
             transitions per cycle (duty 0.5), the clock two; cells' internal power from their \
             Liberty tables, switching power of pin and wire-load capacitance, leakage; \
             memories kept as macros: each of two ports accessed {activity} times per cycle at \
             OpenRAM's energy per access, and OpenRAM's leakage (both scaled per bit from \
             sky130_sram_1rw1r_64x256_8); no clock tree, no glitches; {}",
            if linked.is_some() {
                "the whole design linked from the blocks' netlists"
            } else {
                "the blocks' own netlists added up"
            }
        ),
    })
}

/// Lines for the text report.
pub fn summary(p: &Power) -> String {
    format!(
        "power: {:.1} mW at {} MHz, {} (activity {} per cycle): internal {:.1}, switching {:.1}, \
         leakage {:.3}; flip-flops {:.1}, memories {:.1}; {:.1} pJ per cycle\n",
        p.total_mw,
        p.clock_mhz,
        p.corner,
        p.activity,
        p.internal_mw,
        p.switching_mw,
        p.leakage_mw,
        p.sequential_mw,
        p.memories_mw,
        p.energy_per_cycle_pj
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "Group                    Internal    Switching      Leakage        Total
                            Power        Power        Power        Power
------------------------------------------------------------------------
Sequential           2.565374e-05 1.322097e-07 1.687727e-11 2.578597e-05  98.7%
Combinational        1.676361e-07 1.703709e-07 1.065336e-11 3.380177e-07   1.3%
Macro                0.000000e+00 0.000000e+00 0.000000e+00 0.000000e+00   0.0%
Pad                  0.000000e+00 0.000000e+00 0.000000e+00 0.000000e+00   0.0%
------------------------------------------------------------------------
Total                2.582138e-05 3.025806e-07 2.753063e-11 2.612398e-05 100.0%
                            98.8%         1.2%         0.0%
     Internal    Switching      Leakage        Total
        Power        Power        Power        Power
----------------------------------------------------
 4.000000e-04 0.000000e+00 1.000000e-06 4.010000e-04 mem_q
 5.990000e-04 0.000000e+00 0.000000e+00 5.990000e-04 u_a/mem
";

    #[test]
    fn reads_the_totals() {
        let w = parse(REPORT).unwrap();
        assert_eq!(w.internal, 2.582138e-05);
        assert_eq!(w.total, 2.612398e-05);
        assert_eq!(w.sequential, 2.578597e-05);
        assert!((w.memories - 1e-3).abs() < 1e-12, "{}", w.memories);
        assert!(parse("Error: no design").is_none());
    }

    #[test]
    fn blocks_add_up_the_hierarchy() {
        let w = |t: f64| Watts {
            total: t,
            ..Watts::default()
        };
        let parts = [
            Part {
                name: "top",
                instances: 1,
                parent: None,
                own: Some(w(1.0)),
                memory_widths: vec![],
            },
            Part {
                name: "hub",
                instances: 4,
                parent: Some(0),
                own: Some(w(0.5)),
                memory_widths: vec![],
            },
            Part {
                name: "hub.tlb",
                instances: 4,
                parent: Some(1),
                own: Some(w(0.25)),
                memory_widths: vec![64],
            },
        ];
        // the TLB's memory: two ports at 0.1 accesses a cycle, 100 MHz, 45.618 pJ per access
        let a = access_watts(64, 0.1, 100.0);
        assert!((a - 2.0 * 0.1 * 1e8 * 45.61834e-12).abs() < 1e-15, "{a}");
        let p = combine(&parts, None, "tt", 100.0, 0.1).unwrap();
        assert!(
            (p.total_mw - 1e3 * (4.0 * 0.75 + 1.0 + 4.0 * a)).abs() < 1e-9,
            "{}",
            p.total_mw
        );
        assert!((p.blocks[1].total_mw - 1e3 * (0.75 + a)).abs() < 1e-9);
        assert!((p.blocks[2].own_mw - 1e3 * (0.25 + a)).abs() < 1e-9);
        assert!((p.memories_mw - 1e3 * 4.0 * a).abs() < 1e-9);
        let l = combine(&parts, Some(w(3.0)), "tt", 100.0, 0.1).unwrap();
        assert!(l.linked && (l.total_mw - 1e3 * (3.0 + 4.0 * a)).abs() < 1e-9);
    }
}

//! Reading Yosys' outputs of one block (`stat -json`, a memory dump, the macro selection,
//! `ltp`) into [`Figures`], and adding blocks up the hierarchy.

use super::cells;
use super::sram;
use super::AreaError;
use serde::Serialize;
use std::collections::BTreeSet;

/// `Memory::mapped_to` of an SRAM-shaped memory.
pub const MEMORY_MODEL: &str = "memory model";

/// One inferred memory of a block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Memory {
    /// Memory name in the RTL.
    pub name: String,
    /// Words.
    pub words: u64,
    /// Bits per word.
    pub width: u64,
    /// Read ports.
    pub rd_ports: u64,
    /// Write ports.
    pub wr_ports: u64,
    /// Whether every read port is synchronous.
    pub sync_read: bool,
    /// `"memory model"` (SRAM-shaped: kept out of the synthesized cells and priced by the
    /// memory model, `price`) or `"flops"` (mapped to flip-flops and synthesized).
    pub mapped_to: &'static str,
    /// The memory model's price (SRAM-shaped memories only): the least of a macro tiling and
    /// of flip-flops, with the choice.
    pub price: Option<sram::Price>,
    /// words × width.
    pub bits: u64,
    /// SRAM model area (macros only), µm².
    pub area_um2: f64,
}

/// Area figures of one block instance.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    /// Standard cells (memories kept as macros and sub-block instances not counted).
    pub cells: u64,
    /// NAND2 equivalents (standard-cell area / 3.7536 µm²).
    pub ge: f64,
    /// Standard-cell area, µm² (memories kept as macros excluded).
    pub area_um2: f64,
    /// Of which flip-flops and latches, µm².
    pub seq_area_um2: f64,
    /// Of which combinational, µm².
    pub comb_area_um2: f64,
    /// Bits in memories kept as SRAM macros.
    pub mem_bits: u64,
    /// SRAM model area of those memories, µm².
    pub mem_area_um2: f64,
    /// Every flip-flop and latch bit (storage arrays, memories mapped to flip-flops, and the
    /// block's control and pipeline registers).
    pub flop_storage_bits: u64,
    /// Of which from inferred memories mapped to flip-flops.
    pub mem_flop_bits: u64,
}

impl Figures {
    /// `self + n × other`.
    pub fn add_scaled(&mut self, other: &Figures, n: u64) {
        let f = n as f64;
        self.cells += n * other.cells;
        self.ge += f * other.ge;
        self.area_um2 += f * other.area_um2;
        self.seq_area_um2 += f * other.seq_area_um2;
        self.comb_area_um2 += f * other.comb_area_um2;
        self.mem_bits += n * other.mem_bits;
        self.mem_area_um2 += f * other.mem_area_um2;
        self.flop_storage_bits += n * other.flop_storage_bits;
        self.mem_flop_bits += n * other.mem_flop_bits;
    }
}

/// Everything measured of one block's own logic (its sub-blocks excluded).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Own {
    /// Area figures.
    pub figures: Figures,
    /// The block's memories.
    pub memories: Vec<Memory>,
    /// Longest combinational path in cells (Yosys `ltp -noff`).
    pub levels: Option<u64>,
    /// Cell types the built-in table does not know (counted as one NAND2 each).
    pub unknown_cells: Vec<String>,
}

fn parse_err(path: &str, msg: impl Into<String>) -> AreaError {
    AreaError::Parse {
        path: path.to_string(),
        msg: msg.into(),
    }
}

/// Parses the `$mem_v2` cells of a Yosys `dump`.
pub fn parse_memories(dump: &str, kept: &BTreeSet<String>) -> Vec<Memory> {
    let mut out = Vec::new();
    let mut cur: Option<Memory> = None;
    let mut rd_clk = String::new();
    let finish = |m: Option<Memory>, rd_clk: &str, out: &mut Vec<Memory>| {
        if let Some(mut m) = m {
            m.sync_read = !rd_clk.is_empty() && rd_clk.chars().all(|c| c == '1');
            m.bits = m.words * m.width;
            if kept.contains(&m.name) {
                let p = sram::price(m.width, m.words);
                m.mapped_to = MEMORY_MODEL;
                m.area_um2 = p.area_um2;
                m.price = Some(p);
            }
            out.push(m);
        }
    };
    for l in dump.lines() {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("cell $mem_v2 ") {
            finish(cur.take(), &rd_clk, &mut out);
            rd_clk.clear();
            cur = Some(Memory {
                name: rest.trim().trim_start_matches('\\').to_string(),
                words: 0,
                width: 0,
                rd_ports: 0,
                wr_ports: 0,
                sync_read: false,
                mapped_to: "flops",
                price: None,
                bits: 0,
                area_um2: 0.0,
            });
            continue;
        }
        let Some(m) = cur.as_mut() else { continue };
        let Some(p) = t.strip_prefix("parameter \\") else {
            if t == "end" {
                finish(cur.take(), &rd_clk, &mut out);
                rd_clk.clear();
            }
            continue;
        };
        let (k, v) = p.split_once(' ').unwrap_or((p, ""));
        let num = || v.trim().parse::<u64>().unwrap_or(0);
        match k {
            "WIDTH" => m.width = num(),
            "SIZE" => m.words = num(),
            "RD_PORTS" => m.rd_ports = num(),
            "WR_PORTS" => m.wr_ports = num(),
            "RD_CLK_ENABLE" => {
                rd_clk = v.split('\'').nth(1).unwrap_or("").to_string();
            }
            _ => {}
        }
    }
    finish(cur, &rd_clk, &mut out);
    out
}

/// Memory names of a `select -list` output (`module/memory` lines).
pub fn parse_selection(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.trim().rsplit_once('/'))
        .map(|(_, m)| m.trim_start_matches('\\').to_string())
        .collect()
}

/// The longest path of a Yosys `ltp` output.
pub fn parse_ltp(text: &str) -> Option<u64> {
    let i = text.find("length=")?;
    let rest = &text[i + 7..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The one module of a `stat -json` output.
fn stat_module<'a>(
    json: &'a serde_json::Value,
    path: &str,
) -> Result<&'a serde_json::Map<String, serde_json::Value>, AreaError> {
    json.get("modules")
        .and_then(|m| m.as_object())
        .and_then(|m| m.values().next())
        .and_then(|m| m.as_object())
        .ok_or_else(|| parse_err(path, "no module in the statistics"))
}

fn by_type<'a>(
    module: &'a serde_json::Map<String, serde_json::Value>,
) -> impl Iterator<Item = (&'a str, u64)> + 'a {
    module
        .get("num_cells_by_type")
        .and_then(|m| m.as_object())
        .into_iter()
        .flat_map(|m| m.iter())
        .map(|(k, v)| (k.as_str(), v.as_u64().unwrap_or(0)))
}

/// Inputs of [`own_figures`]: the texts of one block's output files.
pub struct BlockFiles<'a> {
    /// `stat -json` after mapping (file name for errors, text).
    pub stat: (&'a str, &'a str),
    /// `stat -json` of the generic netlist before mapping.
    pub generic: (&'a str, &'a str),
    /// `dump t:$mem_v2`.
    pub memories: &'a str,
    /// `select -list @sram`.
    pub sram: &'a str,
    /// `ltp -noff`, if it ran.
    pub ltp: Option<&'a str>,
    /// Whether the stat carries Liberty areas (else the built-in table applies).
    pub liberty: bool,
    /// Module names of the design (sub-block cells are not standard cells).
    pub modules: &'a BTreeSet<String>,
}

/// The figures of one block's own logic.
pub fn own_figures(f: &BlockFiles) -> Result<Own, AreaError> {
    let stat: serde_json::Value =
        serde_json::from_str(f.stat.1).map_err(|e| parse_err(f.stat.0, e.to_string()))?;
    let generic: serde_json::Value =
        serde_json::from_str(f.generic.1).map_err(|e| parse_err(f.generic.0, e.to_string()))?;
    let sm = stat_module(&stat, f.stat.0)?;
    let gm = stat_module(&generic, f.generic.0)?;
    let kept = parse_selection(f.sram);
    let memories = parse_memories(f.memories, &kept);
    let mut own = Own {
        memories,
        levels: f.ltp.and_then(parse_ltp),
        ..Own::default()
    };
    let fig = &mut own.figures;
    let is_cell = |t: &str| t != "$mem_v2" && !f.modules.contains(t.trim_start_matches('\\'));
    fig.cells = by_type(sm)
        .filter(|(t, _)| is_cell(t))
        .map(|(_, n)| n)
        .sum();
    fig.flop_storage_bits = by_type(gm)
        .filter(|(t, _)| cells::is_state_bit(t))
        .map(|(_, n)| n)
        .sum();
    if f.liberty {
        let num = |k: &str| sm.get(k).and_then(|v| v.as_f64()).unwrap_or(0.0);
        fig.area_um2 = num("area");
        fig.seq_area_um2 = num("sequential_area");
    } else {
        let mut unknown = Vec::new();
        for (t, n) in by_type(sm).filter(|(t, _)| is_cell(t)) {
            let ge = match cells::nand2_equivalents(t) {
                Some(g) => g,
                None => {
                    unknown.push(t.to_string());
                    1.0
                }
            };
            let um2 = ge * cells::NAND2_UM2 * n as f64;
            fig.area_um2 += um2;
            if cells::is_state_bit(t) {
                fig.seq_area_um2 += um2;
            }
        }
        own.unknown_cells = unknown;
    }
    fig.comb_area_um2 = fig.area_um2 - fig.seq_area_um2;
    fig.ge = fig.area_um2 / cells::NAND2_UM2;
    for m in &own.memories {
        if m.mapped_to == MEMORY_MODEL {
            fig.mem_bits += m.bits;
            fig.mem_area_um2 += m.area_um2;
        } else {
            fig.mem_flop_bits += m.bits;
        }
    }
    Ok(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "  attribute \\src \"x\"\n  cell $mem_v2 \\mem_q\n    parameter \\WIDTH 129\n    parameter \\SIZE 128\n    parameter \\RD_PORTS 1\n    parameter \\RD_CLK_ENABLE 1'1\n    parameter \\WR_PORTS 1\n    connect \\A 1\n  end\n  cell $mem_v2 \\slot_q\n    parameter \\WIDTH 95\n    parameter \\SIZE 3\n    parameter \\RD_PORTS 4\n    parameter \\RD_CLK_ENABLE 4'0000\n    parameter \\WR_PORTS 1\n  end\n";

    #[test]
    fn memories_and_selection() {
        let kept = parse_selection("top$x.y/mem_q\n");
        let m = parse_memories(DUMP, &kept);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].words, m[0].width, m[0].bits), (128, 129, 128 * 129));
        assert!(m[0].sync_read && m[0].mapped_to == MEMORY_MODEL && m[0].area_um2 > 0.0);
        assert_eq!(
            (m[1].rd_ports, m[1].sync_read, m[1].mapped_to),
            (4, false, "flops")
        );
        assert_eq!(
            parse_ltp("Longest topological path in x (length=42):\n"),
            Some(42)
        );
    }

    #[test]
    fn figures_from_stat() {
        let stat = r#"{"modules":{"\\b":{"area":100.0,"sequential_area":40.0,"num_cells_by_type":{"$mem_v2":1,"child":1,"sky130_fd_sc_hd__nand2_1":3}}}}"#;
        let generic = r#"{"modules":{"\\b":{"num_cells_by_type":{"$_DFF_P_":5,"$_AND_":2}}}}"#;
        let modules: BTreeSet<String> = ["child".to_string()].into();
        let own = own_figures(&BlockFiles {
            stat: ("s", stat),
            generic: ("g", generic),
            memories: DUMP,
            sram: "b/mem_q\n",
            ltp: None,
            liberty: true,
            modules: &modules,
        })
        .unwrap();
        let f = &own.figures;
        assert_eq!((f.cells, f.flop_storage_bits, f.mem_flop_bits), (3, 5, 285));
        assert_eq!(f.mem_bits, 128 * 129);
        assert!((f.comb_area_um2 - 60.0).abs() < 1e-9);
        let builtin =
            r#"{"modules":{"\\b":{"num_cells_by_type":{"$_NAND_":4,"$_DFF_P_":1,"$_WEIRD_":1}}}}"#;
        let own = own_figures(&BlockFiles {
            stat: ("s", builtin),
            generic: ("g", generic),
            memories: "",
            sram: "",
            ltp: Some("(length=3)"),
            liberty: false,
            modules: &modules,
        })
        .unwrap();
        assert!(own.figures.ge > 4.0 + 5.0);
        assert_eq!(own.unknown_cells, ["$_WEIRD_"]);
        assert_eq!(own.levels, Some(3));
    }
}

//! Timing model of the memories kept as SRAM macros, so that static timing runs through them:
//! each such memory is an instance of a Liberty cell of its shape (`dysharp_sram_w<width>_a<address
//! bits>`, one registered read port and one write port, as the memory model keeps), with the
//! clock-to-output of [`CLK_TO_Q_NS`] on its read data and the setup of [`SETUP_NS`] on its
//! address, data and enable inputs.
//!
//! Sources: OpenRAM's own figures for its sky130 macros are about 2.1–2.5 ns from clock to
//! output (the `sky130_sram_2kbyte_1rw1r_32x512_8` has a 5.16 ns minimum period); an OpenRAM
//! sky130 32 × 1024 macro was designed for an access time under 2.5 ns
//! (github.com/ShonTaware/SRAM_SKY130). The upper figure is taken. The setup time is an
//! assumption: OpenRAM's datasheets give 0.103 ns from their analytical model, which their
//! README calls imprecise (and whose 0.34–0.48 ns clock to output is far below the measured
//! figure); 0.5 ns is used. One set of figures serves every corner.
//!
//! Power: each stored bit leaks [`LEAK_NW_PER_BIT`] (the 0.020078 mW of the OpenRAM Liberty of
//! `sky130_sram_1rw1r_64x256_8`, lambdapdk, for its 16,384 bits). The energy of an access,
//! [`ACCESS_PJ_PER_BIT`] per bit of width, is counted by `power` at the stated access rate:
//! OpenRAM's Liberty puts its energy on the clock pin whatever the enables (an idle macro would
//! burn as much as a busy one), and an enable tied high (a read every cycle) has no activity
//! for OpenSTA to weigh an enable pin's energy with.

use std::collections::BTreeSet;
use std::fmt::Write;

/// Clock to read data, ns.
pub const CLK_TO_Q_NS: f64 = 2.5;

/// Setup of every input to its port's clock, ns.
pub const SETUP_NS: f64 = 0.5;

/// Hold of every input after its port's clock, ns.
pub const HOLD_NS: f64 = 0.05;

/// Capacitance of every input pin, pF.
pub const PIN_CAP_PF: f64 = 0.005;

/// Capacitance of each bit of the write enable, pF: Yosys gives a memory a write enable per
/// data bit, where a macro has one per byte (OpenRAM's `wmask0`), so each bit is an eighth of
/// a pin (else one enable net would drive a pin per bit: 515 of them on the hub's payload
/// queue).
pub const WR_EN_BIT_CAP_PF: f64 = PIN_CAP_PF / 8.0;

/// Energy of one access of one port per bit of the memory's width, pJ: OpenRAM's 45.61834 pJ
/// per clock transition of a 64-bit port of `sky130_sram_1rw1r_64x256_8` (its analytical model).
pub const ACCESS_PJ_PER_BIT: f64 = 45.61834 / 64.0;

/// Leakage per stored bit, nW (OpenRAM's 0.020078 mW for 256 × 64 bits).
pub const LEAK_NW_PER_BIT: f64 = 0.020078e6 / 16384.0;

/// The cell type the netlists give a memory kept as a macro (`chtype` in the netlist script).
pub const GENERIC: &str = "dysharp_sram";

/// The shape of one memory cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shape {
    /// Bits per word.
    pub width: u64,
    /// Address bits.
    pub abits: u64,
    /// Words.
    pub words: u64,
}

impl Shape {
    /// Its Liberty cell.
    pub fn cell(&self) -> String {
        format!("{GENERIC}_w{}_a{}_d{}", self.width, self.abits, self.words)
    }
}

fn param(line: &str, name: &str) -> Option<u64> {
    let v = line.trim().strip_prefix(&format!(".{name}("))?;
    let v = v.trim_end_matches([',', ')']);
    let digits = v.rsplit_once('d').map(|x| x.1).unwrap_or(v);
    digits.parse().ok()
}

/// Rewrites every `dysharp_sram #(...) name (` instance of a netlist into an instance of its
/// shape's cell (parameters dropped, unconnected ports removed); returns the netlist and the
/// shapes used. A memory with other than one read and at most one write port is left as it is
/// (OpenSTA then reports it as an unknown cell).
pub fn cells(netlist: &str) -> (String, BTreeSet<Shape>) {
    let mut out = String::with_capacity(netlist.len());
    let mut shapes = BTreeSet::new();
    let lines: Vec<&str> = netlist.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.trim() != format!("{GENERIC} #(") {
            out.push_str(l);
            out.push('\n');
            i += 1;
            continue;
        }
        let indent = &l[..l.len() - l.trim_start().len()];
        let (mut width, mut abits, mut words, mut rd, mut wr) = (None, None, None, None, None);
        let mut j = i + 1;
        while j < lines.len() && !lines[j].trim_start().starts_with(')') {
            let t = lines[j];
            width = width.or(param(t, "WIDTH"));
            abits = abits.or(param(t, "ABITS"));
            words = words.or(param(t, "SIZE"));
            rd = rd.or(param(t, "RD_PORTS"));
            wr = wr.or(param(t, "WR_PORTS"));
            j += 1;
        }
        let (Some(width), Some(abits), Some(1), Some(0 | 1)) = (width, abits, rd, wr) else {
            for l in &lines[i..=j.min(lines.len() - 1)] {
                out.push_str(l);
                out.push('\n');
            }
            i = j + 1;
            continue;
        };
        let shape = Shape {
            width,
            abits,
            words: words.unwrap_or(1 << abits.min(32)),
        };
        shapes.insert(shape);
        // `) name (`
        let name = lines
            .get(j)
            .map(|t| {
                t.trim()
                    .trim_start_matches(')')
                    .trim()
                    .trim_end_matches('(')
            })
            .unwrap_or("")
            .trim();
        let _ = writeln!(out, "{indent}{} {name} (", shape.cell());
        // the connections, without the unconnected ones
        let mut k = j + 1;
        let mut conns: Vec<&str> = Vec::new();
        while k < lines.len() && lines[k].trim() != ");" {
            let c = lines[k].trim().trim_end_matches(',');
            if !c.ends_with("()") {
                conns.push(c);
            }
            k += 1;
        }
        for (n, c) in conns.iter().enumerate() {
            let sep = if n + 1 < conns.len() { "," } else { "" };
            let _ = writeln!(out, "{indent}  {c}{sep}");
        }
        let _ = writeln!(out, "{indent});");
        i = k + 1;
    }
    (out, shapes)
}

fn pin(lib: &mut String, name: &str, width: u64, direction: &str, cap: f64, timing: &str) {
    let (group, bus_type) = if width == 1 {
        ("pin", String::new())
    } else {
        ("bus", format!("      bus_type : {GENERIC}_bus_{width};\n"))
    };
    let cap = if direction == "input" {
        format!("      capacitance : {cap};\n")
    } else {
        String::new()
    };
    let _ = write!(
        lib,
        "    {group} ({name}) {{\n{bus_type}      direction : {direction};\n{cap}{timing}    }}\n"
    );
}

fn constraint(clock: &str, kind: &str, ns: f64) -> String {
    format!(
        "      timing () {{\n        related_pin : \"{clock}\";\n        timing_type : {kind};\n\
         \x20       rise_constraint (scalar) {{ values (\"{ns}\"); }}\n\
         \x20       fall_constraint (scalar) {{ values (\"{ns}\"); }}\n      }}\n"
    )
}

fn inputs_of(clock: &str) -> String {
    constraint(clock, "setup_rising", SETUP_NS) + &constraint(clock, "hold_rising", HOLD_NS)
}

/// A Liberty library with a cell per shape.
pub fn liberty(shapes: &BTreeSet<Shape>) -> String {
    let mut lib = String::from(
        "/* Timing model of the memories kept as SRAM macros (dysharp area, \
         src/area/sram_timing.rs). */\n\
         library (dysharp_sram) {\n  delay_model : table_lookup;\n  time_unit : \"1ns\";\n\
         \x20 voltage_unit : \"1V\";\n  current_unit : \"1mA\";\n  leakage_power_unit : \"1nW\";\n\
         \x20 capacitive_load_unit (1, pf);\n  pulling_resistance_unit : \"1kohm\";\n\
         \x20 nom_process : 1.0;\n  nom_temperature : 25.0;\n  nom_voltage : 1.8;\n\
         \x20 input_threshold_pct_rise : 50;\n  input_threshold_pct_fall : 50;\n\
         \x20 output_threshold_pct_rise : 50;\n  output_threshold_pct_fall : 50;\n\
         \x20 slew_lower_threshold_pct_rise : 20;\n  slew_upper_threshold_pct_rise : 80;\n\
         \x20 slew_lower_threshold_pct_fall : 20;\n  slew_upper_threshold_pct_fall : 80;\n\
         \x20 operating_conditions (typical) {\n    process : 1.0;\n    voltage : 1.8;\n\
         \x20   temperature : 25.0;\n  }\n  default_operating_conditions : typical;\n",
    );
    let widths: BTreeSet<u64> = shapes
        .iter()
        .flat_map(|s| [s.width, s.abits])
        .filter(|w| *w > 1)
        .collect();
    for w in widths {
        let _ = write!(
            lib,
            "  type ({GENERIC}_bus_{w}) {{\n    base_type : array;\n    data_type : bit;\n\
             \x20   bit_width : {w};\n    bit_from : {};\n    bit_to : 0;\n    downto : true;\n  }}\n",
            w - 1
        );
    }
    let read = format!(
        "      timing () {{\n        related_pin : \"RD_CLK\";\n        timing_type : rising_edge;\n\
         \x20       cell_rise (scalar) {{ values (\"{CLK_TO_Q_NS}\"); }}\n\
         \x20       cell_fall (scalar) {{ values (\"{CLK_TO_Q_NS}\"); }}\n\
         \x20       rise_transition (scalar) {{ values (\"0.1\"); }}\n\
         \x20       fall_transition (scalar) {{ values (\"0.1\"); }}\n      }}\n"
    );
    for s in shapes {
        let _ = writeln!(
            lib,
            "  cell ({}) {{\n    area : 0;\n    is_macro_cell : true;\n    cell_leakage_power : {};",
            s.cell(),
            (s.width * s.words) as f64 * LEAK_NW_PER_BIT
        );
        let clock = format!("      capacitance : {PIN_CAP_PF};\n      clock : true;\n");
        let _ = write!(
            lib,
            "    pin (RD_CLK) {{\n      direction : input;\n{clock}    }}\n\
             \x20   pin (WR_CLK) {{\n      direction : input;\n{clock}    }}\n"
        );
        let (rd, wr) = (inputs_of("RD_CLK"), inputs_of("WR_CLK"));
        pin(&mut lib, "RD_ADDR", s.abits, "input", PIN_CAP_PF, &rd);
        pin(&mut lib, "RD_EN", 1, "input", PIN_CAP_PF, &rd);
        pin(&mut lib, "RD_ARST", 1, "input", PIN_CAP_PF, "");
        pin(&mut lib, "RD_SRST", 1, "input", PIN_CAP_PF, "");
        pin(&mut lib, "RD_DATA", s.width, "output", 0.0, &read);
        pin(&mut lib, "WR_ADDR", s.abits, "input", PIN_CAP_PF, &wr);
        pin(&mut lib, "WR_DATA", s.width, "input", PIN_CAP_PF, &wr);
        pin(&mut lib, "WR_EN", s.width, "input", WR_EN_BIT_CAP_PF, &wr);
        lib.push_str("  }\n");
    }
    lib.push_str("}\n");
    lib
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_become_cells_of_their_shape() {
        let net = "  dysharp_sram #(\n    .ABITS(32'd7),\n    .MEMID(\"\\\\mem_q\"),\n    .RD_PORTS(32'd1),\n    .SIZE(32'd126),\n    .WIDTH(32'd129),\n    .WR_PORTS(32'd1)\n  ) mem_q (\n    .RD_ADDR(raddr_i),\n    .RD_ARST(1'h0),\n    .RD_CLK(clk_i),\n    .RD_DATA(rdata_q),\n    .WR_EN()\n  );\n  x y (\n  );\n";
        let (text, shapes) = cells(net);
        assert_eq!(
            shapes.iter().copied().collect::<Vec<_>>(),
            vec![Shape {
                width: 129,
                abits: 7,
                words: 126
            }]
        );
        assert!(
            text.starts_with("  dysharp_sram_w129_a7_d126 mem_q (\n"),
            "{text}"
        );
        assert!(
            text.contains("    .RD_DATA(rdata_q)\n  );\n  x y (\n"),
            "{text}"
        );
        assert!(!text.contains("WR_EN") && !text.contains("MEMID"), "{text}");
        let lib = liberty(&shapes);
        assert!(lib.contains("cell (dysharp_sram_w129_a7_d126)"));
        assert!(lib.contains("is_macro_cell : true;") && lib.contains("cell_leakage_power"));
        assert!(lib.contains("bit_width : 129;") && lib.contains("bit_width : 7;"));
        assert_eq!(lib.matches('{').count(), lib.matches('}').count());
    }
}

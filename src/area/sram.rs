//! The memory model of `dysharp area`: which inferred memories are kept out of the standard
//! cells, and their price as the least of a tiling of real sky130 SRAM macros and of
//! flip-flops.
//!
//! A memory is SRAM-shaped when it has one read port and at most one write port (1R1W, or
//! 1RW when the addresses are shared), its read is synchronous (a registered read port), and it
//! has at least [`MIN_WORDS`] words. Every other memory (more ports, asynchronous read, or a
//! handful of words) is mapped to flip-flops and synthesized.
//!
//! Price of an SRAM-shaped memory of `width` × `words`: for each macro of [`MACROS`] (every one
//! has a read-write and a read port, so it serves a write and a read in the same cycle, as a
//! queue needs), `ceil(width / macro width) × ceil(words / macro words)` macros; the cheapest
//! tiling, unless flip-flops ([`FLOP_UM2_PER_BIT`] per bit) cost less. The single-port 2 KB
//! macro (`sky130_sram_2kbyte_1rw_32x512_8`, 157,787 µm², 9.6 µm²/bit) is not in the table: one
//! port cannot write and read in one cycle.

/// One SRAM macro.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Macro {
    /// Macro name.
    pub name: &'static str,
    /// Bits per word.
    pub width: u64,
    /// Words.
    pub words: u64,
    /// Area, µm².
    pub area_um2: f64,
    /// Where the area comes from.
    pub source: &'static str,
}

/// The sky130 SRAM macros of OpenRAM with a read-write and a read port.
pub const MACROS: [Macro; 4] = [
    Macro {
        name: "sky130_sram_1kbyte_1rw1r_32x256_8",
        width: 32,
        words: 256,
        area_um2: 479.78 * 397.5,
        source: "VLSIDA/sky130_sram_macros, its LEF: SIZE 479.78 BY 397.5 (datasheet: 190,713 µm²)",
    },
    Macro {
        name: "sky130_sram_1kbyte_1rw1r_8x1024_8",
        width: 8,
        words: 1024,
        area_um2: 455.3 * 446.46,
        source: "VLSIDA/sky130_sram_macros, its LEF: SIZE 455.3 BY 446.46",
    },
    Macro {
        name: "sky130_sram_2kbyte_1rw1r_32x512_8",
        width: 32,
        words: 512,
        area_um2: 683.1 * 416.54,
        source: "VLSIDA/sky130_sram_macros, its LEF: SIZE 683.1 BY 416.54 (datasheet: 284,538 µm²)",
    },
    Macro {
        name: "sky130_sram_1rw1r_64x256_8",
        width: 64,
        words: 256,
        area_um2: 419_462.7,
        source: "siliconcompiler/lambdapdk sky130sram, its Liberty: area 419,462.7",
    },
];

/// Flip-flop storage per bit of a 1R1W memory with a registered read, µm²: the bit's
/// sky130_fd_sc_hd__dfxtp_1 (20.02) with its write-enable mux2_1 (11.26), and its share of
/// the read multiplexer tree (one mux2_1 per bit, 11.26); the write decoder is left out.
pub const FLOP_UM2_PER_BIT: f64 = 20.0192 + 11.2608 + 11.2608;

/// Fewest words of a memory kept out of the standard cells.
pub const MIN_WORDS: u64 = 16;

/// How one memory is priced.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Price {
    /// The choice: a macro name, or `flip-flops`.
    pub choice: String,
    /// Macros of the choice (0 for flip-flops).
    pub macros: u64,
    /// Area of the choice, µm².
    pub area_um2: f64,
    /// The cheapest macro tiling, µm².
    pub tiling_um2: f64,
    /// Its macro and count.
    pub tiling: String,
    /// Flip-flops, µm².
    pub flops_um2: f64,
}

/// The price of a `width` × `words` memory.
pub fn price(width: u64, words: u64) -> Price {
    let tiles = |m: &Macro| width.div_ceil(m.width) * words.div_ceil(m.words);
    let best = MACROS
        .iter()
        .min_by(|a, b| (tiles(a) as f64 * a.area_um2).total_cmp(&(tiles(b) as f64 * b.area_um2)))
        .expect("macros");
    let n = tiles(best);
    let tiling_um2 = n as f64 * best.area_um2;
    let flops_um2 = (width * words) as f64 * FLOP_UM2_PER_BIT;
    let (choice, macros, area_um2) = if flops_um2 < tiling_um2 {
        ("flip-flops".to_string(), 0, flops_um2)
    } else {
        (best.name.to_string(), n, tiling_um2)
    };
    Price {
        choice,
        macros,
        area_um2,
        tiling_um2,
        tiling: format!("{n} x {}", best.name),
        flops_um2,
    }
}

/// The Yosys selection (set `sram`) of the memories kept as macros.
///
/// `RD_CLK_ENABLE` of a one-read-port memory is the 1-bit constant `1'1`: Yosys compares
/// parameter values with their width, so `r:RD_CLK_ENABLE=1` (a 32-bit 1) never matches.
pub fn select_macros() -> String {
    format!(
        "select -set sram t:$mem_v2 r:RD_PORTS=1 %i r:WR_PORTS<=1 %i r:RD_CLK_ENABLE=1'1 %i r:SIZE>={MIN_WORDS} %i"
    )
}

/// The empty selection (set `sram`): every memory mapped to flip-flops.
pub fn select_none() -> String {
    "select -set sram t:$mem_v2 %n t:$mem_v2 %i".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_are_priced_by_tiling_or_flops() {
        // a crosspoint queue of 126 x 129: five 32 x 256 macros (0.95 mm²) cost more than
        // flip-flops (0.69 mm²)
        let q = price(129, 126);
        assert_eq!(q.tiling, "5 x sky130_sram_1kbyte_1rw1r_32x256_8");
        assert_eq!(q.choice, "flip-flops");
        assert!((q.area_um2 - 129.0 * 126.0 * FLOP_UM2_PER_BIT).abs() < 1e-6);
        // a deep, wide table: macros
        let t = price(128, 4096);
        assert_eq!(t.choice, "sky130_sram_2kbyte_1rw1r_32x512_8");
        assert_eq!(t.macros, 4 * 8);
        assert!(t.area_um2 < t.flops_um2);
        // the 2 KB macro's own shape is one macro
        assert_eq!(price(32, 512).macros, 1);
    }
}

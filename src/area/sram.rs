//! The SRAM model of `dysharp area`: which inferred memories are kept as macros, and their area.
//!
//! A memory is SRAM-shaped when it has one read port and at most one write port (1R1W, or
//! 1RW when the addresses are shared), its read is synchronous (a registered read port), and it
//! has at least [`MIN_WORDS`] words. Every other memory (more ports, asynchronous read, or a
//! handful of words) is mapped to flip-flops.
//!
//! Area: per bit, from the densest open sky130 macro, OpenRAM's
//! `sky130_sram_2kbyte_1rw1r_32x512_8` (repository VLSIDA/sky130_sram_macros; its LEF says
//! `SIZE 683.1 BY 416.54`, i.e. 284,538 µm² for 512 × 32 = 16,384 bits, 17.37 µm² per bit;
//! ports 1RW + 1R). Scaling per bit is optimistic for small memories (a macro's periphery does
//! not shrink with it) and pessimistic for a compiler's larger macros.

/// Macro the per-bit figure comes from.
pub const MACRO: &str = "sky130_sram_2kbyte_1rw1r_32x512_8";
/// Where the figure comes from.
pub const SOURCE: &str =
    "OpenRAM macro LEF (VLSIDA/sky130_sram_macros): SIZE 683.1 x 416.54 um for 512 x 32 bits";
/// Macro area in µm².
pub const MACRO_UM2: f64 = 683.1 * 416.54;
/// Macro capacity in bits.
pub const MACRO_BITS: f64 = 16384.0;
/// Fewest words of a memory kept as a macro.
pub const MIN_WORDS: u64 = 16;

/// Area per bit in µm².
pub fn um2_per_bit() -> f64 {
    MACRO_UM2 / MACRO_BITS
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

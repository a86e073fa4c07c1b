//! The built-in cell table: NAND2 equivalents of Yosys' internal gates, used when no Liberty
//! file is given (`dysharp area` without `--liberty`).
//!
//! Each weight is the area of the sky130_fd_sc_hd cell that implements the gate (the `area`
//! attribute of sky130_fd_sc_hd__tt_025C_1v80.lib) divided by the area of
//! sky130_fd_sc_hd__nand2_1 (3.7536 µm²). Flip-flops with an enable or a synchronous reset
//! count the flip-flop plus the mux or gate that implements it.

/// Area of sky130_fd_sc_hd__nand2_1 in µm²: one NAND2 equivalent.
pub const NAND2_UM2: f64 = 3.7536;

/// The cell of the table and its weight in NAND2 equivalents, if the gate is known.
pub fn nand2_equivalents(cell: &str) -> Option<f64> {
    // (gate, sky130 cell(s), area in µm²)
    let um2 = match cell {
        "$_NOT_" | "$_BUF_" => 3.7536,            // inv_1, buf_1
        "$_NAND_" | "$_NOR_" => 3.7536,           // nand2_1, nor2_1
        "$_AND_" | "$_OR_" => 6.2560,             // and2_0, or2_0
        "$_ANDNOT_" | "$_ORNOT_" => 7.5072,       // and2b_1, or2b_1
        "$_XOR_" | "$_XNOR_" => 8.7584,           // xor2_1, xnor2_1
        "$_MUX_" => 11.2608,                      // mux2_1
        "$_NMUX_" => 10.0096,                     // mux2i_1
        "$_AOI3_" | "$_OAI3_" => 5.0048,          // a21oi_1, o21ai_0
        "$_AOI4_" => 7.5072,                      // a22oi_1
        "$_OAI4_" => 6.2560,                      // o22ai_1
        "$_DFF_P_" | "$_DFF_N_" => 20.0192,       // dfxtp_1
        "$_DLATCH_P_" | "$_DLATCH_N_" => 15.0144, // dlxtp_1
        // asynchronous reset ($_DFF_PN0_: reset value 0) or set (value 1)
        c if c.starts_with("$_DFF_") && c.as_bytes().get(8) == Some(&b'1') => 26.2752, // dfstp_1
        c if c.starts_with("$_DFF_") => 25.0240,                                       // dfrtp_1
        c if c.starts_with("$_DFFE_") && c.len() == 10 => 30.0288,                     // edfxtp_1
        c if c.starts_with("$_DFFE_") && c.as_bytes().get(9) == Some(&b'1') => 37.5360, // dfstp_1 + mux2_1
        c if c.starts_with("$_DFFE_") => 36.2848, // dfrtp_1 + mux2_1
        c if c.starts_with("$_SDFF_") => 26.2752, // dfxtp_1 + and2_0
        c if c.starts_with("$_SDFFE_") || c.starts_with("$_SDFFCE_") => 37.5360, // dfxtp_1 + mux2_1 + and2_0
        c if c.starts_with("$_DFFSR") || c.starts_with("$_ALDFF") => 32.5312,    // dfbbp_1
        c if c.starts_with("$_DLATCH") => 15.0144,
        _ => return None,
    };
    Some(um2 / NAND2_UM2)
}

/// Whether a Yosys internal cell type is one bit of state (a flip-flop or latch).
pub fn is_state_bit(cell: &str) -> bool {
    cell.starts_with("$_") && (cell.contains("DFF") || cell.contains("DLATCH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        assert_eq!(nand2_equivalents("$_NAND_"), Some(1.0));
        assert!(nand2_equivalents("$_DFF_P_").unwrap() > 5.0);
        assert!(
            nand2_equivalents("$_DFFE_PN0P_").unwrap() > nand2_equivalents("$_DFFE_PP_").unwrap()
        );
        assert_eq!(nand2_equivalents("$mem_v2"), None);
        assert!(is_state_bit("$_SDFFE_PP0P_") && !is_state_bit("$_AND_"));
        // the Liberty's areas: o22ai_1 6.256, dfrtp_1 25.024, dfstp_1 26.2752 µm²
        let um2 = |c: &str| nand2_equivalents(c).unwrap() * NAND2_UM2;
        assert!((um2("$_OAI4_") - 6.2560).abs() < 1e-9);
        assert!((um2("$_DFF_PN0_") - 25.0240).abs() < 1e-9);
        assert!((um2("$_DFF_PN1_") - 26.2752).abs() < 1e-9);
        assert!((um2("$_DFFE_PN0P_") - 36.2848).abs() < 1e-9);
        assert!((um2("$_DFFE_PN1P_") - 37.5360).abs() < 1e-9);
    }
}

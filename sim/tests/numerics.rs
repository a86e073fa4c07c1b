//! Tests of the reduction numerics (`dysharp_sim::numerics`).
//!
//! Expected values are worked out by hand in the comments, or computed by an independent
//! reference in this file (`ref_round`, an integer-arithmetic rounding of an f64 to a binary
//! format) and by the `half` crate's widening; never from the code under test.

use dysharp_sim::numerics::{
    canonical_nan, combine_f32, from_f32, is_nan, lane, lane_count, reduce_lanes, reduce_values,
    round_f32, set_lane, to_f32, AccMode, Accumulator, DType, NumericsError, ReduceOp,
    ReduceParams, CANONICAL_NAN_BF16, CANONICAL_NAN_F16, CANONICAL_NAN_F32,
};
use proptest::prelude::*;

use AccMode::{Native, F32 as AccF32};
use DType::{Bf16, F16, F32};
use ReduceOp::{Add, Max, Min};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Reduces one lane per input through the payload API (`reduce_lanes`), checks that the
/// per-lane reference (`reduce_values`) and a hand-driven `Accumulator` agree, and returns the
/// bits.
fn red(dt: DType, op: ReduceOp, acc: AccMode, vals: &[u32]) -> u32 {
    let payloads: Vec<Vec<u8>> = vals
        .iter()
        .map(|&v| {
            let mut p = vec![0u8; dt.bytes()];
            set_lane(dt, &mut p, 0, v).unwrap();
            p
        })
        .collect();
    let inputs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    let mut out = vec![0u8; dt.bytes()];
    reduce_lanes(dt, op, acc, &inputs, &mut out).unwrap();
    let fast = lane(dt, &out, 0).unwrap();

    let reference = reduce_values(dt, op, acc, vals).unwrap();
    assert_eq!(
        fast, reference,
        "reduce_lanes and reduce_values disagree for {dt} {op} {acc} {vals:x?}"
    );

    let mut a = Accumulator::new(1);
    for p in &payloads {
        a.add_input(dt, op, acc, p).unwrap();
    }
    let mut out2 = vec![0u8; dt.bytes()];
    a.finish(dt, &mut out2).unwrap();
    assert_eq!(out, out2);
    fast
}

/// `red` in both accumulation modes, asserting they agree (true whenever at most two inputs are
/// involved, or for f32).
fn red_both(dt: DType, op: ReduceOp, vals: &[u32]) -> u32 {
    let a = red(dt, op, AccF32, vals);
    let b = red(dt, op, Native, vals);
    assert_eq!(a, b, "modes disagree for {dt} {op} {vals:x?}");
    a
}

/// Independent reference: rounds the f64 `x` (not NaN) to the binary format with `p` significand
/// bits (hidden bit included) and `ebits` exponent bits, round to nearest even, with gradual
/// underflow and overflow to infinity. Returns the bit pattern. Uses only integer arithmetic on
/// the exact decomposition |x| = m * 2^e.
fn ref_round(x: f64, p: u32, ebits: u32) -> u32 {
    assert!(!x.is_nan());
    let fbits = p - 1;
    let emax: i32 = (1 << (ebits - 1)) - 1;
    let emin: i32 = 1 - emax;
    let sign = if x.is_sign_negative() {
        1u32 << (ebits + fbits)
    } else {
        0
    };
    let inf = ((1u32 << ebits) - 1) << fbits;
    if x.is_infinite() {
        return sign | inf;
    }
    if x == 0.0 {
        return sign;
    }
    let b = x.abs().to_bits();
    let bexp = (b >> 52) as i32;
    let frac = b & ((1u64 << 52) - 1);
    let (m, e) = if bexp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), bexp - 1075)
    };
    // |x| = m * 2^e; position of the leading one:
    let lead = 63 - m.leading_zeros() as i32 + e;
    // Quantum (weight of the last kept bit) of the target format at this magnitude.
    let mut q = lead.max(emin) - fbits as i32;
    let mut n: u128 = if e >= q {
        (m as u128) << (e - q)
    } else {
        let s = (q - e) as u32;
        if s >= 100 {
            0 // m < 2^53 is far below half a quantum
        } else {
            let m = m as u128;
            let kept = m >> s;
            let rem = m & ((1u128 << s) - 1);
            let half = 1u128 << (s - 1);
            if rem > half || (rem == half && kept & 1 == 1) {
                kept + 1
            } else {
                kept
            }
        }
    };
    if n == 0 {
        return sign;
    }
    if n == 1u128 << p {
        n >>= 1;
        q += 1;
    }
    if n < (1u128 << fbits) {
        // Subnormal (q == emin - fbits).
        return sign | n as u32;
    }
    let exp = q + fbits as i32;
    if exp > emax {
        return sign | inf;
    }
    sign | (((exp + emax) as u32) << fbits) | (n as u32 - (1u32 << fbits))
}

fn ref_round_dt(dt: DType, x: f64) -> u32 {
    match dt {
        Bf16 => ref_round(x, 8, 8),
        F16 => ref_round(x, 11, 5),
        F32 => ref_round(x, 24, 8),
    }
}

/// Independent widening to f64 (via the `half` crate for 16-bit types).
fn ref_to_f64(dt: DType, bits: u32) -> f64 {
    match dt {
        Bf16 => half::bf16::from_bits(bits as u16).to_f64(),
        F16 => half::f16::from_bits(bits as u16).to_f64(),
        F32 => f32::from_bits(bits) as f64,
    }
}

#[test]
fn ref_round_self_check() {
    // A few values of the reference checked by hand, so that the properties below rest on it.
    assert_eq!(ref_round(1.0, 8, 8), 0x3F80);
    assert_eq!(ref_round(1.0, 11, 5), 0x3C00);
    assert_eq!(ref_round(65504.0, 11, 5), 0x7BFF);
    assert_eq!(ref_round(65520.0, 11, 5), 0x7C00);
    assert_eq!(ref_round(2f64.powi(-24), 11, 5), 0x0001);
    assert_eq!(ref_round(2f64.powi(-25), 11, 5), 0x0000);
    assert_eq!(ref_round(-1.5 * 2f64.powi(-24), 11, 5), 0x8002);
    assert_eq!(ref_round(2f64.powi(-133), 8, 8), 0x0001);
    assert_eq!(ref_round(1.0 + 2f64.powi(-8), 8, 8), 0x3F80);
    assert_eq!(
        ref_round(1.0 + 2f64.powi(-8) + 2f64.powi(-40), 8, 8),
        0x3F81
    );
    assert_eq!(ref_round(f64::MAX, 24, 8), 0x7F80_0000);
}

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

#[test]
fn enum_codes_names_parse_serde() {
    for (dt, code, name, bytes) in [(Bf16, 0, "bf16", 2), (F16, 1, "f16", 2), (F32, 2, "f32", 4)] {
        assert_eq!(dt.code(), code);
        assert_eq!(DType::from_code(code), Some(dt));
        assert_eq!(dt.name(), name);
        assert_eq!(dt.to_string(), name);
        assert_eq!(dt.bytes(), bytes);
        assert_eq!(name.parse::<DType>().unwrap(), dt);
        assert_eq!(serde_json::to_string(&dt).unwrap(), format!("\"{name}\""));
        assert_eq!(
            serde_json::from_str::<DType>(&format!("\"{name}\"")).unwrap(),
            dt
        );
    }
    assert_eq!(DType::from_code(3), None);
    assert_eq!(DType::from_code(255), None);
    assert_eq!("BF16".parse::<DType>().unwrap(), Bf16);

    for (op, code, name) in [(Add, 0, "add"), (Min, 1, "min"), (Max, 2, "max")] {
        assert_eq!(op.code(), code);
        assert_eq!(ReduceOp::from_code(code), Some(op));
        assert_eq!(op.name(), name);
        assert_eq!(name.parse::<ReduceOp>().unwrap(), op);
        assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{name}\""));
    }
    assert_eq!(ReduceOp::from_code(3), None);

    for (m, code, name) in [(AccF32, 0, "f32"), (Native, 1, "native")] {
        assert_eq!(m.code(), code);
        assert_eq!(AccMode::from_code(code), Some(m));
        assert_eq!(m.name(), name);
        assert_eq!(name.parse::<AccMode>().unwrap(), m);
        assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{name}\""));
    }
    assert_eq!(AccMode::from_code(2), None);
    assert_eq!(AccMode::default(), AccF32);

    let err = "fp8".parse::<DType>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown dtype \"fp8\" (expected one of: bf16, f16, f32)"
    );
    assert!("sum".parse::<ReduceOp>().is_err());
    assert!("".parse::<AccMode>().is_err());
    assert!(serde_json::from_str::<DType>("\"F64\"").is_err());
}

// ---------------------------------------------------------------------------------------------
// Conversions, hand-checked
// ---------------------------------------------------------------------------------------------

#[test]
fn canonical_nans() {
    assert_eq!(canonical_nan(Bf16), 0x7FC0);
    assert_eq!(canonical_nan(F16), 0x7E00);
    assert_eq!(canonical_nan(F32), 0x7FC0_0000);
    assert_eq!(CANONICAL_NAN_BF16, 0x7FC0);
    assert_eq!(CANONICAL_NAN_F16, 0x7E00);
    assert_eq!(CANONICAL_NAN_F32, 0x7FC0_0000);
    for dt in DType::ALL {
        assert!(is_nan(dt, canonical_nan(dt)));
        assert!(to_f32(dt, canonical_nan(dt)).is_nan());
    }
    assert!(!is_nan(Bf16, 0x7F80));
    assert!(is_nan(Bf16, 0xFF81));
    assert!(!is_nan(F16, 0xFC00));
    assert!(is_nan(F16, 0xFC01));
    assert!(!is_nan(F32, 0xFF80_0000));
    assert!(is_nan(F32, 0xFF80_0001));
}

#[test]
fn bf16_rounding_ties_to_even() {
    // 0x3F80_8000: kept part 0x3F80 (1.0), discarded 0x8000 = exactly half; 0x3F80 is even.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x3F80_8000)), 0x3F80);
    // 0x3F81_8000: tie between 0x3F81 (odd) and 0x3F82 (even) -> 0x3F82.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x3F81_8000)), 0x3F82);
    // Just above / below half.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x3F80_8001)), 0x3F81);
    assert_eq!(from_f32(Bf16, f32::from_bits(0x3F80_7FFF)), 0x3F80);
    // Negative values round by magnitude.
    assert_eq!(from_f32(Bf16, f32::from_bits(0xBF81_8000)), 0xBF82);
    assert_eq!(from_f32(Bf16, f32::from_bits(0xBF80_8000)), 0xBF80);
    // Carry through the fraction into the exponent: 0x3FFF_FFFF (just below 2) -> 2.0 = 0x4000.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x3FFF_FFFF)), 0x4000);
}

#[test]
fn bf16_overflow_and_subnormals() {
    // f32 max 0x7F7F_FFFF: kept 0x7F7F, discarded 0xFFFF > half -> carry
    // into the exponent -> 0x7F80 = +inf.
    assert_eq!(from_f32(Bf16, f32::MAX), 0x7F80);
    assert_eq!(from_f32(Bf16, f32::MIN), 0xFF80);
    // 0x7F7F_8000: exactly halfway between bf16 max 0x7F7F (odd) and "0x7F80" (even) -> inf.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x7F7F_8000)), 0x7F80);
    assert_eq!(from_f32(Bf16, f32::from_bits(0x7F7F_7FFF)), 0x7F7F);
    assert_eq!(from_f32(Bf16, f32::INFINITY), 0x7F80);
    assert_eq!(from_f32(Bf16, f32::NEG_INFINITY), 0xFF80);
    // Subnormals (bf16 has f32's exponent range; smallest bf16 subnormal 0x0001 = 2^-133 =
    // f32 0x0001_0000).
    assert_eq!(to_f32(Bf16, 0x0001), f32::from_bits(0x0001_0000));
    assert_eq!(to_f32(Bf16, 0x0001) as f64, 2f64.powi(-133));
    assert_eq!(to_f32(Bf16, 0x8001) as f64, -(2f64.powi(-133)));
    // f32 2^-149 is far below half of 2^-133 -> +0.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x0000_0001)), 0x0000);
    assert_eq!(from_f32(Bf16, f32::from_bits(0x8000_0001)), 0x8000);
    // 0x0000_8000 = half of the smallest subnormal: tie -> even 0.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x0000_8000)), 0x0000);
    assert_eq!(from_f32(Bf16, f32::from_bits(0x0000_8001)), 0x0001);
    // 0x0001_8000: tie between 0x0001 (odd) and 0x0002 -> 0x0002.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x0001_8000)), 0x0002);
    // Largest f32 subnormal 0x007F_FFFF rounds up to the smallest bf16 normal 0x0080 = 2^-126.
    assert_eq!(from_f32(Bf16, f32::from_bits(0x007F_FFFF)), 0x0080);
    // Zeros keep their sign.
    assert_eq!(from_f32(Bf16, 0.0), 0x0000);
    assert_eq!(from_f32(Bf16, -0.0), 0x8000);
}

#[test]
fn f16_rounding_ties_to_even() {
    // 1.0 = f32 0x3F80_0000 = f16 0x3C00. The f16 ulp at 1 is 2^-10, i.e. 13 discarded f32
    // fraction bits; half an ulp (2^-11) is f32 fraction bit 12 = 0x1000.
    assert_eq!(from_f32(F16, 1.0), 0x3C00);
    // 1 + 2^-11: tie between 0x3C00 (even) and 0x3C01 -> 0x3C00.
    assert_eq!(from_f32(F16, f32::from_bits(0x3F80_1000)), 0x3C00);
    // 1 + 3 * 2^-11: tie between 0x3C01 (odd) and 0x3C02 -> 0x3C02.
    assert_eq!(from_f32(F16, f32::from_bits(0x3F80_3000)), 0x3C02);
    // 1 + 2^-11 + 2^-23: above half -> 0x3C01.
    assert_eq!(from_f32(F16, f32::from_bits(0x3F80_1001)), 0x3C01);
    assert_eq!(from_f32(F16, f32::from_bits(0x3F80_0FFF)), 0x3C00);
    assert_eq!(from_f32(F16, f32::from_bits(0xBF80_3000)), 0xBC02);
    // 0x3FFF_F000: fraction 0x7F_F000 = 2^-1 + ... + 2^-11 = 1 - 2^-11, so the value is
    // 2 - 2^-11, halfway between 2 - 2^-10 (0x3FFF, odd) and 2.0 (0x4000, even) -> 0x4000: the
    // carry out of the fraction increments the exponent.
    assert_eq!(from_f32(F16, f32::from_bits(0x3FFF_F000)), 0x4000);
    // Just below that tie -> 0x3FFF.
    assert_eq!(from_f32(F16, f32::from_bits(0x3FFF_EFFF)), 0x3FFF);
}

#[test]
fn f16_overflow() {
    // 65504 = 1.1111111111b * 2^15: exponent field 15 + 127 = 142, fraction 0x7FE000 ->
    // f32 0x477F_E000, f16 0x7BFF (largest finite).
    assert_eq!(f32::from_bits(0x477F_E000), 65504.0);
    assert_eq!(from_f32(F16, 65504.0), 0x7BFF);
    assert_eq!(to_f32(F16, 0x7BFF), 65504.0);
    // 65520 = 65504 + 16 = halfway between 65504 (fraction 0x3FF, odd) and 65536 (even, beyond
    // range) -> +inf.
    assert_eq!(from_f32(F16, 65520.0), 0x7C00);
    assert_eq!(from_f32(F16, -65520.0), 0xFC00);
    // 65519.996 (just below the tie) -> 65504.
    assert_eq!(from_f32(F16, f32::from_bits(0x477F_EFFF)), 0x7BFF);
    assert_eq!(from_f32(F16, 65519.0), 0x7BFF);
    assert_eq!(from_f32(F16, 1.0e6), 0x7C00);
    assert_eq!(from_f32(F16, f32::MAX), 0x7C00);
    assert_eq!(from_f32(F16, f32::INFINITY), 0x7C00);
    assert_eq!(from_f32(F16, f32::NEG_INFINITY), 0xFC00);
}

#[test]
fn f16_subnormals() {
    // Smallest f16 subnormal 0x0001 = 2^-24 = f32 exponent field 103 (0x67) -> 0x3380_0000.
    assert_eq!(to_f32(F16, 0x0001).to_bits(), 0x3380_0000);
    assert_eq!(to_f32(F16, 0x8001).to_bits(), 0xB380_0000);
    // Largest subnormal 0x03FF = 1023 * 2^-24 = 1.111111111b * 2^-15: exponent field 112 (0x70),
    // fraction = top 9 bits set = 0x7F_C000 -> 0x387F_C000.
    assert_eq!(to_f32(F16, 0x03FF).to_bits(), 0x387F_C000);
    // 0x0200 = 512 * 2^-24 = 2^-15 -> exponent field 112, fraction 0 -> 0x3800_0000.
    assert_eq!(to_f32(F16, 0x0200).to_bits(), 0x3800_0000);
    // Smallest normal 0x0400 = 2^-14 -> 0x3880_0000.
    assert_eq!(to_f32(F16, 0x0400).to_bits(), 0x3880_0000);
    // And back.
    assert_eq!(from_f32(F16, f32::from_bits(0x3380_0000)), 0x0001);
    assert_eq!(from_f32(F16, f32::from_bits(0x387F_C000)), 0x03FF);
    // 2^-25 (0x3300_0000) is half the smallest subnormal: tie -> 0 (even).
    assert_eq!(from_f32(F16, f32::from_bits(0x3300_0000)), 0x0000);
    assert_eq!(from_f32(F16, f32::from_bits(0xB300_0000)), 0x8000);
    // Just above 2^-25 -> 0x0001.
    assert_eq!(from_f32(F16, f32::from_bits(0x3300_0001)), 0x0001);
    // 1.5 * 2^-24 (0x33C0_0000): tie between 1 and 2 units -> 2 (even) = 0x0002.
    assert_eq!(from_f32(F16, f32::from_bits(0x33C0_0000)), 0x0002);
    // 2.5 * 2^-24 = 1.25 * 2^-23 (0x3420_0000): tie between 2 and 3 units -> 0x0002.
    assert_eq!(from_f32(F16, f32::from_bits(0x3420_0000)), 0x0002);
    // Normal f32 rounding to the f16 subnormal/normal boundary:
    // 2^-14 - 2^-25 = 1.1111111111b * 2^-15 -> f32 0x387F_E000, halfway between the largest
    // subnormal 0x03FF (odd) and the smallest normal 0x0400 -> 0x0400.
    assert_eq!(from_f32(F16, f32::from_bits(0x387F_E000)), 0x0400);
    // f32 subnormals and tiny normals -> signed zero.
    assert_eq!(from_f32(F16, f32::from_bits(0x0000_0001)), 0x0000);
    assert_eq!(from_f32(F16, f32::from_bits(0x8080_0000)), 0x8000);
    assert_eq!(from_f32(F16, -0.0), 0x8000);
}

#[test]
fn f32_passthrough() {
    assert_eq!(from_f32(F32, 1.0), 0x3F80_0000);
    assert_eq!(from_f32(F32, f32::from_bits(0x0000_0001)), 0x0000_0001);
    assert_eq!(from_f32(F32, -0.0), 0x8000_0000);
    assert_eq!(from_f32(F32, f32::from_bits(0xFFFF_FFFF)), 0x7FC0_0000);
    assert_eq!(from_f32(F32, f32::from_bits(0x7F80_0001)), 0x7FC0_0000);
    assert_eq!(to_f32(F32, 0x0000_0001).to_bits(), 0x0000_0001);
    // round_f32 is to_f32 . from_f32.
    assert_eq!(
        round_f32(Bf16, f32::from_bits(0x3F81_8000)).to_bits(),
        0x3F82_0000
    );
    assert_eq!(round_f32(F16, 65520.0), f32::INFINITY);
    assert_eq!(round_f32(F32, f32::NAN).to_bits(), 0x7FC0_0000);
}

// ---------------------------------------------------------------------------------------------
// Reductions, hand-checked
// ---------------------------------------------------------------------------------------------

#[test]
fn add_ties_to_even() {
    // bf16: 1.0 (0x3F80) + 2^-8 (0x3B80; exponent field 127 - 8 = 119 = 0x77): the bf16 ulp at 1
    // is 2^-7, so 1 + 2^-8 is a tie -> even 0x3F80.
    assert_eq!(red_both(Bf16, Add, &[0x3F80, 0x3B80]), 0x3F80);
    // (1 + 2^-7) 0x3F81 + 2^-8 = 1 + 3 * 2^-8: tie between 0x3F81 and 0x3F82 -> 0x3F82.
    assert_eq!(red_both(Bf16, Add, &[0x3F81, 0x3B80]), 0x3F82);
    // f16: 1.0 (0x3C00) + 2^-11 (exponent field 15 - 11 = 4 -> 0x1000): tie -> 0x3C00.
    assert_eq!(red_both(F16, Add, &[0x3C00, 0x1000]), 0x3C00);
    // 0x3C01 + 2^-11: tie between 0x3C01 and 0x3C02 -> 0x3C02.
    assert_eq!(red_both(F16, Add, &[0x3C01, 0x1000]), 0x3C02);
    // f32: 1 + 2^-24 (0x3380_0000) is a tie -> 1.0.
    assert_eq!(red_both(F32, Add, &[0x3F80_0000, 0x3380_0000]), 0x3F80_0000);
    // (1 + 2^-23) + 2^-24: tie between fraction 1 (odd) and 2 -> 0x3F80_0002.
    assert_eq!(red_both(F32, Add, &[0x3F80_0001, 0x3380_0000]), 0x3F80_0002);
    // Exact sums: 1 + 1 = 2 in every type.
    assert_eq!(red_both(Bf16, Add, &[0x3F80, 0x3F80]), 0x4000);
    assert_eq!(red_both(F16, Add, &[0x3C00, 0x3C00]), 0x4000);
    assert_eq!(red_both(F32, Add, &[0x3F80_0000, 0x3F80_0000]), 0x4000_0000);
}

#[test]
fn add_subnormals() {
    // Smallest subnormal + itself = twice it, exactly, in every type.
    assert_eq!(red_both(Bf16, Add, &[0x0001, 0x0001]), 0x0002);
    assert_eq!(red_both(F16, Add, &[0x0001, 0x0001]), 0x0002);
    assert_eq!(red_both(F32, Add, &[0x0000_0001, 0x0000_0001]), 0x0000_0002);
    // Largest subnormal + smallest subnormal = smallest normal.
    assert_eq!(red_both(Bf16, Add, &[0x007F, 0x0001]), 0x0080);
    assert_eq!(red_both(F16, Add, &[0x03FF, 0x0001]), 0x0400);
    assert_eq!(red_both(F32, Add, &[0x007F_FFFF, 0x0000_0001]), 0x0080_0000);
    // Normal - subnormal falling into the subnormal range: 2^-126 - 2^-133 = 127 * 2^-133.
    assert_eq!(red_both(Bf16, Add, &[0x0080, 0x8001]), 0x007F);
    // f16: 2^-14 - 2^-24 = 1023 * 2^-24 = 0x03FF.
    assert_eq!(red_both(F16, Add, &[0x0400, 0x8001]), 0x03FF);
    // f32 sums that underflow to subnormals: (2^-126 + 2^-149) - 2^-126 = 2^-149.
    assert_eq!(red_both(F32, Add, &[0x0080_0001, 0x8080_0000]), 0x0000_0001);
    // 1.5 * 2^-126 - 2^-126 = 2^-127 = subnormal 0x0040_0000.
    assert_eq!(red_both(F32, Add, &[0x00C0_0000, 0x8080_0000]), 0x0040_0000);
    // bf16 through an f32-subnormal intermediate: (2^-126 + 2^-133) - 2^-126 = 2^-133 = 0x0001.
    assert_eq!(red_both(Bf16, Add, &[0x0081, 0x8080]), 0x0001);
}

#[test]
fn add_overflow() {
    // bf16 max 0x7F7F = (2 - 2^-7) * 2^127; doubled it exceeds every finite value -> +inf.
    assert_eq!(red_both(Bf16, Add, &[0x7F7F, 0x7F7F]), 0x7F80);
    assert_eq!(red_both(Bf16, Add, &[0xFF7F, 0xFF7F]), 0xFF80);
    // bf16 ulp at the top is 2^120; max + 2^119 (0x7B00: exponent field 246) is the tie between
    // max (odd) and 2^128 -> +inf; max + 2^118 (0x7A80) -> max.
    assert_eq!(red_both(Bf16, Add, &[0x7F7F, 0x7B00]), 0x7F80);
    assert_eq!(red_both(Bf16, Add, &[0x7F7F, 0x7A80]), 0x7F7F);
    // f16: 65504 (0x7BFF) + 16 (0x4C00) = 65520, the tie between 65504 (odd) and 65536 -> +inf.
    assert_eq!(red_both(F16, Add, &[0x7BFF, 0x4C00]), 0x7C00);
    // 65504 + 15 (0x4B80 = 1.111b * 2^3) = 65519, nearer to 65504 -> 0x7BFF.
    assert_eq!(red_both(F16, Add, &[0x7BFF, 0x4B80]), 0x7BFF);
    assert_eq!(red_both(F16, Add, &[0xFBFF, 0xCC00]), 0xFC00);
    // f32 max + max -> +inf.
    assert_eq!(red_both(F32, Add, &[0x7F7F_FFFF, 0x7F7F_FFFF]), 0x7F80_0000);
    // Infinity absorbs finite values.
    assert_eq!(red_both(Bf16, Add, &[0x7F80, 0xFF7F]), 0x7F80);
    assert_eq!(red_both(F16, Add, &[0xFC00, 0x7BFF]), 0xFC00);
    assert_eq!(red_both(F16, Add, &[0x7C00, 0x7C00]), 0x7C00);
}

#[test]
fn add_nans() {
    // inf + -inf = canonical NaN of the type.
    assert_eq!(red_both(Bf16, Add, &[0x7F80, 0xFF80]), 0x7FC0);
    assert_eq!(red_both(F16, Add, &[0x7C00, 0xFC00]), 0x7E00);
    assert_eq!(red_both(F32, Add, &[0x7F80_0000, 0xFF80_0000]), 0x7FC0_0000);
    // NaN operands (any sign, payload, quiet or signalling) give the canonical NaN.
    assert_eq!(red_both(Bf16, Add, &[0xFFC1, 0x3F80]), 0x7FC0);
    assert_eq!(red_both(Bf16, Add, &[0x3F80, 0x7F81]), 0x7FC0);
    assert_eq!(red_both(F16, Add, &[0x3C00, 0xFE01]), 0x7E00);
    assert_eq!(red_both(F16, Add, &[0x7C01, 0x7C01]), 0x7E00);
    assert_eq!(red_both(F32, Add, &[0xFFFF_FFFF, 0x3F80_0000]), 0x7FC0_0000);
    assert_eq!(red_both(F32, Add, &[0x7F80_0001, 0x7F80_0000]), 0x7FC0_0000);
    // A NaN in the middle of a longer round stays NaN to the end.
    assert_eq!(
        red(Bf16, Add, Native, &[0x3F80, 0x7FFF, 0x3F80, 0xFF80]),
        0x7FC0
    );
    assert_eq!(
        red(F16, Add, AccF32, &[0x3C00, 0x7C00, 0xFC00, 0x3C00]),
        0x7E00
    );
}

#[test]
fn single_input_is_identity_except_nan() {
    for (dt, v) in [
        (Bf16, 0x3F80),
        (Bf16, 0x8000),
        (Bf16, 0x0001),
        (Bf16, 0xFF80),
        (F16, 0x03FF),
        (F16, 0xFC00),
        (F16, 0x8000),
        (F32, 0x0000_0001),
        (F32, 0x8000_0000),
        (F32, 0x7F7F_FFFF),
    ] {
        for op in ReduceOp::ALL {
            assert_eq!(red_both(dt, op, &[v]), v);
        }
    }
    for (dt, v) in [
        (Bf16, 0xFFC1),
        (Bf16, 0x7F81),
        (F16, 0x7C01),
        (F16, 0xFE00),
        (F16, 0x7FFF),
        (F32, 0xFFFF_FFFF),
        (F32, 0x7F80_0001),
    ] {
        for op in ReduceOp::ALL {
            assert_eq!(red_both(dt, op, &[v]), canonical_nan(dt));
        }
    }
}

#[test]
fn min_max_nans() {
    // A NaN operand is ignored.
    assert_eq!(red_both(Bf16, Min, &[0xFFC1, 0x3F80]), 0x3F80);
    assert_eq!(red_both(Bf16, Max, &[0x4000, 0x7F81]), 0x4000);
    assert_eq!(red_both(F16, Min, &[0x7E00, 0xFC00]), 0xFC00);
    assert_eq!(red_both(F16, Max, &[0xFC00, 0x7C01]), 0xFC00);
    assert_eq!(red_both(F32, Min, &[0x3F80_0000, 0xFFC0_0001]), 0x3F80_0000);
    assert_eq!(red_both(F32, Max, &[0x7F80_0001, 0xBF80_0000]), 0xBF80_0000);
    // Both NaN: canonical NaN.
    assert_eq!(red_both(Bf16, Min, &[0xFFC1, 0x7F81]), 0x7FC0);
    assert_eq!(red_both(F16, Max, &[0xFE01, 0x7C01]), 0x7E00);
    assert_eq!(red_both(F32, Max, &[0xFFFF_FFFF, 0x7F80_0001]), 0x7FC0_0000);
    // Longer rounds: max over (sNaN, -1, -NaN) = -1; min over (1, NaN, -3) = -3.
    assert_eq!(red(Bf16, Max, AccF32, &[0x7F81, 0xBF80, 0xFF81]), 0xBF80);
    assert_eq!(red(Bf16, Min, Native, &[0x3F80, 0x7FC0, 0xC040]), 0xC040);
    // All NaN.
    assert_eq!(red(F16, Min, AccF32, &[0x7C01, 0xFC01, 0x7E00]), 0x7E00);
    // Ordinary ordering, infinities included.
    assert_eq!(red_both(Bf16, Min, &[0x3F80, 0xBF80]), 0xBF80);
    assert_eq!(red_both(Bf16, Max, &[0x3F80, 0xBF80]), 0x3F80);
    assert_eq!(red_both(F16, Max, &[0x7C00, 0x7BFF]), 0x7C00);
    assert_eq!(red_both(F32, Min, &[0xFF80_0000, 0x7FC0_0000]), 0xFF80_0000);
    // Subnormals order correctly: 2^-24 < 2^-23.
    assert_eq!(red_both(F16, Min, &[0x0002, 0x0001]), 0x0001);
    assert_eq!(red_both(F16, Max, &[0x8002, 0x8001]), 0x8001);
}

#[test]
fn signed_zeros() {
    for (dt, pz, nz) in [
        (Bf16, 0x0000, 0x8000),
        (F16, 0x0000, 0x8000),
        (F32, 0, 0x8000_0000),
    ] {
        // -0 + -0 = -0; -0 + +0 = +0 (round to nearest); +0 + +0 = +0.
        assert_eq!(red_both(dt, Add, &[nz, nz]), nz, "{dt}");
        assert_eq!(red_both(dt, Add, &[nz, pz]), pz, "{dt}");
        assert_eq!(red_both(dt, Add, &[pz, nz]), pz, "{dt}");
        assert_eq!(red_both(dt, Add, &[pz, pz]), pz, "{dt}");
        // -0 orders below +0, in either operand order.
        assert_eq!(red_both(dt, Min, &[nz, pz]), nz, "{dt}");
        assert_eq!(red_both(dt, Min, &[pz, nz]), nz, "{dt}");
        assert_eq!(red_both(dt, Max, &[nz, pz]), pz, "{dt}");
        assert_eq!(red_both(dt, Max, &[pz, nz]), pz, "{dt}");
        assert_eq!(red_both(dt, Min, &[nz, nz]), nz, "{dt}");
        assert_eq!(red_both(dt, Max, &[pz, pz]), pz, "{dt}");
    }
    // x + (-x) = +0.
    assert_eq!(red_both(Bf16, Add, &[0x3F80, 0xBF80]), 0x0000);
    assert_eq!(red_both(F16, Add, &[0xBC00, 0x3C00]), 0x0000);
    assert_eq!(red_both(F32, Add, &[0x0000_0001, 0x8000_0001]), 0x0000_0000);
    // The same on combine_f32 directly.
    assert_eq!(combine_f32(Min, 0.0, -0.0).to_bits(), 0x8000_0000);
    assert_eq!(combine_f32(Max, -0.0, 0.0).to_bits(), 0x0000_0000);
    assert_eq!(combine_f32(Add, -0.0, -0.0).to_bits(), 0x8000_0000);
}

#[test]
fn native_vs_f32_accumulation() {
    // bf16 1 + 2^-8 + 2^-8 (0x3F80, 0x3B80, 0x3B80):
    // Native: 1 + 2^-8 is a tie (half the bf16 ulp 2^-7 at 1) -> 1; again -> 1 = 0x3F80.
    // F32: the f32 sum 1 + 2^-7 is exact and is a bf16 value -> 0x3F81.
    assert_eq!(red(Bf16, Add, Native, &[0x3F80, 0x3B80, 0x3B80]), 0x3F80);
    assert_eq!(red(Bf16, Add, AccF32, &[0x3F80, 0x3B80, 0x3B80]), 0x3F81);
    // 1 + 2^-9 + 2^-9 (0x3B00 = 2^-9): Native stays at 1 (each 2^-9 is a quarter ulp); F32 gives
    // the exact 1 + 2^-8, which is itself a tie and rounds to even, 1.0: both 0x3F80.
    assert_eq!(red(Bf16, Add, Native, &[0x3F80, 0x3B00, 0x3B00]), 0x3F80);
    assert_eq!(red(Bf16, Add, AccF32, &[0x3F80, 0x3B00, 0x3B00]), 0x3F80);
    // Three of them: F32 gives 1 + 3 * 2^-9 = 1 + 0.75 ulp -> 0x3F81; Native still 0x3F80.
    assert_eq!(
        red(Bf16, Add, AccF32, &[0x3F80, 0x3B00, 0x3B00, 0x3B00]),
        0x3F81
    );
    assert_eq!(
        red(Bf16, Add, Native, &[0x3F80, 0x3B00, 0x3B00, 0x3B00]),
        0x3F80
    );
    // Order matters in Native mode: 2^-8 + 2^-8 = 2^-7 exactly, then 1 + 2^-7 = 0x3F81.
    assert_eq!(red(Bf16, Add, Native, &[0x3B80, 0x3B80, 0x3F80]), 0x3F81);
    // f16 1 + 2^-11 + 2^-11 (0x3C00, 0x1000, 0x1000): Native ties to 1 twice -> 0x3C00;
    // F32: exact 1 + 2^-10 = 0x3C01.
    assert_eq!(red(F16, Add, Native, &[0x3C00, 0x1000, 0x1000]), 0x3C00);
    assert_eq!(red(F16, Add, AccF32, &[0x3C00, 0x1000, 0x1000]), 0x3C01);
    // f16 65504 + 65504 - 65504: F32 has no intermediate overflow -> 65504 (0x7BFF); Native
    // overflows to +inf at the first step and inf - 65504 = inf.
    assert_eq!(red(F16, Add, AccF32, &[0x7BFF, 0x7BFF, 0xFBFF]), 0x7BFF);
    assert_eq!(red(F16, Add, Native, &[0x7BFF, 0x7BFF, 0xFBFF]), 0x7C00);
    // f32 payloads: both modes identical (both round every step to f32).
    let v = [0x3F80_0000, 0x3380_0000, 0x3380_0000];
    // 1 + 2^-24 ties to 1, twice -> 1.0.
    assert_eq!(red_both(F32, Add, &v), 0x3F80_0000);
}

#[test]
fn multi_lane_payload() {
    // Three bf16 lanes, three inputs, mixed cases in one payload.
    let a: [u16; 3] = [0x3F80, 0x7F80, 0x8000];
    let b: [u16; 3] = [0x3B80, 0xFF80, 0x8000];
    let c: [u16; 3] = [0x3B80, 0x3F80, 0x0000];
    let enc = |v: &[u16]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let (a, b, c) = (enc(&a), enc(&b), enc(&c));
    let mut out = vec![0u8; 6];
    reduce_lanes(Bf16, Add, AccF32, &[&a, &b, &c], &mut out).unwrap();
    // Lane 0: 1 + 2^-8 + 2^-8 = 1 + 2^-7 (see above) -> 0x3F81.
    // Lane 1: inf + -inf = NaN -> 0x7FC0.
    // Lane 2: -0 + -0 + +0 = -0 + +0 = +0.
    assert_eq!(out, enc(&[0x3F81, 0x7FC0, 0x0000]));
    reduce_lanes(Bf16, Add, Native, &[&a, &b, &c], &mut out).unwrap();
    assert_eq!(out, enc(&[0x3F80, 0x7FC0, 0x0000]));
    // Little-endian layout of lanes.
    assert_eq!(lane(Bf16, &out, 0).unwrap(), 0x3F80);
    assert_eq!(&out[0..2], &[0x80, 0x3F]);
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn errors() {
    let two = [0u8; 4];
    let three = [0u8; 6];
    let mut out = [0xAAu8; 4];
    assert_eq!(
        reduce_lanes(Bf16, Add, AccF32, &[], &mut out),
        Err(NumericsError::NoInputs)
    );
    assert_eq!(
        reduce_lanes(Bf16, Add, AccF32, &[&two, &three], &mut out),
        Err(NumericsError::InputLengthMismatch {
            index: 1,
            expected: 4,
            got: 6
        })
    );
    assert_eq!(
        reduce_lanes(F32, Add, AccF32, &[&three], &mut out),
        Err(NumericsError::RaggedLength {
            dtype: F32,
            len: 6,
            lane_bytes: 4
        })
    );
    assert_eq!(
        reduce_lanes(Bf16, Add, AccF32, &[&[0u8; 3]], &mut out),
        Err(NumericsError::RaggedLength {
            dtype: Bf16,
            len: 3,
            lane_bytes: 2
        })
    );
    assert_eq!(
        reduce_lanes(Bf16, Add, AccF32, &[&three], &mut out),
        Err(NumericsError::OutputLengthMismatch {
            expected: 6,
            got: 4
        })
    );
    assert_eq!(out, [0xAA; 4], "out untouched on error");
    // Empty payloads are fine (zero lanes).
    assert_eq!(reduce_lanes(F16, Min, Native, &[&[], &[]], &mut []), Ok(()));

    assert_eq!(
        reduce_values(F16, Add, AccF32, &[]),
        Err(NumericsError::NoInputs)
    );
    assert_eq!(
        reduce_values(F16, Add, AccF32, &[0x3C00, 0x1_0000]),
        Err(NumericsError::BitsTooWide {
            dtype: F16,
            bits: 0x1_0000
        })
    );

    // Lanes.
    let mut p = [0u8; 5];
    assert_eq!(lane_count(Bf16, &p[..4]), Ok(2));
    assert!(lane_count(Bf16, &p).is_err());
    assert_eq!(set_lane(Bf16, &mut p, 1, 0xBEEF), Ok(()));
    assert_eq!(p, [0, 0, 0xEF, 0xBE, 0]);
    assert_eq!(lane(Bf16, &p, 1), Ok(0xBEEF));
    assert_eq!(
        lane(Bf16, &p, 2),
        Err(NumericsError::LaneOutOfRange {
            dtype: Bf16,
            index: 2,
            lanes: 2
        })
    );
    assert!(lane(F32, &p, usize::MAX).is_err());
    assert!(set_lane(F32, &mut p, usize::MAX / 2, 0).is_err());
    assert_eq!(
        set_lane(F16, &mut p, 0, 0x1_0000),
        Err(NumericsError::BitsTooWide {
            dtype: F16,
            bits: 0x1_0000
        })
    );
    let mut q = [0u8; 8];
    set_lane(F32, &mut q, 1, 0x1234_5678).unwrap();
    assert_eq!(q, [0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12]);
    assert_eq!(lane(F32, &q, 1), Ok(0x1234_5678));

    // Accumulator misuse.
    let mut acc = Accumulator::new(2);
    let mut out = [0u8; 4];
    assert_eq!(acc.finish(Bf16, &mut out), Err(NumericsError::NoInputs));
    assert_eq!(
        acc.add_input(Bf16, Add, AccF32, &three),
        Err(NumericsError::LaneCountMismatch {
            expected: 2,
            got: 3
        })
    );
    acc.add_input(Bf16, Add, AccF32, &two).unwrap();
    let started = ReduceParams {
        dtype: Bf16,
        op: Add,
        acc: AccF32,
    };
    assert_eq!(
        acc.add_input(Bf16, Max, AccF32, &two),
        Err(NumericsError::ParameterMismatch {
            started,
            requested: ReduceParams { op: Max, ..started }
        })
    );
    assert!(acc.add_input(F16, Add, AccF32, &two).is_err());
    assert!(acc.add_input(Bf16, Add, Native, &two).is_err());
    assert!(acc.finish(F16, &mut out).is_err());
    assert!(acc.finish(Bf16, &mut [0u8; 2]).is_err());
    assert_eq!(acc.inputs(), 1);
    assert_eq!(acc.params(), Some(started));
    acc.finish(Bf16, &mut out).unwrap();
    assert_eq!(acc.inputs(), 0);
    assert_eq!(acc.params(), None);
    // Reusable after finish, with new parameters and lane count.
    acc.reset_lanes(1);
    acc.add_input(F32, Max, Native, &[0, 0, 0x80, 0x3F])
        .unwrap();
    acc.add_input(F32, Max, Native, &[0, 0, 0x00, 0x40])
        .unwrap();
    let mut o = [0u8; 4];
    acc.finish(F32, &mut o).unwrap();
    assert_eq!(u32::from_le_bytes(o), 0x4000_0000);

    // Error messages are readable.
    assert_eq!(
        NumericsError::RaggedLength {
            dtype: F32,
            len: 6,
            lane_bytes: 4
        }
        .to_string(),
        "payload of 6 bytes is not a whole number of f32 lanes (4 bytes each)"
    );
    assert_eq!(
        NumericsError::ParameterMismatch {
            started,
            requested: ReduceParams { op: Max, ..started }
        }
        .to_string(),
        "the accumulator was started as bf16 add (acc f32) but this call asks for bf16 max (acc f32)"
    );
}

// ---------------------------------------------------------------------------------------------
// Exhaustive and property tests
// ---------------------------------------------------------------------------------------------

#[test]
fn exhaustive_16bit_roundtrip_and_widening() {
    for dt in [Bf16, F16] {
        for bits in 0u32..=0xFFFF {
            let x = to_f32(dt, bits);
            // Widening agrees with the half crate (value and sign; NaN-ness for NaNs).
            let r = ref_to_f64(dt, bits);
            if r.is_nan() {
                assert!(x.is_nan() && is_nan(dt, bits), "{dt} {bits:#06x}");
                assert_eq!(from_f32(dt, x), canonical_nan(dt), "{dt} {bits:#06x}");
            } else {
                assert!(!is_nan(dt, bits));
                assert_eq!(x as f64, r, "{dt} {bits:#06x}");
                assert_eq!(
                    x.is_sign_negative(),
                    r.is_sign_negative(),
                    "{dt} {bits:#06x}"
                );
                assert_eq!(from_f32(dt, x), bits, "{dt} {bits:#06x}");
            }
        }
    }
}

#[test]
fn exhaustive_16bit_payload_identity() {
    // All 65536 patterns in one payload, reduced alone (fast path), and with -0 added (x + -0 = x
    // for every x, including +0, since +0 + -0 = +0), and min/max with itself.
    for dt in [Bf16, F16] {
        let all: Vec<u8> = (0u16..=0xFFFF).flat_map(|v| v.to_le_bytes()).collect();
        let neg_zero: Vec<u8> = (0..=0xFFFFu32)
            .flat_map(|_| 0x8000u16.to_le_bytes())
            .collect();
        let expected: Vec<u8> = (0u32..=0xFFFF)
            .flat_map(|v| {
                let e = if is_nan(dt, v) { canonical_nan(dt) } else { v };
                (e as u16).to_le_bytes()
            })
            .collect();
        let mut out = vec![0u8; all.len()];
        for acc in AccMode::ALL {
            reduce_lanes(dt, Add, acc, &[&all], &mut out).unwrap();
            assert_eq!(out, expected);
            reduce_lanes(dt, Add, acc, &[&all, &neg_zero], &mut out).unwrap();
            assert_eq!(out, expected);
            reduce_lanes(dt, Min, acc, &[&all, &all], &mut out).unwrap();
            assert_eq!(out, expected);
            reduce_lanes(dt, Max, acc, &[&all, &all], &mut out).unwrap();
            assert_eq!(out, expected);
        }
    }
}

/// Lane values biased toward the interesting corners of each type.
fn lane_value(dt: DType) -> BoxedStrategy<u32> {
    match dt {
        Bf16 => prop_oneof![
            4 => any::<u16>().prop_map(u32::from),
            1 => prop::sample::select(vec![
                0x0000u32, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80,
                0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x3F80, 0xBF80, 0x3B80, 0x3B00,
            ]),
        ]
        .boxed(),
        F16 => prop_oneof![
            4 => any::<u16>().prop_map(u32::from),
            1 => prop::sample::select(vec![
                0x0000u32, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00,
                0xFC00, 0x7E00, 0xFE01, 0x7C01, 0x3C00, 0xBC00, 0x1000, 0x4C00,
            ]),
        ]
        .boxed(),
        F32 => prop_oneof![
            4 => any::<u32>(),
            1 => prop::sample::select(vec![
                0x0000_0000u32, 0x8000_0000, 0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x0080_0000,
                0x7F7F_FFFF, 0xFF7F_FFFF, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0xFFFF_FFFF,
                0x7F80_0001, 0x3F80_0000, 0xBF80_0000, 0x3380_0000,
            ]),
        ]
        .boxed(),
    }
}

fn any_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

fn any_op() -> impl Strategy<Value = ReduceOp> {
    prop::sample::select(ReduceOp::ALL.to_vec())
}

fn any_acc() -> impl Strategy<Value = AccMode> {
    prop::sample::select(AccMode::ALL.to_vec())
}

/// A reduction case: (dt, op, acc, inputs as lane values, indexed [input][lane]).
type Case = (DType, ReduceOp, AccMode, Vec<Vec<u32>>);

fn reduction_case() -> impl Strategy<Value = Case> {
    (any_dtype(), any_op(), any_acc(), 1usize..6, 0usize..20).prop_flat_map(
        |(dt, op, acc, n_inputs, lanes)| {
            let input = prop::collection::vec(lane_value(dt), lanes);
            (
                Just(dt),
                Just(op),
                Just(acc),
                prop::collection::vec(input, n_inputs),
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Rounding f32 -> each type agrees with the independent integer reference.
    #[test]
    fn from_f32_matches_reference(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        for dt in DType::ALL {
            let expected = if x.is_nan() { canonical_nan(dt) } else { ref_round_dt(dt, x as f64) };
            prop_assert_eq!(from_f32(dt, x), expected, "{} {:#010x}", dt, bits);
        }
    }

    /// Same, concentrated near the 16-bit types' overflow and subnormal boundaries.
    #[test]
    fn from_f32_matches_reference_near_boundaries(
        base in prop::sample::select(vec![0x3300_0000u32, 0x3380_0000, 0x3880_0000, 0x477F_E000,
                                          0x0000_0000, 0x0080_0000, 0x7F7F_0000, 0x3F80_0000]),
        delta in -0x0002_0000i32..0x0002_0000,
        neg in any::<bool>(),
    ) {
        let bits = base.wrapping_add_signed(delta) & 0x7FFF_FFFF | if neg { 0x8000_0000 } else { 0 };
        let x = f32::from_bits(bits);
        for dt in DType::ALL {
            let expected = if x.is_nan() { canonical_nan(dt) } else { ref_round_dt(dt, x as f64) };
            prop_assert_eq!(from_f32(dt, x), expected, "{} {:#010x}", dt, bits);
        }
    }

    /// Native add of two 16-bit operands equals the exact (f64) sum rounded once to the type.
    /// For f16 the f64 sum is exact (all f16 values are multiples of 2^-24 below 2^16); for bf16
    /// it may round, but f64's 53 >= 2 * 8 + 2 bits make that double rounding innocuous.
    #[test]
    fn native_add_is_correctly_rounded(dt in prop::sample::select(vec![Bf16, F16]),
                                       a in any::<u16>(), b in any::<u16>()) {
        let (a, b) = (a as u32, b as u32);
        let s = ref_to_f64(dt, a) + ref_to_f64(dt, b);
        let expected = if s.is_nan() { canonical_nan(dt) } else { ref_round_dt(dt, s) };
        prop_assert_eq!(reduce_values(dt, Add, Native, &[a, b]).unwrap(), expected);
        prop_assert_eq!(red(dt, Add, Native, &[a, b]), expected);
        // With two operands, f32 accumulation rounds exactly once too.
        prop_assert_eq!(red(dt, Add, AccF32, &[a, b]), expected);
    }

    /// f32 add is the correctly rounded sum (f64 double rounding innocuous: 53 >= 2 * 24 + 2).
    #[test]
    fn f32_add_is_correctly_rounded(a in lane_value(F32), b in lane_value(F32)) {
        let s = f32::from_bits(a) as f64 + f32::from_bits(b) as f64;
        let expected = if s.is_nan() { CANONICAL_NAN_F32 } else { ref_round_dt(F32, s) };
        prop_assert_eq!(red(F32, Add, AccF32, &[a, b]), expected);
    }

    /// min and max are commutative bit for bit, return the smaller/larger operand under the
    /// ordering -inf < ... < -0 < +0 < ... < +inf with NaNs ignored, for every type.
    #[test]
    fn min_max_commutative_and_correct(
        (dt, a, b) in any_dtype().prop_flat_map(|dt| (Just(dt), lane_value(dt), lane_value(dt)))
    ) {
        for acc in AccMode::ALL {
            let min_ab = red(dt, Min, acc, &[a, b]);
            let max_ab = red(dt, Max, acc, &[a, b]);
            prop_assert_eq!(min_ab, red(dt, Min, acc, &[b, a]));
            prop_assert_eq!(max_ab, red(dt, Max, acc, &[b, a]));
            // Independent ordering key on the raw bits (sign-magnitude -> monotone integer).
            let sign_bit = if dt == F32 { 0x8000_0000u32 } else { 0x8000 };
            let key = |v: u32| -> i64 {
                if v & sign_bit != 0 { -((v & !sign_bit) as i64) - 1 } else { v as i64 }
            };
            let (exp_min, exp_max) = match (is_nan(dt, a), is_nan(dt, b)) {
                (true, true) => (canonical_nan(dt), canonical_nan(dt)),
                (true, false) => (b, b),
                (false, true) => (a, a),
                (false, false) => if key(a) <= key(b) { (a, b) } else { (b, a) },
            };
            prop_assert_eq!(min_ab, exp_min);
            prop_assert_eq!(max_ab, exp_max);
        }
        let (x, y) = (to_f32(dt, a), to_f32(dt, b));
        for op in [Min, Max] {
            prop_assert_eq!(combine_f32(op, x, y).to_bits(), combine_f32(op, y, x).to_bits());
        }
    }

    /// The fast path (reduce_lanes / Accumulator) equals the per-lane reference (reduce_values)
    /// lane by lane, for any type, op, mode, number of inputs and lanes.
    #[test]
    fn fast_path_matches_reference(case in reduction_case()) {
        let (dt, op, acc, inputs) = case;
        let lanes = inputs[0].len();
        let payloads: Vec<Vec<u8>> = inputs
            .iter()
            .map(|vals| {
                let mut p = vec![0u8; lanes * dt.bytes()];
                for (i, &v) in vals.iter().enumerate() {
                    set_lane(dt, &mut p, i, v).unwrap();
                }
                p
            })
            .collect();
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        let mut out = vec![0u8; lanes * dt.bytes()];
        reduce_lanes(dt, op, acc, &refs, &mut out).unwrap();
        for i in 0..lanes {
            let column: Vec<u32> = inputs.iter().map(|v| v[i]).collect();
            let expected = reduce_values(dt, op, acc, &column).unwrap();
            prop_assert_eq!(lane(dt, &out, i).unwrap(), expected,
                "{} {} {} lane {} inputs {:x?}", dt, op, acc, i, column);
        }
    }

    /// Reductions of 16-bit types in F32 mode equal the f32 left-to-right sum rounded once, and in
    /// Native mode the 16-bit left-to-right sum, checked against the independent references.
    #[test]
    fn multi_input_add_matches_reference(dt in prop::sample::select(vec![Bf16, F16]),
                                         vals in prop::collection::vec(any::<u16>(), 1..6)) {
        let vals: Vec<u32> = vals.into_iter().map(u32::from).collect();
        // F32 mode: f32 additions (each correctly rounded to f32 by ref_round on the f64 sum).
        let mut acc = ref_to_f64(dt, vals[0]);
        let mut native = ref_to_f64(dt, vals[0]);
        for &v in &vals[1..] {
            let s = acc + ref_to_f64(dt, v);
            acc = if s.is_nan() { f64::NAN } else { f32::from_bits(ref_round_dt(F32, s)) as f64 };
            let t = native + ref_to_f64(dt, v);
            native = if t.is_nan() { f64::NAN } else { ref_to_f64(dt, ref_round_dt(dt, t)) };
        }
        let exp_f32 = if acc.is_nan() { canonical_nan(dt) } else { ref_round_dt(dt, acc) };
        let exp_native = if native.is_nan() { canonical_nan(dt) } else { ref_round_dt(dt, native) };
        prop_assert_eq!(red(dt, Add, AccF32, &vals), exp_f32);
        prop_assert_eq!(red(dt, Add, Native, &vals), exp_native);
    }
}

// ---------------------------------------------------------------------------------------------
// Speed (run with: cargo test --release -p dysharp-sim --test numerics -- --ignored --nocapture)
// ---------------------------------------------------------------------------------------------

#[test]
#[ignore = "timing; run in release"]
fn speed_combine_bf16() {
    const TOKENS: usize = 4096;
    const HIDDEN: usize = 7168;
    const K: usize = 8;
    let rows: Vec<Vec<u8>> = (0..K)
        .map(|k| {
            (0..HIDDEN)
                .flat_map(|i| (((i * 7 + k * 13) % 0x3F00) as u16 + 0x0100).to_le_bytes())
                .collect()
        })
        .collect();
    let mut out = vec![0u8; HIDDEN * 2];
    let mut checksum = 0u64;
    for (dt, op, acc) in [
        (Bf16, Add, AccF32),
        (Bf16, Add, Native),
        (F16, Add, AccF32),
        (Bf16, Max, AccF32),
    ] {
        let mut a = Accumulator::new(HIDDEN);
        let start = std::time::Instant::now();
        for _ in 0..TOKENS {
            for r in &rows {
                a.add_input(dt, op, acc, r).unwrap();
            }
            a.finish(dt, &mut out).unwrap();
            checksum = checksum.wrapping_add(out[0] as u64);
        }
        let t = start.elapsed();
        println!(
            "{dt} {op} acc={acc}: {TOKENS} tokens x {HIDDEN} x {K} in {:.3} s ({:.2} Glane/s)",
            t.as_secs_f64(),
            (TOKENS * HIDDEN * K) as f64 / t.as_secs_f64() / 1e9
        );
    }
    println!("checksum {checksum}");
}

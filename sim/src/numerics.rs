//! Reduction numerics of the golden model.
//!
//! This module is the bit-exact definition of how a DySHARP switch (and a destination hub)
//! combines payloads: element types ([`DType`]), reduce operations ([`ReduceOp`]), the
//! accumulation mode ([`AccMode`]), the conversions between the wire formats and `f32`, and the
//! one-round reduction [`reduce_lanes`]. The RTL is checked bit for bit against it.
//!
//! # Rules (design brief, section 3 "Numerics")
//!
//! * Element types bf16, f16 and f32; operations add, min and max.
//! * Round to nearest, ties to even; overflow rounds to ±infinity; subnormals are kept on input
//!   and output (no flush-to-zero, no denormals-are-zero).
//! * Any NaN *result* is the canonical quiet NaN of its type ([`canonical_nan`]): bf16 `0x7FC0`,
//!   f16 `0x7E00`, f32 `0x7FC0_0000`. Payload and sign of NaN operands are never propagated, so
//!   results compare bit for bit.
//! * min/max are IEEE 754-2019 `minimumNumber`/`maximumNumber` (as PTX `min`/`max`): a NaN operand
//!   (quiet or signalling) is ignored unless both operands are NaN, and -0 orders below +0.
//! * 16-bit types accumulate in f32 by default ([`AccMode::F32`], like PTX `.acc::f32`) and are
//!   rounded once at the end; [`AccMode::Native`] rounds to the payload type after every step.
//! * A reduction round combines its inputs strictly left to right in the order given. A hub
//!   reduces its local targets in target-list order and rounds once; the switch reduces the
//!   partials of the ports in ascending port order and rounds once. Each of these is one call of
//!   [`reduce_lanes`] (or one use of an [`Accumulator`]).
//!
//! # Layout
//!
//! Payloads are little-endian byte slices of lanes (elements). A lane value is handled as its raw
//! bit pattern in a `u32` (16-bit types in the low 16 bits).
//!
//! The per-lane reference semantics is [`reduce_values`], written for clarity. The fast path,
//! [`Accumulator`] (which [`reduce_lanes`] uses), is tested to give identical bits.
//!
//! The code assumes the host's `f32` arithmetic is IEEE 754 binary32 with round-to-nearest-even
//! and without flush-to-zero or denormals-are-zero, which holds for Rust on x86-64 and AArch64.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Canonical quiet NaN of bf16 (`0x7FC0`).
pub const CANONICAL_NAN_BF16: u16 = 0x7FC0;
/// Canonical quiet NaN of f16 (`0x7E00`).
pub const CANONICAL_NAN_F16: u16 = 0x7E00;
/// Canonical quiet NaN of f32 (`0x7FC0_0000`).
pub const CANONICAL_NAN_F32: u32 = 0x7FC0_0000;

/// The canonical NaN as an `f32` value.
const CANON_F32: f32 = f32::from_bits(CANONICAL_NAN_F32);

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Error returned when parsing a [`DType`], [`ReduceOp`] or [`AccMode`] from a name fails.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown {kind} {input:?} (expected one of: {expected})")]
pub struct ParseNameError {
    /// What was being parsed: `"dtype"`, `"reduce op"` or `"accumulation mode"`.
    pub kind: &'static str,
    /// The text that was not recognised.
    pub input: String,
    /// The accepted names, comma separated.
    pub expected: &'static str,
}

/// Errors of the reduction numerics. Every malformed call returns one of these; nothing panics.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum NumericsError {
    /// A reduction was asked for with no input at all.
    #[error("a reduction needs at least one input")]
    NoInputs,
    /// A payload length is not a whole number of lanes.
    #[error(
        "payload of {len} bytes is not a whole number of {dtype} lanes ({lane_bytes} bytes each)"
    )]
    RaggedLength {
        /// Element type of the payload.
        dtype: DType,
        /// Length of the offending payload in bytes.
        len: usize,
        /// Bytes per lane of `dtype`.
        lane_bytes: usize,
    },
    /// An input of a reduction differs in length from the first input.
    #[error("input {index} has {got} bytes but input 0 has {expected}")]
    InputLengthMismatch {
        /// Position of the offending input (0-based).
        index: usize,
        /// Length of input 0 in bytes.
        expected: usize,
        /// Length of the offending input in bytes.
        got: usize,
    },
    /// The output buffer of a reduction has the wrong length.
    #[error("output buffer has {got} bytes but the inputs have {expected}")]
    OutputLengthMismatch {
        /// Length the output must have (the inputs' length) in bytes.
        expected: usize,
        /// Length of the output buffer in bytes.
        got: usize,
    },
    /// A lane index is past the end of the payload.
    #[error("lane {index} is out of range: the payload holds {lanes} {dtype} lanes")]
    LaneOutOfRange {
        /// Element type of the payload.
        dtype: DType,
        /// The requested lane.
        index: usize,
        /// Number of whole lanes in the payload.
        lanes: usize,
    },
    /// A bit pattern has bits set above the width of the element type.
    #[error("bit pattern {bits:#x} does not fit in a {dtype} lane")]
    BitsTooWide {
        /// Element type of the lane.
        dtype: DType,
        /// The offending bit pattern.
        bits: u32,
    },
    /// A payload given to an [`Accumulator`] has a different number of lanes than it holds.
    #[error("the accumulator holds {expected} lanes but the payload has {got}")]
    LaneCountMismatch {
        /// Lanes of the accumulator.
        expected: usize,
        /// Lanes of the payload.
        got: usize,
    },
    /// An [`Accumulator`] was used with other parameters than those of its first input.
    #[error("the accumulator was started as {started} but this call asks for {requested}")]
    ParameterMismatch {
        /// Parameters of the first input of the current reduction.
        started: ReduceParams,
        /// Parameters of the offending call.
        requested: ReduceParams,
    },
}

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

/// Element type of a payload.
///
/// Wire encoding (2-bit field): `Bf16` = 0, `F16` = 1, `F32` = 2 (3 is reserved).
/// Serialized (serde, [`FromStr`], [`fmt::Display`]) as `"bf16"`, `"f16"`, `"f32"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// bfloat16: 1 sign, 8 exponent, 7 fraction bits (the top half of an f32).
    Bf16,
    /// IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits.
    F16,
    /// IEEE 754 binary32: 1 sign, 8 exponent, 23 fraction bits.
    F32,
}

impl DType {
    /// All element types, in wire-code order.
    pub const ALL: [DType; 3] = [DType::Bf16, DType::F16, DType::F32];

    /// Bytes per lane: 2 for bf16 and f16, 4 for f32.
    pub fn bytes(self) -> usize {
        match self {
            DType::Bf16 | DType::F16 => 2,
            DType::F32 => 4,
        }
    }

    /// 2-bit wire code: bf16 = 0, f16 = 1, f32 = 2.
    pub fn code(self) -> u8 {
        match self {
            DType::Bf16 => 0,
            DType::F16 => 1,
            DType::F32 => 2,
        }
    }

    /// Decodes a wire code; `None` for the reserved code 3 and any value above it.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(DType::Bf16),
            1 => Some(DType::F16),
            2 => Some(DType::F32),
            _ => None,
        }
    }

    /// Lower-case name: `"bf16"`, `"f16"` or `"f32"`.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bf16 => "bf16",
            DType::F16 => "f16",
            DType::F32 => "f32",
        }
    }

    /// Mask of the bits a lane value of this type may use (`0xFFFF` or `0xFFFF_FFFF`).
    fn value_mask(self) -> u32 {
        match self {
            DType::Bf16 | DType::F16 => 0xFFFF,
            DType::F32 => 0xFFFF_FFFF,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = ParseNameError;

    /// Parses `"bf16"`, `"f16"` or `"f32"` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseNameError {
                kind: "dtype",
                input: s.to_owned(),
                expected: "bf16, f16, f32",
            })
    }
}

/// Reduce operation.
///
/// Wire encoding (2-bit field): `Add` = 0, `Min` = 1, `Max` = 2 (3 is reserved).
/// Serialized as `"add"`, `"min"`, `"max"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReduceOp {
    /// IEEE 754 addition, round to nearest even.
    Add,
    /// IEEE 754-2019 `minimumNumber`.
    Min,
    /// IEEE 754-2019 `maximumNumber`.
    Max,
}

impl ReduceOp {
    /// All operations, in wire-code order.
    pub const ALL: [ReduceOp; 3] = [ReduceOp::Add, ReduceOp::Min, ReduceOp::Max];

    /// 2-bit wire code: add = 0, min = 1, max = 2.
    pub fn code(self) -> u8 {
        match self {
            ReduceOp::Add => 0,
            ReduceOp::Min => 1,
            ReduceOp::Max => 2,
        }
    }

    /// Decodes a wire code; `None` for the reserved code 3 and any value above it.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(ReduceOp::Add),
            1 => Some(ReduceOp::Min),
            2 => Some(ReduceOp::Max),
            _ => None,
        }
    }

    /// Lower-case name: `"add"`, `"min"` or `"max"`.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Add => "add",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReduceOp {
    type Err = ParseNameError;

    /// Parses `"add"`, `"min"` or `"max"` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ReduceOp::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseNameError {
                kind: "reduce op",
                input: s.to_owned(),
                expected: "add, min, max",
            })
    }
}

/// Accumulation mode.
///
/// Wire encoding (1-bit field): `F32` = 0 (the default), `Native` = 1.
/// Serialized as `"f32"`, `"native"`. For f32 payloads both modes are the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccMode {
    /// 16-bit types are widened to f32, combined in f32 and rounded once at the end of the round
    /// (like PTX `.acc::f32`). The default.
    #[default]
    F32,
    /// Every pairwise combine is rounded to the payload type.
    ///
    /// For bf16 and f16 an f32 addition followed by rounding to the 16-bit type is the correctly
    /// rounded 16-bit addition: the double rounding is innocuous because f32 has
    /// 24 >= 2p + 2 significand bits (p = 8 for bf16, p = 11 for f16), and f32's exponent range
    /// covers both types including their subnormals.
    Native,
}

impl AccMode {
    /// Both modes, in wire-code order.
    pub const ALL: [AccMode; 2] = [AccMode::F32, AccMode::Native];

    /// 1-bit wire code: f32 = 0, native = 1.
    pub fn code(self) -> u8 {
        match self {
            AccMode::F32 => 0,
            AccMode::Native => 1,
        }
    }

    /// Decodes a wire code; `None` for any value above 1.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(AccMode::F32),
            1 => Some(AccMode::Native),
            _ => None,
        }
    }

    /// Lower-case name: `"f32"` or `"native"`.
    pub fn name(self) -> &'static str {
        match self {
            AccMode::F32 => "f32",
            AccMode::Native => "native",
        }
    }
}

impl fmt::Display for AccMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AccMode {
    type Err = ParseNameError;

    /// Parses `"f32"` or `"native"` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AccMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseNameError {
                kind: "accumulation mode",
                input: s.to_owned(),
                expected: "f32, native",
            })
    }
}

/// The three parameters of a reduction: element type, operation and accumulation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReduceParams {
    /// Element type of the payloads.
    pub dtype: DType,
    /// Reduce operation.
    pub op: ReduceOp,
    /// Accumulation mode.
    pub acc: AccMode,
}

impl fmt::Display for ReduceParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} (acc {})", self.dtype, self.op, self.acc)
    }
}

// ---------------------------------------------------------------------------------------------
// Scalar conversions (reference definitions)
// ---------------------------------------------------------------------------------------------

/// Canonical quiet NaN of `dt` as a raw bit pattern: bf16 `0x7FC0`, f16 `0x7E00`,
/// f32 `0x7FC0_0000`.
pub fn canonical_nan(dt: DType) -> u32 {
    match dt {
        DType::Bf16 => CANONICAL_NAN_BF16 as u32,
        DType::F16 => CANONICAL_NAN_F16 as u32,
        DType::F32 => CANONICAL_NAN_F32,
    }
}

/// Whether the bit pattern `bits` is a NaN of type `dt` (for 16-bit types only the low 16 bits
/// are looked at).
pub fn is_nan(dt: DType, bits: u32) -> bool {
    match dt {
        DType::Bf16 => bits & 0x7FFF > 0x7F80,
        DType::F16 => bits & 0x7FFF > 0x7C00,
        DType::F32 => bits & 0x7FFF_FFFF > 0x7F80_0000,
    }
}

/// Widens the bit pattern `bits` of type `dt` to the `f32` of the same value. Exact.
///
/// For 16-bit types only the low 16 bits are used. bf16 is the top half of an f32
/// (`bits << 16`). f16 subnormals become f32 normals exactly. A NaN keeps its sign and payload
/// (shifted to the top of the f32 fraction); reductions canonicalise NaNs on output anyway.
pub fn to_f32(dt: DType, bits: u32) -> f32 {
    match dt {
        DType::Bf16 => bf16_to_f32(bits as u16),
        DType::F16 => f16_to_f32(bits as u16),
        DType::F32 => f32::from_bits(bits),
    }
}

/// Rounds `x` to type `dt` and returns the bit pattern (16-bit types in the low 16 bits).
///
/// Round to nearest, ties to even; values that round beyond the largest finite number become
/// ±infinity; results in the subnormal range are kept (no flush-to-zero); the sign of zero is
/// kept; any NaN becomes [`canonical_nan`] of `dt`.
pub fn from_f32(dt: DType, x: f32) -> u32 {
    match dt {
        DType::Bf16 => f32_to_bf16(x) as u32,
        DType::F16 => f32_to_f16(x) as u32,
        DType::F32 => {
            if x.is_nan() {
                CANONICAL_NAN_F32
            } else {
                x.to_bits()
            }
        }
    }
}

/// Rounds `x` to type `dt` and widens the result back: `to_f32(dt, from_f32(dt, x))`.
///
/// This is the per-step rounding of [`AccMode::Native`]. NaN gives the canonical f32 NaN.
pub fn round_f32(dt: DType, x: f32) -> f32 {
    match dt {
        DType::Bf16 => round_bf16_fast(x),
        DType::F16 => f16_to_f32(f32_to_f16(x)),
        DType::F32 => canon_f32(x),
    }
}

/// Combines two f32 values with `op`.
///
/// * `Add`: IEEE binary32 addition, round to nearest even, no flush-to-zero; a NaN result (from a
///   NaN operand or from inf + -inf) is the canonical f32 NaN. Exact zero sums follow IEEE:
///   (-0) + (-0) = -0, otherwise x + (-x) = +0.
/// * `Min`/`Max`: IEEE 754-2019 `minimumNumber`/`maximumNumber`. If exactly one operand is a NaN
///   (quiet or signalling) the other operand is returned; if both are NaN the result is the
///   canonical NaN; -0 orders below +0, so min(-0, +0) = -0 and max(-0, +0) = +0 in either order.
#[inline(always)]
pub fn combine_f32(op: ReduceOp, a: f32, b: f32) -> f32 {
    match op {
        ReduceOp::Add => canon_f32(a + b),
        ReduceOp::Min => minimum_number(a, b),
        ReduceOp::Max => maximum_number(a, b),
    }
}

/// Replaces any NaN by the canonical f32 NaN.
#[inline(always)]
fn canon_f32(x: f32) -> f32 {
    if x.is_nan() {
        CANON_F32
    } else {
        x
    }
}

/// IEEE 754-2019 `minimumNumber`.
#[inline(always)]
fn minimum_number(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        if b.is_nan() {
            CANON_F32
        } else {
            b
        }
    } else if b.is_nan() || a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        // a == b: either identical values, or +0 and -0, where -0 is the smaller.
        a
    } else {
        b
    }
}

/// IEEE 754-2019 `maximumNumber`.
#[inline(always)]
fn maximum_number(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        if b.is_nan() {
            CANON_F32
        } else {
            b
        }
    } else if b.is_nan() || a > b {
        a
    } else if b > a {
        b
    } else if a.is_sign_positive() {
        // a == b: either identical values, or +0 and -0, where +0 is the larger.
        a
    } else {
        b
    }
}

/// bf16 -> f32: a bf16 is the upper half of an f32.
#[inline(always)]
fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// f16 -> f32, written field by field (reference definition).
fn f16_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let exp = (h >> 10) & 0x1F;
    let frac = h & 0x03FF;
    let bits = match (exp, frac) {
        // Signed zero.
        (0, 0) => sign,
        // Subnormal: value = frac * 2^-24. With p the position of the leading one of frac
        // (0..=9), value = 2^(p-24) * 1.f, an f32 normal with biased exponent p - 24 + 127.
        (0, _) => {
            let p = 31 - frac.leading_zeros();
            let f = (frac << (10 - p)) & 0x03FF;
            sign | ((p + 103) << 23) | (f << 13)
        }
        // Infinity (frac == 0) or NaN (sign and payload kept).
        (0x1F, _) => sign | 0x7F80_0000 | (frac << 13),
        // Normal: rebias the exponent from 15 to 127.
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// f16 -> f32 without branches on the value, for the hot loops. Identical to [`f16_to_f32`] for
/// all 65536 inputs (tested exhaustively).
///
/// The magnitude bits are placed at the top of an f32 and scaled by 2^112 (the bias difference
/// 127 - 15), which is exact for normals and normalises subnormals; exponent 31 (inf/NaN) is
/// mapped to 255.
#[inline(always)]
fn f16_to_f32_fast(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let mag = (h & 0x7FFF) << 13;
    let scaled = (f32::from_bits(mag) * f32::from_bits(0x7780_0000)).to_bits();
    let bits = if h & 0x7C00 == 0x7C00 {
        mag | 0x7F80_0000
    } else {
        scaled
    };
    f32::from_bits(bits | sign)
}

/// f32 -> bf16, round to nearest even.
///
/// The low 16 bits are discarded after adding 0x7FFF plus the lowest kept bit: a remainder above
/// half carries into the kept part, exactly half carries only when the kept part is odd. The carry
/// propagates into the exponent, so the largest values round to infinity; bf16 has f32's exponent
/// range, so subnormals round the same way. The addition cannot overflow a `u32` for non-NaN
/// input (the largest such pattern is -inf, 0xFF80_0000).
#[inline(always)]
fn f32_to_bf16(x: f32) -> u16 {
    if x.is_nan() {
        return CANONICAL_NAN_BF16;
    }
    let b = x.to_bits();
    let rounded = b + 0x7FFF + ((b >> 16) & 1);
    (rounded >> 16) as u16
}

/// `bf16_to_f32(f32_to_bf16(x))` without branches on the value, for the hot loops.
#[inline(always)]
fn round_bf16_fast(x: f32) -> f32 {
    let b = x.to_bits();
    let rounded = b.wrapping_add(0x7FFF + ((b >> 16) & 1)) & 0xFFFF_0000;
    if x.is_nan() {
        CANON_F32
    } else {
        f32::from_bits(rounded)
    }
}

/// f32 -> f16, round to nearest even (reference definition).
fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let abs = b & 0x7FFF_FFFF;
    if abs > 0x7F80_0000 {
        return CANONICAL_NAN_F16;
    }
    // |x| >= 2^16 (including infinity): beyond every f16 rounding boundary -> infinity.
    if abs >= 0x4780_0000 {
        return sign | 0x7C00;
    }
    // |x| <= 2^-25 (half the smallest subnormal; exactly half is a tie that goes to the even
    // value 0): signed zero. This also covers f32 zeros and subnormals.
    if abs <= 0x3300_0000 {
        return sign;
    }
    let exp = (abs >> 23) as i32 - 127; // -25 ..= 15, |x| = 1.f * 2^exp
    let sig = (abs & 0x007F_FFFF) | 0x0080_0000; // 24-bit significand, |x| = sig * 2^(exp-23)
    let (kept, shift) = if exp >= -14 {
        // f16 normal: keep 11 significand bits; the biased exponent goes above the fraction, so a
        // carry out of the fraction increments the exponent (and 0x7BFF + 1 = 0x7C00 = infinity).
        let head = (((exp + 15) as u32) << 10) | ((sig >> 13) & 0x03FF);
        (head, 13)
    } else {
        // f16 subnormal: count units of 2^-24. |x| = sig * 2^(exp-23) = (sig >> s) units with
        // s = -(exp + 1), 14 ..= 24. A carry out of the fraction gives 0x0400, the smallest
        // normal, which is the right encoding.
        let s = (-(exp + 1)) as u32;
        (sig >> s, s)
    };
    let rem = sig & ((1u32 << shift) - 1);
    let half = 1u32 << (shift - 1);
    let round_up = rem > half || (rem == half && kept & 1 == 1);
    sign | (kept + round_up as u32) as u16
}

// ---------------------------------------------------------------------------------------------
// Lanes
// ---------------------------------------------------------------------------------------------

/// Reads lane `i` of the little-endian payload `bytes` of type `dt` as a raw bit pattern.
///
/// Errors with [`NumericsError::LaneOutOfRange`] if the payload has no whole lane `i`.
pub fn lane(dt: DType, bytes: &[u8], i: usize) -> Result<u32, NumericsError> {
    let w = dt.bytes();
    let chunk = i
        .checked_mul(w)
        .and_then(|off| bytes.get(off..off.checked_add(w)?))
        .ok_or(NumericsError::LaneOutOfRange {
            dtype: dt,
            index: i,
            lanes: bytes.len() / w,
        })?;
    Ok(chunk
        .iter()
        .rev()
        .fold(0u32, |acc, &b| (acc << 8) | b as u32))
}

/// Writes the raw bit pattern `bits` into lane `i` of the little-endian payload `bytes` of type
/// `dt`.
///
/// Errors with [`NumericsError::BitsTooWide`] if a 16-bit type is given bits above bit 15, and
/// with [`NumericsError::LaneOutOfRange`] if the payload has no whole lane `i`; on error nothing
/// is written.
pub fn set_lane(dt: DType, bytes: &mut [u8], i: usize, bits: u32) -> Result<(), NumericsError> {
    if bits & !dt.value_mask() != 0 {
        return Err(NumericsError::BitsTooWide { dtype: dt, bits });
    }
    let w = dt.bytes();
    let lanes = bytes.len() / w;
    let chunk = i
        .checked_mul(w)
        .and_then(|off| bytes.get_mut(off..off.checked_add(w)?))
        .ok_or(NumericsError::LaneOutOfRange {
            dtype: dt,
            index: i,
            lanes,
        })?;
    for (k, b) in chunk.iter_mut().enumerate() {
        *b = (bits >> (8 * k)) as u8;
    }
    Ok(())
}

/// Number of lanes of a payload, or [`NumericsError::RaggedLength`] if its length is not a
/// multiple of `dt.bytes()`.
pub fn lane_count(dt: DType, bytes: &[u8]) -> Result<usize, NumericsError> {
    let w = dt.bytes();
    if bytes.len().is_multiple_of(w) {
        Ok(bytes.len() / w)
    } else {
        Err(NumericsError::RaggedLength {
            dtype: dt,
            len: bytes.len(),
            lane_bytes: w,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------------------------

/// Reference semantics of one reduction round for a single lane.
///
/// `values` are the raw bit patterns of one lane of each input, in reduction order. They are
/// widened to f32 ([`to_f32`]) and combined strictly left to right with [`combine_f32`]; with
/// [`AccMode::Native`] every combine is rounded to `dt` ([`round_f32`]); the result is rounded
/// once to `dt` ([`from_f32`]). A single value is returned unchanged, except that a NaN becomes
/// the canonical NaN.
///
/// Errors: [`NumericsError::NoInputs`] for no values, [`NumericsError::BitsTooWide`] for a 16-bit
/// type given a value above `0xFFFF`.
pub fn reduce_values(
    dt: DType,
    op: ReduceOp,
    acc: AccMode,
    values: &[u32],
) -> Result<u32, NumericsError> {
    if let Some(&bits) = values.iter().find(|&&v| v & !dt.value_mask() != 0) {
        return Err(NumericsError::BitsTooWide { dtype: dt, bits });
    }
    let (&first, rest) = values.split_first().ok_or(NumericsError::NoInputs)?;
    let mut a = to_f32(dt, first);
    for &v in rest {
        a = combine_f32(op, a, to_f32(dt, v));
        if acc == AccMode::Native {
            a = round_f32(dt, a);
        }
    }
    Ok(from_f32(dt, a))
}

/// One reduction round over whole payloads: the reduction used by a hub (pre-reducing its local
/// targets in target-list order) and by the switch (reducing the partials in ascending port
/// order).
///
/// `inputs` are little-endian payloads of type `dt`, all of the same length, a multiple of
/// `dt.bytes()`. Lane by lane, they are reduced strictly left to right in the order given, with
/// exactly the semantics of [`reduce_values`], and the result is written to `out`, which must
/// have the same length.
///
/// Errors: [`NumericsError::NoInputs`] if `inputs` is empty, [`NumericsError::RaggedLength`],
/// [`NumericsError::InputLengthMismatch`], [`NumericsError::OutputLengthMismatch`]. On error `out`
/// is left unchanged.
pub fn reduce_lanes(
    dt: DType,
    op: ReduceOp,
    acc: AccMode,
    inputs: &[&[u8]],
    out: &mut [u8],
) -> Result<(), NumericsError> {
    let first = inputs.first().ok_or(NumericsError::NoInputs)?;
    let lanes = lane_count(dt, first)?;
    for (index, input) in inputs.iter().enumerate() {
        if input.len() != first.len() {
            return Err(NumericsError::InputLengthMismatch {
                index,
                expected: first.len(),
                got: input.len(),
            });
        }
    }
    if out.len() != first.len() {
        return Err(NumericsError::OutputLengthMismatch {
            expected: first.len(),
            got: out.len(),
        });
    }
    let mut accumulator = Accumulator::new(lanes);
    for input in inputs {
        accumulator.add_input(dt, op, acc, input)?;
    }
    accumulator.finish(dt, out)
}

/// Fast accumulator for one reduction round over payloads of a fixed number of lanes.
///
/// Feed the inputs in reduction order with [`add_input`](Accumulator::add_input), then call
/// [`finish`](Accumulator::finish) to round the result into a payload. The result is bit for bit
/// that of [`reduce_values`] lane by lane (and of [`reduce_lanes`]). The lanes are held as f32;
/// with [`AccMode::Native`] every step is rounded to the payload type. The accumulator can be
/// reused: `finish` empties it, keeping its allocation.
///
/// All inputs of one round must use the same element type, operation and accumulation mode.
#[derive(Clone, Debug, Default)]
pub struct Accumulator {
    acc: Vec<f32>,
    params: Option<ReduceParams>,
    inputs: usize,
}

impl Accumulator {
    /// An empty accumulator for payloads of `lanes` lanes.
    pub fn new(lanes: usize) -> Self {
        Accumulator {
            acc: vec![0.0; lanes],
            params: None,
            inputs: 0,
        }
    }

    /// Number of lanes the accumulator holds.
    pub fn lanes(&self) -> usize {
        self.acc.len()
    }

    /// Number of inputs added since the accumulator was created, finished or reset.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Parameters of the current round, `None` while no input has been added.
    pub fn params(&self) -> Option<ReduceParams> {
        self.params
    }

    /// Empties the accumulator, keeping its lane count.
    pub fn reset(&mut self) {
        self.params = None;
        self.inputs = 0;
    }

    /// Empties the accumulator and changes its lane count (reusing the allocation).
    pub fn reset_lanes(&mut self, lanes: usize) {
        self.reset();
        self.acc.resize(lanes, 0.0);
    }

    /// Adds the next input of the round: a little-endian payload of type `dt` with exactly
    /// [`lanes`](Accumulator::lanes) lanes.
    ///
    /// The first input is widened into the accumulator; each further one is combined into it with
    /// `op` (rounding to `dt` after the combine if `acc` is [`AccMode::Native`]).
    ///
    /// Errors: [`NumericsError::RaggedLength`], [`NumericsError::LaneCountMismatch`], and
    /// [`NumericsError::ParameterMismatch`] if `(dt, op, acc)` differ from those of the first
    /// input of the round. On error the accumulator is unchanged.
    pub fn add_input(
        &mut self,
        dt: DType,
        op: ReduceOp,
        acc: AccMode,
        bytes: &[u8],
    ) -> Result<(), NumericsError> {
        let requested = ReduceParams { dtype: dt, op, acc };
        if let Some(started) = self.params {
            if started != requested {
                return Err(NumericsError::ParameterMismatch { started, requested });
            }
        }
        let lanes = lane_count(dt, bytes)?;
        if lanes != self.acc.len() {
            return Err(NumericsError::LaneCountMismatch {
                expected: self.acc.len(),
                got: lanes,
            });
        }
        let a = &mut self.acc[..];
        if self.inputs == 0 {
            match dt {
                DType::Bf16 => load::<2>(a, bytes, |c| bf16_to_f32(u16::from_le_bytes(c))),
                DType::F16 => load::<2>(a, bytes, |c| f16_to_f32_fast(u16::from_le_bytes(c))),
                DType::F32 => load::<4>(a, bytes, f32::from_le_bytes),
            }
        } else {
            // For f32 payloads there is nothing to round; min and max return one of their
            // operands (or the canonical NaN), which is already representable, so only a Native
            // add needs the rounding step.
            let native = acc == AccMode::Native;
            match dt {
                DType::Bf16 => step::<2>(
                    a,
                    bytes,
                    |c| bf16_to_f32(u16::from_le_bytes(c)),
                    op,
                    native,
                    round_bf16_fast,
                ),
                DType::F16 => step::<2>(
                    a,
                    bytes,
                    |c| f16_to_f32_fast(u16::from_le_bytes(c)),
                    op,
                    native,
                    |x| f16_to_f32_fast(f32_to_f16(x)),
                ),
                DType::F32 => step::<4>(a, bytes, f32::from_le_bytes, op, false, |x| x),
            }
        }
        self.params = Some(requested);
        self.inputs += 1;
        Ok(())
    }

    /// Rounds the accumulated lanes to `dt` ([`from_f32`]) into the little-endian payload `out`
    /// and empties the accumulator.
    ///
    /// Errors (the accumulator is then unchanged): [`NumericsError::NoInputs`] if no input was
    /// added, [`NumericsError::ParameterMismatch`] if `dt` is not the type of the inputs,
    /// [`NumericsError::OutputLengthMismatch`] if `out` is not `lanes * dt.bytes()` bytes long.
    pub fn finish(&mut self, dt: DType, out: &mut [u8]) -> Result<(), NumericsError> {
        let started = self.params.ok_or(NumericsError::NoInputs)?;
        if started.dtype != dt {
            return Err(NumericsError::ParameterMismatch {
                started,
                requested: ReduceParams {
                    dtype: dt,
                    ..started
                },
            });
        }
        let expected = self.acc.len() * dt.bytes();
        if out.len() != expected {
            return Err(NumericsError::OutputLengthMismatch {
                expected,
                got: out.len(),
            });
        }
        match dt {
            DType::Bf16 => {
                let (chunks, _) = out.as_chunks_mut::<2>();
                for (c, &a) in chunks.iter_mut().zip(&self.acc) {
                    *c = f32_to_bf16(a).to_le_bytes();
                }
            }
            DType::F16 => {
                let (chunks, _) = out.as_chunks_mut::<2>();
                for (c, &a) in chunks.iter_mut().zip(&self.acc) {
                    *c = f32_to_f16(a).to_le_bytes();
                }
            }
            DType::F32 => {
                let (chunks, _) = out.as_chunks_mut::<4>();
                for (c, &a) in chunks.iter_mut().zip(&self.acc) {
                    *c = canon_f32(a).to_bits().to_le_bytes();
                }
            }
        }
        self.reset();
        Ok(())
    }
}

/// Widens every lane of `bytes` into `acc`.
#[inline(always)]
fn load<const N: usize>(acc: &mut [f32], bytes: &[u8], widen: impl Fn([u8; N]) -> f32) {
    let (chunks, _) = bytes.as_chunks::<N>();
    for (a, &c) in acc.iter_mut().zip(chunks) {
        *a = widen(c);
    }
}

/// Combines every lane of `bytes` into `acc`, monomorphised per operation and mode so that each
/// inner loop is a simple, vectorisable map.
#[inline(always)]
fn step<const N: usize>(
    acc: &mut [f32],
    bytes: &[u8],
    widen: impl Fn([u8; N]) -> f32 + Copy,
    op: ReduceOp,
    native: bool,
    round: impl Fn(f32) -> f32 + Copy,
) {
    let (chunks, _) = bytes.as_chunks::<N>();
    let lanes = acc.iter_mut().zip(chunks);
    match (op, native) {
        (ReduceOp::Add, false) => {
            for (a, &c) in lanes {
                *a = canon_f32(*a + widen(c));
            }
        }
        (ReduceOp::Add, true) => {
            for (a, &c) in lanes {
                *a = round(*a + widen(c));
            }
        }
        (ReduceOp::Min, _) => {
            for (a, &c) in lanes {
                *a = minimum_number(*a, widen(c));
            }
        }
        (ReduceOp::Max, _) => {
            for (a, &c) in lanes {
                *a = maximum_number(*a, widen(c));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The branch-free f16 widening of the hot loops equals the field-by-field reference for all
    /// 65536 patterns, bit for bit (NaN payloads included).
    #[test]
    fn f16_fast_widening_is_exact() {
        for h in 0..=u16::MAX {
            assert_eq!(
                f16_to_f32_fast(h).to_bits(),
                f16_to_f32(h).to_bits(),
                "{h:#06x}"
            );
        }
    }

    /// The branch-free bf16 rounding equals widen(from_f32(x)) on a dense sample of all f32
    /// patterns (every 4099th pattern plus the neighbourhoods of the rounding points).
    #[test]
    fn bf16_fast_rounding_is_exact() {
        let check = |b: u32| {
            let x = f32::from_bits(b);
            assert_eq!(
                round_bf16_fast(x).to_bits(),
                bf16_to_f32(f32_to_bf16(x)).to_bits(),
                "{b:#010x}"
            );
        };
        let mut b = 0u32;
        while let Some(next) = b.checked_add(4099) {
            check(b);
            b = next;
        }
        for hi in (0..=0xFFFFu32).step_by(7) {
            for lo in [0x0000, 0x7FFF, 0x8000, 0x8001, 0xFFFF] {
                check(hi << 16 | lo);
            }
        }
    }
}

//! The human-friendly JSON form of a packet, shared by scenario stimulus and the
//! expected/observed results (docs/golden.md, "Packets").
//!
//! Opcodes are spec names (`"DYN_ST"`), addresses numbers or `"0x..."` strings, 128-bit words
//! (flits, byte enables, memory lines) 32 hex digits most significant first, byte strings
//! (payloads, memory contents) hex in address order, and payloads may instead be a list of lane
//! values in the packet's dtype.

use crate::numerics::{from_f32, lane, set_lane, to_f32, AccMode, DType, ReduceOp};
use crate::packet::fields::{FLIT_BYTES, MAX_LEN};
use crate::packet::{ErrorCode, Flit, Opcode, Packet, Stage};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

// ---------------------------------------------------------------------------------------------
// Scalars
// ---------------------------------------------------------------------------------------------

/// A byte address: a JSON number, or a string `"0x..."` (hex) or `"123"` (decimal).
/// Written as a `"0x..."` string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr(pub u64);

impl Serialize for Addr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{:#x}", self.0))
    }
}

/// Parses an unsigned integer written in decimal or as `0x` hex (`_` separators allowed).
pub fn parse_uint(s: &str) -> Result<u64, String> {
    let t: String = s.trim().chars().filter(|c| *c != '_').collect();
    let bad = || format!("`{s}` is not a number (decimal or 0x hex)");
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        u64::from_str_radix(h, 16)
    } else {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        t.parse::<u64>()
    };
    r.map_err(|_| format!("`{s}` does not fit 64 bits"))
}

/// The hex digits of `t` as values, or the first character that is not an ASCII hex digit
/// (with its character index). `from_str_radix` alone would accept a leading `+`.
pub(crate) fn hex_digits(t: &str) -> Result<Vec<u8>, (usize, char)> {
    t.chars()
        .enumerate()
        .map(|(i, c)| {
            c.to_digit(16)
                .filter(|_| c.is_ascii_hexdigit())
                .map(|d| d as u8)
                .ok_or((i, c))
        })
        .collect()
}

impl<'de> Deserialize<'de> for Addr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Addr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an address: a non-negative number or a \"0x...\" string")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Addr, E> {
                Ok(Addr(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Addr, E> {
                u64::try_from(v)
                    .map(Addr)
                    .map_err(|_| E::custom(format!("negative address {v}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Addr, E> {
                parse_uint(v).map(Addr).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A 128-bit word (flit, byte-enable flit, memory line): exactly 32 hex digits, most
/// significant first (`_` separators and a `0x` prefix are allowed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hex128(pub u128);

/// Parses a 128-bit word from exactly 32 hex digits.
pub fn parse_hex128(s: &str) -> Result<u128, String> {
    let t: String = s.trim().chars().filter(|c| *c != '_').collect();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(&t);
    let digits = hex_digits(t)
        .map_err(|(i, c)| format!("`{s}`: character {i} ({c:?}) is not a hex digit"))?;
    if digits.len() != 32 {
        return Err(format!(
            "`{s}` must be exactly 32 hex digits (a 128-bit word, most significant first), it has {}",
            digits.len()
        ));
    }
    Ok(digits.iter().fold(0u128, |v, d| (v << 4) | u128::from(*d)))
}

/// Formats a 128-bit word as 32 hex digits.
pub fn hex128(v: u128) -> String {
    format!("{v:032x}")
}

impl Serialize for Hex128 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex128(self.0))
    }
}

impl<'de> Deserialize<'de> for Hex128 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_hex128(&s).map(Hex128).map_err(de::Error::custom)
    }
}

/// Parses a byte string written as hex in address order (byte 0 first; `_` and whitespace
/// allowed).
pub fn parse_hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    let t: String = s
        .chars()
        .filter(|c| *c != '_' && !c.is_whitespace())
        .collect();
    let t = t.strip_prefix("0x").unwrap_or(&t);
    let digits =
        hex_digits(t).map_err(|(i, c)| format!("character {i} ({c:?}) is not a hex digit"))?;
    if !digits.len().is_multiple_of(2) {
        return Err("odd number of hex digits in a byte string".into());
    }
    Ok(digits.chunks_exact(2).map(|d| (d[0] << 4) | d[1]).collect())
}

/// Formats bytes as hex in address order.
pub fn hex_bytes(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// An error code: a number, or a name (`"ERR_RANGE"`). Written as the name (0 as 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ECode(pub u8);

impl Serialize for ECode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match ErrorCode::from_code(self.0) {
            Some(c) => s.serialize_str(c.name()),
            None => s.serialize_u8(self.0),
        }
    }
}

/// Parses an error-code name (`ERR_RANGE`, case-insensitive, the `ERR_` prefix optional).
pub fn error_code_by_name(s: &str) -> Option<ErrorCode> {
    let u = s.trim().to_ascii_uppercase();
    let u = u.strip_prefix("ERR_").unwrap_or(&u);
    ErrorCode::ALL
        .into_iter()
        .find(|c| c.name().strip_prefix("ERR_") == Some(u))
}

impl<'de> Deserialize<'de> for ECode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ECode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an error code: 0..15 or a name such as \"ERR_RANGE\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ECode, E> {
                if v > 15 {
                    return Err(E::custom(format!(
                        "error code {v} does not fit the 4-bit field"
                    )));
                }
                Ok(ECode(v as u8))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ECode, E> {
                if v < 0 {
                    return Err(E::custom(format!("negative error code {v}")));
                }
                self.visit_u64(v as u64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ECode, E> {
                error_code_by_name(v)
                    .map(|c| ECode(c as u8))
                    .ok_or_else(|| E::custom(format!("unknown error code name `{v}`")))
            }
        }
        d.deserialize_any(V)
    }
}

/// One lane value: a JSON number (converted to f32, then rounded to the dtype, nearest even),
/// `"inf"`, `"-inf"`, `"nan"` (the canonical NaN), or `"0x..."` raw bits of the lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LaneValue {
    /// A number.
    Num(f64),
    /// Raw bits of the lane.
    Bits(u32),
    /// Positive or negative infinity (`true` = negative).
    Inf(bool),
    /// The canonical NaN.
    Nan,
}

impl LaneValue {
    /// The lane's bit pattern in `dt`.
    pub fn bits(self, dt: DType) -> Result<u32, String> {
        Ok(match self {
            LaneValue::Num(x) => from_f32(dt, x as f32),
            LaneValue::Inf(neg) => from_f32(
                dt,
                if neg {
                    f32::NEG_INFINITY
                } else {
                    f32::INFINITY
                },
            ),
            LaneValue::Nan => from_f32(dt, f32::NAN),
            LaneValue::Bits(b) => {
                let max = if dt.bytes() == 2 { 0xFFFF } else { u32::MAX };
                if b > max {
                    return Err(format!("raw bits {b:#x} do not fit a {dt} lane"));
                }
                b
            }
        })
    }

    /// The readable form of a lane: the number when finite, `"inf"`/`"-inf"`, and raw bits
    /// (`"0x7fc0"`) for NaNs so that their pattern is kept.
    pub fn of(dt: DType, bits: u32) -> Self {
        let v = to_f32(dt, bits);
        if v.is_nan() {
            LaneValue::Bits(bits)
        } else if v.is_infinite() {
            LaneValue::Inf(v < 0.0)
        } else {
            LaneValue::Num(v as f64)
        }
    }
}

impl Serialize for LaneValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            // Lanes are at most f32 precise and numbers are read as f32: the shortest f32 form
            // reads back to the same lane.
            LaneValue::Num(x) if (x as f32).is_finite() => s.serialize_f32(x as f32),
            LaneValue::Num(x) => s.serialize_f64(x),
            LaneValue::Bits(b) => s.serialize_str(&format!("{b:#x}")),
            LaneValue::Inf(false) => s.serialize_str("inf"),
            LaneValue::Inf(true) => s.serialize_str("-inf"),
            LaneValue::Nan => s.serialize_str("nan"),
        }
    }
}

fn lane_from_str(v: &str) -> Result<LaneValue, String> {
    let t = v.trim().to_ascii_lowercase();
    match t.as_str() {
        "inf" | "+inf" | "infinity" => Ok(LaneValue::Inf(false)),
        "-inf" | "-infinity" => Ok(LaneValue::Inf(true)),
        "nan" => Ok(LaneValue::Nan),
        _ if t.starts_with("0x") => {
            let b = parse_uint(&t)?;
            u32::try_from(b)
                .map(LaneValue::Bits)
                .map_err(|_| format!("raw bits `{v}` wider than 32 bits"))
        }
        _ => t
            .parse::<f64>()
            .map(LaneValue::Num)
            .map_err(|_| format!("`{v}` is not a lane value (number, inf, -inf, nan or 0x bits)")),
    }
}

struct LaneVisitor;
impl Visitor<'_> for LaneVisitor {
    type Value = LaneValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a lane value: a number, \"inf\", \"-inf\", \"nan\" or \"0x...\" raw bits")
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<LaneValue, E> {
        Ok(LaneValue::Num(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<LaneValue, E> {
        Ok(LaneValue::Num(v as f64))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<LaneValue, E> {
        Ok(LaneValue::Num(v as f64))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<LaneValue, E> {
        lane_from_str(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for LaneValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LaneVisitor)
    }
}

/// A payload: hex bytes in address order, or a list of lane values in the packet's dtype.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// Bytes, address order.
    Bytes(Vec<u8>),
    /// Lane values.
    Lanes(Vec<LaneValue>),
}

impl Payload {
    /// The payload's bytes for element type `dt`.
    pub fn bytes(&self, dt: DType) -> Result<Vec<u8>, String> {
        match self {
            Payload::Bytes(b) => Ok(b.clone()),
            Payload::Lanes(v) => lanes_to_bytes(dt, v),
        }
    }
}

/// Encodes lane values as little-endian bytes of type `dt`.
pub fn lanes_to_bytes(dt: DType, v: &[LaneValue]) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; v.len() * dt.bytes()];
    for (i, x) in v.iter().enumerate() {
        let b = x.bits(dt).map_err(|e| format!("lane {i}: {e}"))?;
        set_lane(dt, &mut out, i, b).map_err(|e| format!("lane {i}: {e}"))?;
    }
    Ok(out)
}

/// The readable lane values of a payload.
pub fn bytes_to_lanes(dt: DType, b: &[u8]) -> Vec<LaneValue> {
    (0..b.len() / dt.bytes())
        .map(|i| LaneValue::of(dt, lane(dt, b, i).unwrap_or(0)))
        .collect()
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Payload::Bytes(b) => s.serialize_str(&hex_bytes(b)),
            Payload::Lanes(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for x in v {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Payload;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a payload: a hex string (bytes in address order) or a list of lane values",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Payload, E> {
                parse_hex_bytes(v).map(Payload::Bytes).map_err(E::custom)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Payload, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element::<LaneValue>()? {
                    v.push(x);
                }
                Ok(Payload::Lanes(v))
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------------
// Packets
// ---------------------------------------------------------------------------------------------

/// A packet in readable form. Every field but `opcode` is optional on input; defaults:
/// `stage` the opcode's required stage, `maddr` 0, `src_port` 0 (the switch overwrites it),
/// `tag` 0, `dtype` bf16, `rop` add, `acc` f32, `route` 0, `ecode` 0, no targets, `be` all
/// bytes enabled (stores), `len` from the payload (stores and payload-carrying responses,
/// rounded up to whole flits, the rest zero-filled) or 1 (0 for `RSP_ERROR`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketSpec {
    /// Opcode name, e.g. `"DYN_ST"`.
    pub opcode: Option<Opcode>,
    /// `"dispatch"` or `"combine"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    /// Byte address (48 bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maddr: Option<Addr>,
    /// Ingress port (stamped by the switch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_port: Option<u8>,
    /// Transaction tag (12 bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<u16>,
    /// Payload length in flits (5-bit field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<u8>,
    /// `"bf16"`, `"f16"` or `"f32"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<DType>,
    /// `"add"`, `"min"` or `"max"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rop: Option<ReduceOp>,
    /// `"f32"` or `"native"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acc: Option<AccMode>,
    /// Destination port, group id or requester port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<u8>,
    /// Error code (number or name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecode: Option<ECode>,
    /// Target expert IDs (DYN ops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<u16>>,
    /// Byte-enable flit (stores), 32 hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub be: Option<Hex128>,
    /// Payload: hex bytes or lane values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// Lane values (an alternative to a list `payload`; written on output as a readable
    /// decode of the payload; on input it must agree with `payload` when both are given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<LaneValue>>,
}

fn check_width(what: &str, v: u64, bits: u32) -> Result<(), String> {
    if v >> bits != 0 {
        return Err(format!("{what} {v:#x} does not fit its {bits}-bit field"));
    }
    Ok(())
}

impl PacketSpec {
    /// The readable form of a packet (every field explicit, payload as hex plus its lanes).
    pub fn from_packet(p: &Packet) -> Self {
        let carries = !p.payload.is_empty();
        PacketSpec {
            opcode: Some(p.opcode),
            stage: Some(p.stage),
            maddr: Some(Addr(p.maddr)),
            src_port: Some(p.src_port),
            tag: Some(p.tag),
            len: Some(p.len),
            dtype: Some(p.dtype),
            rop: Some(p.rop),
            acc: Some(p.acc),
            route: Some(p.route),
            ecode: Some(ECode(p.ecode)),
            targets: (!p.targets.is_empty()).then(|| p.targets.clone()),
            be: p.be.map(Hex128),
            payload: carries.then(|| Payload::Bytes(p.payload.clone())),
            values: carries.then(|| bytes_to_lanes(p.dtype, &p.payload)),
        }
    }

    /// Builds the packet (applying the defaults) and checks that every field fits its slot.
    pub fn to_packet(&self) -> Result<Packet, String> {
        let opcode = self.opcode.ok_or("missing field `opcode`")?;
        let dtype = self.dtype.unwrap_or(DType::Bf16);
        let ecode = self.ecode.unwrap_or_default().0;
        let carries = opcode.carries_payload(ecode);
        let from_payload = match &self.payload {
            Some(p) => Some(p.bytes(dtype).map_err(|e| format!("payload: {e}"))?),
            None => None,
        };
        let from_values = match &self.values {
            Some(v) => Some(lanes_to_bytes(dtype, v).map_err(|e| format!("values: {e}"))?),
            None => None,
        };
        let mut payload = match (from_payload, from_values) {
            (Some(a), Some(b)) => {
                let n = a.len().max(b.len());
                let (mut a2, mut b2) = (a.clone(), b);
                a2.resize(n, 0);
                b2.resize(n, 0);
                if a2 != b2 {
                    let i = (0..n / dtype.bytes())
                        .find(|&i| lane(dtype, &a2, i).ok() != lane(dtype, &b2, i).ok())
                        .unwrap_or(0);
                    return Err(format!(
                        "`payload` and `values` disagree at lane {i}; give only one of them"
                    ));
                }
                a
            }
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => Vec::new(),
        };
        if !carries && !payload.is_empty() {
            return Err(format!(
                "a {opcode}{} carries no payload",
                if ecode != 0 {
                    " with an error code"
                } else {
                    ""
                }
            ));
        }
        let len = match self.len {
            Some(l) => {
                check_width("len", l as u64, 5)?;
                if carries && payload.len() > l as usize * FLIT_BYTES {
                    return Err(format!(
                        "payload of {} bytes does not fit len {l} ({} bytes)",
                        payload.len(),
                        l as usize * FLIT_BYTES
                    ));
                }
                l
            }
            None if carries => {
                if payload.is_empty() {
                    return Err(format!(
                        "a {opcode} needs a `payload` (or `values`) or an explicit `len`"
                    ));
                }
                let l = payload.len().div_ceil(FLIT_BYTES);
                if l > MAX_LEN {
                    return Err(format!(
                        "payload of {} bytes is longer than {MAX_LEN} flits",
                        payload.len()
                    ));
                }
                l as u8
            }
            None if opcode == Opcode::RspError => 0,
            None => 1,
        };
        if carries {
            payload.resize(len as usize * FLIT_BYTES, 0);
        }
        let maddr = self.maddr.unwrap_or_default().0;
        check_width("maddr", maddr, 48)?;
        let tag = self.tag.unwrap_or(0);
        check_width("tag", tag as u64, 12)?;
        let src_port = self.src_port.unwrap_or(0);
        check_width("src_port", src_port as u64, 5)?;
        let targets = self.targets.clone().unwrap_or_default();
        check_width("number of targets", targets.len() as u64, 15)?;
        if self.be.is_some() && !opcode.is_store() {
            return Err(format!("a {opcode} has no byte-enable flit"));
        }
        Ok(Packet {
            opcode,
            stage: self
                .stage
                .unwrap_or_else(|| opcode.required_stage().unwrap_or_default()),
            maddr,
            src_port,
            tag,
            len,
            dtype,
            rop: self.rop.unwrap_or(ReduceOp::Add),
            acc: self.acc.unwrap_or(AccMode::F32),
            route: self.route.unwrap_or(0),
            ecode,
            targets,
            be: if opcode.is_store() {
                Some(self.be.map_or(u128::MAX, |b| b.0))
            } else {
                None
            },
            payload,
        })
    }
}

/// Parses a frame of hex flits.
pub fn parse_flits(v: &[String]) -> Result<Vec<Flit>, String> {
    v.iter()
        .enumerate()
        .map(|(i, s)| parse_hex128(s).map_err(|e| format!("flit {i}: {e}")))
        .collect()
}

/// Formats a frame as hex flits.
pub fn flits_hex(f: &[Flit]) -> Vec<String> {
    f.iter().map(|x| hex128(*x)).collect()
}

//! Bit-exact packet codec (docs/spec.md §2–§6).
//!
//! [`Packet`] is the decoded form of every packet kind; [`Packet::encode`] produces
//! its flits and [`decode`] parses flits back, running the switch-ingress checks of
//! spec §6 in their normative order. Field positions live in [`fields`].

pub mod fields;
pub mod svpkg;

use crate::numerics::{AccMode, DType, ReduceOp};
use fields::{from_bits, get, set, to_bits, FLIT_BYTES, MAX_LEN, TARGETS_PER_FLIT};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A 128-bit flit (bit 0 = least significant bit).
pub type Flit = u128;

/// Packet opcode (flit0 bits 3:0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Opcode {
    /// Unicast store.
    Write = 0x1,
    /// Unicast load.
    Read = 0x2,
    /// Static-group (NVLS) multicast store.
    McSt = 0x3,
    /// Static-group (NVLS) load-reduce.
    McLdReduce = 0x4,
    /// Dynamic multicast store (Dispatch, `dymultimem.st`).
    DynSt = 0x5,
    /// Dynamic load-reduce (Combine, `dymultimem.ld_reduce`).
    DynLdReduce = 0x6,
    /// Read data, hub to requester.
    RspRead = 0x8,
    /// Partial result of a load-reduce, hub to switch.
    RspPartial = 0x9,
    /// Reduced result, switch to requester.
    RspReduce = 0xA,
    /// Error response.
    RspError = 0xB,
}

impl Opcode {
    /// Every opcode.
    pub const ALL: [Opcode; 10] = [
        Opcode::Write,
        Opcode::Read,
        Opcode::McSt,
        Opcode::McLdReduce,
        Opcode::DynSt,
        Opcode::DynLdReduce,
        Opcode::RspRead,
        Opcode::RspPartial,
        Opcode::RspReduce,
        Opcode::RspError,
    ];

    /// Decodes the 4-bit opcode field.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|o| *o as u8 == code)
    }

    /// Name as in docs/spec.md.
    pub fn name(self) -> &'static str {
        match self {
            Opcode::Write => "WRITE",
            Opcode::Read => "READ",
            Opcode::McSt => "MC_ST",
            Opcode::McLdReduce => "MC_LD_REDUCE",
            Opcode::DynSt => "DYN_ST",
            Opcode::DynLdReduce => "DYN_LD_REDUCE",
            Opcode::RspRead => "RSP_READ",
            Opcode::RspPartial => "RSP_PARTIAL",
            Opcode::RspReduce => "RSP_REDUCE",
            Opcode::RspError => "RSP_ERROR",
        }
    }

    /// True for the request opcodes an SM may send (0x1–0x6).
    pub fn is_request(self) -> bool {
        (self as u8) <= 0x6
    }

    /// True for stores, which carry a byte-enable flit and payload.
    pub fn is_store(self) -> bool {
        matches!(self, Opcode::Write | Opcode::McSt | Opcode::DynSt)
    }

    /// True for the dynamic ops, which carry a target list.
    pub fn is_dynamic(self) -> bool {
        matches!(self, Opcode::DynSt | Opcode::DynLdReduce)
    }

    /// True for load-reduce requests.
    pub fn is_ld_reduce(self) -> bool {
        matches!(self, Opcode::McLdReduce | Opcode::DynLdReduce)
    }

    /// True for the static-group (NVLS) ops, whose `route` names a group.
    pub fn is_static_multicast(self) -> bool {
        matches!(self, Opcode::McSt | Opcode::McLdReduce)
    }

    /// True for the responses a hub may send (spec §6 check 2 for a hub's uplink).
    pub fn is_hub_response(self) -> bool {
        matches!(
            self,
            Opcode::RspRead | Opcode::RspPartial | Opcode::RspError
        )
    }

    /// True if the `len` field is checked against 1..=`MAX_LEN` (given the error code): every
    /// packet but an `RSP_ERROR` and a failed `RSP_PARTIAL`, which carry no payload.
    pub fn len_checked(self, ecode: u8) -> bool {
        !(self == Opcode::RspError || (self == Opcode::RspPartial && ecode != 0))
    }

    /// True if a packet of this kind carries `len` payload flits (given its error code).
    pub fn carries_payload(self, ecode: u8) -> bool {
        match self {
            Opcode::Write | Opcode::McSt | Opcode::DynSt | Opcode::RspRead | Opcode::RspReduce => {
                true
            }
            Opcode::RspPartial => ecode == 0,
            _ => false,
        }
    }

    /// Stage a legal packet of this kind carries (requests; responses copy the request's).
    pub fn required_stage(self) -> Option<Stage> {
        match self {
            Opcode::DynLdReduce => Some(Stage::Combine),
            o if o.is_request() => Some(Stage::Dispatch),
            _ => None,
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The stage bit (flit0 bit 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// 0: Dispatch (allocate AL entries).
    #[default]
    Dispatch,
    /// 1: Combine (look AL entries up).
    Combine,
}

/// Error codes of docs/spec.md §6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// 1: header check code mismatch (dropped, no response).
    Hcc = 1,
    /// 2: illegal opcode, wrong origin, wrong stage, or orphan partial.
    Opcode = 2,
    /// 3: `len` out of 1..16.
    Length = 3,
    /// 4: `tcount` out of range for the opcode.
    Tcount = 4,
    /// 5: flit count disagrees with the length fields.
    Frame = 5,
    /// 6: reserved dtype or reduce op.
    Format = 6,
    /// 7: `maddr` not 16-byte aligned.
    Align = 7,
    /// 8: bad destination port or group.
    Route = 8,
    /// 9: expert ID out of range.
    Expert = 9,
    /// 10: duplicate expert ID.
    Dup = 10,
    /// 11: Combine lookup of an unwritten AL entry (hub).
    Unmapped = 11,
    /// 12: address outside the AL region (hub).
    Range = 12,
    /// 13: per-expert slot counter exhausted (hub).
    Alloc = 13,
    /// 14: a load-reduce's partials did not all arrive within the switch's
    /// `RedTimeout` (switch, counted at the lowest port that did not answer;
    /// spec §5.3).
    Timeout = 14,
}

impl ErrorCode {
    /// Every error code, in numeric order.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::Hcc,
        ErrorCode::Opcode,
        ErrorCode::Length,
        ErrorCode::Tcount,
        ErrorCode::Frame,
        ErrorCode::Format,
        ErrorCode::Align,
        ErrorCode::Route,
        ErrorCode::Expert,
        ErrorCode::Dup,
        ErrorCode::Unmapped,
        ErrorCode::Range,
        ErrorCode::Alloc,
        ErrorCode::Timeout,
    ];
    /// Number of codes (counters are indexed `code - 1`).
    pub const COUNT: usize = 14;
    /// The codes a destination hub detects and counts (spec §6); every other
    /// code is detected and counted by the switch.
    pub const HUB: std::ops::RangeInclusive<u8> = 11..=13;

    /// Whether the hub (not the switch) detects and counts this code.
    pub fn is_hub(self) -> bool {
        Self::HUB.contains(&(self as u8))
    }

    /// Decodes a 4-bit error code.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| *c as u8 == code)
    }

    /// Name as in docs/spec.md.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Hcc => "ERR_HCC",
            ErrorCode::Opcode => "ERR_OPCODE",
            ErrorCode::Length => "ERR_LENGTH",
            ErrorCode::Tcount => "ERR_TCOUNT",
            ErrorCode::Frame => "ERR_FRAME",
            ErrorCode::Format => "ERR_FORMAT",
            ErrorCode::Align => "ERR_ALIGN",
            ErrorCode::Route => "ERR_ROUTE",
            ErrorCode::Expert => "ERR_EXPERT",
            ErrorCode::Dup => "ERR_DUP",
            ErrorCode::Unmapped => "ERR_UNMAPPED",
            ErrorCode::Range => "ERR_RANGE",
            ErrorCode::Alloc => "ERR_ALLOC",
            ErrorCode::Timeout => "ERR_TIMEOUT",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), *self as u8)
    }
}

/// A decoded packet of any kind.
///
/// `tcount` is `targets.len()`; the header check code is computed by [`Packet::encode`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// Packet kind.
    pub opcode: Opcode,
    /// Dispatch or Combine.
    pub stage: Stage,
    /// 48-bit byte address.
    pub maddr: u64,
    /// Ingress port (stamped by the switch).
    pub src_port: u8,
    /// Transaction tag (12 bits).
    pub tag: u16,
    /// Payload length in flits (1..16; 0 in `RSP_ERROR`).
    pub len: u8,
    /// Element type.
    pub dtype: DType,
    /// Reduce operation.
    pub rop: ReduceOp,
    /// Accumulation mode.
    pub acc: AccMode,
    /// Destination port, group id or requester port (see spec §4).
    pub route: u8,
    /// Error code (0 = none).
    pub ecode: u8,
    /// Target expert IDs (DYN ops only).
    pub targets: Vec<u16>,
    /// Byte-enable flit (stores only): bit i enables payload bytes 2i and 2i+1.
    pub be: Option<u128>,
    /// Payload bytes, `len * 16` long when the kind carries payload, else empty.
    #[serde(with = "hex_bytes")]
    pub payload: Vec<u8>,
}

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        if !s.len().is_multiple_of(2) {
            return Err(serde::de::Error::custom("odd number of hex digits"));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| {
                u8::from_str_radix(&s[i..i + 2], 16)
                    .map_err(|_| serde::de::Error::custom(format!("bad hex at {i}")))
            })
            .collect()
    }
}

impl Packet {
    /// A header-only packet with default fields (bf16, add, f32 accumulation, no payload).
    pub fn new(opcode: Opcode) -> Self {
        Packet {
            opcode,
            stage: opcode.required_stage().unwrap_or_default(),
            maddr: 0,
            src_port: 0,
            tag: 0,
            len: if opcode == Opcode::RspError { 0 } else { 1 },
            dtype: DType::Bf16,
            rop: ReduceOp::Add,
            acc: AccMode::F32,
            route: 0,
            ecode: 0,
            targets: Vec::new(),
            be: None,
            payload: Vec::new(),
        }
    }

    /// Number of target-extension flits.
    pub fn target_flits(&self) -> usize {
        self.targets.len().div_ceil(TARGETS_PER_FLIT)
    }

    /// Wire length in flits (spec §3).
    pub fn wire_flits(&self) -> usize {
        wire_flits(
            self.opcode,
            self.targets.len(),
            self.len as usize,
            self.ecode,
        )
    }

    /// Payload bytes carried on the wire (`len * 16` when the kind carries payload).
    pub fn payload_flits(&self) -> usize {
        if self.opcode.carries_payload(self.ecode) {
            self.len as usize
        } else {
            0
        }
    }

    /// flit0 with `hcc` computed.
    pub fn header_flit(&self) -> Flit {
        let mut b = to_bits(0);
        set(&mut b, fields::OPCODE, self.opcode as u64);
        set(&mut b, fields::STAGE, (self.stage == Stage::Combine) as u64);
        set(&mut b, fields::MADDR, self.maddr);
        set(&mut b, fields::TCOUNT, self.targets.len() as u64);
        set(&mut b, fields::SRC_PORT, self.src_port as u64);
        set(&mut b, fields::TAG, self.tag as u64);
        set(&mut b, fields::LEN, self.len as u64);
        set(&mut b, fields::DTYPE, self.dtype.code() as u64);
        set(&mut b, fields::ROP, self.rop.code() as u64);
        set(&mut b, fields::ACC, (self.acc == AccMode::Native) as u64);
        set(&mut b, fields::ROUTE, self.route as u64);
        set(&mut b, fields::ECODE, self.ecode as u64);
        let f = from_bits(&b);
        with_hcc(f)
    }

    /// Encodes the packet into its flits. Fields wider than their slot are truncated;
    /// the payload is zero-padded or cut to `len` flits.
    pub fn encode(&self) -> Vec<Flit> {
        let mut out = Vec::with_capacity(self.wire_flits());
        out.push(self.header_flit());
        for chunk in self.targets.chunks(TARGETS_PER_FLIT) {
            let mut f: u128 = 0;
            for lane in 0..TARGETS_PER_FLIT {
                let id = chunk.get(lane).copied().unwrap_or(0xFFFF);
                f |= (id as u128) << (16 * lane);
            }
            out.push(f);
        }
        if self.opcode.is_store() {
            out.push(self.be.unwrap_or(u128::MAX));
        }
        for i in 0..self.payload_flits() {
            let mut bytes = [0u8; FLIT_BYTES];
            let start = i * FLIT_BYTES;
            if start < self.payload.len() {
                let end = (start + FLIT_BYTES).min(self.payload.len());
                bytes[..end - start].copy_from_slice(&self.payload[start..end]);
            }
            out.push(u128::from_le_bytes(bytes));
        }
        out
    }
}

/// Wire length in flits of a packet kind (spec §3).
pub fn wire_flits(opcode: Opcode, tcount: usize, len: usize, ecode: u8) -> usize {
    let mut n = 1 + tcount.div_ceil(TARGETS_PER_FLIT);
    if opcode.is_store() {
        n += 1;
    }
    if opcode.carries_payload(ecode) {
        n += len;
    }
    n
}

/// Returns `flit0` with its `hcc` field recomputed.
pub fn with_hcc(flit0: Flit) -> Flit {
    let mask = !((0xFFu128) << fields::HCC.lsb);
    (flit0 & mask) | ((fields::hcc(flit0) as u128) << fields::HCC.lsb)
}

/// Who put a packet on an uplink: an SM (requests) or a hub (responses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The GPU's SMs: requests 0x1–0x6 are legal.
    Sm,
    /// The GPU's hub: `RSP_READ`, `RSP_PARTIAL`, `RSP_ERROR` are legal.
    Hub,
    /// A packet observed leaving the switch (downlink): every kind is legal.
    Egress,
}

/// The limits a switch checks packets against (spec §4, §6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Number of switch ports.
    pub num_ports: usize,
    /// Experts per port.
    pub experts_per_port: usize,
    /// Largest legal `tcount`.
    pub max_targets: usize,
    /// Static group table: one port mask per group id.
    pub groups: Vec<u32>,
    /// `DYN_ST` and `DYN_LD_REDUCE` are legal (spec §5.7: `false` without the dynamic ops).
    pub dynamic_ops: bool,
}

impl Limits {
    /// Total number of experts.
    pub fn experts(&self) -> usize {
        self.num_ports * self.experts_per_port
    }
}

/// Why a frame was rejected: the error code, the field at fault and what was seen.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: field `{field}`: {detail}")]
pub struct PacketError {
    /// The spec §6 code.
    pub code: ErrorCode,
    /// The field that failed the check.
    pub field: &'static str,
    /// Human-readable detail (values seen and expected).
    pub detail: String,
    /// The frame's `maddr` (for the error response; 0 if flit0 is missing).
    pub maddr: u64,
    /// The frame's `tag` (for the error response).
    pub tag: u16,
}

/// Decodes a frame of flits and runs the ingress checks of spec §6 in order.
///
/// `origin` says whether the frame came from an SM or a hub; `limits` gives the
/// switch configuration. The returned packet's `src_port` is whatever the frame
/// carried: the switch overwrites it.
pub fn decode(frame: &[Flit], origin: Origin, limits: &Limits) -> Result<Packet, PacketError> {
    let Some(&flit0) = frame.first() else {
        return Err(PacketError {
            code: ErrorCode::Frame,
            field: "flits",
            detail: "empty frame".into(),
            maddr: 0,
            tag: 0,
        });
    };
    let b = to_bits(flit0);
    let maddr = get(&b, fields::MADDR);
    let tag = get(&b, fields::TAG) as u16;
    let err = |code, field, detail: String| PacketError {
        code,
        field,
        detail,
        maddr,
        tag,
    };
    let hcc_seen = get(&b, fields::HCC) as u8;
    let hcc_want = fields::hcc(flit0);
    if hcc_seen != hcc_want {
        return Err(err(
            ErrorCode::Hcc,
            "hcc",
            format!("check code 0x{hcc_seen:02x}, computed 0x{hcc_want:02x}"),
        ));
    }
    let op_code = get(&b, fields::OPCODE) as u8;
    let stage = if get(&b, fields::STAGE) == 1 {
        Stage::Combine
    } else {
        Stage::Dispatch
    };
    let opcode = Opcode::from_code(op_code).ok_or_else(|| {
        err(
            ErrorCode::Opcode,
            "opcode",
            format!("illegal opcode 0x{op_code:x}"),
        )
    })?;
    if origin == Origin::Sm && opcode.is_dynamic() && !limits.dynamic_ops {
        return Err(err(
            ErrorCode::Opcode,
            "opcode",
            format!("{opcode} is not built in (a switch without the dynamic operations)"),
        ));
    }
    let legal_origin = match origin {
        Origin::Sm => opcode.is_request(),
        Origin::Hub => opcode.is_hub_response(),
        Origin::Egress => true,
    };
    if !legal_origin {
        return Err(err(
            ErrorCode::Opcode,
            "opcode",
            format!("{opcode} is not legal from an {origin:?}"),
        ));
    }
    if let Some(want) = opcode.required_stage() {
        if stage != want {
            return Err(err(
                ErrorCode::Opcode,
                "stage",
                format!("{opcode} requires stage {want:?}, got {stage:?}"),
            ));
        }
    }
    let ecode = get(&b, fields::ECODE) as u8;
    let len = get(&b, fields::LEN) as usize;
    if opcode.len_checked(ecode) && !(1..=MAX_LEN).contains(&len) {
        return Err(err(
            ErrorCode::Length,
            "len",
            format!("len {len} outside 1..={MAX_LEN}"),
        ));
    }
    let tcount = get(&b, fields::TCOUNT) as usize;
    if opcode.is_dynamic() {
        if tcount == 0 || tcount > limits.max_targets {
            return Err(err(
                ErrorCode::Tcount,
                "tcount",
                format!("tcount {tcount} outside 1..={}", limits.max_targets),
            ));
        }
    } else if tcount != 0 {
        return Err(err(
            ErrorCode::Tcount,
            "tcount",
            format!("{opcode} must have tcount 0, got {tcount}"),
        ));
    }
    let want = wire_flits(opcode, tcount, len, ecode);
    if frame.len() != want {
        return Err(err(
            ErrorCode::Frame,
            "flits",
            format!("{} flits received, header implies {want}", frame.len()),
        ));
    }
    let dcode = get(&b, fields::DTYPE) as u8;
    let rcode = get(&b, fields::ROP) as u8;
    let dtype = DType::from_code(dcode).ok_or_else(|| {
        err(
            ErrorCode::Format,
            "dtype",
            format!("reserved dtype {dcode}"),
        )
    })?;
    let rop = ReduceOp::from_code(rcode).ok_or_else(|| {
        err(
            ErrorCode::Format,
            "rop",
            format!("reserved reduce op {rcode}"),
        )
    })?;
    // An RSP_ERROR leaving the switch echoes the bad request's address, which
    // may be the reason it was rejected: egress observation does not check it.
    let echo = origin == Origin::Egress && opcode == Opcode::RspError;
    if maddr & 0xF != 0 && !echo {
        return Err(err(
            ErrorCode::Align,
            "maddr",
            format!("maddr 0x{maddr:x} is not 16-byte aligned"),
        ));
    }
    let route = get(&b, fields::ROUTE) as u8;
    let route_ok = match opcode {
        Opcode::Write | Opcode::Read | Opcode::RspRead | Opcode::RspPartial | Opcode::RspError => {
            (route as usize) < limits.num_ports
        }
        Opcode::McSt | Opcode::McLdReduce => {
            limits.groups.get(route as usize).is_some_and(|m| *m != 0)
        }
        _ => true,
    };
    if !route_ok {
        return Err(err(
            ErrorCode::Route,
            "route",
            format!("route {route} is not a valid destination for {opcode}"),
        ));
    }
    let mut targets = Vec::with_capacity(tcount);
    for n in 0..tcount {
        let f = frame[1 + n / TARGETS_PER_FLIT];
        targets.push((f >> (16 * (n % TARGETS_PER_FLIT))) as u16);
    }
    let experts = limits.experts();
    if let Some((i, t)) = targets
        .iter()
        .enumerate()
        .find(|(_, t)| (**t as usize) >= experts)
    {
        return Err(err(
            ErrorCode::Expert,
            "targets",
            format!("target {i} is expert {t}, but there are {experts} experts"),
        ));
    }
    for i in 1..targets.len() {
        if let Some(j) = targets[..i].iter().position(|t| *t == targets[i]) {
            return Err(err(
                ErrorCode::Dup,
                "targets",
                format!("expert {} appears as target {j} and {i}", targets[i]),
            ));
        }
    }
    let mut idx = 1 + tcount.div_ceil(TARGETS_PER_FLIT);
    let be = if opcode.is_store() {
        idx += 1;
        Some(frame[idx - 1])
    } else {
        None
    };
    let payload: Vec<u8> = frame[idx..].iter().flat_map(|f| f.to_le_bytes()).collect();
    Ok(Packet {
        opcode,
        stage,
        maddr,
        src_port: get(&b, fields::SRC_PORT) as u8,
        tag,
        len: len as u8,
        dtype,
        rop,
        acc: if get(&b, fields::ACC) == 1 {
            AccMode::Native
        } else {
            AccMode::F32
        },
        route,
        ecode,
        targets,
        be,
        payload,
    })
}

/// Splits a byte string into flits (16 bytes each, little endian).
///
/// A length that is not a multiple of 16 is an `ERR_FRAME`.
pub fn flits_from_bytes(bytes: &[u8]) -> Result<Vec<Flit>, PacketError> {
    if !bytes.len().is_multiple_of(FLIT_BYTES) || bytes.is_empty() {
        return Err(PacketError {
            code: ErrorCode::Frame,
            field: "flits",
            detail: format!("{} bytes is not a whole number of flits", bytes.len()),
            maddr: 0,
            tag: 0,
        });
    }
    Ok(bytes
        .chunks_exact(FLIT_BYTES)
        .map(|c| u128::from_le_bytes(c.try_into().expect("chunk of 16")))
        .collect())
}

/// Formats a flit as 32 hex digits, most significant first.
pub fn flit_to_hex(f: Flit) -> String {
    format!("{f:032x}")
}

/// Parses a flit from up to 32 hex digits (most significant first; `_` allowed).
pub fn flit_from_hex(s: &str) -> Result<Flit, String> {
    let clean: String = s.chars().filter(|c| *c != '_').collect();
    if clean.is_empty() || clean.len() > 32 {
        return Err(format!("`{s}` is not 1 to 32 hex digits"));
    }
    u128::from_str_radix(&clean, 16).map_err(|e| format!("`{s}` is not hex: {e}"))
}

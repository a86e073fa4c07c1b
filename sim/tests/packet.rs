//! Packet codec: round trips of every kind, malformed frames (never a panic,
//! always the spec §6 code of the first failing check).

use dysharp_sim::numerics::{AccMode, DType, ReduceOp};
use dysharp_sim::packet::fields::{self, to_bits};
use dysharp_sim::packet::{
    decode, flit_from_hex, flit_to_hex, flits_from_bytes, with_hcc, ErrorCode, Limits, Opcode,
    Origin, Packet, Stage,
};
use proptest::prelude::*;

fn limits() -> Limits {
    Limits {
        num_ports: 8,
        experts_per_port: 32,
        max_targets: 32,
        groups: vec![0b1010_0110, 0, 0xFF],
        dynamic_ops: true,
    }
}

fn origin_of(op: Opcode) -> Origin {
    if op.is_request() {
        Origin::Sm
    } else {
        Origin::Hub
    }
}

/// A legal packet of kind `op` built from random parts.
fn legal(op: Opcode, seed: (u64, u16, u8, u8, u8, u8), targets: Vec<u16>, data: Vec<u8>) -> Packet {
    let (maddr, tag, len, dt, rop, misc) = seed;
    let mut p = Packet::new(op);
    p.maddr = (maddr << 4) & ((1 << 48) - 1);
    p.tag = tag & 0xFFF;
    p.src_port = misc % 8;
    p.len = if op == Opcode::RspError {
        0
    } else {
        1 + len % 16
    };
    p.dtype = DType::ALL[dt as usize % 3];
    p.rop = ReduceOp::ALL[rop as usize % 3];
    p.acc = AccMode::ALL[(misc / 8) as usize % 2];
    p.route = match op {
        Opcode::McSt | Opcode::McLdReduce => [0u8, 2][misc as usize % 2],
        Opcode::DynSt | Opcode::DynLdReduce => 0,
        _ => misc % 8,
    };
    if op.is_dynamic() {
        p.targets = targets;
    }
    if op == Opcode::RspPartial && misc % 5 == 0 {
        p.ecode = ErrorCode::Unmapped as u8;
    }
    if op == Opcode::RspError {
        p.ecode = 1 + misc % 13;
        p.dtype = DType::Bf16;
        p.rop = ReduceOp::Add;
        p.acc = AccMode::F32;
    }
    if op.is_store() {
        p.be = Some(u128::from_le_bytes(data[..16].try_into().unwrap()));
    }
    if op.carries_payload(p.ecode) {
        p.payload = data[..16 * p.len as usize].to_vec();
    }
    if op == Opcode::RspReduce || op == Opcode::RspRead || op == Opcode::RspPartial {
        p.stage = if misc % 3 == 0 {
            Stage::Combine
        } else {
            Stage::Dispatch
        };
    }
    p
}

fn arb_targets() -> impl Strategy<Value = Vec<u16>> {
    proptest::sample::subsequence((0u16..256).collect::<Vec<_>>(), 1..=32).prop_shuffle()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_kind_round_trips(
        op_i in 0usize..10,
        seed in any::<(u64, u16, u8, u8, u8, u8)>(),
        targets in arb_targets(),
        data in proptest::collection::vec(any::<u8>(), 256),
    ) {
        let op = Opcode::ALL[op_i];
        if op == Opcode::RspReduce {
            // Never legal on an uplink: it decodes only as ERR_OPCODE (checked below).
            let p = legal(op, seed, targets, data);
            let e = decode(&p.encode(), Origin::Hub, &limits()).unwrap_err();
            prop_assert_eq!(e.code, ErrorCode::Opcode);
            return Ok(());
        }
        let p = legal(op, seed, targets, data);
        let flits = p.encode();
        prop_assert_eq!(flits.len(), p.wire_flits());
        let back = decode(&flits, origin_of(op), &limits()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(back.encode(), flits);
        // Hex text round trip.
        for f in &p.encode() {
            prop_assert_eq!(flit_from_hex(&flit_to_hex(*f)).unwrap(), *f);
        }
    }

    #[test]
    fn random_frames_never_panic(frame in proptest::collection::vec(any::<u128>(), 0..30), hub in any::<bool>()) {
        let origin = if hub { Origin::Hub } else { Origin::Sm };
        let _ = decode(&frame, origin, &limits());
        let bytes: Vec<u8> = frame.iter().flat_map(|f| f.to_le_bytes()).collect();
        let _ = flits_from_bytes(&bytes[..bytes.len().saturating_sub(3)]);
    }

    #[test]
    fn any_header_bit_flip_is_caught(
        seed in any::<(u64, u16, u8, u8, u8, u8)>(),
        targets in arb_targets(),
        data in proptest::collection::vec(any::<u8>(), 256),
        bit in 0usize..128,
    ) {
        let p = legal(Opcode::DynSt, seed, targets, data);
        let mut flits = p.encode();
        flits[0] ^= 1u128 << bit;
        let e = decode(&flits, Origin::Sm, &limits()).unwrap_err();
        prop_assert_eq!(e.code, ErrorCode::Hcc);
    }

    #[test]
    fn truncated_and_overlong_frames(
        seed in any::<(u64, u16, u8, u8, u8, u8)>(),
        targets in arb_targets(),
        data in proptest::collection::vec(any::<u8>(), 256),
        cut in 1usize..20,
        extra in 1usize..8,
    ) {
        let p = legal(Opcode::DynSt, seed, targets, data);
        let flits = p.encode();
        let n = flits.len();
        let short = &flits[..n - cut.min(n - 1)];
        prop_assert_eq!(decode(short, Origin::Sm, &limits()).unwrap_err().code, ErrorCode::Frame);
        let mut long = flits.clone();
        long.extend(std::iter::repeat_n(0u128, extra));
        prop_assert_eq!(decode(&long, Origin::Sm, &limits()).unwrap_err().code, ErrorCode::Frame);
    }
}

/// Re-encodes flit0 after editing one field (the check code is recomputed).
fn edit(p: &Packet, f: fields::Field, v: u64) -> Vec<u128> {
    let mut flits = p.encode();
    let mut b = to_bits(flits[0]);
    fields::set(&mut b, f, v);
    flits[0] = with_hcc(fields::from_bits(&b));
    flits
}

fn dyn_st(targets: &[u16]) -> Packet {
    let mut p = Packet::new(Opcode::DynSt);
    p.maddr = 0x4000_0000_0000;
    p.tag = 7;
    p.len = 2;
    p.targets = targets.to_vec();
    p.be = Some(u128::MAX);
    p.payload = vec![0x11; 32];
    p
}

fn code(frame: &[u128], origin: Origin) -> ErrorCode {
    decode(frame, origin, &limits()).unwrap_err().code
}

#[test]
fn each_error_code_fires_where_the_spec_says() {
    let p = dyn_st(&[40, 3, 200]);
    assert!(decode(&p.encode(), Origin::Sm, &limits()).is_ok());
    // 1 HCC
    let mut f = p.encode();
    f[0] ^= 1 << 127;
    assert_eq!(code(&f, Origin::Sm), ErrorCode::Hcc);
    // 2 OPCODE: illegal, wrong origin, wrong stage
    assert_eq!(
        code(&edit(&p, fields::OPCODE, 0x7), Origin::Sm),
        ErrorCode::Opcode
    );
    assert_eq!(
        code(&edit(&p, fields::OPCODE, 0x0), Origin::Sm),
        ErrorCode::Opcode
    );
    assert_eq!(code(&p.encode(), Origin::Hub), ErrorCode::Opcode);
    assert_eq!(
        code(&edit(&p, fields::STAGE, 1), Origin::Sm),
        ErrorCode::Opcode
    );
    let mut r = Packet::new(Opcode::RspRead);
    r.payload = vec![0; 16];
    assert_eq!(code(&r.encode(), Origin::Sm), ErrorCode::Opcode);
    // 3 LENGTH
    assert_eq!(
        code(&edit(&p, fields::LEN, 0), Origin::Sm),
        ErrorCode::Length
    );
    assert_eq!(
        code(&edit(&p, fields::LEN, 17), Origin::Sm),
        ErrorCode::Length
    );
    // 4 TCOUNT: 0, above MaxTargets, non-zero on a non-DYN op
    assert_eq!(
        code(&edit(&p, fields::TCOUNT, 0), Origin::Sm),
        ErrorCode::Tcount
    );
    assert_eq!(
        code(&edit(&p, fields::TCOUNT, 33), Origin::Sm),
        ErrorCode::Tcount
    );
    let mut w = Packet::new(Opcode::Write);
    w.be = Some(u128::MAX);
    w.payload = vec![0; 16];
    assert_eq!(
        code(&edit(&w, fields::TCOUNT, 1), Origin::Sm),
        ErrorCode::Tcount
    );
    // 5 FRAME: tcount that disagrees with the target flits present
    assert_eq!(
        code(&edit(&p, fields::TCOUNT, 9), Origin::Sm),
        ErrorCode::Frame
    );
    assert_eq!(
        code(&edit(&p, fields::LEN, 3), Origin::Sm),
        ErrorCode::Frame
    );
    // 6 FORMAT
    assert_eq!(
        code(&edit(&p, fields::DTYPE, 3), Origin::Sm),
        ErrorCode::Format
    );
    assert_eq!(
        code(&edit(&p, fields::ROP, 3), Origin::Sm),
        ErrorCode::Format
    );
    // 7 ALIGN
    assert_eq!(
        code(&edit(&p, fields::MADDR, 0x4000_0000_0008), Origin::Sm),
        ErrorCode::Align
    );
    // 8 ROUTE
    assert_eq!(
        code(&edit(&w, fields::ROUTE, 8), Origin::Sm),
        ErrorCode::Route
    );
    let mut mc = Packet::new(Opcode::McLdReduce);
    mc.route = 1; // empty group
    assert_eq!(code(&mc.encode(), Origin::Sm), ErrorCode::Route);
    mc.route = 3; // beyond the table
    assert_eq!(code(&mc.encode(), Origin::Sm), ErrorCode::Route);
    mc.route = 2;
    assert!(decode(&mc.encode(), Origin::Sm, &limits()).is_ok());
    // 9 EXPERT, 10 DUP
    assert_eq!(
        code(&dyn_st(&[1, 256]).encode(), Origin::Sm),
        ErrorCode::Expert
    );
    assert_eq!(
        code(&dyn_st(&[1, 2, 3, 2]).encode(), Origin::Sm),
        ErrorCode::Dup
    );
    // Order: an out-of-range expert that is also duplicated reports EXPERT first.
    assert_eq!(
        code(&dyn_st(&[300, 300]).encode(), Origin::Sm),
        ErrorCode::Expert
    );
    // The error carries the frame's maddr and tag for the error response.
    let e = decode(&edit(&p, fields::ROP, 3), Origin::Sm, &limits()).unwrap_err();
    assert_eq!((e.maddr, e.tag), (p.maddr, p.tag));
    assert!(e.to_string().contains("rop"), "{e}");
    // Empty frames and partial flits.
    assert_eq!(code(&[], Origin::Sm), ErrorCode::Frame);
    assert_eq!(
        flits_from_bytes(&[0u8; 17]).unwrap_err().code,
        ErrorCode::Frame
    );
}

#[test]
fn error_partials_and_error_responses_skip_the_length_check() {
    let mut e = Packet::new(Opcode::RspError);
    e.ecode = ErrorCode::Range as u8;
    e.route = 3;
    assert!(decode(&e.encode(), Origin::Hub, &limits()).is_ok());
    let mut p = Packet::new(Opcode::RspPartial);
    p.ecode = ErrorCode::Unmapped as u8;
    p.len = 0;
    assert_eq!(p.wire_flits(), 1);
    assert!(decode(&p.encode(), Origin::Hub, &limits()).is_ok());
}

#[test]
fn hcc_covers_reserved_bits_and_targets_pad_with_ffff() {
    let p = dyn_st(&[5, 6, 7]);
    let f = p.encode();
    assert_eq!(f[1] >> 48, (1u128 << 80) - 1, "unused lanes are 0xFFFF");
    let mut b = to_bits(f[0]);
    fields::set(&mut b, fields::RSVD, 1);
    let mut g = f.clone();
    g[0] = fields::from_bits(&b);
    assert_eq!(code(&g, Origin::Sm), ErrorCode::Hcc);
    g[0] = with_hcc(g[0]);
    assert!(
        decode(&g, Origin::Sm, &limits()).is_ok(),
        "rsvd is ignored once the hcc matches"
    );
}

//! Switch, hub and fabric semantics of the golden model (spec §5, §7, §9).

use dysharp_sim::config::{Config, HubConfig};
use dysharp_sim::fabric::Fabric;
use dysharp_sim::hub::MemAccess;
use dysharp_sim::numerics::{reduce_lanes, AccMode, DType, ReduceOp};
use dysharp_sim::packet::{ErrorCode, Opcode, Origin, Packet, Stage};
use dysharp_sim::switch::Switch;
use dysharp_sim::traffic::{account, RowShape, Token};
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn cfg() -> Config {
    let mut c = Config {
        num_ports: 8,
        experts_per_port: 4,
        max_targets: 32,
        groups: vec![0; 16],
        dynamic_ops: true,
        hub: HubConfig {
            log2_bsize: 9,
            log2_al_entries: 8,
            log2_slots: 3,
            tlb_entries: 4,
            tlb_ways: 2,
            ..HubConfig::default()
        },
    };
    c.groups[1] = 0b0110_1001;
    c
}

fn store(targets: &[u16], aidx: u64, len: u8, byte: u8) -> Packet {
    let mut p = Packet::new(Opcode::DynSt);
    p.maddr = cfg().hub.mbase + (aidx << 9);
    p.tag = aidx as u16;
    p.len = len;
    p.targets = targets.to_vec();
    p.be = Some(u128::MAX);
    p.payload = (0..16 * len as usize)
        .map(|i| byte.wrapping_add(i as u8))
        .collect();
    p
}

fn ld_reduce(targets: &[u16], aidx: u64, len: u8, dtype: DType, rop: ReduceOp) -> Packet {
    let mut p = Packet::new(Opcode::DynLdReduce);
    p.stage = Stage::Combine;
    p.maddr = cfg().hub.mbase + (aidx << 9);
    p.tag = 0x800 | aidx as u16;
    p.len = len;
    p.dtype = dtype;
    p.rop = rop;
    p.targets = targets.to_vec();
    p
}

#[test]
fn partial_arrival_order_does_not_change_the_result() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..200 {
        let dtype = DType::ALL[case % 3];
        let rop = ReduceOp::ALL[(case / 3) % 3];
        let acc = AccMode::ALL[(case / 9) % 2];
        let mut ports: Vec<usize> = (1..8).collect();
        ports.shuffle(&mut rng);
        ports.truncate(rng.gen_range(2..=7));
        let targets: Vec<u16> = ports.iter().map(|p| (4 * p) as u16).collect();
        let partials: Vec<(usize, Vec<u8>)> = ports
            .iter()
            .map(|p| {
                // Values with enough spread that the order of additions matters.
                let data = (0..32)
                    .map(|_| {
                        let e = rng.gen_range(100u32..160);
                        f32::from_bits(
                            (rng.gen::<u32>() & 0x8000_0000)
                                | (e << 23)
                                | (rng.gen::<u32>() & 0x7F_FFFF),
                        )
                    })
                    .flat_map(|f| {
                        let bits = dysharp_sim::numerics::from_f32(dtype, f);
                        bits.to_le_bytes()[..dtype.bytes()].to_vec()
                    })
                    .collect::<Vec<u8>>();
                (*p, data[..32].to_vec())
            })
            .collect();
        let mut results = Vec::new();
        for _perm in 0..6 {
            let mut sw = Switch::new(&cfg());
            let mut req = ld_reduce(&targets, 1, 2, dtype, rop);
            req.acc = acc;
            let out = sw.ingress(0, Origin::Sm, req);
            assert_eq!(out.len(), ports.len());
            let mut order = partials.clone();
            order.shuffle(&mut rng);
            let mut done = Vec::new();
            for (p, data) in order {
                let (_, replica) = out.iter().find(|(q, _)| *q == p).unwrap();
                let mut part = dysharp_sim::hub::response(replica, Opcode::RspPartial);
                part.payload = data;
                done.extend(sw.ingress(p, Origin::Hub, part));
            }
            assert_eq!(done.len(), 1);
            assert_eq!(done[0].0, 0);
            assert_eq!(done[0].1.opcode, Opcode::RspReduce);
            results.push(done[0].1.payload.clone());
        }
        assert!(
            results.windows(2).all(|w| w[0] == w[1]),
            "case {case}: results differ by arrival order"
        );
        // And it is the ascending-port reduction.
        let mut sorted = partials.clone();
        sorted.sort();
        let inputs: Vec<&[u8]> = sorted.iter().map(|(_, d)| d.as_slice()).collect();
        let mut want = vec![0u8; 32];
        reduce_lanes(dtype, rop, acc, &inputs, &mut want).unwrap();
        assert_eq!(results[0], want, "case {case}");
    }
}

/// Spec §5.3: a second ld_reduce with a pending (requester, tag) stalls, with
/// every later request of that port, until the first completes; other ports
/// are not held.
#[test]
fn same_tag_ld_reduce_stalls_until_the_first_completes() {
    let mut sw = Switch::new(&cfg());
    let first = ld_reduce(&[4, 8], 1, 1, DType::F32, ReduceOp::Add);
    let out = sw.ingress(0, Origin::Sm, first.clone());
    assert_eq!(out.iter().map(|(q, _)| *q).collect::<Vec<_>>(), vec![1, 2]);
    // The same tag again, then a WRITE from the same port: both wait.
    let mut second = first.clone();
    second.targets = vec![12];
    assert!(sw.ingress(0, Origin::Sm, second).is_empty());
    let mut write = Packet::new(Opcode::Write);
    write.route = 5;
    write.len = 1;
    write.be = Some(u128::MAX);
    write.payload = vec![7; 16];
    assert!(sw.ingress(0, Origin::Sm, write.clone()).is_empty());
    assert_eq!(sw.stalled(), 2);
    assert_eq!(sw.pending(), 3);
    // Another port is not held.
    assert_eq!(sw.ingress(3, Origin::Sm, write).len(), 1);
    // Port 1 answers: still waiting for port 2.
    let part = |q: usize| {
        let (_, replica) = out.iter().find(|(p, _)| *p == q).unwrap();
        let mut r = dysharp_sim::hub::response(replica, Opcode::RspPartial);
        r.payload = vec![0; 16];
        r
    };
    assert!(sw.ingress(1, Origin::Hub, part(1)).is_empty());
    // Port 2 answers: the result, then the second ld_reduce's replica, then the WRITE.
    let done = sw.ingress(2, Origin::Hub, part(2));
    let kinds: Vec<(usize, Opcode)> = done.iter().map(|(q, p)| (*q, p.opcode)).collect();
    assert_eq!(
        kinds,
        vec![
            (0, Opcode::RspReduce),
            (3, Opcode::DynLdReduce),
            (5, Opcode::Write)
        ]
    );
    assert_eq!(sw.stalled(), 0);
    assert_eq!(
        sw.pending(),
        1,
        "the second ld_reduce is now the pending one"
    );
}

/// Spec §5.6: an error-free partial whose length differs from the request's
/// fails with ERR_LENGTH; the result is an RSP_ERROR naming that port.
#[test]
fn wrong_length_partial_is_a_length_error() {
    let mut sw = Switch::new(&cfg());
    let out = sw.ingress(
        0,
        Origin::Sm,
        ld_reduce(&[4, 8], 1, 2, DType::F32, ReduceOp::Add),
    );
    let mut done = Vec::new();
    for (q, replica) in &out {
        let mut r = dysharp_sim::hub::response(replica, Opcode::RspPartial);
        r.payload = vec![0; if *q == 2 { 16 } else { 32 }];
        r.len = (r.payload.len() / 16) as u8;
        done.extend(sw.ingress(*q, Origin::Hub, r));
    }
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].1.opcode, Opcode::RspError);
    assert_eq!(done[0].1.ecode, ErrorCode::Length as u8);
    assert_eq!(done[0].1.src_port, 2);
}

/// Spec §5.3: an entry whose partials do not all arrive times out: one
/// `RSP_ERROR` `ERR_TIMEOUT` naming the lowest port that did not answer,
/// counted once there; the entry stays quarantined, so a late partial is
/// consumed without a count and a second ld_reduce with the same tag keeps
/// waiting until every port answered.
#[test]
fn timeout_answers_once_and_quarantines_until_the_late_partials() {
    let mut sw = Switch::new(&cfg());
    let first = ld_reduce(&[4, 8, 12], 1, 1, DType::F32, ReduceOp::Add);
    let out = sw.ingress(0, Origin::Sm, first.clone());
    let part = |q: usize| {
        let (_, replica) = out.iter().find(|(p, _)| *p == q).unwrap();
        let mut r = dysharp_sim::hub::response(replica, Opcode::RspPartial);
        r.payload = vec![0; 16];
        r
    };
    assert!(sw.ingress(2, Origin::Hub, part(2)).is_empty());
    assert_eq!(sw.missing(0, first.tag), Some(vec![1, 3]));
    let (q, r) = sw.timeout(0, first.tag).unwrap();
    assert_eq!(
        (q, r.opcode, r.ecode),
        (0, Opcode::RspError, ErrorCode::Timeout as u8)
    );
    assert_eq!((r.src_port, r.tag, r.maddr), (1, first.tag, first.maddr));
    assert_eq!(sw.errors[1][ErrorCode::Timeout as usize - 1], 1);
    assert_eq!(
        sw.timeout(0, first.tag).unwrap_err().to_string(),
        format!(
            "the entry of requester 0, tag {:#x} has already timed out",
            first.tag
        )
    );
    // The same tag again waits behind the quarantined entry.
    assert!(sw.ingress(0, Origin::Sm, first.clone()).is_empty());
    assert_eq!(sw.stalled(), 1);
    // Late partials: consumed, not counted; the last frees the entry and the
    // waiting request proceeds.
    assert!(sw.ingress(3, Origin::Hub, part(3)).is_empty());
    let done = sw.ingress(1, Origin::Hub, part(1));
    assert_eq!(
        done.iter().map(|(q, p)| (*q, p.opcode)).collect::<Vec<_>>(),
        vec![
            (1, Opcode::DynLdReduce),
            (2, Opcode::DynLdReduce),
            (3, Opcode::DynLdReduce)
        ]
    );
    let total: u64 = sw.errors.iter().flatten().sum();
    assert_eq!(total, 1, "one fault, counted once");
    // A duplicate of an answered port is still an orphan.
    assert!(sw.ingress(2, Origin::Hub, part(2)).is_empty());
    assert!(sw.ingress(2, Origin::Hub, part(2)).is_empty());
    assert_eq!(sw.errors[2][ErrorCode::Opcode as usize - 1], 1);
}

/// Spec §5.3: the quarantine ends at a second timeout (`expire`): the requests
/// behind the entry proceed and a partial after that is an orphan.
#[test]
fn expired_quarantine_frees_the_entry_and_late_partials_are_orphans() {
    let mut sw = Switch::new(&cfg());
    let first = ld_reduce(&[4, 8], 7, 1, DType::F32, ReduceOp::Add);
    let out = sw.ingress(5, Origin::Sm, first.clone());
    assert_eq!(
        sw.expire(5, first.tag).unwrap_err(),
        dysharp_sim::switch::EntryError::Live {
            requester: 5,
            tag: first.tag
        }
    );
    sw.timeout(5, first.tag).unwrap();
    assert!(sw.ingress(5, Origin::Sm, first.clone()).is_empty());
    let released = sw.expire(5, first.tag).unwrap();
    assert_eq!(released.len(), 2, "the waiting ld_reduce's replicas");
    assert_eq!(sw.pending(), 1, "the second ld_reduce is the pending one");
    // A partial of the first: it matches the second, which is what a tag
    // reuse after the quarantine means (the requester owns its tags).
    let (_, replica) = out.iter().find(|(p, _)| *p == 1).unwrap();
    let mut r = dysharp_sim::hub::response(replica, Opcode::RspPartial);
    r.payload = vec![0; 16];
    assert!(sw.ingress(1, Origin::Hub, r.clone()).is_empty());
    assert_eq!(sw.missing(5, first.tag), Some(vec![2]));
    sw.timeout(5, first.tag).unwrap();
    sw.expire(5, first.tag).unwrap();
    assert!(sw.ingress(2, Origin::Hub, r).is_empty());
    assert_eq!(sw.errors[2][ErrorCode::Opcode as usize - 1], 1, "orphan");
    assert_eq!(sw.errors[2][ErrorCode::Timeout as usize - 1], 1);
    assert_eq!(
        sw.timeout(5, first.tag).unwrap_err(),
        dysharp_sim::switch::EntryError::NotPending {
            requester: 5,
            tag: first.tag
        }
    );
}

#[test]
fn dispatch_then_combine_through_the_fabric() {
    let mut f = Fabric::new(&cfg()).unwrap();
    f.enable_logs();
    // Token at aidx 3 from port 0 to experts 5, 6 (port 1), 13 (port 3).
    f.inject(0, store(&[13, 5, 6], 3, 2, 0x10));
    let eg = f.egress.as_ref().unwrap();
    assert_eq!(eg[1].len(), 1);
    assert_eq!(eg[1][0].targets, vec![5, 6], "pruned, list order kept");
    assert_eq!(eg[3][0].targets, vec![13]);
    assert_eq!(eg[1][0].src_port, 0);
    // Hub 1: expert 5 (local 1) walk miss, allocate, 2 data lines; expert 6 likewise.
    let log = f.hubs[1].log.clone().unwrap();
    assert_eq!(log.len(), 2 * (1 + 1 + 2));
    let c = cfg().hub;
    let entry = c.al_base + 4 * ((1u64 << c.log2_al_entries) + 3);
    assert_eq!(log[0], MemAccess::Read { addr: entry & !0xF });
    assert!(
        matches!(log[1], MemAccess::Write { addr, strobe, .. } if addr == entry & !0xF && strobe == 0xF << (entry & 0xF))
    );
    // local expert 1, slot 0
    let vaddr = c.data_base + ((1u64 << c.log2_slots) << c.log2_bsize);
    assert!(matches!(log[2], MemAccess::Write { addr, strobe: 0xFFFF, .. } if addr == vaddr));
    assert_eq!(f.hubs[1].counters, vec![0, 1, 1, 0]);
    // Combine: each hub reads its targets back and pre-reduces; bytes are bf16 lanes.
    f.inject(0, ld_reduce(&[13, 5, 6], 3, 2, DType::Bf16, ReduceOp::Max));
    let got = f.delivered[0].pop().unwrap();
    assert_eq!(got.opcode, Opcode::RspReduce);
    assert_eq!(got.route, 0);
    let row: Vec<u8> = (0..32).map(|i| 0x10u8.wrapping_add(i as u8)).collect();
    assert_eq!(
        got.payload, row,
        "max of three copies of the row is the row"
    );
    assert_eq!(f.switch.pending(), 0);
    // Stats: hub 1 looked up 2 (dispatch) + 2 (combine) translations; the combine ones hit.
    let s = f.hubs[1].stats();
    assert_eq!((s.tlb.hits, s.tlb.misses), (2, 2));
}

#[test]
fn unmapped_combine_is_an_error_response_not_a_hang() {
    let mut f = Fabric::new(&cfg()).unwrap();
    f.inject(2, store(&[5], 1, 1, 0));
    // Expert 9 (port 2) never received aidx 1; expert 5 did.
    f.inject(0, ld_reduce(&[9, 5], 1, 1, DType::F32, ReduceOp::Add));
    let r = f.delivered[0].pop().unwrap();
    assert_eq!(r.opcode, Opcode::RspError);
    assert_eq!(r.ecode, ErrorCode::Unmapped as u8);
    assert_eq!(r.src_port, 2, "the lowest failing port");
    assert_eq!(f.error_counters()[2][ErrorCode::Unmapped as usize - 1], 1);
    assert_eq!(f.switch.pending(), 0);
}

#[test]
fn rsp_error_carries_stage_0_whatever_the_request_carried() {
    // Spec §2.1: responses copy the request's stage, RSP_ERROR excepted (stage 0).
    let mut f = Fabric::new(&cfg()).unwrap();
    // A hub's error to a Combine request (stage 1), through the switch's result.
    f.inject(0, ld_reduce(&[9], 1, 1, DType::F32, ReduceOp::Add));
    let r = f.delivered[0].pop().unwrap();
    assert_eq!((r.opcode, r.stage), (Opcode::RspError, Stage::Dispatch));
    // The switch's error to a frame whose stage bit is what is wrong (a DYN_ST in stage 1).
    let mut bad = store(&[5], 1, 1, 0);
    bad.stage = Stage::Combine;
    let out = f.switch.ingress_frame(3, Origin::Sm, &bad.encode());
    assert_eq!(out.len(), 1);
    let (port, r) = &out[0];
    assert_eq!(*port, 3);
    assert_eq!(r.ecode, ErrorCode::Opcode as u8);
    assert_eq!((r.opcode, r.stage), (Opcode::RspError, Stage::Dispatch));
}

#[test]
fn range_and_alloc_errors() {
    let mut f = Fabric::new(&cfg()).unwrap();
    // 2^log2_slots = 8 slots per expert: the ninth distinct aidx fails.
    for a in 0..9 {
        f.inject(0, store(&[4], a, 1, 0));
    }
    let errs = &f.delivered[0];
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].ecode, ErrorCode::Alloc as u8);
    // aidx beyond the AL table, and a payload crossing bsize.
    let mut p = store(&[4], 256, 1, 0);
    f.inject(0, p.clone());
    p.maddr = cfg().hub.mbase + 512 - 16;
    p.len = 2;
    p.payload = vec![0; 32];
    f.inject(0, p);
    let codes: Vec<u8> = f.delivered[0].iter().map(|p| p.ecode).collect();
    assert_eq!(codes, vec![13, 12, 12]);
    assert_eq!(f.error_counters()[1][ErrorCode::Range as usize - 1], 2);
}

#[test]
fn static_groups_and_unicast() {
    let mut f = Fabric::new(&cfg()).unwrap();
    f.enable_logs();
    let mut st = Packet::new(Opcode::McSt);
    st.route = 1; // ports 0, 3, 5, 6
    st.maddr = 0x1000;
    st.len = 1;
    st.be = Some(0x0F); // first 8 bytes only
    st.payload = vec![0xAB; 16];
    f.inject(3, st);
    for (q, eg) in f.egress.as_ref().unwrap().iter().enumerate() {
        assert_eq!(eg.len(), usize::from([0, 3, 5, 6].contains(&q)), "port {q}");
    }
    let mut rd = Packet::new(Opcode::Read);
    rd.route = 5;
    rd.maddr = 0x1000;
    rd.len = 1;
    f.inject(7, rd);
    let r = f.delivered[7].pop().unwrap();
    assert_eq!(r.opcode, Opcode::RspRead);
    assert_eq!(&r.payload[..8], &[0xAB; 8]);
    assert_eq!(&r.payload[8..], &[0; 8], "byte enables honoured");
    let mut ld = Packet::new(Opcode::McLdReduce);
    ld.route = 1;
    ld.maddr = 0x1000;
    ld.len = 1;
    ld.dtype = DType::Bf16;
    f.inject(1, ld);
    let r = f.delivered[1].pop().unwrap();
    assert_eq!(r.opcode, Opcode::RspReduce);
    // 4 members each hold 0xABAB (bf16 -3.04e-13): the f32 sum of four, rounded once.
    let x = dysharp_sim::numerics::to_f32(DType::Bf16, 0xABAB);
    let want = dysharp_sim::numerics::from_f32(DType::Bf16, x + x + x + x) as u16;
    assert_eq!(u16::from_le_bytes([r.payload[0], r.payload[1]]), want);
}

/// Spec §5.7: without the dynamic operations a `DYN_ST` or `DYN_LD_REDUCE` from an SM is an
/// illegal opcode (dropped, counted, answered), and the static ops around it are served.
#[test]
fn a_switch_without_dynamic_ops_refuses_them_and_serves_the_rest() {
    let mut c = cfg();
    c.dynamic_ops = false;
    let mut f = Fabric::new(&c).unwrap();
    f.inject_frame(2, &store(&[5], 0, 1, 0).encode());
    f.inject_frame(
        4,
        &ld_reduce(&[5, 9], 0, 1, DType::Bf16, ReduceOp::Add).encode(),
    );
    for (port, tag) in [(2, 0), (4, 0x800)] {
        let errs = &f.error_counters()[port];
        assert_eq!(errs[ErrorCode::Opcode as usize - 1], 1, "port {port}");
        assert_eq!(errs.iter().sum::<u64>(), 1, "port {port}: one count");
        let r = f.delivered[port].pop().unwrap();
        assert_eq!((r.opcode, r.ecode, r.tag), (Opcode::RspError, 2, tag));
        assert!(f.delivered[port].is_empty());
    }
    assert_eq!(
        f.hubs[1].counters[1], 0,
        "the refused Dispatch allocated nothing"
    );
    let mut st = Packet::new(Opcode::McSt);
    st.route = 1; // ports 0, 3, 5, 6
    st.maddr = 0x1000;
    st.len = 1;
    st.be = Some(u128::MAX);
    st.payload = vec![0x3C; 16];
    f.inject(2, st);
    let mut rd = Packet::new(Opcode::Read);
    rd.route = 6;
    rd.maddr = 0x1000;
    rd.len = 1;
    f.inject(2, rd);
    let r = f.delivered[2].pop().unwrap();
    assert_eq!(
        (r.opcode, &r.payload[..]),
        (Opcode::RspRead, &[0x3C; 16][..])
    );
    // The same frames are legal on a switch with the dynamic ops.
    let mut g = Fabric::new(&cfg()).unwrap();
    g.inject_frame(2, &store(&[5], 0, 1, 0).encode());
    assert_eq!(g.error_counters()[2].iter().sum::<u64>(), 0);
    assert_eq!(g.hubs[1].counters[1], 1);
}

#[test]
fn bad_frames_are_dropped_counted_and_answered() {
    let mut f = Fabric::new(&cfg()).unwrap();
    let good = store(&[5], 0, 1, 0).encode();
    let mut bad_hcc = good.clone();
    bad_hcc[0] ^= 1 << 40;
    f.inject_frame(2, &bad_hcc);
    f.inject_frame(2, &good[..good.len() - 1]);
    f.inject_frame(2, &store(&[5, 5], 0, 1, 0).encode());
    f.inject_frame(2, &good);
    // HCC: counted, no response; FRAME and DUP: error responses to port 2.
    let errs = &f.error_counters()[2];
    assert_eq!(errs[0], 1);
    assert_eq!(errs[ErrorCode::Frame as usize - 1], 1);
    assert_eq!(errs[ErrorCode::Dup as usize - 1], 1);
    let codes: Vec<u8> = f.delivered[2].iter().map(|p| p.ecode).collect();
    assert_eq!(codes, vec![5, 10]);
    assert!(f.delivered[2]
        .iter()
        .all(|p| p.route == 2 && p.src_port == 2));
    // The good frame after the bad ones was served: expert 5 got a slot.
    assert_eq!(f.hubs[1].counters[1], 1);
    // A claimed source port is overwritten by the ingress port.
    let mut liar = store(&[6], 4, 1, 0);
    liar.src_port = 7;
    f.enable_logs();
    f.inject_frame(2, &liar.encode());
    assert_eq!(f.egress.as_ref().unwrap()[1][0].src_port, 2);
}

/// Brute-force count of brief §4, straight from the definitions.
fn brute(tokens: &[Token], ports: usize, epp: usize, row_bytes: u64) -> [Vec<u64>; 8] {
    let mut v: [Vec<u64>; 8] = Default::default();
    for x in v.iter_mut() {
        *x = vec![0; ports];
    }
    let [d_up, d_dn, db_up, db_dn, c_up, c_dn, cb_up, cb_dn] = &mut v;
    for t in tokens {
        let mut r: Vec<usize> = t
            .experts
            .iter()
            .map(|e| *e as usize / epp)
            .filter(|g| *g != t.src)
            .collect();
        r.sort();
        r.dedup();
        if r.is_empty() {
            continue;
        }
        d_up[t.src] += row_bytes;
        c_dn[t.src] += row_bytes;
        for g in &r {
            d_dn[*g] += row_bytes;
            db_up[t.src] += row_bytes;
            db_dn[*g] += row_bytes;
            c_up[*g] += row_bytes;
            cb_up[*g] += row_bytes;
            cb_dn[t.src] += row_bytes;
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn accounting_matches_brute_force(seed in any::<u64>(), n in 1usize..60, flits in 1usize..40) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (ports, epp) = (4usize, 3usize);
        let tokens: Vec<Token> = (0..n).map(|i| {
            let mut e: Vec<u16> = (0..(ports * epp) as u16).collect();
            e.shuffle(&mut rng);
            e.truncate(rng.gen_range(1..=5));
            Token { src: rng.gen_range(0..ports), aidx: i as u32, experts: e }
        }).collect();
        let row = RowShape { row_bytes: 16 * flits };
        let t = account(&tokens, ports, epp, row);
        let b = brute(&tokens, ports, epp, row.row_bytes as u64);
        prop_assert_eq!(&t.dispatch.uplink_payload_bytes, &b[0]);
        prop_assert_eq!(&t.dispatch.downlink_payload_bytes, &b[1]);
        prop_assert_eq!(&t.dispatch.baseline_uplink_payload_bytes, &b[2]);
        prop_assert_eq!(&t.dispatch.baseline_downlink_payload_bytes, &b[3]);
        prop_assert_eq!(&t.combine.uplink_payload_bytes, &b[4]);
        prop_assert_eq!(&t.combine.downlink_payload_bytes, &b[5]);
        prop_assert_eq!(&t.combine.baseline_uplink_payload_bytes, &b[6]);
        prop_assert_eq!(&t.combine.baseline_downlink_payload_bytes, &b[7]);
        // Wire bytes exceed payload bytes by the headers (DySHARP dispatch uplink:
        // per chunk 1 header + target flits + 1 byte-enable flit).
        let chunks = flits.div_ceil(16) as u64;
        for p in 0..ports {
            let sent: u64 = tokens.iter().filter(|x| x.src == p && !x.remote(epp).is_empty())
                .map(|x| chunks * 16 * (2 + x.remote(epp).len().div_ceil(8) as u64)).sum();
            prop_assert_eq!(t.dispatch.uplink_wire_bytes[p], t.dispatch.uplink_payload_bytes[p] + sent);
        }
    }
}

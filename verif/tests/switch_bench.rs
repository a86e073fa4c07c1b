//! `dysharp_switch` alone against misbehaving GPUs (verif/src/switch_tb.rs):
//! each misbehaviour class of a hub alone (the right code counted at the right
//! port, the right `RSP_ERROR`/`RSP_REDUCE` produced, nothing malformed
//! forwarded), a hub that never answers one requester (its load-reduces time
//! out, `ERR_TIMEOUT` counted once at that hub's port, and nothing stalls for
//! good), the throughput of healthy requesters beside a dead hub, and random
//! adversarial runs on `switch_p4` and `switch_p8`.
//!
//! A failing case prints its seed and the command that re-runs it; set
//! `DYSHARP_VCD=FILE` to write a waveform on that re-run.

use dysharp_sim::numerics::DType;
use dysharp_sim::packet::{ErrorCode, Opcode, Packet};
use dysharp_verif::stimulus::SCRATCH;
use dysharp_verif::switch_tb::{corrupt, Faults, CORRUPTIONS, FAULT_NAMES, FORGED_TAG};
use dysharp_verif::{SwitchBench, SwitchBenchConfig, SwitchStats, TbError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Group 0: ports {1, 2}; group 1: port {1}; group 2: every port.
fn config(model: &str, seed: u64) -> SwitchBenchConfig {
    let n = if model == "switch_p4" { 4 } else { 8 };
    let mut c = SwitchBenchConfig::new(model, seed);
    c.groups = vec![0b0110, 0b0010, (1u32 << n) - 1];
    c.vcd = std::env::var_os("DYSHARP_VCD").map(Into::into);
    c
}

/// Runs a case; on failure panics with the seed and the re-run command.
fn case(
    name: &str,
    cfg: SwitchBenchConfig,
    limit: u64,
    body: impl FnOnce(&mut SwitchBench),
) -> (SwitchBench, SwitchStats) {
    let seed = cfg.seed;
    let model = cfg.model.clone();
    let t = std::time::Instant::now();
    let result = (|| -> Result<(SwitchBench, SwitchStats), TbError> {
        let mut b = SwitchBench::new(cfg)?;
        body(&mut b);
        let stats = b.run(limit)?;
        b.close();
        Ok((b, stats))
    })();
    match result {
        Ok((b, s)) => {
            let faults: Vec<String> = FAULT_NAMES
                .iter()
                .zip(s.faults)
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            eprintln!(
                "{name} on {model}: {} cycles, {} SM frames, {} hub frames, {} packets checked, {} errors counted, faults [{}], {:.2} s",
                s.cycles,
                s.sm_frames,
                s.hub_frames,
                s.packets_checked,
                s.errors,
                faults.join(", "),
                t.elapsed().as_secs_f64()
            );
            (b, s)
        }
        Err(e) => panic!(
            "{name} on {model} failed (seed {seed:#x}): {e}\n  re-run: DYSHARP_VCD={name}.vcd cargo test --release -p dysharp-verif --test switch_bench {name} -- --include-ignored"
        ),
    }
}

/// A load-reduce of `len` flits of f32 at the scratch region to static group `group`.
fn mc_ld_reduce(tag: u16, group: u8, len: u8) -> Packet {
    let mut p = Packet::new(Opcode::McLdReduce);
    p.route = group;
    p.maddr = SCRATCH;
    p.len = len;
    p.tag = tag;
    p.dtype = DType::F32;
    p
}

/// A WRITE of ones to `SCRATCH` at port `dst`, so load-reduces there read data.
fn write(tag: u16, dst: u8, len: u8) -> Packet {
    let mut p = Packet::new(Opcode::Write);
    p.route = dst;
    p.maddr = SCRATCH;
    p.len = len;
    p.tag = tag;
    p.be = Some(u128::MAX);
    p.payload = (0..4 * len as usize)
        .flat_map(|i| (1.0f32 + i as f32).to_le_bytes())
        .collect();
    p
}

/// Every error counter of `b` except `(port, code)` is zero, and that one is `n`.
fn only_error(b: &SwitchBench, port: usize, code: ErrorCode, n: u64) {
    for (q, codes) in b.errors().iter().enumerate() {
        for (c, v) in codes.iter().enumerate() {
            let want = if q == port && c + 1 == code as usize {
                n
            } else {
                0
            };
            assert_eq!(*v, want, "port {q} code {} counter", c + 1);
        }
    }
}

#[test]
fn request_opcode_from_hub_is_err_opcode_at_the_hub_port() {
    let (b, _) = case(
        "request_opcode_from_hub_is_err_opcode_at_the_hub_port",
        config("switch_p4", 0x101),
        20_000,
        |b| {
            let mut p = Packet::new(Opcode::Read);
            p.route = 2;
            p.maddr = SCRATCH;
            p.tag = 0x77;
            b.push_hub_frame(1, 0, p.encode());
        },
    );
    only_error(&b, 1, ErrorCode::Opcode, 1);
    let d = b.delivered(1);
    assert_eq!(d.len(), 1, "one RSP_ERROR to SM 1: {d:?}");
    assert_eq!(
        (d[0].opcode, d[0].ecode, d[0].tag, d[0].src_port),
        (Opcode::RspError, 2, 0x77, 1)
    );
    assert!(b.delivered(2).is_empty(), "nothing forwarded to port 2");
}

#[test]
fn orphan_partial_is_dropped_and_counted_at_the_hub_port() {
    let (b, _) = case(
        "orphan_partial_is_dropped_and_counted_at_the_hub_port",
        config("switch_p4", 0x102),
        20_000,
        |b| {
            let mut p = Packet::new(Opcode::RspPartial);
            p.route = 0;
            p.tag = FORGED_TAG;
            p.len = 2;
            p.payload = vec![1; 32];
            b.push_hub_frame(2, 0, p.encode());
        },
    );
    only_error(&b, 2, ErrorCode::Opcode, 1);
    for q in 0..4 {
        assert!(b.delivered(q).is_empty(), "port {q}: {:?}", b.delivered(q));
    }
}

#[test]
fn duplicate_partial_is_counted_once_and_the_result_is_right() {
    let mut cfg = config("switch_p4", 0x103);
    cfg.faults = vec![
        Faults::default(),
        Faults {
            duplicate: 1.0,
            ..Faults::default()
        },
    ];
    let (b, _) = case(
        "duplicate_partial_is_counted_once_and_the_result_is_right",
        cfg,
        20_000,
        |b| {
            b.push(0, &write(1, 1, 4));
            b.push(0, &write(2, 2, 4));
            b.push(0, &mc_ld_reduce(3, 0, 4));
        },
    );
    only_error(&b, 1, ErrorCode::Opcode, 1);
    let d = b.delivered(0);
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].opcode, d[0].tag, d[0].src_port),
        (Opcode::RspReduce, 3, 0)
    );
    // 2 × (1, 2, 3, …): checked bit for bit against the golden switch; spot-check lane 0.
    assert_eq!(
        f32::from_le_bytes(d[0].payload[..4].try_into().unwrap()),
        2.0
    );
}

#[test]
fn partial_from_a_port_not_asked_is_counted_at_that_port() {
    let mut cfg = config("switch_p4", 0x104);
    // Hub 1 answers late, so the entry is pending when hub 3 sends its partial.
    cfg.faults = vec![
        Faults::default(),
        Faults {
            late: 1.0,
            ..Faults::default()
        },
    ];
    cfg.late_latency = (600, 600);
    let (b, _) = case(
        "partial_from_a_port_not_asked_is_counted_at_that_port",
        cfg,
        20_000,
        |b| {
            b.push(0, &mc_ld_reduce(5, 1, 2));
            let mut p = Packet::new(Opcode::RspPartial);
            p.route = 0;
            p.tag = 5;
            p.len = 2;
            p.maddr = SCRATCH;
            p.dtype = DType::F32;
            p.payload = vec![0x40; 32];
            b.push_hub_frame(3, 200, p.encode());
        },
    );
    only_error(&b, 3, ErrorCode::Opcode, 1);
    let d = b.delivered(0);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].opcode, d[0].tag), (Opcode::RspReduce, 5));
    assert!(
        d[0].payload.iter().all(|x| *x == 0),
        "hub 3's data must not be reduced"
    );
}

#[test]
fn wrong_length_partial_gives_err_length_from_the_lowest_failing_port() {
    for (faulty, want_src) in [(vec![2], 2u8), (vec![1, 2], 1)] {
        let mut cfg = config("switch_p4", 0x105);
        cfg.faults = vec![Faults::default(); 4];
        for &q in &faulty {
            cfg.faults[q].wrong_len = 1.0;
        }
        let (b, _) = case(
            "wrong_length_partial_gives_err_length_from_the_lowest_failing_port",
            cfg,
            20_000,
            |b| {
                b.push(0, &write(1, 1, 3));
                b.push(0, &write(2, 2, 3));
                b.push(0, &mc_ld_reduce(9, 0, 3));
            },
        );
        let total: u64 = b.errors().iter().flatten().sum();
        assert_eq!(total, 0, "a failed partial is not an ingress error");
        let d = b.delivered(0);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].opcode, d[0].ecode, d[0].tag, d[0].src_port, d[0].maddr),
            (
                Opcode::RspError,
                ErrorCode::Length as u8,
                9,
                want_src,
                SCRATCH
            ),
            "ports {faulty:?} send wrong lengths"
        );
    }
}

#[test]
fn forged_responses_are_forwarded_or_rejected_by_route() {
    let (b, _) = case(
        "forged_responses_are_forwarded_or_rejected_by_route",
        config("switch_p4", 0x106),
        20_000,
        |b| {
            // An RSP_READ to a port with nothing pending: forwarded (spec §5.6).
            let mut r = Packet::new(Opcode::RspRead);
            r.route = 2;
            r.tag = FORGED_TAG;
            r.len = 1;
            r.payload = vec![7; 16];
            b.push_hub_frame(1, 0, r.encode());
            // An RSP_ERROR routed past the last port: ERR_ROUTE at the hub's port.
            let mut e = Packet::new(Opcode::RspError);
            e.route = 7;
            e.tag = FORGED_TAG + 1;
            e.ecode = 12;
            b.push_hub_frame(1, 0, e.encode());
        },
    );
    only_error(&b, 1, ErrorCode::Route, 1);
    let d2 = b.delivered(2);
    assert_eq!(d2.len(), 1);
    assert_eq!((d2[0].opcode, d2[0].src_port), (Opcode::RspRead, 1));
    let d1 = b.delivered(1);
    assert_eq!(d1.len(), 1);
    assert_eq!(
        (d1[0].opcode, d1[0].ecode, d1[0].tag),
        (Opcode::RspError, ErrorCode::Route as u8, FORGED_TAG + 1)
    );
}

#[test]
fn malformed_responses_are_dropped_counted_and_never_forwarded() {
    let (b, _) = case(
        "malformed_responses_are_dropped_counted_and_never_forwarded",
        config("switch_p4", 0x107),
        20_000,
        |b| {
            let mut r = Packet::new(Opcode::RspRead);
            r.route = 0;
            r.len = 2;
            r.payload = vec![9; 32];
            let good = r.encode();
            // ERR_HCC: a header bit flipped.
            let mut f = good.clone();
            f[0] ^= 1 << 40;
            b.push_hub_frame(3, 0, f);
            // ERR_FRAME: truncated, and overlong.
            b.push_hub_frame(3, 0, good[..2].to_vec());
            let mut f = good.clone();
            f.push(0);
            b.push_hub_frame(3, 0, f);
            // ERR_OPCODE: RSP_REDUCE from a hub.
            let mut x = r.clone();
            x.opcode = Opcode::RspReduce;
            b.push_hub_frame(3, 0, x.encode());
            // ERR_LENGTH: len 0 on an RSP_READ (no payload).
            let mut x = r.clone();
            x.len = 0;
            x.payload.clear();
            b.push_hub_frame(3, 0, x.encode());
            // ERR_ALIGN.
            let mut x = r.clone();
            x.maddr = SCRATCH | 4;
            b.push_hub_frame(3, 0, x.encode());
            // Random corruptions of a partial for a pending entry.
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let mut pa = Packet::new(Opcode::RspPartial);
            pa.route = 1;
            pa.tag = FORGED_TAG;
            pa.len = 1;
            pa.payload = vec![1; 16];
            for _ in 0..12 {
                let kind = rng.gen_range(0..CORRUPTIONS);
                b.push_hub_frame(3, 0, corrupt(&mut rng, kind, pa.encode()));
            }
        },
    );
    let e = &b.errors()[3];
    assert!(e[ErrorCode::Hcc as usize - 1] >= 1, "{e:?}");
    assert!(e[ErrorCode::Frame as usize - 1] >= 2, "{e:?}");
    assert!(e[ErrorCode::Opcode as usize - 1] >= 1, "{e:?}");
    assert!(e[ErrorCode::Length as usize - 1] >= 1, "{e:?}");
    assert!(e[ErrorCode::Align as usize - 1] >= 1, "{e:?}");
    for q in [0, 1, 2] {
        assert!(b.errors()[q].iter().all(|x| *x == 0), "port {q}");
        assert!(b.delivered(q).is_empty(), "port {q}: {:?}", b.delivered(q));
    }
    // Every error but ERR_HCC answers hub 3's own SM.
    let counted: u64 = e.iter().sum::<u64>() - e[ErrorCode::Hcc as usize - 1];
    assert_eq!(b.delivered(3).len() as u64, counted);
    assert!(b.delivered(3).iter().all(|p| p.opcode == Opcode::RspError));
}

/// Hub 1 never answers requester 0's load-reduces (switch_p4, RedTimeout 1024):
/// each times out once (`RSP_ERROR` `ERR_TIMEOUT` naming port 1, counted once
/// there), its entry is quarantined and then expires, requester 0's later
/// traffic proceeds, and every other port's traffic, including load-reduces to
/// hub 1, completes: nothing stalls for good.
#[test]
fn dead_hub_times_out_only_its_requester() {
    let mut cfg = config("switch_p4", 0x108);
    cfg.dead = vec![(1, 0)];
    cfg.inject_rate = 0.7;
    cfg.hub_ready_rate = 0.8;
    let (b, s) = case("dead_hub_times_out_only_its_requester", cfg, 400_000, |b| {
        let mut st = b.stimulus(0x108);
        for i in 0..600 {
            let (p, pkt) = st.any_legal();
            b.push(p, &pkt);
            if i % 5 == 0 {
                // Load-reduces from every port to hub 1 (group 1 = {1}).
                for q in 0..4 {
                    b.push(q, &mc_ld_reduce(0x800 + i as u16, 1, 1));
                }
            }
        }
    });
    assert!(s.faults[8] >= 2, "hub 1 withheld {} partials", s.faults[8]);
    assert_eq!(b.golden.pending(), 0, "every entry left the table");
    // One timeout per withheld partial's entry, each counted once, at port 1.
    let timeouts: Vec<u64> = (0..4).map(|q| b.error(q, ErrorCode::Timeout)).collect();
    assert_eq!(timeouts, vec![0, s.timeouts, 0, 0]);
    assert_eq!(
        s.timeouts, s.expired,
        "a dead hub never answers in quarantine"
    );
    assert!(s.timeouts >= 120, "{s:?}");
    assert!(
        s.max_timeout_age < 400_000 / 4,
        "a timeout took {} cycles",
        s.max_timeout_age
    );
    let to_0 = b
        .delivered(0)
        .iter()
        .filter(|p| p.tag >= 0x800 && p.opcode == Opcode::RspError)
        .inspect(|p| assert_eq!((p.ecode, p.src_port), (ErrorCode::Timeout as u8, 1)))
        .count();
    assert_eq!(to_0, 120, "requester 0's load-reduces to hub 1");
    for q in 1..4 {
        let reduces = b
            .delivered(q)
            .iter()
            .filter(|p| p.opcode == Opcode::RspReduce && p.tag >= 0x800)
            .count();
        assert_eq!(
            reduces, 120,
            "requester {q} got {reduces} of its load-reduces to hub 1"
        );
    }
}

/// Random legal and malformed SM traffic; the odd hubs misbehave in every class;
/// `dead`: (hub, requester) pairs whose load-reduces are never answered.
fn random(
    name: &str,
    model: &str,
    seed: u64,
    packets: usize,
    dead: &[(usize, usize)],
) -> SwitchStats {
    let mut cfg = config(model, seed);
    cfg.dead = dead.to_vec();
    let n = if model == "switch_p4" { 4 } else { 8 };
    // Half the hubs misbehave in every class; the others are legal.
    cfg.faults = (0..n)
        .map(|q| {
            if q % 2 == 1 {
                Faults {
                    late: 0.1,
                    ..Faults::all(0.08)
                }
            } else {
                Faults::default()
            }
        })
        .collect();
    cfg.inject_rate = 0.8;
    cfg.sm_ready_rate = 0.8;
    cfg.hub_ready_rate = 0.8;
    cfg.hub_inject_rate = 0.9;
    cfg.late_latency = (50, 400);
    let (_, s) = case(name, cfg, 400_000, |b| {
        let mut st = b.stimulus(seed);
        for i in 0..packets {
            let (p, pkt) = st.any_legal();
            b.push(p, &pkt);
            if i % 10 == 9 {
                let (p, f) = st.malformed();
                b.push_frame(p, f);
            }
        }
    });
    for (k, name) in FAULT_NAMES.iter().enumerate().take(8) {
        assert!(s.faults[k] > 0, "{model}: no {name} misbehaviour injected");
    }
    assert!(s.packets_checked as usize > packets, "{s:?}");
    s
}

#[test]
fn random_adversarial_switch_p4() {
    random(
        "random_adversarial_switch_p4",
        "switch_p4",
        0x5A4,
        5000,
        &[],
    );
}

#[test]
fn random_adversarial_switch_p8() {
    random(
        "random_adversarial_switch_p8",
        "switch_p8",
        0x5A8,
        3000,
        &[],
    );
}

/// Misbehaving hubs and a hub (2) that never answers requester 5: requester 5's
/// load-reduces through hub 2 time out (switch_p8, RedTimeout 2048); every
/// port's traffic completes.
#[test]
fn random_adversarial_with_dead_hub_switch_p8() {
    let s = random(
        "random_adversarial_with_dead_hub_switch_p8",
        "switch_p8",
        0x5A9,
        3000,
        &[(2, 5)],
    );
    assert!(s.faults[8] >= 1, "hub 2 withheld nothing: {s:?}");
    assert!(s.timeouts >= s.faults[8].min(1), "{s:?}");
}

/// Legal hubs that often answer later than the timeout (switch_p4, RedTimeout
/// 1024; late answers 600..3000 cycles): entries time out, late partials meet
/// them in quarantine (consumed, not counted) or after it expired (orphans,
/// `ERR_OPCODE`), and same-tag load-reduces wait for the quarantine; the golden
/// switch, ordered by the RTL's events, agrees on every response and counter.
#[test]
fn late_partials_meet_timed_out_entries_switch_p4() {
    let mut cfg = config("switch_p4", 0x1A7E);
    cfg.faults = vec![
        Faults {
            late: 0.25,
            ..Faults::default()
        };
        4
    ];
    cfg.late_latency = (600, 3000);
    cfg.inject_rate = 0.5;
    let (b, s) = case(
        "late_partials_meet_timed_out_entries_switch_p4",
        cfg,
        600_000,
        |b| {
            let mut st = b.stimulus(0x1A7E);
            for i in 0..1500 {
                let (p, pkt) = st.any_legal();
                b.push(p, &pkt);
                if i % 4 == 0 {
                    // Load-reduces to group 0 = {1, 2}, tags reused every 16.
                    b.push(i % 4, &mc_ld_reduce(0x800 + (i as u16 / 4) % 16, 0, 2));
                }
            }
        },
    );
    assert!(s.timeouts >= 10, "{s:?}");
    assert!(
        s.expired >= 1,
        "no quarantine expired before its late partial: {s:?}"
    );
    assert!(
        s.expired < s.timeouts,
        "no late partial met its quarantined entry: {s:?}"
    );
    let orphans: u64 = (0..4).map(|q| b.error(q, ErrorCode::Opcode)).sum();
    assert!(orphans >= 1, "no late partial after a quarantine");
    let timeouts: u64 = (0..4).map(|q| b.error(q, ErrorCode::Timeout)).sum();
    assert_eq!(timeouts, s.timeouts, "each timeout counted once");
}

/// One hub (7) never answers anyone, every port at full load (switch_p8,
/// RedTimeout 2048, 32 entries per requester). Requesters 4..7 never ask hub 7:
/// their load-reduce throughput stays within 10% of the same run with hub 7
/// healthy. Requesters 0..3 send one load-reduce in 8 through hub 7: each holds
/// one of their entries for its timeout and quarantine, and the rest of their
/// load-reduces keep flowing. Prints both throughputs.
#[test]
fn dead_hub_leaves_healthy_requesters_throughput_switch_p8() {
    let run = |dead: bool| {
        let mut cfg = config("switch_p8", 0xDEAD);
        // Group 3 = {0..6}: the healthy hubs; group 4 = every port.
        cfg.groups = vec![0b0110, 0b0010, 0xFF, 0x7F, 0xFF];
        if dead {
            cfg.dead = (0..8).map(|r| (7, r)).collect();
        }
        let name = if dead {
            "dead_hub_7"
        } else {
            "healthy_baseline"
        };
        let (b, s) = case(name, cfg, 2_000_000, |b| {
            for i in 0..400u16 {
                for q in 0..8 {
                    let through_7 = q < 4 && i % 8 == 7;
                    let group = if through_7 { 4 } else { 3 };
                    b.push(q, &mc_ld_reduce(0x800 + i, group, 4));
                }
            }
        });
        let done = |q: usize| {
            b.delivered(q)
                .iter()
                .filter(|p| p.opcode == Opcode::RspReduce)
                .count() as f64
        };
        let count = |q: usize| b.delivered(q).len() as f64;
        // Throughput of a group of requesters: its reduces over the cycles until its last response.
        let rate = |qs: std::ops::Range<usize>| {
            let end = qs.clone().map(|q| b.last_delivery(q)).max().unwrap_or(1);
            qs.map(done).sum::<f64>() / end as f64
        };
        (rate(4..8), rate(0..4), (0..8).map(count).sum::<f64>(), s)
    };
    let (healthy_base, mixed_base, n_base, _) = run(false);
    let (healthy, mixed, n, s) = run(true);
    eprintln!(
        "load-reduces per cycle, requesters 4..7: {healthy_base:.4} healthy hub 7, {healthy:.4} dead hub 7 ({:.1}%); \
         requesters 0..3: {mixed_base:.4}, {mixed:.4}; {} timeouts",
        100.0 * healthy / healthy_base,
        s.timeouts
    );
    assert_eq!(n_base, 3200.0);
    assert_eq!(n, 3200.0, "every load-reduce answered");
    assert_eq!(s.timeouts, 200, "requesters 0..3: 50 each through hub 7");
    assert!(healthy >= 0.9 * healthy_base, "{healthy} vs {healthy_base}");
}

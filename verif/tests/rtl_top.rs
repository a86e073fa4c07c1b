//! Directed tests of `dysharp_top` against the golden model, block by block:
//! parser (every kind, every error), router/replicator (multicast to 1..NumPorts),
//! reduction (every dtype/op, shuffled arrival), hub and AL-TLB (hit, miss,
//! replacement, long walks), NVLS and unicast ops, backpressure on every stream.
//!
//! A failing case prints its seed and the command that re-runs it; set
//! `DYSHARP_VCD=FILE` to write a waveform on that re-run.

use dysharp_sim::numerics::{AccMode, DType, ReduceOp};
use dysharp_sim::packet::{Opcode, Packet, Stage};
use dysharp_verif::stimulus::{Stimulus, SCRATCH};
use dysharp_verif::{Bench, BenchConfig, TbError};

fn config(model: &str, seed: u64) -> BenchConfig {
    let mut c = BenchConfig::new(model, seed);
    c.groups = vec![0b1011, 0, 0xFFFF_FFFF >> (32 - ports_of(model))];
    c.vcd = std::env::var_os("DYSHARP_VCD").map(Into::into);
    c
}

fn ports_of(model: &str) -> usize {
    match model {
        "top_p4" => 4,
        "top_p16" => 16,
        _ => 8,
    }
}

/// Runs a case; on failure panics with the seed and the re-run command.
fn case(name: &str, cfg: BenchConfig, body: impl FnOnce(&mut Bench, &mut Stimulus)) -> Bench {
    let seed = cfg.seed;
    let model = cfg.model.clone();
    let result = (|| -> Result<Bench, TbError> {
        let mut b = Bench::new(cfg)?;
        let mut s = Stimulus::new(b.golden_cfg(), seed);
        body(&mut b, &mut s);
        b.run(200_000)?;
        b.close();
        Ok(b)
    })();
    match result {
        Ok(b) => b,
        Err(e) => panic!(
            "{name} on {model} failed (seed {seed:#x}): {e}\n  re-run: DYSHARP_VCD={name}.vcd cargo test --release -p dysharp-verif --test rtl_top {name}"
        ),
    }
}

#[test]
fn parser_accepts_every_kind_and_rejects_every_error() {
    for model in ["top_p4", "top_p8"] {
        let b = case(
            "parser_accepts_every_kind_and_rejects_every_error",
            config(model, 0x11),
            |b, s| {
                for _ in 0..40 {
                    let (p, pkt) = s.any_legal();
                    b.push(p, &pkt);
                }
                for _ in 0..200 {
                    let (p, f) = s.malformed();
                    b.push_frame(p, f);
                    let (p, pkt) = s.any_legal();
                    b.push(p, &pkt);
                }
            },
        );
        let errors: u64 = b.counters().errors.iter().flatten().sum();
        assert!(errors >= 150, "{model}: only {errors} errors counted");
    }
}

#[test]
fn multicast_to_one_through_all_ports() {
    let mut b = case(
        "multicast_to_one_through_all_ports",
        config("top_p8", 0x22),
        |b, s| {
            let epp = b.golden_cfg().experts_per_port as u16;
            for fan in 1..=8u16 {
                let mut p = Packet::new(Opcode::DynSt);
                p.targets = (0..fan).map(|q| q * epp + fan).collect();
                p.maddr =
                    b.golden_cfg().hub.mbase + ((fan as u64) << b.golden_cfg().hub.log2_bsize);
                p.len = 16;
                p.be = Some(u128::MAX);
                p.payload = s.payload(16, DType::Bf16);
                b.push((fan as usize) % 8, &p);
            }
        },
    );
    assert_eq!(b.stats().packets_checked, (1..=8).sum::<u64>());
}

#[test]
fn reduction_every_dtype_and_op_with_shuffled_arrival() {
    let mut cfg = config("top_p8", 0x33);
    cfg.mem_latency = (1, 40); // partials arrive in random port order
    case(
        "reduction_every_dtype_and_op_with_shuffled_arrival",
        cfg,
        |b, s| {
            let hub = b.golden_cfg().hub.clone();
            let epp = b.golden_cfg().experts_per_port as u16;
            let targets: Vec<u16> =
                vec![7 * epp + 1, epp + 2, 3 * epp, epp + 5, 5 * epp + 9, 2 * epp];
            for (i, dt) in DType::ALL.iter().enumerate() {
                let mut st = Packet::new(Opcode::DynSt);
                st.maddr = hub.mbase + ((i as u64) << hub.log2_bsize);
                st.targets = targets.clone();
                st.len = 16;
                st.be = Some(u128::MAX);
                st.dtype = *dt;
                st.payload = s.payload(16, *dt);
                b.push(0, &st);
                for op in ReduceOp::ALL {
                    for acc in AccMode::ALL {
                        let mut ld = Packet::new(Opcode::DynLdReduce);
                        ld.stage = Stage::Combine;
                        ld.maddr = st.maddr;
                        ld.targets = targets.clone();
                        ld.len = 16;
                        ld.dtype = *dt;
                        ld.rop = op;
                        ld.acc = acc;
                        ld.tag = (16 * i + 4 * op.code() as usize + acc.code() as usize) as u16;
                        b.push(0, &ld);
                    }
                }
            }
        },
    );
}

#[test]
fn tlb_hits_misses_replacement_and_slow_walks() {
    for (model, lat) in [
        ("top_p4", (1, 1)),
        ("top_p4", (30, 60)),
        ("top_p8", (5, 20)),
    ] {
        let mut cfg = config(model, 0x44);
        cfg.mem_latency = lat;
        let b = case("tlb_hits_misses_replacement_and_slow_walks", cfg, |b, s| {
            // Many distinct tokens to one expert overflow a small TLB; re-reading
            // them later hits or misses depending on replacement.
            for aidx in 0..64u64 {
                let mut p = Packet::new(Opcode::DynSt);
                p.targets = vec![1];
                p.maddr = b.golden_cfg().hub.mbase + (aidx << b.golden_cfg().hub.log2_bsize);
                p.len = 1;
                p.be = Some(u128::MAX);
                p.payload = s.payload(1, DType::F32);
                p.tag = aidx as u16;
                b.push(b.ports() - 1, &p);
            }
            for aidx in (0..64u64).rev() {
                let mut p = Packet::new(Opcode::DynLdReduce);
                p.stage = Stage::Combine;
                p.targets = vec![1];
                p.maddr = b.golden_cfg().hub.mbase + (aidx << b.golden_cfg().hub.log2_bsize);
                p.len = 1;
                p.tag = 0x100 + aidx as u16;
                b.push(b.ports() - 1, &p);
            }
        });
        let c = b.counters();
        assert!(c.tlb_misses[0] >= 64, "{model}: misses {:?}", c.tlb_misses);
    }
}

#[test]
fn nvls_and_unicast_ops() {
    case("nvls_and_unicast_ops", config("top_p8", 0x55), |b, s| {
        for _ in 0..30 {
            let (p, pkt) = s.unicast(true);
            b.push(p, &pkt);
            let (p, pkt) = s.unicast(false);
            b.push(p, &pkt);
            let (p, pkt) = s.multicast(true).unwrap();
            b.push(p, &pkt);
            let (p, pkt) = s.multicast(false).unwrap();
            b.push(p, &pkt);
        }
        // A READ of the scratch line written first.
        let mut r = Packet::new(Opcode::Read);
        r.route = 2;
        r.maddr = SCRATCH;
        r.len = 4;
        b.push(6, &r);
    });
}

#[test]
fn backpressure_on_every_stream() {
    for model in ["top_p4", "top_p8"] {
        let mut cfg = config(model, 0x66);
        cfg.inject_rate = 0.6;
        cfg.sm_ready_rate = 0.3;
        cfg.mem_ready_rate = 0.3;
        cfg.mem_latency = (1, 25);
        case("backpressure_on_every_stream", cfg, |b, s| {
            for _ in 0..300 {
                let (p, pkt) = s.any_legal();
                b.push(p, &pkt);
            }
        });
    }
}

#[test]
fn sixteen_ports() {
    case("sixteen_ports", config("top_p16", 0x77), |b, s| {
        s.max_k = 16;
        for _ in 0..200 {
            let (p, pkt) = s.any_legal();
            b.push(p, &pkt);
        }
    });
}

/// Line rate: under saturating traffic every port moves one flit per cycle in each
/// direction. Each SM sends unicast WRITEs (18 flits) to the next port and Dispatch
/// stores with one target (19 flits) to the port after; the run must take no more
/// than 3% over the busiest link's flit count (plus the pipeline's fill and drain).
/// Cycles are counted by the simulator, so this is a property of the RTL, not a
/// timing of the machine.
#[test]
fn every_port_sustains_line_rate() {
    for model in ["top_p4", "top_p8"] {
        let mut busiest = 0;
        let mut b = case(
            "every_port_sustains_line_rate",
            config(model, 0x88),
            |b, s| {
                let n = b.ports();
                let epp = b.golden_cfg().experts_per_port as u16;
                let hub = b.golden_cfg().hub.clone();
                for i in 0..60u64 {
                    for src in 0..n {
                        let mut w = Packet::new(Opcode::Write);
                        w.route = ((src + 1) % n) as u8;
                        w.maddr = SCRATCH + 256 * (i % 8);
                        w.len = 16;
                        w.be = Some(u128::MAX);
                        w.payload = s.payload(16, DType::F32);
                        b.push(src, &w);
                        let mut d = Packet::new(Opcode::DynSt);
                        d.targets = vec![((src + 2) % n) as u16 * epp + (i % epp as u64) as u16];
                        d.maddr = hub.mbase + ((i * n as u64 + src as u64) << hub.log2_bsize);
                        d.len = 16;
                        d.be = Some(u128::MAX);
                        d.payload = s.payload(16, DType::Bf16);
                        b.push(src, &d);
                    }
                }
            },
        );
        let c = b.counters();
        for q in 0..b.ports() {
            busiest = busiest.max(c.up_flits[q]).max(c.dn_flits[q]);
        }
        let cycles = b.stats().cycles;
        assert!(
            cycles as f64 <= 1.03 * busiest as f64 + 200.0,
            "{model}: {cycles} cycles for {busiest} flits on the busiest link"
        );
    }
}

/// A rate that is not a probability is refused when the bench is made, naming the rate (it
/// used to panic in the first cycle that drew it).
#[test]
fn a_rate_out_of_range_is_a_config_error() {
    for (field, set) in [
        (
            "inject_rate",
            (|c, v| c.inject_rate = v) as fn(&mut BenchConfig, f64),
        ),
        ("sm_ready_rate", |c, v| c.sm_ready_rate = v),
        ("mem_ready_rate", |c, v| c.mem_ready_rate = v),
    ] {
        for bad in [1.5, -0.1, f64::NAN] {
            let mut cfg = config("top_p4", 0x99);
            set(&mut cfg, bad);
            match Bench::new(cfg) {
                Err(TbError::Config(msg)) => {
                    assert!(msg.contains(field), "{field} = {bad}: {msg}")
                }
                Err(e) => panic!("{field} = {bad}: another error: {e}"),
                Ok(_) => panic!("{field} = {bad} was accepted"),
            }
        }
    }
}

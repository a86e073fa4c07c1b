//! The RTL floating-point package (`rtl/dysharp_fp_pkg.sv`, through the
//! `fp_harness` model) against the golden numerics, bit for bit.
//!
//! Re-run with more cases: `FP_CASES=1000000 cargo test --release -p dysharp-verif --test fp`.

use dysharp_sim::numerics::{
    combine_f32, from_f32, reduce_values, to_f32, AccMode, DType, ReduceOp,
};
use dysharp_verif::{Port, Sim};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SEED: u64 = 0x5EED_F0A7;

/// Operands biased towards the IEEE edge cases.
fn edge_f32(rng: &mut ChaCha8Rng) -> u32 {
    let sign = (rng.gen::<u32>() & 1) << 31;
    match rng.gen_range(0..12) {
        0 => sign,                                                                    // ±0
        1 => sign | rng.gen_range(1..0x80_0000),                                      // subnormal
        2 => sign | 0x7F80_0000,                                                      // ±inf
        3 => 0x7F80_0000 | rng.gen_range(1..0x80_0000), // NaN (any payload)
        4 => sign | 0x0080_0000 | rng.gen_range(0..16), // just above min normal
        5 => sign | (0x7F7F_FFFF - rng.gen_range(0..16)), // near max
        6 => sign | (rng.gen_range(100..154) << 23) | (rng.gen::<u32>() & 0x7F_0000), // short mantissas: ties
        7 => sign | 0x3F80_0000 | (rng.gen::<u32>() & 0xFFFF), // near 1: bf16 ties
        _ => rng.gen::<u32>(),
    }
}

fn edge_16(rng: &mut ChaCha8Rng, dt: DType) -> u32 {
    match dt {
        DType::F32 => edge_f32(rng),
        _ => {
            let sign = (rng.gen::<u32>() & 1) << 15;
            let (exp_all, man_bits) = if dt == DType::Bf16 {
                (0x7F80, 7)
            } else {
                (0x7C00, 10)
            };
            let man_mask = (1u32 << man_bits) - 1;
            match rng.gen_range(0..8) {
                0 => sign,
                1 => sign | rng.gen_range(1..=man_mask),
                2 => sign | exp_all,
                3 => exp_all | rng.gen_range(1..=man_mask),
                4 => sign | (exp_all - (1 << man_bits)) | (rng.gen::<u32>() & man_mask),
                _ => rng.gen::<u32>() & 0xFFFF,
            }
        }
    }
}

fn cases() -> usize {
    std::env::var("FP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

fn lanes(dt: DType) -> usize {
    if dt == DType::F32 {
        4
    } else {
        8
    }
}

fn flit_of(dt: DType, vals: &[u32]) -> u128 {
    let w = 8 * dt.bytes();
    vals.iter()
        .enumerate()
        .fold(0u128, |f, (i, v)| f | ((*v as u128) << (w * i)))
}

#[test]
fn scalar_ops_match_golden() {
    let mut sim = Sim::new("fp_harness", SEED).expect("fp_harness model");
    let (a, b, dtype) = (
        sim.input("a_i").unwrap(),
        sim.input("b_i").unwrap(),
        sim.input("dtype_i").unwrap(),
    );
    let (add, min, max, widen, narrow) = (
        sim.output("add_o").unwrap(),
        sim.output("min_o").unwrap(),
        sim.output("max_o").unwrap(),
        sim.output("widen_o").unwrap(),
        sim.output("narrow_o").unwrap(),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut checked = 0u64;
    for i in 0..cases() {
        let dt = DType::ALL[i % 3];
        let x = edge_f32(&mut rng);
        let y = edge_f32(&mut rng);
        let h = edge_16(&mut rng, dt);
        sim.set(a, x as u128);
        sim.set(b, y as u128);
        sim.set(dtype, dt.code() as u128);
        sim.settle().expect("no assertion");
        let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
        for (op, port) in [
            (ReduceOp::Add, add),
            (ReduceOp::Min, min),
            (ReduceOp::Max, max),
        ] {
            let want = combine_f32(op, fx, fy).to_bits();
            let got = sim.get(port) as u32;
            assert_eq!(
                got, want,
                "{op:?}({x:#010x}, {y:#010x}): RTL {got:#010x}, golden {want:#010x} (seed {SEED:#x}, case {i}; rerun: cargo test --release -p dysharp-verif --test fp)"
            );
        }
        let want_n = from_f32(dt, fx);
        assert_eq!(
            sim.get(narrow) as u32,
            want_n,
            "narrow {dt:?} {x:#010x} (case {i})"
        );
        // widen of a 16-bit pattern (or f32 passthrough)
        sim.set(a, h as u128);
        sim.settle().expect("no assertion");
        let want_w = to_f32(dt, h).to_bits();
        let got_w = sim.get(widen) as u32;
        let nan_ok = f32::from_bits(want_w).is_nan() && f32::from_bits(got_w).is_nan();
        assert!(
            got_w == want_w || nan_ok,
            "widen {dt:?} {h:#x}: RTL {got_w:#x}, golden {want_w:#x} (case {i})"
        );
        checked += 5;
    }
    eprintln!("fp scalar: {checked} results checked, 0 mismatches (seed {SEED:#x})");
}

#[test]
fn flit_reductions_match_golden() {
    let mut sim = Sim::new("fp_harness", SEED ^ 1).expect("fp_harness model");
    let p = |n: &str| sim.input(n).unwrap();
    let (dtype, rop, native, acc_i, x_i) = (
        p("dtype_i"),
        p("rop_i"),
        p("native_i"),
        p("acc_i"),
        p("x_i"),
    );
    let init = sim.output("acc_init_o").unwrap();
    let step = sim.output("acc_step_o").unwrap();
    let finish = sim.output("acc_finish_o").unwrap();
    // dysharp_fp_acc_flit, the module the RTL instantiates, must equal the functions.
    let (en_i, init_i) = (p("en_i"), p("init_i"));
    let flit = sim.output("acc_flit_o").unwrap();
    let words = |sim: &Sim, o: Port| -> Vec<u32> {
        (0..8).map(|k| sim.get_bits(o, 32 * k, 32) as u32).collect()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ 2);
    let n = cases() / 20;
    for case in 0..n {
        let dt = DType::ALL[case % 3];
        let op = ReduceOp::ALL[(case / 3) % 3];
        let acc = AccMode::ALL[(case / 9) % 2];
        let inputs = rng.gen_range(1..=6);
        let l = lanes(dt);
        let vals: Vec<Vec<u32>> = (0..inputs)
            .map(|_| (0..l).map(|_| edge_16(&mut rng, dt)).collect())
            .collect();
        sim.set(dtype, dt.code() as u128);
        sim.set(rop, op.code() as u128);
        sim.set(native, (acc == AccMode::Native) as u128);
        // init with input 0, then step through the rest, then finish.
        sim.set(x_i, flit_of(dt, &vals[0]));
        sim.set(en_i, 1);
        sim.set(init_i, 1);
        sim.settle().unwrap();
        let mut accw = words(&sim, init);
        assert_eq!(
            words(&sim, flit),
            accw,
            "dysharp_fp_acc_flit init {dt:?}: module against fp_acc_init (seed {SEED:#x}, case {case})"
        );
        sim.set(init_i, 0);
        for v in &vals[1..] {
            for (k, w) in accw.iter().enumerate() {
                sim.set_bits(acc_i, 32 * k, 32, *w as u128);
            }
            sim.set(x_i, flit_of(dt, v));
            sim.set(en_i, 0);
            sim.settle().unwrap();
            assert_eq!(
                words(&sim, flit),
                accw,
                "dysharp_fp_acc_flit without en_i must pass acc_i (seed {SEED:#x}, case {case})"
            );
            sim.set(en_i, 1);
            sim.settle().unwrap();
            let before = accw;
            accw = words(&sim, step);
            assert_eq!(
                words(&sim, flit),
                accw,
                "dysharp_fp_acc_flit step {dt:?} {op:?} {acc:?} from {before:x?}: module against fp_acc_step (seed {SEED:#x}, case {case})"
            );
        }
        for (k, w) in accw.iter().enumerate() {
            sim.set_bits(acc_i, 32 * k, 32, *w as u128);
        }
        sim.settle().unwrap();
        let got = sim.get(finish);
        for lane in 0..l {
            let column: Vec<u32> = vals.iter().map(|v| v[lane]).collect();
            let want = reduce_values(dt, op, acc, &column).unwrap();
            let w = 8 * dt.bytes();
            let g = ((got >> (w * lane)) as u32) & (if w == 32 { u32::MAX } else { (1 << w) - 1 });
            assert_eq!(
                g, want,
                "{dt:?} {op:?} {acc:?} lane {lane} inputs {column:x?}: RTL {g:#x}, golden {want:#x} (seed {SEED:#x}, case {case})"
            );
        }
    }
    eprintln!("fp flit reductions: {n} reductions checked, 0 mismatches");
}

/// dysharp_fp_step, the pipelined flit step of the switch's reduction: fed a new random
/// operation every cycle (enable, init, every type, operation and mode, edge-case lanes), its
/// output FpStages cycles later is what dysharp_fp_acc_flit gives on those inputs, and its side
/// data comes out with it (no operation overtakes or disturbs another).
#[test]
fn the_pipelined_step_matches_the_one_cycle_step() {
    let mut sim = Sim::new("fp_harness", SEED ^ 3).expect("fp_harness model");
    let stages = sim.param_or("FpStages", 10);
    let p = |n: &str| sim.input(n).unwrap();
    let (dtype, rop, native, en_i, init_i, acc_i, x_i, tag_i) = (
        p("dtype_i"),
        p("rop_i"),
        p("native_i"),
        p("en_i"),
        p("init_i"),
        p("acc_i"),
        p("x_i"),
        p("tag_i"),
    );
    let flit = sim.output("acc_flit_o").unwrap();
    let (step, tag_o) = (sim.output("step_o").unwrap(), sim.output("tag_o").unwrap());
    let words = |sim: &Sim, o: Port| -> Vec<u32> {
        (0..8).map(|k| sim.get_bits(o, 32 * k, 32) as u32).collect()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ 4);
    let n = cases() / 4;
    let mut expected: std::collections::VecDeque<(Vec<u32>, u32)> = Default::default();
    for t in 0..n + stages + 1 {
        let dt = DType::ALL[rng.gen_range(0..3)];
        let op = ReduceOp::ALL[rng.gen_range(0..3)];
        let l = lanes(dt);
        let x: Vec<u32> = (0..l).map(|_| edge_16(&mut rng, dt)).collect();
        sim.set(dtype, dt.code() as u128);
        sim.set(rop, op.code() as u128);
        sim.set(native, rng.gen_range(0..2));
        sim.set(en_i, (rng.gen_range(0..8) != 0) as u128);
        sim.set(init_i, (rng.gen_range(0..4) == 0) as u128);
        for k in 0..8 {
            // widened lanes, as an accumulator holds them (f32; upper lanes of f32 random too)
            sim.set_bits(acc_i, 32 * k, 32, edge_f32(&mut rng) as u128);
        }
        sim.set(x_i, flit_of(dt, &x));
        sim.set(tag_i, t as u128);
        sim.settle().unwrap();
        expected.push_back((words(&sim, flit), t as u32));
        sim.cycle().unwrap();
        // the outputs a cycle returns are those the edge sampled: the operation of `stages`
        // cycles before
        if expected.len() > stages {
            let (want, tag) = expected.pop_front().unwrap();
            assert_eq!(
                sim.get(tag_o) as u32,
                tag,
                "dysharp_fp_step side data out of step at cycle {t} (seed {:#x})",
                SEED ^ 4
            );
            assert_eq!(
                words(&sim, step),
                want,
                "dysharp_fp_step ({stages} stages) against dysharp_fp_acc_flit, operation {tag} (seed {:#x})",
                SEED ^ 4
            );
        }
    }
    eprintln!("fp step pipeline: {n} operations checked at {stages} stages, 0 mismatches");
}

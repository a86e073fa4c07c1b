//! The bad-input campaign and reset in the middle of traffic.
//!
//! Properties, checked by the bench's scoreboard on every run:
//! - no hang: every batch drains within [`super::props::drain_bound`] cycles
//!   (20,000 plus 64 per queued flit, scaled by the slowest stream's rate);
//! - the RTL's per-port error counters equal the golden model's after every batch;
//! - no legal packet is lost or duplicated: every expected hub request and SM
//!   response arrives exactly once (an unexpected one is a mismatch, a missing
//!   one keeps the run from draining);
//! - no memory write lands outside a mapped AL region (an AL-table line or a
//!   data slot its expert allocated) or the identity scratch range.

use super::props::{bench_config, drain_bound, push_frame, Pressure};
use super::{Case, CaseFail, Checked, Outcome, Size};
use crate::stimulus::Stimulus;
use crate::tb::{Bench, TbError};
use dysharp_sim::packet::Flit;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// A seeded backpressure setting (0–90% stall on every stream, latency 1–64).
fn pressure(rng: &mut ChaCha8Rng) -> Pressure {
    let mut stall = || {
        if rng.gen_bool(0.3) {
            0.0
        } else {
            rng.gen_range(0.0..0.9)
        }
    };
    let (i, s, m) = (stall(), stall(), stall());
    let lo = rng.gen_range(1..8);
    let slots = if rng.gen_bool(0.3) { 5 } else { 12 };
    Pressure::new(i, s, m, (lo, lo + rng.gen_range(0..56)), slots)
}

/// A malformed frame: the stimulus's corruptions of the header, lengths,
/// opcodes, target counts and expert IDs, plus random bit flips anywhere in the
/// frame and whole flits replaced by noise. (A corruption that happens to leave
/// a legal packet is counted as legal.)
fn corrupt(s: &mut Stimulus, rng: &mut ChaCha8Rng) -> (usize, Vec<Flit>) {
    match rng.gen_range(0..8) {
        0 => {
            let (src, p) = s.any_legal();
            let mut f = p.encode();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..f.len());
                f[i] ^= 1u128 << rng.gen_range(0..128);
            }
            (src, f)
        }
        1 => {
            let (src, p) = s.any_legal();
            let mut f = p.encode();
            let i = rng.gen_range(0..f.len());
            f[i] = rng.gen();
            (src, f)
        }
        _ => s.malformed(),
    }
}

/// Batch size in frames.
const BATCH: usize = 2_000;

fn sizes(size: Size) -> (u64, u64) {
    // (malformed frames, legal packets)
    match size {
        Size::Quick => (3_000, 1_000),
        Size::Full => (100_000, 25_000),
    }
}

/// The bench, stimulus and random stream of a case (`salt` tells the kinds apart).
fn setup(
    model: &str,
    seed: u64,
    salt: u64,
    vcd: Option<PathBuf>,
) -> Result<(Pressure, Bench, Stimulus, ChaCha8Rng), CaseFail> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ salt);
    let p = pressure(&mut rng);
    let b = Bench::new(bench_config(model, seed, &p, vcd))?;
    let mut s = Stimulus::new(b.golden_cfg(), seed);
    s.max_k = b.golden_cfg().max_targets.min(16);
    Ok((p, b, s, rng))
}

fn finish(b: &mut Bench, checked: &mut Checked) {
    b.close();
    let st = b.stats();
    checked.packets = st.packets_checked;
    checked.mem_accesses = st.mem_checked;
    checked.cycles = st.cycles;
}

/// A `badinput/MODEL` case: malformed frames interleaved with legal traffic.
pub(crate) fn campaign(
    model: &str,
    case: &Case,
    vcd: Option<PathBuf>,
    checked: &mut Checked,
) -> Result<Outcome, CaseFail> {
    let (seed, size) = (case.seed, case.size);
    let (p, mut b, mut s, mut rng) = setup(model, seed, 0xBAD1_4B07, vcd)?;
    let (bad, good) = sizes(size);
    let total = bad + good;
    let result = (|| -> Result<(), TbError> {
        let mut sent = 0u64;
        while sent < total {
            let mut flits = 0u64;
            for _ in 0..BATCH.min((total - sent) as usize) {
                let (src, f) = if rng.gen_range(0..total) < bad {
                    corrupt(&mut s, &mut rng)
                } else if rng.gen_bool(0.1) {
                    let (src, p) = s.dyn_ld_reduce(true);
                    (src, p.encode())
                } else if rng.gen_bool(0.05) {
                    let (src, p) = s.dyn_out_of_range();
                    (src, p.encode())
                } else {
                    s.legal_frame()
                };
                flits += f.len() as u64;
                push_frame(&mut b, src, f, checked);
                sent += 1;
            }
            b.run(drain_bound(flits, &p))?;
        }
        Ok(())
    })();
    finish(&mut b, checked);
    result?;
    Ok(Outcome::Passed)
}

/// A `reset/MODEL` case: traffic (legal and malformed) with reset asserted at
/// random moments, including within packets; after each reset the scoreboard
/// restarts from the GPU memories as the RTL left them and nothing from before
/// the reset may come out.
pub(crate) fn resets(
    model: &str,
    case: &Case,
    vcd: Option<PathBuf>,
    checked: &mut Checked,
) -> Result<Outcome, CaseFail> {
    let (seed, size) = (case.seed, case.size);
    let (p, mut b, mut s, mut rng) = setup(model, seed, 0x4E5E_7000, vcd)?;
    let rounds = match size {
        Size::Quick => 4,
        Size::Full => 40,
    };
    let result = (|| -> Result<(), TbError> {
        for _ in 0..rounds {
            let mut flits = 0u64;
            for _ in 0..rng.gen_range(20..200) {
                let (src, f) = if rng.gen_bool(0.1) {
                    corrupt(&mut s, &mut rng)
                } else {
                    s.legal_frame()
                };
                flits += f.len() as u64;
                push_frame(&mut b, src, f, checked);
            }
            // Run part of the traffic, then reset in the middle of it.
            for _ in 0..rng.gen_range(1..(flits / 2).max(2)) {
                b.step()?;
            }
            checked.cut_by_reset += b.reset_midstream(rng.gen_range(1..8))?;
            // The rest of the queued frames go through the fresh switch.
            b.run(drain_bound(flits, &p))?;
        }
        Ok(())
    })();
    finish(&mut b, checked);
    result?;
    Ok(Outcome::Passed)
}

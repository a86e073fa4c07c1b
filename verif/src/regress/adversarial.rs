//! `switch/adversarial/MODEL`: `dysharp_switch` alone (the switch-level bench,
//! [`crate::switch_tb`]) with random legal and malformed SM traffic, half the
//! hubs misbehaving in every class at a seeded rate (request opcodes, orphan,
//! duplicate and not-asked partials, wrong lengths, forged and malformed
//! responses, late answers), random backpressure on every stream.
//!
//! Properties, checked by the bench's scoreboard: every packet leaving the
//! switch is the golden switch's, nothing is lost (the run drains within its
//! bound, else a hang), per-port error counters equal the golden switch's, flit
//! counters equal the flits that crossed the ports.

use super::{Case, CaseFail, Checked, Outcome, Size};
use crate::switch_tb::{Faults, SwitchBench, SwitchBenchConfig, FAULT_CLASSES};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// Runs the case: packets 600 (quick) or 6,000 (full).
pub(crate) fn campaign(
    model: &str,
    case: &Case,
    vcd: Option<PathBuf>,
    checked: &mut Checked,
) -> Result<Outcome, CaseFail> {
    let mut rng = ChaCha8Rng::seed_from_u64(case.seed ^ 0xAD7E_55A1);
    let packets = match case.size {
        Size::Quick => 600,
        Size::Full => 6_000,
    };
    let mut cfg = SwitchBenchConfig::new(model, case.seed);
    cfg.vcd = vcd;
    cfg.groups = vec![0b0110, 0b0010, 0b1011];
    let rate = rng.gen_range(0.02..0.15);
    let mut stall = || rng.gen_range(0.5..1.0);
    cfg.inject_rate = stall();
    cfg.sm_ready_rate = stall();
    cfg.hub_ready_rate = stall();
    cfg.hub_inject_rate = stall();
    cfg.late_latency = (20, 600);
    let odd = rng.gen_bool(0.5) as usize;
    let n = dysharp_registry::Registry::builtin()
        .get(model)
        .and_then(|m| m.ports())
        .unwrap_or(8);
    cfg.faults = (0..n)
        .map(|q| {
            if q % 2 == odd {
                Faults::all(rate)
            } else {
                Faults::default()
            }
        })
        .collect();
    let mut b = SwitchBench::new(cfg)?;
    let mut st = b.stimulus(case.seed);
    let mut legal = 0;
    let mut bad = 0;
    for i in 0..packets {
        let (p, pkt) = st.any_legal();
        b.push(p, &pkt);
        legal += 1;
        if i % 10 == 9 {
            let (p, f) = st.malformed();
            b.push_frame(p, f);
            bad += 1;
        }
    }
    let s = b.run(100_000 + 400 * packets as u64)?;
    b.close();
    checked.packets += s.packets_checked;
    checked.legal_injected += legal;
    checked.malformed_injected += bad + s.faults[..FAULT_CLASSES - 2].iter().sum::<u64>();
    checked.cycles += s.cycles;
    Ok(Outcome::Passed)
}

//! `switch/adversarial/MODEL`: `dysharp_switch` alone (the switch-level bench,
//! [`crate::switch_tb`]) with random legal and malformed SM traffic, half the
//! hubs misbehaving in every class at a seeded rate (request opcodes, orphan,
//! duplicate and not-asked partials, wrong lengths, forged and malformed
//! responses, late answers, some later than the model's load-reduce timeout),
//! one hub that never answers one requester's load-reduces, random backpressure
//! on every stream.
//!
//! Properties, checked by the bench's scoreboard: every packet leaving the
//! switch is the golden switch's, nothing is lost (the run drains within its
//! bound, else a hang), per-port error counters equal the golden switch's, flit
//! counters equal the flits that crossed the ports, and every timeout the RTL
//! reports is plausible and agrees with the golden switch (see
//! [`crate::switch_tb`]).

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
    let entry = dysharp_registry::Registry::builtin().get(model);
    let n = entry.and_then(|m| m.ports()).unwrap_or(8);
    // Late answers reach past the timeout (when the model has one), so late
    // partials meet timed-out and quarantined entries; one hub never answers
    // one requester's load-reduces.
    let timeout = entry
        .and_then(|m| m.param("RedTimeout"))
        .map_or(crate::switch_tb::RTL_RED_TIMEOUT as u64, |t| {
            t.max(0) as u64
        });
    cfg.late_latency = (20, 600.max(2 * timeout.min(4096)));
    cfg.dead = vec![(rng.gen_range(0..n), rng.gen_range(0..n))];
    let odd = rng.gen_bool(0.5) as usize;
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

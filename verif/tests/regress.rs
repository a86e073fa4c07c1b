//! The regression's own machinery on the smallest models: each case kind runs,
//! checks traffic and injects what it says it injects.
//! (`make test` also runs the whole quick regression through `dysharp regress --quick`.)

use dysharp_verif::regress::{run_case, Case, Size};

fn run(name: &str, seed: u64) -> dysharp_verif::regress::CaseResult {
    let case = Case::from_name(name, seed, Size::Quick).expect("a planned case");
    let r = run_case(&case, None);
    if let Some(f) = &r.failure {
        panic!(
            "{name} seed {seed}: {:?}: {}\n  shrunk: {:?}\n  re-run: {}",
            f.kind, f.message, f.shrunk, f.rerun
        );
    }
    r
}

#[test]
fn stream_checks_packets_and_memory() {
    let r = run("stream/top_p4", 7);
    assert!(r.checked.packets >= 40, "{:?}", r.checked);
    assert!(
        r.checked.mem_accesses > r.checked.packets,
        "{:?}",
        r.checked
    );
}

#[test]
fn badinput_injects_malformed_frames_and_keeps_serving() {
    let r = run("badinput/top_p4", 3);
    let c = &r.checked;
    // 3,000 corruptions of which a few happen to stay legal, 1,000+ legal packets.
    assert!(c.malformed_injected >= 2_500, "{c:?}");
    assert!(c.legal_injected >= 1_000, "{c:?}");
    assert!(c.packets >= c.legal_injected, "{c:?}");
}

#[test]
fn reset_cuts_frames_and_recovers() {
    let r = run("reset/top_p4", 5);
    assert!(r.checked.cut_by_reset > 0, "{:?}", r.checked);
    assert!(r.checked.packets > 0, "{:?}", r.checked);
}

#[test]
fn same_seed_same_case() {
    let a = run("sequence/top_p4", 11);
    let b = run("sequence/top_p4", 11);
    assert_eq!(a.checked, b.checked);
}

#[test]
fn switch_adversarial_checks_packets_and_injects_faults() {
    let r = run("switch/adversarial/switch_p4", 2);
    let c = &r.checked;
    assert!(c.legal_injected >= 600, "{c:?}");
    assert!(c.malformed_injected >= 60, "{c:?}");
    assert!(c.packets >= c.legal_injected, "{c:?}");
}

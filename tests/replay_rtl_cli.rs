//! `dysharp replay --engine rtl`: the injection orders and the fused schedule end to end
//! (checked like every replay: 0 mismatches), and their bad flags named without a panic.

mod common;

use common::{err, ok};

fn trace(dir: &std::path::Path, dist: &str) -> String {
    let p = dir.join(format!("{}.jsonl", dist.replace(':', "_")));
    let path = p.to_str().unwrap().to_string();
    ok(&[
        "gen",
        "--tokens",
        "512",
        "--experts",
        "256",
        "--topk",
        "8",
        "--ep",
        "8",
        "--dist",
        dist,
        "--seed",
        "1",
        "--out",
        &path,
    ]);
    path
}

#[cfg(feature = "rtl")]
#[test]
fn fused_replay_is_checked_and_reports_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    for dist in ["uniform", "normal:0.032"] {
        let t = trace(dir.path(), dist);
        let out = ok(&[
            "replay",
            "--trace",
            &t,
            "--experts",
            "256",
            "--ep",
            "8",
            "--hidden",
            "256",
            "--engine",
            "rtl",
            "--fused",
            "--tile",
            "16",
            "--json",
        ]);
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(j["mismatches"], 0);
        assert_eq!(j["stops_at_first_mismatch"], true);
        assert_eq!(j["inject"], "interleave:32");
        let f = &j["fused"];
        assert_eq!(f["tile"], 16);
        let steps = f["steps"].as_array().unwrap();
        // 64 tokens per GPU in tiles of 16: 4 tiles, fill + 3 overlapped steps + drain.
        assert_eq!(steps.len(), 5);
        assert!(steps[0]["combine_tile"].is_null() && steps[4]["dispatch_tile"].is_null());
        assert!(steps
            .iter()
            .all(|s| s["bound_link"].as_str().unwrap().starts_with("port ")));
        let sum: u64 = steps.iter().map(|s| s["cycles"].as_u64().unwrap()).sum();
        assert_eq!(f["cycles"].as_u64().unwrap(), sum);
        let bound: u64 = steps
            .iter()
            .map(|s| s["bound_cycles"].as_u64().unwrap())
            .sum();
        assert_eq!(f["fused_bound_cycles"].as_u64().unwrap(), bound);
        let r = f["cycles_over_fused_bound"].as_f64().unwrap();
        assert!((1.0..1.5).contains(&r), "{dist}: {r}");
        // The fused bound is below the phases' bound in sequence.
        assert!(bound < f["sequential_bound_cycles"].as_u64().unwrap());
    }
}

#[cfg(feature = "rtl")]
#[test]
fn injection_orders_all_replay_checked() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "uniform");
    for inject in ["token", "chunk", "interleave:4"] {
        let out = ok(&[
            "replay",
            "--trace",
            &t,
            "--experts",
            "256",
            "--ep",
            "8",
            "--hidden",
            "512",
            "--engine",
            "rtl",
            "--inject",
            inject,
            "--json",
        ]);
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(j["mismatches"], 0, "{inject}");
        assert_eq!(j["inject"], inject);
        assert!(j["fused"].is_null());
    }
}

#[test]
fn bad_fused_and_inject_flags_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "uniform");
    let base = [
        "replay",
        "--trace",
        &t,
        "--experts",
        "256",
        "--ep",
        "8",
        "--hidden",
        "256",
    ];
    let cases: [(&[&str], &[&str]); 4] = [
        (&["--fused"], &["fused", "rtl engine"]),
        (&["--tile", "8"], &["--fused"]),
        (&["--engine", "rtl", "--fused", "--tile", "0"], &["tile"]),
        (
            &["--engine", "rtl", "--inject", "interleave:0"],
            &["inject", "interleave:0"],
        ),
    ];
    for (flags, want) in cases {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(flags);
        let e = err(&args);
        for w in want {
            assert!(e.contains(w), "{args:?}: {e}");
        }
    }
}

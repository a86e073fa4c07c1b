//! End-to-end tests of the `dysharp` command-line tool.

use std::path::Path;
use std::process::{Command, Output};

fn dysharp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dysharp"))
        .args(args)
        .output()
        .expect("run dysharp")
}

fn ok(args: &[&str]) -> String {
    let o = dysharp(args);
    assert!(
        o.status.success(),
        "dysharp {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn err(args: &[&str]) -> String {
    let o = dysharp(args);
    assert!(!o.status.success(), "dysharp {args:?} should fail");
    let e = String::from_utf8(o.stderr).unwrap();
    assert!(!e.contains("panicked"), "{e}");
    e
}

#[test]
fn gen_stats_replay_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let t = trace.to_str().unwrap();
    ok(&[
        "gen",
        "--tokens",
        "256",
        "--experts",
        "64",
        "--topk",
        "8",
        "--ep",
        "8",
        "--dist",
        "zipf:1.2",
        "--seed",
        "5",
        "--out",
        t,
    ]);
    let s: serde_json::Value = serde_json::from_str(&ok(&[
        "stats",
        "--trace",
        t,
        "--experts",
        "64",
        "--ep",
        "8",
        "--json",
    ]))
    .unwrap();
    for k in [
        "tokens",
        "ep",
        "experts",
        "topk",
        "send_matrix",
        "rank_receive",
        "gini_rank",
        "max_mean_rank",
        "max_mean_expert",
        "fanout_mean",
    ] {
        assert!(s.get(k).is_some(), "stats JSON lacks {k}");
    }
    assert_eq!(s["tokens"], 256);
    let recv: u64 = s["rank_receive"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(recv, 256 * 8);
    let r: serde_json::Value = serde_json::from_str(&ok(&[
        "replay",
        "--trace",
        t,
        "--experts",
        "64",
        "--ep",
        "8",
        "--hidden",
        "1024",
        "--dtype",
        "f16",
        "--engine",
        "golden",
        "--json",
    ]))
    .unwrap();
    for k in [
        "tokens",
        "ep",
        "experts",
        "topk",
        "payload_bytes_per_token",
        "mismatches",
    ] {
        assert!(r.get(k).is_some(), "replay JSON lacks {k}");
    }
    assert_eq!(r["mismatches"], 0);
    assert_eq!(r["payload_bytes_per_token"], 2048);
    for phase in ["dispatch", "combine"] {
        for k in [
            "uplink_payload_bytes",
            "downlink_payload_bytes",
            "baseline_uplink_payload_bytes",
            "baseline_downlink_payload_bytes",
            "uplink_wire_bytes",
            "downlink_wire_bytes",
        ] {
            assert_eq!(
                r[phase][k].as_array().map(|a| a.len()),
                Some(8),
                "{phase}.{k}"
            );
        }
        assert!(r[phase]["lower_bound_cycles"].as_u64().unwrap() > 0);
    }
    // DySHARP dispatch uplink carries each row once; the baseline once per remote GPU.
    let sum = |k: &str| -> u64 {
        r["dispatch"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    assert!(sum("uplink_payload_bytes") < sum("baseline_uplink_payload_bytes"));
    assert_eq!(
        sum("downlink_payload_bytes"),
        sum("baseline_downlink_payload_bytes")
    );
    // Text output works too.
    assert!(ok(&["stats", "--trace", t, "--experts", "64", "--ep", "8"]).contains("gini(rank)"));
}

#[test]
fn errors_name_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"step\":0,\"layer\":0,\"rank\":0,\"num_tokens\":1,\"topk\":2,\"top_indices\":[[1,2]]}\n\
         {\"step\":0,\"layer\":0,\"rank\":1,\"num_tokens\":1,\"topk\":2,\"top_indices\":[[1]]}\n",
    )
    .unwrap();
    let e = err(&[
        "stats",
        "--trace",
        bad.to_str().unwrap(),
        "--experts",
        "8",
        "--ep",
        "2",
    ]);
    assert!(
        e.contains("bad.jsonl:2") && e.contains("top_indices"),
        "{e}"
    );
    let e = err(&["stats", "--trace", "/nonexistent/x.jsonl"]);
    assert!(e.contains("/nonexistent/x.jsonl"), "{e}");
    let e = err(&["gen", "--dist", "zipf:abc", "--out", "/dev/null"]);
    assert!(e.contains("dist") && e.contains("abc"), "{e}");
    let e = err(&["gen", "--tokens", "10", "--ep", "3", "--out", "/dev/null"]);
    assert!(e.contains("10") && e.contains("3"), "{e}");
    let good = dir.path().join("g.jsonl");
    ok(&[
        "gen",
        "--tokens",
        "16",
        "--experts",
        "8",
        "--topk",
        "2",
        "--ep",
        "2",
        "--out",
        good.to_str().unwrap(),
    ]);
    // Bad replay flags: each names the flag and the value.
    let g = good.to_str().unwrap();
    for (flag, value, want) in [
        ("--dtype", "fp8", ["dtype", "fp8"]),
        ("--hidden", "3", ["multiple of 16", "3"]),
        ("--engine", "magic", ["engine", "magic"]),
    ] {
        let e = err(&[
            "replay",
            "--trace",
            g,
            "--experts",
            "8",
            "--ep",
            "2",
            flag,
            value,
        ]);
        assert!(want.iter().all(|w| e.contains(w)), "{flag} {value}: {e}");
    }
    let e = err(&[
        "stats",
        "--trace",
        good.to_str().unwrap(),
        "--experts",
        "4",
        "--ep",
        "2",
    ]);
    assert!(
        e.contains("g.jsonl"),
        "an expert ID beyond --experts names the file: {e}"
    );
}

#[test]
fn every_subcommand_has_help() {
    for sub in [
        "gen", "stats", "replay", "demo", "gen-pkg", "golden", "regress", "coverage",
    ] {
        let out = ok(&[sub, "--help"]);
        assert!(out.contains("Usage"), "{sub}");
    }
}

#[test]
fn generated_sv_package_matches_the_committed_one() {
    let committed =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("rtl/dysharp_pkg.sv"))
            .unwrap();
    assert_eq!(
        ok(&["gen-pkg"]),
        committed,
        "rtl/dysharp_pkg.sv drifted from the Rust codec: run `cargo run -- gen-pkg --out rtl/dysharp_pkg.sv`"
    );
}

#[test]
fn demo_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&[
        "demo",
        "--out-dir",
        dir.path().to_str().unwrap(),
        "--dists",
        "uniform",
    ]);
    assert!(out.contains("0 mismatches"), "{out}");
    assert!(out.contains("hottest port"));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(j["workloads"][0]["replay"]["mismatches"], 0);
    assert_eq!(j["workloads"][0]["replay"]["tokens"], 4096);
    assert_eq!(j["rtl"]["replay"]["mismatches"], 0);
    assert!(j["rtl"]["replay"]["cycles"].as_u64().unwrap() > 0);
    assert!(out.contains("RTL engine"), "{out}");
    let svg = std::fs::read_to_string(dir.path().join("report.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("dispatch uplink"));
}

#[test]
fn regress_plans_shards_and_rejects_bad_flags() {
    let all = ok(&["regress", "--quick", "--list"]);
    let all: Vec<&str> = all.lines().collect();
    assert!(all.len() >= 20, "{all:?}");
    for kind in ["stream/", "sequence/", "badinput/", "reset/", "trace/"] {
        assert!(all.iter().any(|c| c.starts_with(kind)), "no {kind} case");
    }
    // Three shards list every case exactly once.
    let mut union: Vec<String> = (1..=3)
        .flat_map(|k| {
            let shard = format!("{k}/3");
            ok(&["regress", "--quick", "--shard", &shard, "--list"])
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect();
    union.sort();
    let mut want: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(union, want);
    for (args, needle) in [
        (&["regress", "--shard", "3/2"][..], "shard \"3/2\""),
        (&["regress", "--shard", "x"][..], "shard \"x\""),
        (&["regress", "--seeds", "0"][..], "--seeds"),
        (&["regress", "--jobs", "0", "--quick"][..], "--jobs"),
        (
            &["regress", "--only", "no-such-case"][..],
            "no case matches",
        ),
        (
            &["regress", "--case", "stream/top_p9", "--seed", "1"][..],
            "top_p9",
        ),
        (
            &["regress", "--case", "trace/nope/uniform", "--seed", "1"][..],
            "nope",
        ),
        (
            &["regress", "--case", "stream/top_p8", "--seed", "0"][..],
            "seed",
        ),
        (&["regress", "--case", "stream/top_p8"][..], "--seed"),
    ] {
        let e = err(args);
        assert!(e.contains(needle), "{args:?}: {e}");
    }
}

//! End-to-end tests of the `dysharp` command-line tool.

mod common;

use common::{dysharp, err, ok};
use std::path::Path;
use std::process::Command;

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
        ("--inject", "sideways", ["inject", "sideways"]),
        ("--inject", "chunk", ["inject", "rtl engine"]),
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
    // A rank beyond --ep is an error wherever it stands: here in a (step, layer) group that
    // neither command uses (the default group is the first one), after a blank line.
    let ranks = dir.path().join("ranks.jsonl");
    std::fs::write(
        &ranks,
        "{\"step\":0,\"layer\":0,\"rank\":0,\"num_tokens\":1,\"topk\":2,\"top_indices\":[[1,2]]}\n\
         \n\
         {\"step\":0,\"layer\":1,\"rank\":5,\"num_tokens\":1,\"topk\":2,\"top_indices\":[[1,2]]}\n",
    )
    .unwrap();
    for cmd in ["stats", "replay"] {
        let e = err(&[
            cmd,
            "--trace",
            ranks.to_str().unwrap(),
            "--experts",
            "8",
            "--ep",
            "2",
        ]);
        assert!(
            e.contains("ranks.jsonl:3") && e.contains("rank") && e.contains("ep = 2"),
            "{cmd}: {e}"
        );
    }
}

#[test]
fn every_subcommand_has_help() {
    let mut subs = vec![
        "gen",
        "stats",
        "replay",
        "demo",
        "gen-pkg",
        "gen-wrapper",
        "golden",
    ];
    if cfg!(feature = "rtl") {
        subs.extend(["regress", "coverage", "bench-sim"]);
    }
    for sub in subs {
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
fn generated_top_wrapper_matches_the_committed_one() {
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("verif/harness/dysharp_top_tb.sv"),
    )
    .unwrap();
    assert_eq!(
        ok(&["gen-wrapper"]),
        committed,
        "verif/harness/dysharp_top_tb.sv drifted from rtl/dysharp_top.sv: run \
         `cargo run -- gen-wrapper --out verif/harness/dysharp_top_tb.sv`"
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
    assert!(out.contains("RTL engine"), "{out}");
    if cfg!(feature = "rtl") {
        assert_eq!(j["rtl"]["replay"]["mismatches"], 0);
        assert!(j["rtl"]["replay"]["cycles"].as_u64().unwrap() > 0);
    } else {
        assert!(j["rtl"]["skipped"]
            .as_str()
            .unwrap()
            .contains("without the RTL engine"));
    }
    let svg = std::fs::read_to_string(dir.path().join("report.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("dispatch uplink"));
}

#[cfg(feature = "rtl")]
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

/// `bench-sim` on the smallest model: every speed is measured (positive, the ratio is
/// theirs, with `--repeat` the medians of the runs), every run and replay ends where the
/// inline bench did (checked inside: an error otherwise), and bad flags fail cleanly.
#[cfg(feature = "rtl")]
#[test]
fn bench_sim_reports_its_speeds_and_rejects_bad_flags() {
    let out = ok(&[
        "bench-sim",
        "--model",
        "top_p4",
        "--cycles",
        "3000",
        "--warmup",
        "700",
        "--repeat",
        "3",
        "--json",
    ]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["model"], "top_p4");
    assert_eq!(j["cycles"], 3000);
    assert_eq!(j["warmup_cycles"], 700);
    // How the model was compiled: a test build is never the instrumented training build.
    assert!(
        matches!(j["profile"].as_str(), Some("none" | "trained")),
        "{j}"
    );
    // Three repetitions, each with its own speeds; the reported speeds are their medians.
    assert_eq!(j["repeat"], 3);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{j}");
    for k in ["rust_cycles_per_s", "cpp_cycles_per_s"] {
        let mut v: Vec<f64> = runs.iter().map(|r| r[k].as_f64().unwrap()).collect();
        v.sort_by(f64::total_cmp);
        assert_eq!(j[k].as_f64().unwrap(), v[1], "{k}: {j}");
    }
    assert!(j["packets_checked"].as_u64().unwrap() > 50, "{j}");
    let speed = |k: &str| j[k].as_f64().unwrap();
    for k in [
        "rust_cycles_per_s",
        "rust_inline_cycles_per_s",
        "rust_unchecked_cycles_per_s",
        "rust_bare_cycles_per_s",
        "cpp_cycles_per_s",
    ] {
        assert!(speed(k) > 0.0, "{k}: {j}");
    }
    let ratio = speed("rust_cycles_per_s") / speed("cpp_cycles_per_s");
    assert!(
        (speed("ratio") - ratio).abs() < 1e-9 * ratio.max(1.0),
        "{j}"
    );
    // Short runs in text: without a warm-up, and with the default one twice.
    let short = |more: &[&str]| {
        let mut args = vec!["bench-sim", "--model", "top_p4", "--cycles", "200"];
        args.extend_from_slice(more);
        ok(&args)
    };
    let text = short(&["--warmup", "0"]);
    assert!(
        text.contains("after 0 of warm-up")
            && text.contains("C++ loop")
            && text.contains("no scoreboard")
            && text.contains("ratio")
            && text.contains("profile feedback"),
        "{text}"
    );
    let text = short(&["--repeat", "2"]);
    assert!(
        text.contains("median of 2 runs") && text.contains("after 2000 of warm-up"),
        "{text}"
    );
    for (args, needle) in [
        (&["bench-sim", "--model", "top_p9"][..], "top_p9"),
        (&["bench-sim", "--model", "switch_p4"][..], "dysharp_top"),
        (&["bench-sim", "--cycles", "0"][..], "--cycles"),
        (&["bench-sim", "--seed", "0"][..], "--seed"),
        (&["bench-sim", "--repeat", "0"][..], "--repeat"),
        (&["bench-sim", "--warmup", "many"][..], "--warmup"),
    ] {
        let e = err(args);
        assert!(e.contains(needle), "{args:?}: {e}");
    }
}

#[cfg(not(feature = "rtl"))]
#[test]
fn golden_only_build_says_it_has_no_rtl_engine() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    ok(&[
        "gen",
        "--tokens",
        "64",
        "--experts",
        "32",
        "--topk",
        "4",
        "--ep",
        "4",
        "--seed",
        "3",
        "--out",
        t.to_str().unwrap(),
    ]);
    let e = err(&[
        "replay",
        "--trace",
        t.to_str().unwrap(),
        "--experts",
        "32",
        "--ep",
        "4",
        "--hidden",
        "128",
        "--engine",
        "rtl",
    ]);
    assert!(
        e.contains("--engine") && e.contains("without the RTL engine"),
        "{e}"
    );
    let e = err(&["regress", "--quick"]);
    assert!(e.contains("regress"), "{e}");
}

/// A trace of two layers (4 experts over 2 ranks, top-2): layer 1 sends everything to rank 1.
const TWO_LAYERS: &str = r#"{"step":0,"layer":0,"rank":0,"num_tokens":2,"topk":2,"top_indices":[[0,1],[0,2]]}
{"step":0,"layer":0,"rank":1,"num_tokens":1,"topk":2,"top_indices":[[2,3]]}
{"step":0,"layer":1,"rank":0,"num_tokens":2,"topk":2,"top_indices":[[2,3],[3,2]]}
{"step":0,"layer":1,"rank":1,"num_tokens":1,"topk":2,"top_indices":[[3,2]]}
"#;

#[test]
fn step_and_layer_choose_the_group_and_the_default_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("two.jsonl");
    std::fs::write(&t, TWO_LAYERS).unwrap();
    let t = t.to_str().unwrap();
    let shape = ["--experts", "4", "--ep", "2"];
    let o = dysharp(&[&["stats", "--trace", t, "--json"][..], &shape].concat());
    assert!(o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("2 (step, layer) groups") && e.contains("layer 0"),
        "{e}"
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["layer"], 0);
    assert_eq!(j["rank_receive"], serde_json::json!([3, 3]));
    let j: serde_json::Value = serde_json::from_str(&ok(&[
        &[
            "stats", "--trace", t, "--json", "--step", "0", "--layer", "1",
        ][..],
        &shape,
    ]
    .concat()))
    .unwrap();
    assert_eq!(j["layer"], 1);
    assert_eq!(j["rank_receive"], serde_json::json!([0, 6]));
    let e = err(&[&["stats", "--trace", t, "--layer", "7"][..], &shape].concat());
    assert!(e.contains("--layer") && e.contains("step 0 layer 1"), "{e}");
    // Replay of layer 1: every row goes to rank 1; rank 1's own token stays local.
    let j: serde_json::Value = serde_json::from_str(&ok(&[
        &[
            "replay", "--trace", t, "--layer", "1", "--hidden", "128", "--json",
        ][..],
        &shape,
    ]
    .concat()))
    .unwrap();
    assert_eq!(j["tokens"], 3);
    assert_eq!(j["dispatch"]["baseline_uplink_payload_bytes"][0], 2 * 256);
    assert_eq!(j["dispatch"]["baseline_uplink_payload_bytes"][1], 0);
}

#[test]
fn alltoallv_matrix_matches_a_brute_force_count() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("two.jsonl");
    std::fs::write(&t, TWO_LAYERS).unwrap();
    let m = dir.path().join("m.txt");
    let (t, m_s) = (t.to_str().unwrap(), m.to_str().unwrap());
    let base = [
        "stats",
        "--trace",
        t,
        "--experts",
        "4",
        "--ep",
        "2",
        "--layer",
        "0",
    ];
    for (count, row_bytes) in [("tokens", 100u64), ("assignments", 64)] {
        let hidden = (row_bytes / 2).to_string();
        ok(&[
            &base[..],
            &[
                "--alltoallv-matrix",
                m_s,
                "--count",
                count,
                "--hidden",
                &hidden,
            ],
        ]
        .concat());
        let text = std::fs::read_to_string(&m).unwrap();
        let got: Vec<Vec<u64>> = text
            .lines()
            .map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect())
            .collect();
        // Brute force over layer 0's tokens: (source rank, experts).
        let tokens = [(0usize, [0u16, 1]), (0, [0, 2]), (1, [2, 3])];
        let aligned = row_bytes.div_ceil(16) * 16;
        let mut want = vec![vec![0u64; 2]; 2];
        for (src, ex) in tokens {
            let mut ranks: Vec<usize> = ex.iter().map(|&e| e as usize / 2).collect();
            if count == "tokens" {
                ranks.dedup();
            }
            for r in ranks {
                want[src][r] += aligned;
            }
        }
        assert_eq!(got, want, "{count}");
        assert!(got.iter().flatten().all(|v| v % 16 == 0));
    }
    let e = err(&[&base[..], &["--alltoallv-matrix", m_s, "--count", "rows"]].concat());
    assert!(e.contains("--count"), "{e}");
}

#[test]
fn vllm_routed_experts_npy_is_read() {
    // int16 [tokens 2, layers 1, top_k 2], NumPy format 1.0.
    let mut header = "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 1, 2), }".to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in [0i16, 3, 2, 1] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("routed.npy");
    std::fs::write(&p, &bytes).unwrap();
    let p = p.to_str().unwrap();
    let j: serde_json::Value = serde_json::from_str(&ok(&[
        "stats",
        "--trace",
        p,
        "--experts",
        "4",
        "--ep",
        "2",
        "--json",
    ]))
    .unwrap();
    // Token 0 (rank 0) -> experts 0 (rank 0), 3 (rank 1); token 1 (rank 1) -> 2, 1.
    assert_eq!(j["send_matrix"], serde_json::json!([[1, 1], [1, 1]]));
    let e = err(&["stats", "--trace", p, "--experts", "3", "--ep", "1"]);
    assert!(e.contains("routed.npy") && e.contains("[0][0][1]"), "{e}");
    std::fs::write(dir.path().join("routed.npy"), &bytes[..bytes.len() - 3]).unwrap();
    let e = err(&["stats", "--trace", p, "--experts", "4", "--ep", "2"]);
    assert!(e.contains("truncated"), "{e}");
}

#[test]
fn oversized_and_empty_flags_fail_fast() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.jsonl");
    let e = err(&[
        "gen",
        "--tokens",
        "100000000000",
        "--ep",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(e.contains("tokens") && e.contains("limit"), "{e}");
    let e = err(&["demo", "--dists", " , "]);
    assert!(e.contains("--dists"), "{e}");
    let e = err(&["demo", "--dists", "uniform,bogus"]);
    assert!(e.contains("--dist"), "{e}");
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let t = t.to_str().unwrap();
    ok(&[
        "gen",
        "--tokens",
        "512",
        "--experts",
        "32",
        "--topk",
        "4",
        "--ep",
        "4",
        "--out",
        t,
    ]);
    let shape = ["--experts", "32", "--ep", "4"];
    for args in [
        [&["stats", "--trace", t, "--json"][..], &shape].concat(),
        [
            &["replay", "--trace", t, "--hidden", "128", "--json"][..],
            &shape,
        ]
        .concat(),
        vec!["gen-pkg"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dysharp"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away before anything is read
        let out = child.wait_with_output().unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(out.status.success(), "{args:?}: {e}");
    }
}

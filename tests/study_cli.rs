//! `dysharp study` end to end (issue 15): the quick grid writes its tables and charts, and bad
//! flags are errors that name the flag, never a panic.

mod common;

use common::{dysharp, err};

#[test]
fn quick_study_writes_tables_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = dysharp(&["study", "--quick", "--threads", "2", "--out-dir", out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("| claim | where | the paper | ours |"),
        "{text}"
    );
    assert!(text.contains("NVLS workaround"), "{text}");
    for f in [
        "study.json",
        "traffic.csv",
        "analytic.csv",
        "tlb.csv",
        "tlb_knees.csv",
        "claims.md",
        "traffic.svg",
        "speedup.svg",
        "seqlen.svg",
        "tlb.svg",
    ] {
        let p = dir.path().join(f);
        let body = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(body.lines().count() > 1, "{f} is nearly empty");
        if f.ends_with(".svg") {
            assert!(
                body.starts_with("<svg") && body.contains("<polyline"),
                "{f}"
            );
        }
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("study.json")).unwrap())
            .unwrap();
    assert_eq!(json["grid"], "quick");
    assert!(!json["traffic"].as_array().unwrap().is_empty());
    // The table of the text summary comes from the JSON's rows.
    let csv = std::fs::read_to_string(dir.path().join("traffic.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        json["traffic"].as_array().unwrap().len() + 1
    );
}

#[test]
fn layer_study_writes_the_layer_model_and_in_switch_rows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = dysharp(&[
        "study",
        "--layer",
        "--eps",
        "8",
        "--tokens",
        "256",
        "--threads",
        "1",
        "--out-dir",
        out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("Layer-time model"), "{text}");
    assert!(text.contains("calibrated-real rows skipped"), "{text}");
    for f in ["layer.svg", "in_switch.svg", "in_switch.csv"] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("study.json")).unwrap())
            .unwrap();
    // Only the layer rows: DeepSeek-V3 top-8 at EP 8 under mock, normal 0.032 and zipf 1.5.
    assert_eq!(json["traffic"].as_array().unwrap().len(), 3);
    assert!(json["tlb"].as_array().unwrap().is_empty());
    let layer = &json["layer"];
    assert_eq!(layer["rows"].as_array().unwrap().len(), 6);
    assert!(layer["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| !a["source"].as_str().unwrap().is_empty()));
    let row = &json["traffic"][0]["ratios"];
    assert!(row["fused_vs_best_unicast"].as_f64().unwrap() > 0.9);
    assert_eq!(json["in_switch"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_flags_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["--eps", "64"], "--eps"),
        (&["--eps", "x"], "--eps"),
        (&["--tile", "0"], "--tile"),
        (&["--tlb-entries", "100"], "--tlb-entries"),
        (&["--tlb-ways", "3"], "--tlb-ways"),
        (&["--counts", "/nonexistent/counts.csv"], "--counts"),
        (&["--quick", "--full"], "--full"),
    ];
    for (flags, name) in cases {
        let mut args = vec!["study", "--quick", "--out-dir", out];
        if flags.contains(&"--full") {
            args.remove(1);
        }
        args.extend_from_slice(flags);
        let e = err(&args);
        assert!(e.contains(name), "{args:?}: {e}");
    }
}

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
    assert!(text.contains("| claim | the paper | ours |"), "{text}");
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

//! End-to-end tests of `dysharp golden` (docs/golden.md): run, diff (exit codes 0/1/2),
//! from-vcd on a hand-written waveform.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dysharp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dysharp"))
        .args(args)
        .output()
        .expect("run dysharp")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/golden")
        .join(name)
        .display()
        .to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn run_diff_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("expected.json");
    let stim = dir.path().join("stim");
    let o = dysharp(&[
        "golden",
        "run",
        &example("scenario.json"),
        "--out",
        s(&exp),
        "--stimulus-dir",
        s(&stim),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("40 egress packets on 4 ports"),
        "{}",
        stdout(&o)
    );
    assert!(stim.join("stimulus.txt").exists() && stim.join("port0.memh").exists());
    assert!(stim.join("hub1_init.txt").exists());

    // Without --out the result goes to standard output.
    let o = dysharp(&["golden", "run", &example("scenario.json")]);
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["kind"], "expected");
    assert_eq!(v["version"], 1);

    // Equal on itself.
    let o = dysharp(&["golden", "diff", s(&exp), s(&exp)]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("equal: 40 egress packets match"));

    // One payload bit flipped in the observed file: exit 1, first divergence.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&exp).unwrap()).unwrap();
    v["kind"] = "observed".into();
    let pkts = v["egress"][1]["packets"].as_array_mut().unwrap();
    let i = pkts
        .iter()
        .position(|p| p["packet"]["opcode"] == "RSP_REDUCE")
        .unwrap();
    let f = pkts[i]["flits"][1].as_str().unwrap();
    let flipped = u128::from_str_radix(f, 16).unwrap() ^ (1 << 17);
    pkts[i]["flits"][1] = format!("{flipped:032x}").into();
    let obs = dir.path().join("observed.json");
    std::fs::write(&obs, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = dysharp(&["golden", "diff", s(&exp), s(&obs)]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(
        out.starts_with("first divergence: egress port 1: packet differs; flow: RSP_REDUCE"),
        "{out}"
    );
    assert!(out.contains("payload lane 1 (f16"), "{out}");
    let o = dysharp(&["golden", "diff", "--json", s(&exp), s(&obs)]);
    assert_eq!(code(&o), 1);
    let rep: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(rep["equal"], false);
    assert_eq!(rep["first"]["port"], 1);
    assert_eq!(rep["first"]["index"], 0);

    // Sections can be skipped; errors exit 2 and name the file.
    let o = dysharp(&[
        "golden",
        "diff",
        "--ignore",
        "mem,errors,digest",
        s(&exp),
        s(&exp),
    ]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("not compared"));
    let missing = dir.path().join("nope.json");
    let o = dysharp(&["golden", "diff", s(&exp), s(&missing)]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("nope.json"), "{}", stderr(&o));
    std::fs::write(
        &obs,
        "{\"version\": 7, \"kind\": \"observed\", \"egress\": []}",
    )
    .unwrap();
    let o = dysharp(&["golden", "diff", s(&exp), s(&obs)]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("unsupported result version 7"),
        "{}",
        stderr(&o)
    );
    let bad = dir.path().join("bad.json");
    let text = std::fs::read_to_string(example("scenario.json"))
        .unwrap()
        .replacen("\"opcode\": \"WRITE\"", "\"opcode\": \"WRTE\"", 1);
    std::fs::write(&bad, text).unwrap();
    let o = dysharp(&["golden", "run", s(&bad)]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("bad.json: at `stimulus[0].packets[0].packet.opcode`"),
        "{}",
        stderr(&o)
    );
}

/// A two-port waveform: port 1's responses on the upper half of a shared 256-bit bus.
fn vcd_with(flit: u128) -> String {
    format!(
        "$timescale 1ns $end
$scope module TOP $end
$var wire 1 ! clk $end
$var wire 2 v rsp_valid [1:0] $end
$var wire 2 r rsp_ready [1:0] $end
$var wire 256 d rsp_data [255:0] $end
$var wire 2 l rsp_last [1:0] $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
0!
b00 v
b11 r
b0 d
b00 l
$end
#10
1!
b10 v
b{:b}{} d
b10 l
#20
0!
#30
1!
b00 v
#40
0!
",
        flit,
        "0".repeat(128)
    )
}

#[test]
fn from_vcd_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| -> PathBuf { dir.path().join(n) };
    // Port 1 sends a truncated WRITE: the switch answers RSP_ERROR (ERR_FRAME) to SM 1.
    let scenario = r#"{
      "version": 1,
      "config": { "num_ports": 2, "experts_per_port": 4, "max_targets": 8 },
      "stimulus": [ { "port": 1, "packets": [ { "flits": ["8a000001004176000000000000022001"] } ] } ]
    }"#;
    std::fs::write(p("s.json"), scenario).unwrap();
    let o = dysharp(&["golden", "run", s(&p("s.json")), "--out", s(&p("exp.json"))]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let exp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("exp.json")).unwrap()).unwrap();
    let flit = u128::from_str_radix(
        exp["egress"][1]["packets"][0]["flits"][0].as_str().unwrap(),
        16,
    )
    .unwrap();
    std::fs::write(
        p("m.toml"),
        r#"version = 1
clock = "TOP.clk"
[[stream]]
name = "rsp"
port = "0..2"
valid = "TOP.rsp_valid[{p}]"
ready = "TOP.rsp_ready[{p}]"
data = "TOP.rsp_data[{128*p+127}:{128*p}]"
last = "TOP.rsp_last[{p}]"
"#,
    )
    .unwrap();
    std::fs::write(p("w.vcd"), vcd_with(flit)).unwrap();
    let o = dysharp(&[
        "golden",
        "from-vcd",
        s(&p("w.vcd")),
        "--map",
        s(&p("m.toml")),
        "--out",
        s(&p("obs.json")),
        "--scenario",
        s(&p("s.json")),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 egress packets on 2 ports"),
        "{}",
        stdout(&o)
    );
    let obs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("obs.json")).unwrap()).unwrap();
    assert_eq!(obs["kind"], "observed");
    assert_eq!(
        obs["egress"][1]["packets"][0]["packet"]["ecode"],
        "ERR_FRAME"
    );
    assert_eq!(obs["egress"][1]["packets"][0]["time"], 30);
    let o = dysharp(&["golden", "diff", s(&p("exp.json")), s(&p("obs.json"))]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).contains("not compared"), "{}", stdout(&o));

    // The same waveform with a header bit flipped: exit 1, decoded field by field.
    std::fs::write(p("w.vcd"), vcd_with(flit ^ (1 << 80))).unwrap();
    let o = dysharp(&[
        "golden",
        "from-vcd",
        s(&p("w.vcd")),
        "--map",
        s(&p("m.toml")),
        "--out",
        s(&p("obs.json")),
    ]);
    assert_eq!(code(&o), 0);
    let o = dysharp(&["golden", "diff", s(&p("exp.json")), s(&p("obs.json"))]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(out.contains("egress port 1"), "{out}");
    // Bit 80 is in the tag, which also keys the flow: the expected RSP_ERROR is missing.
    assert!(out.contains("missing") || out.contains("tag"), "{out}");

    // A mapping naming a signal the waveform does not have: exit 2 with a hint.
    std::fs::write(p("m2.toml"), "version = 1\nclock = \"TOP.clock\"\n").unwrap();
    let o = dysharp(&[
        "golden",
        "from-vcd",
        s(&p("w.vcd")),
        "--map",
        s(&p("m2.toml")),
    ]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("TOP.clk"), "{}", stderr(&o));
}

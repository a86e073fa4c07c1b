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
    // The readable decode must agree with the flits: an edited frame keeps no stale `packet`.
    let obs = dir.path().join("observed.json");
    std::fs::write(&obs, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = dysharp(&["golden", "diff", s(&exp), s(&obs)]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("disagree"), "{}", stderr(&o));
    let pkts = v["egress"][1]["packets"].as_array_mut().unwrap();
    pkts[i].as_object_mut().unwrap().remove("packet");
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

/// Runs `dysharp` with `input` on standard input.
fn dysharp_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut c = Command::new(env!("CARGO_BIN_EXE_dysharp"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run dysharp");
    c.stdin.take().unwrap().write_all(input).unwrap();
    c.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_ends_quietly() {
    // `dysharp golden run ... | head -c 1`: the reader goes away after one byte.
    let mut c = Command::new(env!("CARGO_BIN_EXE_dysharp"))
        .args(["golden", "run", &example("scenario.json")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run dysharp");
    let mut out = c.stdout.take().unwrap();
    let mut one = [0u8; 1];
    std::io::Read::read_exact(&mut out, &mut one).unwrap();
    drop(out);
    let o = c.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn diff_flags_kinds_and_waveform_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| -> PathBuf { dir.path().join(n) };
    let o = dysharp(&[
        "golden",
        "run",
        &example("scenario.json"),
        "--out",
        s(&p("e.json")),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("e.json")).unwrap()).unwrap();
    // Swapped arguments: the first file must be an expected result.
    v["kind"] = "observed".into();
    std::fs::write(p("o.json"), serde_json::to_string(&v).unwrap()).unwrap();
    let o = dysharp(&["golden", "diff", s(&p("o.json")), s(&p("e.json"))]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("swapped"), "{}", stderr(&o));
    // Two packets dropped on different ports: both shown with --max-diffs, as missing.
    v["egress"][0]["packets"].as_array_mut().unwrap().remove(0);
    v["egress"][2]["packets"].as_array_mut().unwrap().remove(0);
    std::fs::write(p("o.json"), serde_json::to_string(&v).unwrap()).unwrap();
    let o = dysharp(&["golden", "diff", s(&p("e.json")), s(&p("o.json"))]);
    assert_eq!(code(&o), 1);
    assert!(
        stdout(&o).contains("1 more divergence(s) not shown"),
        "{}",
        stdout(&o)
    );
    let o = dysharp(&[
        "golden",
        "diff",
        "--max-diffs",
        "5",
        s(&p("e.json")),
        s(&p("o.json")),
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("egress port 0: packet missing")
            && out.contains("divergence 2: egress port 2: packet missing"),
        "{out}"
    );
    let o = dysharp(&[
        "golden",
        "diff",
        "--max-diffs",
        "0",
        s(&p("e.json")),
        s(&p("o.json")),
    ]);
    assert_eq!(code(&o), 2);

    // x/z on a data bit: a mismatch unless --x-as-zero.
    let vcd = |data: &str| {
        format!(
            "$scope module TOP $end\n$var wire 1 ! clk $end\n$var logic 1 v valid $end\n\
             $var logic 128 d data[127:0] $end\n$upscope $end\n$enddefinitions $end\n\
             #0\n0!\n0v\nb0 d\n#5\n1v\nb{data} d\n#10\n1!\n#15\n0!\n0v\n#20\n"
        )
    };
    std::fs::write(
        p("m.toml"),
        "version = 1\nclock = \"TOP.clk\"\n[[stream]]\nport = 0\nvalid = \"TOP.valid\"\ndata = \"TOP.data\"\nlast = \"TOP.valid\"\n",
    )
    .unwrap();
    let o = dysharp_stdin(
        &[
            "golden",
            "from-vcd",
            "-",
            "--map",
            s(&p("m.toml")),
            "--out",
            s(&p("x.json")),
        ],
        vcd(&format!("x{}", "0".repeat(127))).as_bytes(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let x: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("x.json")).unwrap()).unwrap();
    assert_eq!(x["source"], "standard input");
    assert_eq!(
        x["egress"][0]["packets"][0]["xz"][0],
        format!("8{}", "0".repeat(31))
    );
    // The same frame with the bit a known 0 is the "expected" one here.
    let o = dysharp_stdin(
        &[
            "golden",
            "from-vcd",
            "-",
            "--map",
            s(&p("m.toml")),
            "--out",
            s(&p("z.json")),
        ],
        vcd("0").as_bytes(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut z: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("z.json")).unwrap()).unwrap();
    z["kind"] = "expected".into();
    std::fs::write(p("z.json"), serde_json::to_string(&z).unwrap()).unwrap();
    let o = dysharp(&["golden", "diff", s(&p("z.json")), s(&p("x.json"))]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("x/z bits"), "{}", stdout(&o));
    let o = dysharp(&[
        "golden",
        "diff",
        "--x-as-zero",
        s(&p("z.json")),
        s(&p("x.json")),
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));

    // A gzip'd waveform from a file, and a bad one naming its line.
    let gz = flate2_free_gzip(vcd("0").as_bytes());
    std::fs::write(p("w.vcd.gz"), &gz).unwrap();
    let o = dysharp(&[
        "golden",
        "from-vcd",
        s(&p("w.vcd.gz")),
        "--map",
        s(&p("m.toml")),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    std::fs::write(p("bad.vcd"), vcd("0") + "#3\n").unwrap();
    let o = dysharp(&[
        "golden",
        "from-vcd",
        s(&p("bad.vcd")),
        "--map",
        s(&p("m.toml")),
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("bad.vcd: at `line 20`") && stderr(&o).contains("backwards"),
        "{}",
        stderr(&o)
    );
}

/// A gzip member with stored (uncompressed) deflate blocks, so the test needs no compressor.
fn flate2_free_gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let chunks: Vec<&[u8]> = data.chunks(65535).collect();
    for (i, c) in chunks.iter().enumerate() {
        out.push(u8::from(i + 1 == chunks.len()));
        let n = c.len() as u16;
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(!n).to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

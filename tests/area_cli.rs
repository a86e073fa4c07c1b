//! End-to-end tests of `dysharp area` (docs/area.md): bad flags name the flag, and a small
//! synthesis with the pinned Yosys gives a report whose structure is complete and whose area
//! grows with the number of ports. No test checks a fixed figure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dysharp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dysharp"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("run dysharp")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The area-only sky130 Liberty of ../shared/pdk, when present (else the built-in table).
fn area_liberty() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/pdk/sky130_fd_sc_hd__tt_025C_1v80.area.lib");
    p.is_file().then_some(p)
}

#[test]
fn bad_flags_name_the_flag() {
    for (args, flag) in [
        (vec!["area", "--config", "nope"], "--config"),
        (vec!["area", "--config", "fp_harness"], "--config"),
        (vec!["area", "--param", "NumPorts"], "--param"),
        (vec!["area", "--param", "NumPorts=four"], "--param"),
        (vec!["area", "--sweep", "NumPorts=4,x"], "--sweep"),
        (
            vec![
                "area",
                "--config",
                "top_p4",
                "--liberty",
                "/nonexistent.lib",
            ],
            "--liberty",
        ),
        (
            vec!["area", "--rtl", "/nonexistent/switch.sv", "--top", "sw"],
            "--rtl",
        ),
        (vec!["area", "--rtl", "Cargo.toml", "--top", "9sw"], "--top"),
        (vec!["area", "--rtl", "Cargo.toml"], "--top"),
        (vec!["area", "--flat", "--blocks", "top"], "--flat"),
        (vec!["area", "--flat", "--target", "ecp5"], "--flat"),
        (vec!["area", "--clock-mhz", "0"], "--clock-mhz"),
        (vec!["area", "--clock-mhz", "fast"], "--clock-mhz"),
        (vec!["area", "--activity", "2"], "--activity"),
        (vec!["area", "--activity=-0.1"], "--activity"),
        (
            vec!["area", "--timing-liberty", "/nonexistent/lib_tt_1v80.lib"],
            "/nonexistent/lib_tt_1v80.lib",
        ),
        (
            vec!["area", "--timing-liberty", "Cargo.toml"],
            "names no corner",
        ),
    ] {
        let o = dysharp(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
}

/// A Liberty file without timing tables, or two files of one corner, is refused with the file
/// named (exit 2) before any synthesis.
#[test]
fn timing_liberty_files_are_checked() {
    let dir = std::env::temp_dir().join(format!("dysharp-area-lib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("cells_tt_1v80.lib");
    std::fs::write(
        &lib,
        "library (cells) {\n  cell (\"inv\") {\n    area : 1.0;\n  }\n}\n",
    )
    .unwrap();
    let l = lib.display().to_string();
    let o = dysharp(&["area", "--config", "top_p4", "--timing-liberty", &l]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&l) && stderr(&o).contains("without timing tables"),
        "{}",
        stderr(&o)
    );
    let o = dysharp(&[
        "area",
        "--config",
        "top_p4",
        "--timing-liberty",
        &l,
        "--timing-liberty",
        &l,
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("both corner tt"), "{}", stderr(&o));
}

/// The sky130 timing Liberty files of ../shared/pdk (tt, ss, ff), when present; under CI they
/// must be.
fn timing_corners() -> Option<Vec<PathBuf>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pdk");
    let libs: Vec<PathBuf> = ["tt_025C_1v80", "ss_n40C_1v40", "ff_100C_1v95"]
        .iter()
        .map(|c| dir.join(format!("sky130_fd_sc_hd__{c}.lib.gz")))
        .collect();
    if libs.iter().all(|p| p.is_file()) {
        return Some(libs);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "../shared/pdk's timing Liberty files are missing"
    );
    None
}

/// Runs `dysharp area --rtl` on `sources` (file name, text) written to a temporary folder,
/// with `args` after `--top top`, and returns its JSON report (the run must succeed).
fn rtl_report(sources: &[(&str, &str)], top: &str, args: &[&str]) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("dysharp-area-{top}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<String> = sources
        .iter()
        .map(|(name, text)| {
            let f = dir.join(name);
            std::fs::write(&f, text).unwrap();
            f.display().to_string()
        })
        .collect();
    let files = files.join(",");
    let mut all = vec!["area", "--rtl", &files, "--top", top, "--json", "--quiet"];
    all.extend(args);
    let o = dysharp(&all);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("JSON report")
}

/// One register driving the enables of 2,048 flip-flops: the mapping buffers the net (on an
/// unbuffered netlist it was timed at 20 MHz), so the design meets 250 MHz at tt; every corner
/// is reported (setup at tt and ss, hold at ff), and every path names its registers.
#[test]
fn a_high_fanout_enable_is_buffered_and_timed_at_three_corners() {
    let Some(libs) = timing_corners() else {
        eprintln!("skipped: no ../shared/pdk");
        return;
    };
    let l: Vec<String> = libs.iter().map(|p| p.display().to_string()).collect();
    let v = rtl_report(
        &[(
            "fanout.sv",
            "module fanout #(parameter int N = 2048) (input logic clk_i, rst_ni, en_i,\n\
             input logic [N-1:0] d_i, output logic [N-1:0] q_o);\n\
             logic en_q;\n\
             always_ff @(posedge clk_i or negedge rst_ni) if (!rst_ni) en_q <= 1'b0; else en_q <= en_i;\n\
             always_ff @(posedge clk_i) if (en_q) q_o <= d_i;\n\
             endmodule\n",
        )],
        "fanout",
        &[
            "--clock-mhz",
            "250",
            "--timing-liberty",
            &l[0],
            "--timing-liberty",
            &l[1],
            "--timing-liberty",
            &l[2],
        ],
    );
    let t = &v["timing"];
    assert_eq!(num(t, "target_mhz"), 250.0, "{t}");
    assert_eq!(t["meets"], true, "{t}");
    let corners = t["corners"].as_array().expect("corners");
    let names: Vec<&str> = corners
        .iter()
        .map(|c| c["corner"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tt", "ss", "ff"], "{t}");
    assert!(num(&corners[0], "fmax_mhz") >= 200.0, "{t}");
    assert!(num(&corners[0], "worst_setup_ns") >= 0.0, "{t}");
    assert!(corners[2]["worst_setup_ns"].is_null() && corners[2]["worst_hold_ns"].is_number());
    // ss at 1.40 V is slower than tt
    assert!(
        num(&corners[1], "fmax_mhz") < num(&corners[0], "fmax_mhz"),
        "{t}"
    );
    let paths = t["paths"].as_array().expect("paths");
    assert!(paths
        .iter()
        .any(|p| p["check"] == "hold" && p["corner"] == "ff"));
    for p in paths {
        for k in ["from", "to"] {
            let n = p[k].as_str().unwrap();
            let anonymous = n.trim_matches('_').chars().all(|c| c.is_ascii_digit());
            assert!(!anonymous, "a path named by a number: {p}");
        }
        if p["check"] == "setup" {
            // slack = period - delay
            let period = 1000.0 / 250.0;
            assert_eq!(p["meets"], num(p, "slack_ns") >= 0.0, "{p}");
            assert!(
                (num(p, "slack_ns") - (period - num(p, "delay_ns"))).abs() < 0.01,
                "{p}"
            );
        }
    }
    assert_eq!(t["linked"], true, "{t}");
    let worst = &paths[0];
    assert_eq!(
        worst["from"], "en_q",
        "the enable register starts the worst path: {worst}"
    );
    assert!(worst["to"].as_str().unwrap().starts_with("q_o["), "{worst}");
    // the buffer tree is in the netlist and in the area
    assert!(num(block(&v, "fanout"), "cells") > 2.0 * 2048.0, "{v}");
    // power at tt: the cells' internal power is counted (OpenSTA reads the corner's voltage),
    // the parts add up, and the flip-flops' clock pins are most of it
    let p = &v["power"];
    assert_eq!(p["corner"], "tt", "{p}");
    assert_eq!(p["linked"], true, "{p}");
    assert_eq!(num(p, "activity"), 0.1, "{p}");
    let total = num(p, "total_mw");
    assert!(num(p, "internal_mw") > 0.0, "{p}");
    assert!(
        num(p, "switching_mw") > 0.0 && num(p, "leakage_mw") > 0.0,
        "{p}"
    );
    let parts = num(p, "internal_mw") + num(p, "switching_mw") + num(p, "leakage_mw");
    assert!((parts - total).abs() <= 1e-6 * total, "{p}");
    assert!(num(p, "sequential_mw") > 0.5 * total, "{p}");
    assert_eq!(num(p, "memories_mw"), 0.0, "{p}");
    assert!(
        (num(p, "energy_per_cycle_pj") - total * 1e-3 / 250e6 * 1e12).abs() < 1e-6 * total,
        "{p}"
    );
    assert_eq!(p["blocks"][0]["name"], "fanout", "{p}");
}

/// The whole design is timed linked from its blocks: an accumulator whose adder is a
/// sub-block has a register-to-register path through the adder, which neither block has on
/// its own.
#[test]
fn paths_across_block_boundaries_are_timed() {
    let Some(libs) = timing_corners() else {
        eprintln!("skipped: no ../shared/pdk");
        return;
    };
    let tt = libs[0].display().to_string();
    let v = rtl_report(
        &[
            (
                "lk_add.sv",
                "module lk_add #(parameter int W = 8) (input logic [W-1:0] a_i, b_i, \
                 output logic [W-1:0] s_o);\n  assign s_o = a_i + b_i;\nendmodule\n",
            ),
            (
                "lk_acc.sv",
                "module lk_acc #(parameter int W = 8) (input logic clk_i, rst_ni, \
                 input logic [W-1:0] d_i, output logic [W-1:0] q_o);\n\
                 logic [W-1:0] s;\n\
                 lk_add #(.W(W)) u_add (.a_i(q_o), .b_i(d_i), .s_o(s));\n\
                 always_ff @(posedge clk_i or negedge rst_ni) if (!rst_ni) q_o <= '0; else q_o <= s;\n\
                 endmodule\n",
            ),
        ],
        "lk_acc",
        &["--param", "W=32", "--timing-liberty", &tt],
    );
    let t = &v["timing"];
    assert_eq!(t["linked"], true, "{t}");
    let worst = &t["paths"][0];
    assert!(
        worst["from"].as_str().unwrap().starts_with("q_o[")
            && worst["to"].as_str().unwrap().starts_with("q_o["),
        "the accumulator's loop through the adder: {worst}"
    );
    // the adder's own port-to-port path, and the top's (cut at the adder), are shorter
    for b in t["blocks"].as_array().unwrap() {
        assert!(
            num(b, "levels") < num(worst, "levels"),
            "{b} against the linked {worst}"
        );
    }
}

/// A memory kept as an SRAM macro is a cell with the macro's timing: the read data leave it
/// 2.5 ns after the clock (src/area/sram_timing.rs), so the path from it through an
/// incrementer is the worst and starts at the memory.
#[test]
fn paths_through_memories_are_timed() {
    let Some(libs) = timing_corners() else {
        eprintln!("skipped: no ../shared/pdk");
        return;
    };
    let tt = libs[0].display().to_string();
    let v = rtl_report(
        &[(
            "rt_ram.sv",
            "module rt_ram (input logic clk_i, we_i, input logic [5:0] waddr_i, raddr_i,\n\
             input logic [31:0] wdata_i, output logic [31:0] out_o);\n\
             logic [31:0] mem [64];\n  logic [31:0] rdata_q;\n\
             always_ff @(posedge clk_i) begin\n    if (we_i) mem[waddr_i] <= wdata_i;\n\
             rdata_q <= mem[raddr_i];\n  end\n\
             always_ff @(posedge clk_i) out_o <= rdata_q + 32'd1;\nendmodule\n",
        )],
        "rt_ram",
        &["--timing-liberty", &tt],
    );
    let t = &v["timing"];
    let worst = &t["paths"][0];
    assert_eq!(worst["from"], "mem", "{t}");
    assert!(
        worst["to"].as_str().unwrap().starts_with("out_o["),
        "{worst}"
    );
    assert!(num(worst, "delay_ns") > 2.5, "{worst}");
    assert!(t["errors"].as_array().unwrap().is_empty(), "{t}");
    // the memory's accesses: two ports, each at the stated 0.1 accesses per cycle, at
    // OpenRAM's 45.618 pJ per access of a 64-bit port (this one is 32 bits wide), 150 MHz; and
    // its leakage (2,048 bits of 1.2254 nW); OpenSTA adds the switching of its read data nets
    let p = &v["power"];
    let expected = 2.0 * 0.1 * 150e6 * 45.61834e-12 * 32.0 / 64.0 * 1e3 + 2048.0 * 1.2254e-6;
    let mem = num(p, "memories_mw");
    assert!(
        mem >= expected && mem < 1.03 * expected,
        "{p} against {expected} mW"
    );
    assert!(num(p, "memories_mw") < num(p, "total_mw"), "{p}");
}

/// A ripple-carry chain of full adders, each adder a block instance: the linked design's
/// critical path runs through every adder, and its delay grows linearly with the depth (16, 32
/// and 64 stages: the 64-deep chain within 20 % of 64 stages at the delay per stage that 16 to
/// 32 gives), at a sane delay per carry cell; an unbuffered or cut model does neither.
#[test]
fn a_ripple_chain_is_timed_stage_by_stage() {
    let Some(libs) = timing_corners() else {
        eprintln!("skipped: no ../shared/pdk");
        return;
    };
    let tt = libs[0].display().to_string();
    let v = rtl_report(
        &[
            (
                "rc_fa.sv",
                "module rc_fa (input logic a_i, b_i, c_i, output logic s_o, c_o);\n\
                 assign s_o = a_i ^ b_i ^ c_i;\n\
                 assign c_o = (a_i & b_i) | (c_i & (a_i ^ b_i));\nendmodule\n",
            ),
            (
                "rc.sv",
                "module rc #(parameter int W = 64) (input logic clk_i, \
                 input logic [W-1:0] a_i, b_i, output logic [W-1:0] s_o, output logic c_o);\n\
                 logic [W-1:0] a_q, b_q, s;\n  logic [W:0] c;\n  assign c[0] = 1'b0;\n\
                 for (genvar i = 0; i < W; i++) begin : g_bit\n\
                 rc_fa u_fa (.a_i(a_q[i]), .b_i(b_q[i]), .c_i(c[i]), .s_o(s[i]), .c_o(c[i+1]));\n\
                 end\n\
                 always_ff @(posedge clk_i) begin a_q <= a_i; b_q <= b_i; s_o <= s; c_o <= c[W]; end\n\
                 endmodule\n",
            ),
        ],
        "rc",
        &["--sweep", "W=16,32,64", "--clock-mhz", "20", "--timing-liberty", &tt],
    );
    let d: Vec<f64> = v["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .zip([16u64, 32, 64])
        .map(|(r, w)| {
            let t = &r["timing"];
            assert_eq!(t["linked"], true, "{t}");
            let p = &t["paths"][0];
            assert!(p["levels"].as_u64().unwrap() >= w, "W={w}: {p}");
            num(p, "delay_ns")
        })
        .collect();
    let stage = (d[1] - d[0]) / 16.0;
    assert!(
        (0.1..1.0).contains(&stage),
        "{stage} ns per carry cell: {d:?}"
    );
    let predicted = d[1] + 32.0 * stage;
    assert!(
        (d[2] / predicted - 1.0).abs() <= 0.2,
        "64 stages: {} ns against {predicted} ns ({d:?})",
        d[2]
    );
}

fn num(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("field {k} missing or not a number in {v}"))
}

fn block<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    run["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no block {name}"))
}

/// Synthesizes the egress and ingress arbiter of `top_p4` at 2 and 4 ports (about a minute):
/// fails on any synthesis error; more ports give more area.
#[test]
fn synthesis_report_grows_with_ports() {
    let mut args = vec![
        "area",
        "--config",
        "top_p4",
        "--sweep",
        "NumPorts=2,4",
        "--blocks",
        "top,switch.egress,switch.in_arb",
        "--json",
    ];
    let lib = area_liberty();
    let lib_s = lib.as_ref().map(|p| p.display().to_string());
    if let Some(l) = &lib_s {
        args.extend(["--liberty", l]);
    }
    let o = dysharp(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    assert_eq!(v["sweep"]["param"], "NumPorts");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let mut egress = Vec::new();
    let mut top = Vec::new();
    for r in runs {
        assert_eq!(r["top"], "dysharp_top");
        assert_eq!(r["config"], "top_p4");
        assert!(r.get("timing").is_some());
        for b in r["blocks"].as_array().unwrap() {
            for k in [
                "cells",
                "ge",
                "area_um2",
                "seq_area_um2",
                "mem_bits",
                "mem_area_um2",
                "flop_storage_bits",
            ] {
                assert!(num(b, k) >= 0.0, "{k} of {}", b["name"]);
            }
            assert!(b["name"].is_string() && b["instances"].as_u64().unwrap() >= 1);
        }
        let e = block(r, "switch.egress");
        assert!(e["error"].is_null(), "{}", e["error"]);
        assert!(num(e, "cells") > 0.0 && num(e, "area_um2") > 0.0);
        assert!(num(e, "seq_area_um2") > 0.0 && num(e, "seq_area_um2") < num(e, "area_um2"));
        assert!(num(e, "flop_storage_bits") > 0.0);
        assert!((num(e, "ge") * 3.7536 - num(e, "area_um2")).abs() < 1.0);
        egress.push(num(e, "area_um2"));
        top.push(num(block(r, "top"), "area_um2"));
    }
    assert!(
        egress[1] > egress[0],
        "egress area at 2, 4 ports: {egress:?}"
    );
    assert!(top[1] > top[0], "top area at 2, 4 ports: {top:?}");
}

/// `--rtl`/`--top`: another design goes through the same flow (its files staged under the run
/// folder), its hierarchy becomes blocks, and `--param` sets its parameters.
#[test]
fn an_external_design_goes_through_the_same_flow() {
    let dir = std::env::temp_dir().join(format!("dysharp-area-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let add = dir.join("ext_add.sv");
    let top = dir.join("ext_acc.sv");
    std::fs::write(
        &add,
        "module ext_add #(parameter int W = 8) (input logic [W-1:0] a_i, b_i, \
         output logic [W-1:0] s_o);\n  assign s_o = a_i + b_i;\nendmodule\n",
    )
    .unwrap();
    std::fs::write(
        &top,
        "module ext_acc #(parameter int W = 8) (input logic clk, rst_ni, \
         input logic [W-1:0] d_i, output logic [W-1:0] q_o);\n\
         logic [W-1:0] s;\n\
         ext_add #(.W(W)) u_add (.a_i(q_o), .b_i(d_i), .s_o(s));\n\
         always_ff @(posedge clk or negedge rst_ni) if (!rst_ni) q_o <= '0; else q_o <= s;\n\
         endmodule\n",
    )
    .unwrap();
    let files = format!("{},{}", add.display(), top.display());
    let mut args = vec![
        "area", "--rtl", &files, "--top", "ext_acc", "--clock", "clk", "--sweep", "W=8,32",
        "--json", "--quiet", "--flat",
    ];
    let lib = area_liberty();
    let lib_s = lib.as_ref().map(|p| p.display().to_string());
    if let Some(l) = &lib_s {
        args.extend(["--liberty", l]);
    }
    let o = dysharp(&args);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let runs = v["runs"].as_array().expect("runs");
    let mut adder = Vec::new();
    for (r, w) in runs.iter().zip([8.0, 32.0]) {
        assert_eq!(r["top"], "ext_acc");
        assert_eq!(r["config"], "rtl-ext_acc");
        let t = block(r, "ext_acc");
        assert!(t["error"].is_null(), "{}", t["error"]);
        assert_eq!(
            num(t, "flop_storage_bits"),
            w,
            "the accumulator's flip-flops: {t}"
        );
        let a = block(r, "add");
        assert!(a["error"].is_null(), "{}", a["error"]);
        assert_eq!(num(a, "seq_area_um2"), 0.0, "{a}");
        assert!(num(t, "seq_area_um2") > 0.0 && num(t, "area_um2") > num(a, "area_um2"));
        adder.push(num(a, "area_um2"));
        // --flat: the same design in one piece agrees with the blocks' sum (issue 10: 15 %).
        let f = &r["flat"];
        assert_eq!(num(f, "blocks_area_um2"), num(t, "area_um2"), "{f}");
        assert_eq!(num(f, "flop_storage_bits"), w, "{f}");
        assert!((num(f, "ratio") - 1.0).abs() <= 0.15, "flat / blocks: {f}");
    }
    assert!(
        adder[1] > 2.0 * adder[0],
        "adder area at W 8, 32: {adder:?}"
    );
}

/// The SRAM-shaped primitive (`dysharp_ram_1r1w`, one write and one registered read port) is
/// kept as a macro: its words × width are memory bits, and its read register is the macro's
/// own (merged into the memory's synchronous read port), so the block has no cells. (Found when `r:RD_CLK_ENABLE=1` matched no memory: Yosys compares the 1-bit
/// parameter with its width.)
#[test]
fn sram_shaped_memories_are_kept_as_macros() {
    let o = dysharp(&[
        "area",
        "--config",
        "top_p4",
        "--blocks",
        "switch.req_xp.ram",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let ram = block(&v, "switch.req_xp.ram");
    assert!(ram["error"].is_null(), "{}", ram["error"]);
    // top_p4's crosspoint queues: XpDepth 128 = a 126-word RAM of {last, flit} + 2 registers.
    assert_eq!(num(ram, "mem_bits"), (126 * 129) as f64, "{ram}");
    assert!(num(ram, "mem_area_um2") > 0.0);
    assert_eq!(num(ram, "flop_storage_bits"), 0.0, "{ram}");
    assert_eq!(ram["memories"][0]["mapped_to"], "memory model");
    // 126 x 129 bits: five 32 x 256 macros cost more than flip-flops
    assert_eq!(ram["memories"][0]["price"]["choice"], "flip-flops", "{ram}");
}

/// The pinned Yosys and nextpnr-ecp5 of `tools/setup.sh`, or why a test cannot run; under CI
/// (`CI` set: `make test` ran the set-up) a missing tool fails the test instead.
fn fpga_tools(nextpnr: bool) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut need = vec![".tools/bin/yosys"];
    if nextpnr {
        need.push(".tools/bin/nextpnr-ecp5");
    }
    for t in need {
        if !root.join(t).is_file() {
            let why = format!("{t} is not installed (run tools/setup.sh)");
            assert!(std::env::var_os("CI").is_none(), "{why}");
            return Err(why);
        }
    }
    Ok(())
}

/// The FPGA tests run one after the other (one Yosys or nextpnr at a time on a 2-core
/// machine).
static FPGA: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn fpga_of(run: &serde_json::Value) -> &serde_json::Value {
    let f = &run["fpga"];
    assert!(f.is_object(), "no fpga section in {run}");
    for k in ["device", "block", "module", "fmax_note"] {
        assert!(f[k].is_string(), "{k} of {f}");
    }
    for k in ["luts", "ffs", "brams", "bram_kbits", "dsps"] {
        assert!(f[k].is_u64(), "{k} of {f}");
        assert!(
            f["yosys"][k].is_u64() || k == "bram_kbits",
            "yosys.{k} of {f}"
        );
    }
    assert!(
        f.get("fmax_mhz").is_some() && f.get("error").is_some(),
        "{f}"
    );
    assert_eq!(run["blocks"].as_array().map(Vec::len), Some(0), "{run}");
    f
}

/// FPGA flags that mean nothing for an FPGA target, a list of blocks, an unknown target:
/// a clean error naming the flag, exit 2, before any tool runs.
#[test]
fn fpga_bad_flags_name_the_flag() {
    for (args, flag) in [
        (vec!["area", "--target", "fpga"], "--target"),
        (
            vec!["area", "--target", "ecp5", "--liberty", "x.lib"],
            "--liberty",
        ),
        (
            vec!["area", "--target", "xilinx", "--timing-liberty", "x.lib"],
            "--timing-liberty",
        ),
        (
            vec!["area", "--target", "ecp5", "--memories", "flops"],
            "--memories",
        ),
        (vec!["area", "--target", "ecp5", "--svg", "x.svg"], "--svg"),
        (
            vec!["area", "--target", "xilinx", "--csv", "x.csv"],
            "--csv",
        ),
        (
            vec!["area", "--target", "ecp5", "--blocks", "switch,hub"],
            "--blocks",
        ),
    ] {
        let o = dysharp(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// `--target ecp5` on `top_p4`'s egress at 2 and 4 ports (synth_ecp5, then nextpnr-ecp5 on
/// LFE5UM-85F; about 30 s): the report is placed and routed, has an fmax, fits, and more ports
/// give more LUTs; a crosspoint queue's RAM goes to block RAM; the text report shows the same;
/// an unknown block is a clean error listing the blocks. No fixed figure.
#[test]
fn ecp5_place_and_route_grows_with_ports() {
    if let Err(why) = fpga_tools(true) {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = FPGA.lock().unwrap_or_else(|e| e.into_inner());
    let base = ["area", "--config", "top_p4", "--target", "ecp5"];
    let mut args = base.to_vec();
    args.extend([
        "--sweep",
        "NumPorts=2,4",
        "--blocks",
        "switch.egress",
        "--json",
    ]);
    let o = dysharp(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    assert_eq!(v["sweep"]["param"], "NumPorts");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let mut luts = Vec::new();
    for r in runs {
        assert_eq!(r["target"], "ecp5");
        let f = fpga_of(r);
        assert!(
            f["device"].as_str().unwrap().starts_with("LFE5UM-85F"),
            "{f}"
        );
        assert_eq!(f["block"], "switch.egress");
        assert_eq!(f["placed"], true, "{f}");
        assert!(f["error"].is_null(), "{f}");
        let fmax = num(f, "fmax_mhz");
        assert!(fmax > 1.0 && fmax < 1000.0, "fmax {fmax} MHz");
        assert!(num(f, "luts") > 0.0 && num(f, "ffs") > 0.0, "{f}");
        for k in ["luts", "ffs", "brams", "dsps"] {
            assert!(num(f, k) <= num(&f["available"], k), "{k} of {f}");
        }
        // nextpnr packs what Yosys mapped: the same order of magnitude of LUTs.
        let (placed, yosys) = (num(f, "luts"), num(&f["yosys"], "luts"));
        assert!(placed >= 0.5 * yosys && placed <= 2.0 * yosys, "{f}");
        assert!(f["cells"]["LUT4"].as_u64().unwrap_or(0) > 0, "{f}");
        luts.push(placed);
    }
    assert!(luts[1] > luts[0], "egress LUT4s at 2, 4 ports: {luts:?}");

    // A crosspoint queue (a registered-read RAM) goes to EBR (cached elaboration of 2 ports).
    let mut args = base.to_vec();
    args.extend([
        "--param",
        "NumPorts=2",
        "--blocks",
        "switch.req_xp",
        "--json",
    ]);
    let o = dysharp(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let f = fpga_of(&v);
    assert!(num(f, "brams") >= 1.0, "{f}");
    assert!(num(f, "bram_kbits") * 1024.0 >= (126 * 129) as f64, "{f}");

    // The text report of the 2-port egress (Yosys and nextpnr outputs are reused).
    let mut args = base.to_vec();
    args.extend(["--param", "NumPorts=2", "--blocks", "switch.egress"]);
    let o = dysharp(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for s in ["LUT4", "TRELLIS_FF", "DP16KD", "MULT18X18D", "fmax:", "MHz"] {
        assert!(text.contains(s), "{s} missing from\n{text}");
    }

    let mut args = base.to_vec();
    args.extend(["--param", "NumPorts=2", "--blocks", "nope"]);
    let o = dysharp(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--blocks") && stderr(&o).contains("switch.egress"));
}

/// `--target xilinx` (synth_xilinx, no place-and-route) on the 2-port egress: resource counts,
/// and no fmax, with the reason stated.
#[test]
fn xilinx_counts_without_fmax() {
    if let Err(why) = fpga_tools(false) {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = FPGA.lock().unwrap_or_else(|e| e.into_inner());
    let o = dysharp(&[
        "area",
        "--config",
        "top_p4",
        "--param",
        "NumPorts=2",
        "--target",
        "xilinx",
        "--blocks",
        "switch.egress",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let f = fpga_of(&v);
    assert_eq!(f["device"], "xc7");
    assert_eq!(f["placed"], false);
    assert!(f["fmax_mhz"].is_null() && f["available"].is_null(), "{f}");
    assert!(f["fmax_note"].as_str().unwrap().contains("no"), "{f}");
    assert!(num(f, "luts") > 0.0 && num(f, "ffs") > 0.0, "{f}");
    assert_eq!(num(f, "luts"), num(&f["yosys"], "luts"));
}

/// A design larger than LFE5UM-85F (crosspoint queues 32768 flits deep: more 18 Kbit block
/// RAMs than the device has; about 10 s, nextpnr is not run): exit 1, a typed error naming the
/// resource, and Yosys' counts still reported.
#[test]
fn ecp5_does_not_fit_names_the_resource() {
    if let Err(why) = fpga_tools(true) {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = FPGA.lock().unwrap_or_else(|e| e.into_inner());
    let o = dysharp(&[
        "area",
        "--config",
        "top_p4",
        "--param",
        "NumPorts=2",
        "--param",
        "XpDepth=32768",
        "--target",
        "ecp5",
        "--blocks",
        "switch.req_xp",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not fit") && stderr(&o).contains("DP16KD"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let f = fpga_of(&v);
    let e = &f["error"];
    assert_eq!(e["resource"], "DP16KD", "{f}");
    assert!(num(e, "used") > num(e, "available"), "{e}");
    assert_eq!(num(e, "available"), num(&f["available"], "brams"));
    assert_eq!(f["placed"], false);
    assert!(f["fmax_mhz"].is_null(), "{f}");
    assert!(
        num(f, "luts") > 0.0 && num(f, "brams") == num(e, "used"),
        "{f}"
    );
}

/// A design too large to read back whole is elaborated again and split into a file per block
/// (`DYSHARP_AREA_SPLIT_BYTES` lowers the threshold so that a small design takes that path): the
/// report is the same as when every block copies itself from the whole design.
#[test]
fn a_split_design_gives_the_same_report() {
    let mut reports = Vec::new();
    for (k, split) in [(0, None), (1, Some("0"))] {
        let dir =
            std::env::temp_dir().join(format!("dysharp-area-split-{}-{k}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let add = dir.join("split_add.sv");
        let top = dir.join("split_acc.sv");
        // the comment makes each run's sources (and so its run folder) its own
        std::fs::write(
            &add,
            format!(
                "// run {k}\nmodule split_add (input logic [15:0] a_i, b_i, \
                 output logic [15:0] s_o);\n  assign s_o = a_i + b_i;\nendmodule\n"
            ),
        )
        .unwrap();
        std::fs::write(
            &top,
            "module split_acc (input logic clk, rst_ni, input logic [15:0] d_i, \
             output logic [15:0] q_o);\n\
             logic [15:0] s0, s1;\n\
             split_add u_a (.a_i(q_o), .b_i(d_i), .s_o(s0));\n\
             split_add u_b (.a_i(s0), .b_i(d_i), .s_o(s1));\n\
             always_ff @(posedge clk or negedge rst_ni) if (!rst_ni) q_o <= '0; else q_o <= s1;\n\
             endmodule\n",
        )
        .unwrap();
        let files = format!("{},{}", add.display(), top.display());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dysharp"));
        cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args([
            "area",
            "--rtl",
            &files,
            "--top",
            "split_acc",
            "--clock",
            "clk",
            "--json",
            "--quiet",
        ]);
        if let Some(v) = split {
            cmd.env("DYSHARP_AREA_SPLIT_BYTES", v);
        }
        let o = cmd.output().expect("run dysharp");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
        let out = v["out_dir"].as_str().expect("out_dir").to_string();
        let split_file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(&out)
            .join("split.done.txt");
        assert_eq!(split_file.is_file(), split.is_some(), "{out}");
        let blocks: Vec<(String, f64, f64, f64)> = v["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                assert!(b["error"].is_null(), "{}", b["error"]);
                (
                    b["name"].as_str().unwrap().to_string(),
                    num(b, "cells"),
                    num(b, "area_um2"),
                    num(b, "flop_storage_bits"),
                )
            })
            .collect();
        assert_eq!(blocks.len(), 3, "{blocks:?}"); // the top and its two adders
        assert_eq!(blocks[0].3, 16.0, "{blocks:?}");
        reports.push(blocks);
    }
    assert_eq!(reports[0], reports[1]);
}

/// `--target xilinx` without `--blocks`: every block mapped on its own and summed over its
/// instances (how `default`, too large for one Yosys flat, gets its counts). On a design of
/// N accumulators the top's figures are its own logic plus N adders, its flip-flops are the
/// accumulators' bits, and the flat run of the same design (`--blocks <top>`) agrees.
#[test]
fn xilinx_counts_block_by_block_sum_the_instances() {
    if let Err(why) = fpga_tools(false) {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = FPGA.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("dysharp-area-xb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let add = dir.join("xb_add.sv");
    let top = dir.join("xb_top.sv");
    std::fs::write(
        &add,
        "module xb_add #(parameter int W = 8) (input logic [W-1:0] a_i, b_i, \
         output logic [W-1:0] s_o);\n  assign s_o = a_i + b_i;\nendmodule\n",
    )
    .unwrap();
    std::fs::write(
        &top,
        "module xb_top #(parameter int W = 16, parameter int N = 3) (input logic clk_i, rst_ni, \
         input logic [W-1:0] d_i, output logic [N-1:0][W-1:0] q_o);\n\
         for (genvar i = 0; i < N; i++) begin : gen_acc\n\
           logic [W-1:0] s;\n\
           xb_add #(.W(W)) u_add (.a_i(q_o[i]), .b_i(d_i ^ W'(i)), .s_o(s));\n\
           always_ff @(posedge clk_i or negedge rst_ni) if (!rst_ni) q_o[i] <= '0; else q_o[i] <= s;\n\
         end\n\
         endmodule\n",
    )
    .unwrap();
    let files = format!("{},{}", add.display(), top.display());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "area", "--rtl", &files, "--top", "xb_top", "--target", "xilinx", "--json",
        ];
        args.extend(extra);
        let o = dysharp(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("JSON report")
    };
    let v = run(&[]);
    let flat = run(&["--blocks", "xb_top"]);
    let _ = std::fs::remove_dir_all(&dir);
    let f = fpga_of(&v);
    let blocks = f["blocks"].as_array().expect("per-block counts");
    let by = |n: &str| {
        blocks
            .iter()
            .find(|b| b["name"] == n)
            .unwrap_or_else(|| panic!("no block {n}: {f}"))
    };
    let (t, a) = (by("xb_top"), by("add"));
    assert_eq!(num(a, "instances"), 3.0, "{a}");
    assert!(t["error"].is_null() && a["error"].is_null(), "{f}");
    assert!(num(&a["own"], "luts") > 0.0, "an adder maps to LUTs: {a}");
    assert_eq!(num(&a["own"], "ffs"), 0.0, "{a}");
    for k in ["luts", "ffs"] {
        assert_eq!(
            num(&t["total"], k),
            num(&t["own"], k) + 3.0 * num(&a["total"], k),
            "{k}: {f}"
        );
        assert_eq!(num(f, k), num(&t["total"], k), "{k}: {f}");
    }
    assert_eq!(num(f, "ffs"), 48.0, "3 accumulators of 16 bits: {f}");
    let ff = fpga_of(&flat);
    assert!(ff["blocks"].is_null(), "--blocks maps one block flat: {ff}");
    assert_eq!(num(ff, "ffs"), num(f, "ffs"), "{ff}");
    let ratio = num(ff, "luts") / num(f, "luts");
    assert!(
        (0.7..=1.3).contains(&ratio),
        "flat / blocks LUTs {ratio}: {ff} {f}"
    );
}

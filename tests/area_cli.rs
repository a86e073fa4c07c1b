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
    ] {
        let o = dysharp(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
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
    assert_eq!(ram["memories"][0]["mapped_to"], "macro");
}

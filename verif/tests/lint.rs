//! Verilator lint of the RTL with `-Wall`: zero warnings at every configuration
//! the model registry marks `lint` (waivers in the RTL carry a comment saying why).

use dysharp_registry::{Registry, Use};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn sources() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("rtl"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sv" || x == "vlt"))
        .collect();
    // The Verilator configuration (rtl/dysharp.vlt) first, then the packages and the modules.
    v.sort_by_key(|p| {
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        (
            !n.ends_with(".vlt"),
            !n.ends_with("_pkg.sv"),
            n != "dysharp_pkg.sv",
            n,
        )
    });
    v
}

fn lint(top: &str, params: &[(String, String)], extra: &[String]) {
    let vl = std::env::var("VERILATOR")
        .map(PathBuf::from)
        .unwrap_or(root().join(".tools/bin/verilator"));
    let mut cmd = Command::new(&vl);
    cmd.args(["--lint-only", "-Wall", "--top-module", top])
        .arg(format!("-I{}", root().join("rtl").display()));
    for (k, v) in params {
        cmd.arg(format!("-G{k}={v}"));
    }
    cmd.args(sources());
    cmd.args(extra.iter().map(|f| root().join(f)));
    let out = cmd
        .output()
        .expect("run verilator (tools/setup.sh installs it)");
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !text.contains("%Warning") && !text.contains("%Error"),
        "verilator --lint-only -Wall --top-module {top} {params:?}:\n{text}"
    );
}

#[test]
fn lints_clean_at_every_registry_configuration() {
    // Every model of rtl/models.toml with the use `lint` (the paper's defaults and
    // every verified switch configuration).
    let reg = Registry::builtin();
    assert!(reg.with(Use::Lint).count() >= 2);
    for m in reg.with(Use::Lint) {
        lint(&m.top, &m.param_strings(), &[]);
        // A verification wrapper (the Verilator models' top) is linted too.
        if m.sim_top() != m.top {
            lint(m.sim_top(), &m.param_strings(), &m.sources);
        }
    }
}

#[test]
fn fusesoc_core_lists_every_rtl_file() {
    let core = std::fs::read_to_string(root().join("dysharp.core")).unwrap();
    for f in sources()
        .iter()
        .chain(&[root().join("rtl/dysharp_assert.svh")])
    {
        let rel = format!("rtl/{}", f.file_name().unwrap().to_string_lossy());
        assert!(core.contains(&rel), "dysharp.core does not list {rel}");
    }
}

/// Elaborates `top` with the pinned Yosys front end (yosys-slang), as synthesis reads the RTL
/// (`formal` false: SYNTHESIS defined) or as a formal tool does (`formal`: no SYNTHESIS, FORMAL
/// defined), checks that it prints no warning, and returns the number of check cells (the
/// assertions, assumptions and cover points of rtl/dysharp_assert.svh) in the design.
fn slang_checks(top: &str, params: &[(String, String)], formal: bool) -> u64 {
    let yosys = root().join(".tools/bin/yosys");
    // Yosys (a WebAssembly build) reads and writes under its working folder only.
    let view = if formal { "formal" } else { "synth" };
    // One file per top, view and parameter set (the configurations of one top differ there).
    let tag: String = params.iter().map(|(k, v)| format!("-{k}{v}")).collect();
    let out_rel = format!("target/lint-slang/{top}-{view}{tag}.txt");
    std::fs::create_dir_all(root().join("target/lint-slang")).unwrap();
    let files: Vec<String> = sources()
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "sv"))
        .map(|p| format!("rtl/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    let gs: Vec<String> = params.iter().map(|(k, v)| format!("-G {k}={v}")).collect();
    let defines = if formal {
        "--no-synthesis-define -D FORMAL"
    } else {
        ""
    };
    let script = format!(
        "read_slang --threads 1 {defines} --top {top} {} {}; \
         tee -q -o {out_rel} select -count t:$check",
        gs.join(" "),
        files.join(" ")
    );
    let out = Command::new(&yosys)
        .current_dir(root())
        .args(["-q", "-p", &script])
        .output()
        .expect("run yosys (tools/setup.sh installs it)");
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !text.contains("Warning") && !text.contains("ERROR"),
        "yosys read_slang {defines} --top {top} {params:?}:\n{text}"
    );
    let count = std::fs::read_to_string(root().join(&out_rel)).unwrap();
    count
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no check count from yosys for {top}: {count:?}"))
}

#[test]
fn yosys_slang_elaborates_clean_with_and_without_checks() {
    // The registry's lint configurations of up to 4 ports (the larger ones elaborate for minutes)
    // and the primitives alone: no warning as synthesis reads them (no check cells either), and
    // none as a formal tool reads them, with the checks of rtl/dysharp_assert.svh as check cells.
    let reg = Registry::builtin();
    let mut done = 0;
    for m in reg
        .with(Use::Lint)
        .filter(|m| m.param("NumPorts").is_some_and(|p| p <= 4))
    {
        let synth = slang_checks(&m.top, &m.param_strings(), false);
        assert_eq!(synth, 0, "{}: checks left in the synthesis view", m.name);
        let n = slang_checks(&m.top, &m.param_strings(), true);
        eprintln!("{} ({}): {n} check cells", m.name, m.top);
        assert!(n > 100, "{}: only {n} checks reach a formal tool", m.name);
        done += 1;
    }
    assert!(done >= 2, "no small lint configuration in the registry");
    for (top, params) in [
        ("dysharp_fifo", vec![("Depth", "3")]),
        (
            "dysharp_fifo_bank",
            vec![("NumQ", "2"), ("HasLast", "1"), ("FallThrough", "1")],
        ),
        ("dysharp_rr_arb", vec![]),
        ("dysharp_ram_1r1w", vec![]),
    ] {
        let p: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            slang_checks(top, &p, false),
            0,
            "{top}: checks in synthesis"
        );
        let n = slang_checks(top, &p, true);
        eprintln!("{top}: {n} check cells");
        assert!(n > 0, "{top}: no check reaches a formal tool");
    }
}

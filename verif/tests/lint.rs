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
        .filter(|p| p.extension().is_some_and(|x| x == "sv"))
        .collect();
    v.sort_by_key(|p| {
        let n = p.file_name().unwrap().to_string_lossy().to_string();
        (!n.ends_with("_pkg.sv"), n != "dysharp_pkg.sv", n)
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
    for f in sources() {
        let rel = format!("rtl/{}", f.file_name().unwrap().to_string_lossy());
        assert!(core.contains(&rel), "dysharp.core does not list {rel}");
    }
}

//! `dysharp-models`: the registry's model names for scripts (tools/pgo.sh).

use dysharp_registry::{Registry, Use};
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dysharp-models"))
        .args(args)
        .output()
        .expect("dysharp-models runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn lists_the_models_of_a_use_and_rejects_bad_arguments() {
    let reg = Registry::builtin();
    for u in Use::ALL {
        let (code, out, err) = run(&[u.name()]);
        assert_eq!(code, 0, "{u}: {err}");
        assert_eq!(out.lines().collect::<Vec<_>>(), reg.names(u), "{u}");
    }
    let (code, out, _) = run(&["pgo"]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l == "top_p16"), "{out}");
    let (code, out, _) = run(&[]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), reg.models().len(), "{out}");
    let (code, out, err) = run(&["fly"]);
    assert_eq!(code, 2);
    assert!(
        out.is_empty() && err.contains("`fly`") && err.contains("pgo"),
        "{err}"
    );
    let (code, _, err) = run(&["sim", "pgo"]);
    assert_eq!(code, 2);
    assert!(err.contains("at most one"), "{err}");
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("usage: dysharp-models"), "{out}");
}

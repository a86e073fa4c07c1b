//! Helpers shared by the CLI test binaries: run the built `dysharp`, expect success or a
//! failure that does not panic.

#![allow(dead_code)] // each test binary uses its own subset

use std::process::{Command, Output};

/// Runs `dysharp` with `args`.
pub fn dysharp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dysharp"))
        .args(args)
        .output()
        .expect("run dysharp")
}

/// Runs `dysharp`, asserts success, returns standard output.
pub fn ok(args: &[&str]) -> String {
    let o = dysharp(args);
    assert!(
        o.status.success(),
        "dysharp {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Runs `dysharp`, asserts a failure without a panic, returns standard error.
pub fn err(args: &[&str]) -> String {
    let o = dysharp(args);
    assert!(!o.status.success(), "dysharp {args:?} should fail");
    let e = String::from_utf8(o.stderr).unwrap();
    assert!(!e.contains("panicked"), "{e}");
    e
}

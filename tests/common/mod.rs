//! What the CLI tests share: running the built `cairn` binary from the repository root.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `cairn` with `args`.
pub fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cairn runs")
}

/// Runs `cairn`, asserting it succeeds; its standard output.
pub fn ok(args: &[&str]) -> String {
    let out = cairn(args);
    assert!(
        out.status.success(),
        "cairn {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A lexical single file of the docs fixture, written to `dir/name`.
pub fn lexical_single(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    ok(&[
        "index",
        "tests/fixtures/docs",
        "--no-embed",
        "--layout",
        "single",
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

//! The README's main command on real Spin builds nothing it does not run: `scripts/demo` runs
//! `traffic-cop-demo` before it offers the wasmtime host, and that package's dependency tree
//! (what `cargo run -p traffic-cop-demo` compiles) holds no wasmtime. Before the split, the
//! Spin path compiled a wasmtime host it never used: about 9 minutes on 2 cores.

use std::process::Command;

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// The packages `cargo run -p <package>` builds (normal and build dependencies, this target).
fn tree(package: &str) -> Vec<String> {
    let output = cargo()
        .args(["tree", "--offline", "-p", package, "-e", "normal,build", "--prefix", "none"])
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_demos_spin_path_builds_no_wasmtime() {
    let spin_path = tree("traffic-cop-demo");
    assert!(spin_path.iter().any(|p| p == "traffic-cop-testbed"), "{spin_path:?}");
    let wasmtime: Vec<&String> = spin_path.iter().filter(|p| p.starts_with("wasmtime")).collect();
    assert!(wasmtime.is_empty(), "the Spin path would build {wasmtime:?}");
    // The check can tell: the wasmtime host's own tree has it.
    assert!(tree("traffic-cop-tools").iter().any(|p| p == "wasmtime"));
}

#[test]
fn scripts_demo_runs_the_spin_path_before_it_offers_the_wasmtime_host() {
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/demo"))
        .expect("scripts/demo");
    let runs: Vec<&str> =
        script.lines().filter(|l| l.trim_start().starts_with("cargo run")).collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs[0].contains("-p traffic-cop-demo"), "{runs:?}");
    assert!(runs[1].contains("--bin demo-wasmtime"), "{runs:?}");
    // Nothing else it builds links wasmtime: only the component and the apps, for wasm.
    for build in script.lines().filter(|l| l.trim_start().starts_with("cargo build")) {
        assert!(build.contains("--target wasm32-wasip2"), "{build}");
    }
}

//! The README's main command on real Spin builds nothing it does not run: `scripts/demo` runs
//! `traffic-cop-demo` before it offers the wasmtime host, and that package's dependency tree
//! (what `cargo run -p traffic-cop-demo` compiles) holds no wasmtime. Before the split, the
//! Spin path compiled a wasmtime host it never used: about 9 minutes on 2 cores. And what the
//! builds share they compile once: the demo's crates and the test build's, and the test build's
//! own copies for its proc macros and for the test host.

use std::process::Command;

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// The packages `cargo run -p <package>` builds (normal and build dependencies, this target),
/// each as its name and version (`wasmtime v48.0.8`).
fn tree(package: &str) -> Vec<String> {
    let output = cargo()
        .args(["tree", "--offline", "-p", package, "-e", "normal,build", "--prefix", "none"])
        .args(["-f", "{p}"])
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect()
}

fn named(packages: &[String], name: &str) -> bool {
    packages.iter().any(|p| p.split(' ').next() == Some(name))
}

#[test]
fn the_demos_spin_path_builds_no_wasmtime() {
    let spin_path = tree("traffic-cop-demo");
    assert!(named(&spin_path, "traffic-cop-testbed"), "{spin_path:?}");
    let wasmtime: Vec<&String> = spin_path.iter().filter(|p| p.starts_with("wasmtime")).collect();
    assert!(wasmtime.is_empty(), "the Spin path would build {wasmtime:?}");
    // The check can tell: the wasmtime host's own tree has it.
    assert!(named(&tree("traffic-cop-tools"), "wasmtime"));
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

/// Each package and its features, as one cargo invocation over `packages` resolves them (host
/// and target copies both listed), the workspace's own packages left out.
fn resolved(packages: &[&str], edges: &str) -> std::collections::BTreeSet<String> {
    let mut command = cargo();
    command.args(["tree", "--offline", "-e", edges, "--prefix", "none", "-f", "{p} [{f}]"]);
    for package in packages {
        command.args(["-p", package]);
    }
    let output = command.output().expect("cargo tree runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.contains("(/"))
        .map(|line| line.replace(" (*)", "").replace(" (proc-macro)", ""))
        .filter(|line| !line.is_empty())
        .collect()
}

/// The packages scripts/test builds and tests in one set (its `packages=(…)`).
fn test_build_packages(script: &str) -> Vec<String> {
    let start = script.find("packages=(").expect("scripts/test names its packages");
    let list = &script[start..start + script[start..].find(')').unwrap()];
    let words: Vec<&str> = list.split_whitespace().collect();
    words.windows(2).filter(|w| w[0] == "-p").map(|w| w[1].to_string()).collect()
}

#[test]
fn the_demos_crates_have_the_features_the_test_build_compiles_them_with() {
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test"))
        .expect("scripts/test");
    let packages = test_build_packages(&script);
    assert!(packages.iter().any(|p| p == "traffic-cop-demo"), "{packages:?}");
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    let test_build = resolved(&packages, "normal,build,dev");
    let demo = resolved(&["traffic-cop-demo"], "normal,build");
    assert!(demo.iter().any(|p| p.starts_with("ring ")), "{demo:?}");
    // A crate the demo compiles with other features is compiled again for the tests (with all
    // it depends on): harness/demo/Cargo.toml's feature lines say which it must match.
    let apart: Vec<&String> = demo.iter().filter(|p| !test_build.contains(*p)).collect();
    assert!(apart.is_empty(), "the test build compiles these with other features: {apart:?}");
}

/// wasmtime's wasmparser is one of the test build's largest crates (13 CPU-s unoptimised, 41
/// at opt-level 1). Its proc macro (`bindgen!` reads WIT with it) and the test host both use it, and cargo compiles
/// it once only while it and everything under it resolve with one set of features in both:
/// one crate beneath it with other features (indexmap, through hyper's h2) compiled it twice.
/// harness/wasm-host/Cargo.toml's feature-only lines keep them alike.
#[test]
fn the_test_build_resolves_wasmtimes_wasmparser_and_its_dependencies_once() {
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test"))
        .expect("scripts/test");
    let packages = test_build_packages(&script);
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    let mut seen = std::collections::BTreeMap::<String, Vec<String>>::new();
    for line in resolved(&packages, "normal,build,dev") {
        if let Some((package, features)) = line.split_once(" [") {
            seen.entry(package.to_string()).or_default().push(format!("[{features}"));
        }
    }
    let version = seen.keys().find(|p| p.starts_with("wasmparser v0.254")).cloned();
    let wasmparser = version.expect("the test build has wasmtime's wasmparser 0.254");
    let spec = wasmparser.replace(" v", "@");
    let beneath = tree(&spec);
    assert!(beneath.iter().any(|p| p.starts_with("indexmap ")), "{beneath:?}");
    let twice: Vec<(&String, &Vec<String>)> =
        seen.iter().filter(|(p, sets)| sets.len() > 1 && beneath.contains(p)).collect();
    assert!(twice.is_empty(), "compiled twice for {wasmparser}: {twice:?}");
}

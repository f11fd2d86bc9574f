//! The lease component in Node.js without Spin: the built .wasm transpiled by `jco transpile`
//! (pinned in examples/node/package-lock.json) and driven by examples/node/guarded.mjs against
//! Azurite on 127.0.0.1. Checks what the example printed, then the blobs it left, read back
//! through the component in wasmtime: the lock's run record and lease state, and the fenced
//! result.
//!
//! Needs node on PATH and examples/node/node_modules (`npm ci` here when missing, or
//! scripts/ecosystem-tools). Without them the test says so and returns; under CI=true it fails.

use traffic_cop_testbed::runner::Test;

use crate::run::{on_path, run};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::docs;
use traffic_cop_testbed::needs::require;
use traffic_cop_wasm_host::component::{fresh, v1};

fn node_example() -> PathBuf {
    traffic_cop_testbed::repo_root().join("examples/node")
}

/// node, and jco installed into examples/node (installing it once if only that is missing).
fn toolchain() -> Result<(PathBuf, PathBuf), String> {
    let node = on_path("node")?;
    let dir = node_example();
    let jco = dir.join("node_modules/.bin/jco");
    if !jco.is_file() {
        let npm = on_path("npm")?;
        let ran = run(
            Command::new(npm).args(["ci", "--no-audit", "--no-fund"]).current_dir(&dir),
            Duration::from_secs(300),
        );
        if !ran.ok() {
            return Err(format!("npm ci in examples/node failed {}", ran.said()));
        }
    }
    Ok((node, jco))
}

fn node_example_acquires_guards_and_completes_through_the_transpiled_component() {
    let (node, jco) = require("node via jco", toolchain());
    // The wasmtime host refuses a component older than src/ or wit/: so must this test.
    let mut inspector = fresh();
    let wasm = traffic_cop_wasm_host::component::wasm_path();
    let dir = node_example();
    // docs/guests-and-node.md's commands: in examples/node, `npm install` (the test bed's, in
    // toolchain()), then jco (what `npx jco` runs) and node.
    let example = docs::shell_commands(&docs::example("node-jco"));
    let line = |c: &docs::ShellCommand| format!("{} {}", c.program, c.args.join(" "));
    let lines: Vec<String> = example.iter().map(line).collect();
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert_eq!(lines[..2], ["cd examples/node", "npm install --no-save"], "{lines:#?}");
    let (transpile, script) = (&example[2], &example[3]);
    assert_eq!(
        (transpile.program.as_str(), transpile.args[..2].concat()),
        ("npx", "jcotranspile".into())
    );
    let input = dir.join(&transpile.args[2]).canonicalize().expect("the example's .wasm");
    assert_eq!(input, wasm.canonicalize().unwrap(), "the example transpiles another file");
    let transpiled = run(
        Command::new(&jco).args(&transpile.args[1..]).arg("--quiet").current_dir(&dir),
        Duration::from_secs(120),
    );
    assert!(transpiled.ok(), "jco transpile {}", transpiled.said());
    assert!(
        dir.join("gen/traffic-cop.js").is_file(),
        "no gen/traffic-cop.js {}",
        transpiled.said()
    );

    let azurite = Azurite::start();
    let connection_string = azurite.connection_string();
    let container = format!("node-{}", std::process::id());
    let holder = "node-replica-1";
    // The script's calls must fall in one minute of its every-minute schedule.
    traffic_cop_testbed::room_in_minute(20);
    assert_eq!(script.program, "node", "{script:#?}");
    assert_eq!(script.env[0].0, "TRAFFIC_COP_CONNECTION_STRING", "{script:#?}");
    let ran = run(
        Command::new(&node)
            .args(&script.args)
            .env("TRAFFIC_COP_CONNECTION_STRING", &connection_string)
            .env("TRAFFIC_COP_CONTAINER", &container)
            .env("TRAFFIC_COP_LOCK", "nightly")
            .env("TRAFFIC_COP_HOLDER", holder)
            .current_dir(&dir),
        Duration::from_secs(60),
    );
    assert!(ran.ok(), "node guarded.mjs {}", ran.said());
    let lines: Vec<&str> = ran.stdout.lines().collect();
    let expected = [
        "acquire: leased nightly-raw with lease id ".to_string(),
        "inspect: leased".into(),
        "second acquire: held-by-other".into(),
        "release: available".into(),
        // 02:00 Berlin across the spring-forward night: 01:00Z (CET), the gap's end 03:00 CEST
        // (01:00Z), then 02:00 CEST (00:00Z).
        "due-times: 2026-03-28T01:00:00.000Z 2026-03-29T01:00:00.000Z 2026-03-30T00:00:00.000Z"
            .into(),
        format!("guarded-invoke: run, fencing token 1, missed 0: [{holder}] run for the due time "),
        format!("rival guarded-invoke: skip, held-by-other: [{holder}-rival] skipped"),
        "write-fenced: token 1".into(),
        format!("complete: ok: [{holder}] ran for the due time "),
        format!("after complete: skip, already-ran: [{holder}-late] skipped"),
        "pause: by ops, reason deploy".into(),
        format!("while paused: skip, paused: [{holder}] skipped"),
        "run-now: asked by ops, still paused true".into(),
        format!("run-now while paused: skip, paused: [{holder}] skipped"),
        "resume: paused false".into(),
        "after resume: run, fencing token 2, manual by ops".into(),
    ];
    assert!(lines.len() >= expected.len(), "too few lines {}", ran.said());
    for (line, want) in lines.iter().zip(&expected) {
        assert!(line.starts_with(want.as_str()), "expected {want:?}, got {line:?} {}", ran.said());
    }
    assert!(
        lines.iter().any(|l| l.starts_with("board: tz database 20")),
        "board tz line missing {}",
        ran.said()
    );
    assert!(
        lines.contains(&"board: nightly available token 2 outcome success runs 2"),
        "board line missing {}",
        ran.said()
    );

    // What the example left in storage, seen from outside Node.
    let lock = |blob: &str| v1::lease::Lock {
        connection_string: connection_string.clone(),
        container: container.clone(),
        blob: blob.into(),
    };
    let status = inspector.inspect(&lock("nightly")).expect("inspect the guarded lock");
    assert!(
        matches!(status.state, v1::lease::LeaseState::Available),
        "complete released the lease: {status:?}"
    );
    let meta = |key: &str| {
        status.metadata.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
    };
    assert_eq!(meta("tc_fence"), Some("2"), "run record: {status:?}");
    assert_eq!(meta("tc_holder"), Some(holder), "run record: {status:?}");
    assert_eq!(meta("tc_running"), Some("false"), "run record: {status:?}");
    let raw = fresh().inspect(&lock("nightly-raw")).expect("inspect the raw lock");
    assert!(matches!(raw.state, v1::lease::LeaseState::Available), "release: {raw:?}");
    let settings = v1::settings(&connection_string, &container, "nightly", holder);
    let result = fresh()
        .read_fenced(&settings, "nightly-result")
        .expect("read the fenced result")
        .expect("the example wrote nightly-result");
    assert_eq!(result.fencing_token, 1);
    assert_eq!(result.contents, format!("ran by {holder}\n").into_bytes());
    azurite.stop();
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        node_example_acquires_guards_and_completes_through_the_transpiled_component,
    ]
}

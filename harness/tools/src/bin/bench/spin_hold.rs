//! The async component under real Spin 4.0.2 with trigger-cron 0.5.0, beside the WASI 0.2 one:
//! the app's cron component as spin.toml has it (renewing with `keep-alive` from its loop), and
//! the async cron wrapper around a plain job that awaits its 30 s (`hold` beside the work,
//! docs/wrappers.md). Two
//! replicas of each, every 2 s, a 15 s lease and a 30 s job, each replica behind a counting
//! proxy of its own, and for each:
//! - the first tick: from its due time to its line in the log (the first instance of the
//!   composed app; Spin has compiled it by then);
//! - a follower's tick while the other replica's run holds the lock: from the due time to its
//!   line in the log, and the requests it sent;
//! - the run: renewals (requests naming `x-ms-lease-action: renew`) and their gaps, and its
//!   wall time beyond the 30 s of work (deciding, the job's report and write, `complete`).
//!
//! The compile and load times of both lease components in the bench's own wasmtime come first:
//! that host cannot instantiate the async one (it hosts WASI 0.3.0 final, not the release
//! candidate Spin 4.0.2 hosts), so its instantiation is part of Spin's numbers only.

use super::{ms, percentile};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::connection_string_for_port;
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{cron_line, manifest_copy, spin_home, Launch};
use traffic_cop_testbed::{repo_root, EMULATOR_KEY_B64};

const LEASE_SECONDS: u64 = 15;
const WORK_MS: u64 = 30_000;
const INTERVAL_S: u64 = 2;

/// Compile and load (deserialize) times of both lease components in wasmtime 48.
pub fn compile_both() {
    let engine = &traffic_cop_wasm_host::component::Host::shared().engine;
    println!("\nlease components in the bench's wasmtime (compile once, load per process):");
    println!("  {:<26} {:>10} {:>12} {:>10}", "", "bytes", "compile ms", "load ms");
    for name in ["traffic_cop", "traffic_cop_async"] {
        let path = repo_root().join(format!("target/wasm32-wasip2/release/{name}.wasm"));
        let Ok(bytes) = std::fs::read(&path) else {
            println!("  {name}.wasm: not built");
            continue;
        };
        let started = Instant::now();
        let compiled = match engine.precompile_component(&bytes) {
            Ok(compiled) => compiled,
            Err(error) => {
                println!("  {name}.wasm: does not compile here: {error}");
                continue;
            }
        };
        let compile = ms(started.elapsed());
        let started = Instant::now();
        // SAFETY: the bytes were produced just above by this engine's precompile_component.
        let loaded = unsafe {
            traffic_cop_wasm_host::wasmtime::component::Component::deserialize(engine, &compiled)
        };
        let load = ms(started.elapsed());
        let load = if loaded.is_ok() { format!("{load:.2}") } else { "fails".into() };
        println!("  {:<26} {:>10} {compile:>12.0} {load:>10}", format!("{name}.wasm"), bytes.len());
    }
}

/// One JSON decision line, when it was first seen in the log.
struct Line {
    seen_ms: u64,
    run: bool,
    due_at_ms: Option<u64>,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn field(line: &str, name: &str) -> Option<u64> {
    let rest = &line[line.find(&format!("\"{name}\":"))? + name.len() + 3..];
    rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())].parse().ok()
}

pub fn hold_beside_keep_alive(azurite_port: u16) {
    let line = cron_line("0.5.0");
    let spin = spin_home().join("0.5.0/bin/spin");
    let data = match line {
        Ok(data) if spin.is_file() => data,
        Ok(_) => return println!("\nasync guard under real Spin: not run: no {}", spin.display()),
        Err(why) => return println!("\nasync guard under real Spin: not run: {why}"),
    };
    println!(
        "\ncron under Spin 4.0.2 + trigger-cron 0.5.0, the app's component both ways and the async \
         wrapper around a plain job: 2 replicas, lease {LEASE_SECONDS} s, one {} s job, ticks \
         every {INTERVAL_S} s:",
        WORK_MS / 1000
    );
    println!(
        "  {:<24} {:>14} {:>13} {:>12} {:>9} {:>13} {:>14}",
        "",
        "first tick ms",
        "follower ms",
        "follower req",
        "renewals",
        "renewal gap s",
        "run beyond ms"
    );
    let root = repo_root().join("target/bench-hold");
    let _ = std::fs::remove_dir_all(&root);
    let schedule = format!("*/{INTERVAL_S} * * * * *");
    let wrapped = root.join("wrapped.toml");
    let trigger =
        format!("[[trigger.cron]]\ncomponent = \"nightly\"\ncron_expression = \"{schedule}\"\n");
    let job_env = format!("HANDLER_MODE = \"ok\", HANDLER_MS = \"{WORK_MS}\"");
    let manifest = super::wrapped::manifest(
        &trigger,
        "cron_wrapper_async",
        Some(("handle-cron-event", "cron_handler")),
        &job_env,
    );
    std::fs::create_dir_all(&root).expect("target/bench-hold");
    std::fs::write(&wrapped, manifest).expect("the wrapped app's manifest");
    for (name, label, manifest, log) in [
        (
            "keep-alive (cron-job)",
            "sync",
            manifest_copy(&root.join("sync/app"), &schedule),
            "cron-job",
        ),
        ("async wrapper, plain job", "wrapped", wrapped, "nightly"),
    ] {
        measure(name, label, (&manifest, log), (&spin, &data), azurite_port);
    }
    println!(
        "  first tick: due time to the line of each replica's first tick (Spin has composed and \
         compiled the app by then), median of the two; follower: the same for a follower's tick \
         while the run holds, median, and its requests per tick; renewal gap: the longest \
         between the run's lease requests; run beyond: from its acquire to its line, less the {} s \
         of work (deciding, the job's report, its fenced write, `complete`)",
        WORK_MS / 1000
    );
}

/// One setup: its manifest and the component whose stdout has the decision lines.
fn measure(
    name: &str,
    label: &str,
    (manifest, log): (&Path, &str),
    (spin, data): (&Path, &Path),
    port: u16,
) {
    let dir = repo_root().join("target/bench-hold").join(label);
    let launch = Launch {
        spin: spin.to_path_buf(),
        data_dir: Some(data.to_path_buf()),
        manifest: manifest.to_path_buf(),
        component: None,
        lifetime: Duration::from_secs(150),
        env: Vec::new(),
    };
    let container = format!("benchhold{label}{}", std::process::id());
    let proxies: Vec<CountingProxy> = (0..2).map(|_| CountingProxy::start(port)).collect();
    let mut replicas: Vec<_> = proxies
        .iter()
        .enumerate()
        .map(|(i, proxy)| {
            let variables = [
                ("connection_string", connection_string_for_port(proxy.port, EMULATOR_KEY_B64)),
                ("storage_endpoint", format!("http://127.0.0.1:{}", proxy.port)),
                ("container", container.clone()),
                ("holder", format!("bench-{label}-{i}")),
                ("lease_seconds", LEASE_SECONDS.to_string()),
                ("schedule", traffic_cop_testbed::spin::every(INTERVAL_S)),
                ("work_ms", WORK_MS.to_string()),
            ];
            launch.start(&format!("bench-{label}-{i}"), &dir.join(format!("r{i}")), &variables)
        })
        .collect();
    // Every new JSON line of each replica, stamped when first seen (polled every 10 ms).
    let mut lines: Vec<Vec<Line>> = vec![Vec::new(), Vec::new()];
    let mut seen = [0usize; 2];
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline && !lines.iter().flatten().any(|l| l.run) {
        for (i, replica) in replicas.iter().enumerate() {
            let out = replica.stdout(log);
            let complete: Vec<&str> = out.lines().filter(|l| l.ends_with('}')).collect();
            for text in complete.iter().skip(seen[i]) {
                lines[i].push(Line {
                    seen_ms: now_ms(),
                    run: text.contains("\"decision\":\"run\""),
                    due_at_ms: field(text, "due_at_ms"),
                });
            }
            seen[i] = complete.len();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for replica in &mut replicas {
        replica.kill();
    }
    let Some(leader) = lines.iter().position(|l| l.iter().any(|l| l.run)) else {
        return println!("  {name:<24} no run within 120 s");
    };
    let follower = 1 - leader;
    let first_ticks: Vec<f64> = lines
        .iter()
        .filter_map(|l| l.first())
        .map(|l| (l.seen_ms % (INTERVAL_S * 1000)) as f64)
        .collect();
    let run = lines[leader].iter().find(|l| l.run).expect("the run");
    let run_due = run.due_at_ms.unwrap_or(run.seen_ms);
    // The follower's ticks while the run held: after its due time, before its line.
    let held: Vec<&Line> = lines[follower]
        .iter()
        .filter(|l| !l.run && l.seen_ms > run_due + 1000 && l.seen_ms < run.seen_ms)
        .collect();
    let tick_ms: Vec<f64> = held.iter().map(|l| (l.seen_ms % (INTERVAL_S * 1000)) as f64).collect();
    let heads_between = |proxy: &CountingProxy, from_ms: u64, to_ms: u64| -> Vec<(u64, String)> {
        let proxy_started_ms = now_ms() - proxy.started.elapsed().as_millis() as u64;
        proxy
            .heads()
            .into_iter()
            .map(|(at, head)| (proxy_started_ms + at.as_millis() as u64, head))
            .filter(|(at, _)| *at >= from_ms && *at <= to_ms)
            .collect()
    };
    let follower_requests = match (held.first(), held.last()) {
        (Some(first), Some(last)) if held.len() > 1 => {
            let heads = heads_between(&proxies[follower], first.seen_ms, last.seen_ms);
            format!("{:.1}", heads.len() as f64 / (held.len() - 1) as f64)
        }
        _ => "-".into(),
    };
    let lease_calls: Vec<(u64, String)> = heads_between(&proxies[leader], run_due, run.seen_ms)
        .into_iter()
        .filter(|(_, head)| head.to_ascii_lowercase().contains("x-ms-lease-action:"))
        .collect();
    let renewals = lease_calls
        .iter()
        .filter(|(_, h)| h.to_ascii_lowercase().contains("x-ms-lease-action: renew"))
        .count();
    let gap = lease_calls.windows(2).map(|w| w[1].0 - w[0].0).max().unwrap_or_else(|| {
        panic!(
            "{name}: the leader's proxy saw {} lease calls, no gap to measure",
            lease_calls.len()
        )
    });
    // From the acquire the leader's proxy passed: the trigger's delay and the first
    // instance's start are the first tick's, not the run's.
    let acquired = lease_calls
        .iter()
        .find(|(_, head)| head.to_ascii_lowercase().contains("x-ms-lease-action: acquire"))
        .map_or(run_due, |(at, _)| *at);
    let beyond = run.seen_ms.saturating_sub(acquired + WORK_MS);
    println!(
        "  {name:<24} {:>14.0} {:>13.0} {follower_requests:>12} {renewals:>9} {:>13.1} \
         {beyond:>14}",
        percentile(&first_ticks, 50.0),
        percentile(&tick_ms, 50.0),
        gap as f64 / 1000.0,
    );
}

//! The benchmark: prints numbers, asserts nothing. Against one Azurite, in one run:
//! - acquire+release through the built component in the wasmtime host (a fresh instance per
//!   cycle, as a serverless host does), round trips and median/p99 latency;
//! - the same cycle with the Azure SDK for Python (pinned, `api_version` 2025-11-05), and the ratio;
//! - the release `.wasm` size, and the time to instantiate a pre-compiled component;
//! - takeover time after a crash (lease expiry) and after a graceful release;
//! - waiting for a held lock (`wait-ms`): requests per second while waiting, release to grant;
//! - per tick under the real Spin (when found): trigger to answer for a leader and a follower;
//! - the async component (`hold`) beside the WASI 0.2 one: both lease components'
//!   compile and load times, and the app's cron component both ways under Spin 4.0.2 with
//!   trigger-cron 0.5.0 (start, a follower's tick, renewals, a 30 s job's overhead);
//! - the blackboard at scale: 16 workers claiming 1,000 and 10,000 items, against the naive
//!   baseline (every worker tries every item) at 1,000.
//!
//! Run it with `scripts/bench [cycles] [items] [tickets per claim]` (items 0: no blackboard;
//! tickets per claim 50 by default).

mod blackboard;
mod floor;
mod spin_hold;
mod spin_tick;
mod split;
mod waiting;
mod wrapped;

use std::process::Command;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::{repo_root, EMULATOR_KEY_B64};
use traffic_cop_wasm_host::component::v1::lease::{LeaseDuration, Lock};
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome};
use traffic_cop_wasm_host::component::{fresh, wasm_path, Host};

fn main() {
    // The figures are for the code Spin runs (Cranelift), not the tests' baseline compiler.
    traffic_cop_wasm_host::compiled::optimise();
    let cycles: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(200);
    let items: usize = std::env::args().nth(2).and_then(|n| n.parse().ok()).unwrap_or(10_000);
    if let Some(tickets) = std::env::args().nth(3).and_then(|n| n.parse().ok()) {
        blackboard::PER_CLAIM.store(tickets, std::sync::atomic::Ordering::Relaxed);
    }
    let azurite = Azurite::start();
    let proxy = CountingProxy::start(azurite.port);
    let connection_string = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
    println!(
        "traffic-cop benchmark: {cycles} cycles, Azurite 3.35.0 on 127.0.0.1:{}\n",
        azurite.port
    );

    // Component: acquire + release, fresh instance per call.
    let lock = Lock {
        connection_string: connection_string.clone(),
        container: "bench".into(),
        blob: "lock".into(),
    };
    let grant = fresh().acquire(&lock, LeaseDuration::Fixed(15), None).expect("warm-up acquire");
    fresh().release(&lock, &grant.lease_id).expect("warm-up release");
    let before = proxy.requests();
    let component: Vec<f64> = (0..cycles)
        .map(|_| {
            let started = Instant::now();
            let grant = fresh().acquire(&lock, LeaseDuration::Fixed(15), None).expect("acquire");
            fresh().release(&lock, &grant.lease_id).expect("release");
            ms(started.elapsed())
        })
        .collect();
    let component_trips = (proxy.requests() - before) as f64 / cycles as f64;
    // Where the component's time goes: the same two calls on fresh instances, refused by
    // validation before anything is sent (instantiation, the call, argument checks).
    let refused_lock = Lock { blob: String::new(), ..lock.clone() };
    let refused: Vec<f64> = (0..cycles)
        .map(|_| {
            let started = Instant::now();
            let _ = fresh().acquire(&refused_lock, LeaseDuration::Fixed(15), None).unwrap_err();
            let _ = fresh().release(&refused_lock, "x").unwrap_err();
            ms(started.elapsed())
        })
        .collect();

    // The floor: the same two requests from a minimal native client, same proxy, same Azurite.
    let key = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.decode(EMULATOR_KEY_B64).unwrap()
    };
    let floor = |via: floor::Via| -> Vec<f64> {
        floor::cycle(via, proxy.port, &key, "bench", "lock", 0);
        (1..=cycles as u64)
            .map(|n| {
                let started = Instant::now();
                floor::cycle(via, proxy.port, &key, "bench", "lock", n);
                ms(started.elapsed())
            })
            .collect()
    };
    let host_only = floor(floor::Via::WasiHttpHost);
    let host_spawned = floor(floor::Via::WasiHttpHostSpawned);
    let before = proxy.requests();
    let native = floor(floor::Via::Socket);
    let floor_trips = (proxy.requests() - before - 2) as f64 / cycles as f64;

    // The reference: the Azure SDK for Python, through the same counting proxy.
    let python = repo_root().join("target/bench-venv/bin/python");
    let script = repo_root().join("bench/sdk_cycle.py");
    let sdk_connection = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={EMULATOR_KEY_B64};\
         BlobEndpoint=http://127.0.0.1:{}/devstoreaccount1;",
        proxy.port
    );
    let warm = Command::new(&python)
        .args([script.as_os_str(), sdk_connection.as_ref(), "bench".as_ref(), "1".as_ref()])
        .output();
    let before = proxy.requests();
    let sdk = warm.ok().filter(|o| o.status.success()).and_then(|_| {
        let output = Command::new(&python)
            .args([
                script.as_os_str(),
                sdk_connection.as_ref(),
                "bench".as_ref(),
                cycles.to_string().as_ref(),
            ])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&output.stdout);
        let start = text.find('[')? + 1;
        let end = text.rfind(']')?;
        text[start..end]
            .split(',')
            .map(|v| v.trim().parse::<f64>().ok())
            .collect::<Option<Vec<f64>>>()
    });
    // The SDK script's own setup (exists checks) costs 2 requests once; count only the cycles.
    let sdk_trips = (proxy.requests() - before).saturating_sub(2) as f64 / cycles as f64;

    println!("acquire+release cycle          round trips   median ms     p99 ms");
    let (c50, c99) = (percentile(&component, 50.0), percentile(&component, 99.0));
    let (f50, f99) = (percentile(&native, 50.0), percentile(&native, 99.0));
    println!("  floor (native, hand-signed)  {floor_trips:>11.1} {f50:>11.2} {f99:>10.2}");
    println!("  traffic-cop component        {component_trips:>11.1} {c50:>11.2} {c99:>10.2}");
    println!("  ratio component / floor      {:>11} {:>11.2} {:>10.2}", "", c50 / f50, c99 / f99);
    let (r50, r99) = (percentile(&refused, 50.0), percentile(&refused, 99.0));
    let (h50, h99) = (percentile(&host_only, 50.0), percentile(&host_only, 99.0));
    println!("  where the component's time goes:");
    println!("  host's wasi:http sender alone {:>10.1} {h50:>11.2} {h99:>10.2}", 2.0);
    println!("  ratio component / that       {:>11} {:>11.2} {:>10.2}", "", c50 / h50, c99 / h99);
    let (s50, s99) = (percentile(&host_spawned, 50.0), percentile(&host_spawned, 99.0));
    println!("  that, spawned as handle does {:>11.1} {s50:>11.2} {s99:>10.2}", 2.0);
    println!("  ratio component / that       {:>11} {:>11.2} {:>10.2}", "", c50 / s50, c99 / s99);
    println!("  component, nothing sent      {:>11.1} {r50:>11.2} {r99:>10.2}", 0.0);
    match &sdk {
        Some(sdk) => {
            let (s50, s99) = (percentile(sdk, 50.0), percentile(sdk, 99.0));
            println!("  azure-storage-blob 12.31.1   {sdk_trips:>11.1} {s50:>11.2} {s99:>10.2}");
            println!(
                "  ratio component / SDK        {:>11} {:>11.2} {:>10.2}",
                "",
                c50 / s50,
                c99 / s99
            );
        }
        None => println!(
            "  azure-storage-blob: not run (scripts/bench installs it into target/bench-venv)"
        ),
    }
    println!(
        "  (component cycles include instantiating a fresh instance for each of the two calls)"
    );
    split::breakdown(&lock, cycles);

    let size = std::fs::metadata(wasm_path())
        .unwrap_or_else(|e| panic!("cannot measure {}: {e}", wasm_path().display()))
        .len();
    println!("\nrelease traffic_cop.wasm       {size} bytes ({} KiB)", size / 1024);
    instantiation();
    takeover(&connection_string);
    waiting::run(azurite.port);
    spin_tick::per_tick(azurite.port);
    spin_hold::compile_both();
    spin_hold::hold_beside_keep_alive(azurite.port);
    if items > 0 {
        blackboard(azurite.port, items);
    }
    azurite.stop();
}

/// Instantiation of a component pre-compiled to native code (as a host caches it).
fn instantiation() {
    let host = Host::shared();
    let compiled = host.engine.precompile_component(&std::fs::read(wasm_path()).unwrap()).unwrap();
    let started = Instant::now();
    // SAFETY: the bytes were produced just above by this engine's precompile_component.
    let _component = unsafe {
        traffic_cop_wasm_host::wasmtime::component::Component::deserialize(&host.engine, &compiled)
    }
    .unwrap();
    let deserialize = ms(started.elapsed());
    let samples: Vec<f64> = (0..200)
        .map(|_| {
            let started = Instant::now();
            drop(host.instance());
            ms(started.elapsed())
        })
        .collect();
    println!("load pre-compiled component    {deserialize:.2} ms (once)");
    println!(
        "instantiate (store + linking)  median {:.3} ms, p99 {:.3} ms",
        percentile(&samples, 50.0),
        percentile(&samples, 99.0)
    );
}

/// How long until another contender runs: after a holder crashes (no release: its lease must
/// expire) and after a graceful complete (released at once). Polled every 100 ms.
fn takeover(connection_string: &str) {
    // No schedule: any tick runs once the lease is free.
    let settings = |holder: &str| v1::settings(connection_string, "bench", "takeover", holder);
    let grant = |holder: &str| {
        let mut instance = fresh();
        match instance.guarded_invoke(&settings(holder)) {
            Decision::Run(run) => Some((instance, run)),
            Decision::Skip(_) => None,
        }
    };
    let wait_for_turn = |holder: &str| {
        let started = Instant::now();
        loop {
            if let Some(granted) = grant(holder) {
                return (granted, started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let _crashed = grant("crasher").expect("first grant");
    let ((mut instance, run), after_crash) = wait_for_turn("successor");
    let finished = instance.run_complete(run, &Outcome::Success(String::new()));
    assert!(finished.error.is_none(), "complete: {}", finished.text);
    let (_, after_release) = wait_for_turn("next");
    println!(
        "\ntakeover after a crash         {:.1} s (lease 15 s, polled every 100 ms)",
        after_crash.as_secs_f64()
    );
    println!("takeover after a release       {:.1} ms (first poll)", ms(after_release));
}

/// Claims per interval by 16 workers: the first interval creates every item's blob, the next
/// is the steady state. All first intervals run before the steady ones, so the steady rounds
/// rarely wait out the skew tolerance.
fn blackboard(azurite_port: u16, items: usize) {
    use blackboard::{header, round, Strategy};
    const WORKERS: usize = 16;
    let proxy = CountingProxy::start(azurite_port);
    println!(
        "\nblackboard: {WORKERS} workers, each claims {} at a time and completes them, until none \
         is left",
        blackboard::per_claim()
    );
    header();
    let small = items.min(1_000);
    let mut sets = vec![(Strategy::Claim, small, "claim"), (Strategy::Naive, small, "naive")];
    if items > small {
        sets.push((Strategy::Claim, items, "claim"));
    }
    let sets: Vec<_> = sets
        .into_iter()
        .map(|(strategy, count, name)| {
            let list: Vec<String> = (0..count).map(|i| format!("items/{i:05}")).collect();
            let kind = if strategy == Strategy::Naive { "naive" } else { "claim" };
            let connection_string = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
            let container = format!("board-{kind}-{count}");
            let location =
                v1::Settings { lock: None, ..v1::settings(&connection_string, &container, "", "") };
            (strategy, name, std::sync::Arc::new(list), location, None)
        })
        .collect();
    let mut sets = sets;
    for label in ["1st", "steady"] {
        for (strategy, name, list, location, last_claim) in &mut sets {
            round(&proxy, location, list, (WORKERS, *strategy), last_claim)
                .print(&format!("{name}, {}, {label}", list.len()), list.len());
        }
    }
    println!(
        "  (items/s: claimed and completed; req/item: claiming and completing (naive: \
         guarded-invoke on every item by every worker); wasted: refused requests)"
    );
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// A percentile of what was measured; a figure with no samples stops the benchmark.
fn percentile(samples: &[f64], p: f64) -> f64 {
    assert!(!samples.is_empty(), "a figure with no samples cannot be printed");
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted.get(rank).copied().unwrap_or(f64::NAN)
}

//! Per-tick cost under the real Spin, for the app's `http-job` (the lease component as its
//! component dependency, as spin.toml declares it) and for the HTTP wrapper around a plain job
//! (apps/http-wrapper-async with the async lease component, the job harness/cron-handler/http
//! answering at once; docs/wrappers.md), and for the one-line form (harness/cron-handler/guarded,
//! a spin-sdk WASI 0.2 job under `#[guarded]`): one `spin up` of each against the bench's Azurite,
//! through a counting proxy. Each new 2 s due time gets two `POST /run`: the first is the
//! leader's tick (decide, the job, complete), the second a follower's (decide: already ran).
//! Time is from sending the trigger to the answer. Each is started twice with a `HOME` and
//! caches of its own: spawn to serving, the first time (nothing cached) and the second.

use super::{ms, percentile};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::connection_string_for_port;
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{find_spin, http, Launch};
use traffic_cop_testbed::{repo_root, EMULATOR_KEY_B64};

const TICKS: usize = 15;
const INTERVAL_MS: u64 = 2_000;

/// One configuration: how to start it, and how a run's answer reads.
struct Setup {
    label: &'static str,
    manifest: PathBuf,
    component: Option<String>,
    ran: fn(&str) -> bool,
}

pub fn per_tick(azurite_port: u16) {
    let spin = match find_spin() {
        Ok(spin) => spin,
        Err(why) => return println!("\nper tick under real Spin: not run: {why}"),
    };
    let dir = repo_root().join("target/bench-spin");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("target/bench-spin");
    let wrapped = dir.join("wrapped.toml");
    let trigger = "[[trigger.http]]\nroute = \"/run\"\ncomponent = \"nightly\"\n";
    let handler = "wasi:http/handler@0.3.0-rc-2026-03-15";
    let manifest = super::wrapped::manifest(
        trigger,
        "http_wrapper_async",
        Some((handler, "http_handler")),
        "",
    );
    std::fs::write(&wrapped, manifest).expect("the wrapped app's manifest");
    let guarded = dir.join("guarded.toml");
    let manifest = super::wrapped::manifest(trigger, "guarded_http_handler", None, "");
    std::fs::write(&guarded, manifest).expect("the guarded job's manifest");
    let setups = [
        Setup {
            label: "the app's http-job",
            manifest: repo_root().join("spin.toml"),
            component: Some("http-job".into()),
            ran: |body| body.contains("\"decision\":\"run\""),
        },
        Setup {
            label: "the HTTP wrapper, plain job",
            manifest: wrapped,
            component: None,
            ran: |body| body == "the job ran for /run",
        },
        Setup {
            label: "#[guarded], spin-sdk job",
            manifest: guarded,
            component: None,
            ran: |body| body == "the job ran for /run",
        },
    ];
    println!("\nper tick under real Spin ({}), trigger to answer:", spin.display());
    println!(
        "  {:<58} {:>6} {:>11} {:>10} {:>12}",
        "", "ticks", "median ms", "p99 ms", "round trips"
    );
    let mut starts = Vec::new();
    for (i, setup) in setups.iter().enumerate() {
        let launch = Launch {
            spin: spin.clone(),
            data_dir: Some(dir.join("data")),
            manifest: setup.manifest.clone(),
            component: setup.component.clone(),
            lifetime: Duration::from_secs(180),
            env: own_home(&dir.join(format!("home-{i}"))),
        };
        starts.push(measure(setup, &launch, &dir.join(format!("setup-{i}")), azurite_port));
    }
    println!("  spawn to serving, first start (nothing cached) and second:");
    for (setup, (first, second)) in setups.iter().zip(starts) {
        println!("    {:<40} {first:>8} {second:>8}", setup.label);
    }
}

/// A `HOME` and XDG cache of its own, so the first start finds nothing compiled.
fn own_home(home: &std::path::Path) -> Vec<(String, String)> {
    std::fs::create_dir_all(home).expect("bench home");
    let home = home.display().to_string();
    vec![("HOME".into(), home.clone()), ("XDG_CACHE_HOME".into(), format!("{home}/.cache"))]
}

/// Starts the setup twice (timing each start), ticks the second, prints its line; returns
/// the two start times as text.
fn measure(
    setup: &Setup,
    launch: &Launch,
    dir: &std::path::Path,
    azurite_port: u16,
) -> (String, String) {
    let proxy = CountingProxy::start(azurite_port);
    let variables = [
        ("connection_string", connection_string_for_port(proxy.port, EMULATOR_KEY_B64)),
        ("storage_endpoint", format!("http://127.0.0.1:{}", proxy.port)),
        ("container", "benchspin".to_string()),
        ("lock", format!("bench-{}", dir.file_name().unwrap().to_string_lossy())),
        ("holder", "bench-replica".to_string()),
        ("lease_seconds", "15".to_string()),
        ("schedule", traffic_cop_testbed::spin::every(INTERVAL_MS / 1000)),
        ("time_zone", "UTC".to_string()),
        ("work_ms", "0".to_string()),
    ];
    let start = |attempt: &str| {
        let started = Instant::now();
        let mut replica = launch.start("bench-replica", &dir.join(attempt), &variables);
        let ready = replica.wait_ready(Duration::from_secs(90));
        let took = format!("{:.0} ms", ms(started.elapsed()));
        (replica, ready.map(|()| took))
    };
    let (mut first, cold) = start("first");
    first.kill();
    let (mut replica, warm) = start("second");
    let (cold, warm) = match (cold, warm) {
        (Ok(cold), Ok(warm)) => (cold, warm),
        (Err(why), _) | (_, Err(why)) => {
            replica.kill();
            println!("  {}: not run: spin up did not start: {why}", setup.label);
            return ("-".into(), "-".into());
        }
    };
    let tick = |want: &str| {
        let (before, started) = (proxy.requests(), Instant::now());
        let (status, body) =
            http(replica.port, "POST", "/run", Duration::from_secs(30)).expect("POST /run");
        let elapsed = ms(started.elapsed());
        let decided = match want {
            "run" => (setup.ran)(&body),
            _ => body.contains("\"decision\":\"skip\""),
        };
        (status == 200 && decided).then_some((elapsed, proxy.requests() - before))
    };
    let (mut leader, mut follower, mut odd) = (Vec::new(), Vec::new(), 0);
    for _ in 0..=TICKS {
        // Just into the next due time (the storage clock is this machine's).
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        std::thread::sleep(Duration::from_millis(INTERVAL_MS - now % INTERVAL_MS + 150));
        match (tick("run"), tick("skip")) {
            (Some(run), Some(skip)) => {
                leader.push(run);
                follower.push(skip);
            }
            _ => odd += 1,
        }
    }
    replica.kill();
    // The first tick creates the container and the lock: not a steady tick.
    let (leader, follower) = (&leader[1.min(leader.len())..], &follower[1.min(follower.len())..]);
    for (name, samples) in [("leader (run, job, complete)", leader), ("follower (skip)", follower)]
    {
        assert!(!samples.is_empty(), "{}: no {name} tick decided as expected", setup.label);
        let times: Vec<f64> = samples.iter().map(|s| s.0).collect();
        let trips = samples.iter().map(|s| s.1).sum::<u64>() as f64 / samples.len() as f64;
        println!(
            "  {:<58} {:>6} {:>11.2} {:>10.2} {trips:>12.1}",
            format!("{}: {name}", setup.label),
            samples.len(),
            percentile(&times, 50.0),
            percentile(&times, 99.0)
        );
    }
    if odd > 0 {
        println!(
            "  ({}: {odd} due times left out: a tick did not decide as expected)",
            setup.label
        );
    }
    (cold, warm)
}

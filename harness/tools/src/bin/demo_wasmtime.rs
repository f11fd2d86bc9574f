//! The demo's story in a wasmtime host, for a machine without Spin: Azurite in memory on
//! loopback and three replicas of the Spin app's cron-triggered component, composed with the
//! lease component exactly as spin.toml declares, a fresh instance per tick as
//! spin-trigger-cron does. The holder is killed (a trap) in the middle of its run; the others
//! skip until its lease expires, then one takes over. Ends with the status board.
//! `scripts/demo --wasmtime` runs it; on real Spin the demo is `harness/demo`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::{sleep_until_unix, unix_secs};
use traffic_cop_wasm_host::apps::App;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::lease::LeaseState;
use traffic_cop_wasm_host::component::v1::{self, BoardEntry};
use traffic_cop_wasm_host::wasmtime;

const REPLICAS: usize = 3;
const TICK_SECONDS: u64 = 2;
const TICKS: u64 = 17;
/// The tick in whose run the holder is killed (mid-run: runs last 1.5 s).
const KILL_TICK: u64 = 3;
const CONTAINER: &str = "demo";
const LOCK: &str = "nightly-cleanup";

fn main() {
    println!("Starting Azurite (in memory, 127.0.0.1, ephemeral port)...");
    let azurite = Azurite::start();
    let mut config = wasmtime::Config::new();
    config.epoch_interruption(true);
    let engine = wasmtime::Engine::new(&config).expect("engine");
    let app =
        Arc::new(App::load(&engine, "cron_job").expect("cron component composes and compiles"));
    let ticker_engine = engine.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(20));
        ticker_engine.increment_epoch();
    });
    println!(
        "Azurite on 127.0.0.1:{}. {REPLICAS} replicas of cron_job.wasm + traffic_cop.wasm, a tick every {TICK_SECONDS}s, \
         lease 15s, job interval {TICK_SECONDS}s, each run works 1.5s.\n",
        azurite.port
    );

    let started = Instant::now();
    let say = Arc::new(move |who: &str, what: &str| {
        println!("[{:>5.1}s] {who:<10} {what}", started.elapsed().as_secs_f64())
    });
    let kills: Vec<Arc<AtomicBool>> =
        (0..REPLICAS).map(|_| Arc::new(AtomicBool::new(false))).collect();
    let dead_until: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; REPLICAS]));
    let first_tick = (unix_secs() + 1).div_ceil(TICK_SECONDS) * TICK_SECONDS;

    let replicas: Vec<_> = (0..REPLICAS)
        .map(|replica| {
            let (app, say, kill, dead_until) =
                (app.clone(), say.clone(), kills[replica].clone(), dead_until.clone());
            let variables = variables(&azurite.connection_string(), &format!("replica-{replica}"));
            std::thread::spawn(move || {
                let name = format!("replica-{replica}");
                for tick in 0..TICKS {
                    let at = first_tick + tick * TICK_SECONDS;
                    // Replicas' timers fire within a few hundred ms of each other, in no fixed order.
                    let jitter = (at * 7919 + replica as u64 * 104_729) % 250;
                    sleep_until_unix(at, jitter);
                    let dead = dead_until.lock().unwrap()[replica];
                    match dead {
                        Some(until) if Instant::now() < until => continue,
                        Some(_) => {
                            dead_until.lock().unwrap()[replica] = None;
                            kill.store(false, Ordering::SeqCst);
                            say(&name, "restarted");
                        }
                        None => {}
                    }
                    match app.cron_tick(&variables, at, Some(kill.clone())) {
                        // The component prints its decision log (one JSON line) and "woken by
                        // the cron tick of <ISO 8601>: <report>"; show the report, which names
                        // the due time.
                        Ok(printed) => {
                            printed.lines().filter(|l| !l.starts_with('{')).for_each(|line| {
                                say(&name, line.split_once(": ").map_or(line, |(_, r)| r))
                            })
                        }
                        Err(error) if error.contains("killed") => {
                            say(&name, "KILLED in the middle of its run: no complete, no release");
                            dead_until.lock().unwrap()[replica] =
                                Some(Instant::now() + Duration::from_secs(12));
                        }
                        Err(error) => say(&name, &format!("tick failed: {error}")),
                    }
                }
            })
        })
        .collect();

    // The killer: in the middle of a run, find the holder on the board and kill it.
    let connection_string = azurite.connection_string();
    let location =
        v1::Settings { lock: None, ..v1::settings(&connection_string, CONTAINER, "", "demo-host") };
    for tick in KILL_TICK..KILL_TICK + 4 {
        sleep_until_unix(first_tick + tick * TICK_SECONDS, 900);
        let board = fresh().board(&location).expect("board");
        let Some(entry) = board
            .locks
            .iter()
            .find(|e| e.name == LOCK && e.state == LeaseState::Leased && e.running)
        else {
            continue;
        };
        let holder = entry.holder.clone().unwrap_or_default();
        say(
            "host",
            &format!(
                "killing {holder} in the middle of its run (fencing token {})",
                entry.fencing_token
            ),
        );
        if let Some(index) = holder.strip_prefix("replica-").and_then(|i| i.parse::<usize>().ok()) {
            kills[index].store(true, Ordering::SeqCst);
        }
        break;
    }
    replicas.into_iter().for_each(|r| r.join().expect("replica"));

    println!("\nStatus board ({CONTAINER}):");
    print_board(&fresh().board(&location).expect("board").locks);
    azurite.stop();
    println!("\nAzurite stopped. Done.");
}

fn variables(connection_string: &str, holder: &str) -> BTreeMap<String, String> {
    [
        ("connection_string", connection_string),
        ("container", CONTAINER),
        ("lock", LOCK),
        ("holder", holder),
        ("lease_seconds", "15"),
        ("schedule", "*/2 * * * * *"),
        ("work_ms", "1500"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn print_board(entries: &[BoardEntry]) {
    println!(
        "  {:<16} {:<10} {:<10} {:>5} {:<9} {:<9} {:<8} outcome",
        "lock", "state", "holder", "token", "start", "stop", "running"
    );
    for e in entries {
        let time = |ms: Option<u64>| ms.map_or("-".to_string(), |ms| clock(ms / 1000));
        println!(
            "  {:<16} {:<10} {:<10} {:>5} {:<9} {:<9} {:<8} {}",
            e.name,
            format!("{:?}", e.state).rsplit("::").next().unwrap_or("").to_lowercase(),
            e.holder.as_deref().unwrap_or("-"),
            e.fencing_token,
            time(e.last_start_ms),
            time(e.last_stop_ms),
            e.running,
            e.last_outcome.as_deref().unwrap_or("-")
        );
    }
}

/// `HH:MM:SS` UTC.
fn clock(secs: u64) -> String {
    format!("{:02}:{:02}:{:02}", secs / 3600 % 24, secs / 60 % 60, secs % 60)
}

//! Waiting for a held lock (the guard's `wait_ms`), for request-triggered functions that need
//! mutual exclusion: while a holder keeps the lock for `hold`, waiters poll with backoff and
//! jitter (100 ms doubling to 2 s). Printed: the waiters' requests per second while waiting,
//! and the time from the holder's release to a waiter's grant. Numbers, no assertions.

use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::connection_string_for_port;
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome};

/// No schedule: whoever finds the lease free runs; waiting up to `wait_ms` for it.
fn settings(connection_string: &str, blob: &str, holder: &str, wait_ms: u32) -> v1::Settings {
    v1::Settings {
        wait_ms: Some(wait_ms.to_string()),
        ..v1::settings(connection_string, "bench-waiting", blob, holder)
    }
}

fn success() -> Outcome {
    Outcome::Success(String::new())
}

/// One round: a holder takes the lock, `waiters` wait for it, the holder completes after
/// `hold`. (requests per second per waiter while waiting, ms from release to the first grant)
fn round(azurite_port: u16, blob: &str, hold: Duration, waiters: usize) -> (f64, f64) {
    let direct = connection_string_for_port(azurite_port, EMULATOR_KEY_B64);
    let proxy = Arc::new(CountingProxy::start(azurite_port));
    let counted = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
    let mut holder = fresh();
    let run = match holder.guarded_invoke(&settings(&direct, blob, "holder", 0)) {
        Decision::Run(run) => run,
        Decision::Skip(skipped) => panic!("the holder was not granted: {}", skipped.text),
    };
    let handles: Vec<_> = (0..waiters)
        .map(|i| {
            let settings = settings(&counted, blob, &format!("waiter-{i}"), 30_000);
            std::thread::spawn(move || {
                let mut waiter = fresh();
                match waiter.guarded_invoke(&settings) {
                    Decision::Run(run) => {
                        let granted = Instant::now();
                        let finished = waiter.run_complete(run, &success());
                        assert!(finished.error.is_none(), "complete: {}", finished.text);
                        Some(granted)
                    }
                    Decision::Skip(_) => None,
                }
            })
        })
        .collect();
    std::thread::sleep(hold);
    let waited_requests = proxy.requests();
    let finished = holder.run_complete(run, &success());
    assert!(finished.error.is_none(), "the holder completes: {}", finished.text);
    let released = Instant::now();
    let grants: Vec<Instant> = handles.into_iter().filter_map(|h| h.join().unwrap()).collect();
    let first = grants.iter().min().expect("a waiter was granted");
    let per_second = waited_requests as f64 / hold.as_secs_f64() / waiters as f64;
    (per_second, first.duration_since(released).as_secs_f64() * 1000.0)
}

pub fn run(azurite_port: u16) {
    println!("\nwaiting for a held lock (wait-ms 30 s, backoff 100 ms doubling to 2 s, jitter)");
    println!("  holds  waiters  req/s per waiter while waiting  release to grant (median of 5)");
    for (hold_ms, waiters) in [(1_000, 1), (5_000, 1), (5_000, 4)] {
        let mut rates = Vec::new();
        let mut gaps = Vec::new();
        for n in 0..5 {
            let blob = format!("wait-{hold_ms}-{waiters}-{n}");
            let (rate, gap) = round(azurite_port, &blob, Duration::from_millis(hold_ms), waiters);
            rates.push(rate);
            gaps.push(gap);
        }
        println!(
            "  {:>4} s  {waiters:>7}  {:>30.2}  {:>7.0} ms (min {:.0}, max {:.0})",
            hold_ms / 1000,
            crate::percentile(&rates, 50.0),
            crate::percentile(&gaps, 50.0),
            gaps.iter().copied().fold(f64::INFINITY, f64::min),
            gaps.iter().copied().fold(0.0, f64::max),
        );
    }
}

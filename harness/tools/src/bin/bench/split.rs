//! Where a component acquire+release cycle spends its time, from the moments each request
//! crosses into the host (`outbound::Moment`): before the first request is handed over
//! (instantiation, the call, validation, signing), inside the host's sender, and after each
//! answer until the guest hands over the next request or returns (waking the guest, reading
//! the answer, parsing it, the second instantiation).

use super::{ms, percentile};
use std::time::Instant;
use traffic_cop_wasm_host::component::v1::lease::{LeaseDuration, Lock};
use traffic_cop_wasm_host::component::Host;
use traffic_cop_wasm_host::outbound::{take_moments, time_requests, Moment};

pub fn breakdown(lock: &Lock, cycles: usize) {
    time_requests();
    println!("  one cycle, split at the host boundary (ms, median and p99):");
    for (host, reuse, heading) in [
        (Host::shared(), false, "a fresh instance per call (as above)"),
        (Host::pooled(), false, "a fresh instance per call, pooling allocator (as Spin)"),
        (Host::shared(), true, "one instance for both calls"),
    ] {
        let faults = minor_faults();
        let [before, in_sender, after] = measure(host, lock, cycles, reuse);
        let faults = (minor_faults() - faults) as f64 / cycles as f64;
        println!("    {heading}; page faults a cycle: {faults:.0}");
        let row = |name: &str, samples: &[f64]| {
            let (p50, p99) = (percentile(samples, 50.0), percentile(samples, 99.0));
            println!("      {name:<42} {p50:>6.2} {p99:>10.2}");
        };
        row("before each request is handed over", &before);
        row("in the host's sender (both requests)", &in_sender);
        row("after the answers, until handed/returned", &after);
    }
}

/// Per cycle: the time before the requests are handed over, in the host's sender, and after
/// the answers. With `reuse`, both calls go to one instance, so only the first pays for
/// instantiating and the first touches of its memory.
fn measure(host: &Host, lock: &Lock, cycles: usize, reuse: bool) -> [Vec<f64>; 3] {
    let _ = take_moments();
    let (mut before, mut in_sender, mut after) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..cycles {
        let started = Instant::now();
        if reuse {
            let mut instance = host.instance();
            let grant = instance.acquire(lock, LeaseDuration::Fixed(15), None).expect("acquire");
            instance.release(lock, &grant.lease_id).expect("release");
        } else {
            let grant =
                host.instance().acquire(lock, LeaseDuration::Fixed(15), None).expect("acquire");
            host.instance().release(lock, &grant.lease_id).expect("release");
        }
        let ended = Instant::now();
        let moments = take_moments();
        let kinds: Vec<Moment> = moments.iter().map(|(_, kind)| *kind).collect();
        if kinds != [Moment::Handed, Moment::Answered, Moment::Handed, Moment::Answered] {
            println!("  (a cycle crossed into the host as {kinds:?}; left out)");
            continue;
        }
        let at: Vec<Instant> = moments.iter().map(|(at, _)| *at).collect();
        let (first, between, last) = (at[0] - started, at[2] - at[1], ended - at[3]);
        in_sender.push(ms(at[1] - at[0]) + ms(at[3] - at[2]));
        if reuse {
            // The second request's preparation is not separable from reading the first
            // answer here: all of `between` counts as after the answer.
            before.push(ms(first));
            after.push(ms(between) + ms(last));
        } else {
            // Each call prepares its own request; the second is taken to cost what the first
            // did, and the rest of `between` is waking the guest and reading the first answer
            // (and dropping the first instance).
            before.push(2.0 * ms(first));
            after.push(ms(between) - ms(first) + ms(last));
        }
    }
    [before, in_sender, after]
}

/// Minor page faults taken by the calling thread so far (Linux only: elsewhere the figure
/// cannot be measured, and the benchmark says so).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat")
        .unwrap_or_else(|e| panic!("page faults cannot be measured here: {e}"));
    // Field 10 (minflt), counted after the command name's closing parenthesis.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    rest.split_whitespace()
        .nth(7)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no minor-fault count in /proc/thread-self/stat: {stat}"))
}

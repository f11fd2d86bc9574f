//! Once per due time when clocks disagree. Replicas whose clocks run ahead of or behind the
//! storage service fire their timers around each scheduled tick, on both sides of it; some
//! ticks are missed by everyone, and some winners crash. A checker that knows only the
//! *scheduled tick* each replica fired for (never the guard's own `ticket.interval`) demands
//! exactly one run per tick that anyone fired for.

use crate::support;

use crate::support::fake_service::FakeService;
use crate::support::VirtualRuntime;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, SkipReason};
use traffic_cop::{LeaseClient, Lock};

const INTERVAL: u64 = 60;

/// How far each replica's clock is ahead of the service's (negative: behind), in ms. The
/// guard promises correctness for clocks up to a quarter interval ahead (15 s here) and for
/// arrivals up to `interval - 15 s` late.
const SKEWS_MS: [i64; 5] = [12_000, 2_000, 0, -3_000, -20_000];

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn skewed_replicas_run_each_scheduled_tick_exactly_once() {
    for seed in 1..=20u64 {
        run_ticks(seed);
    }
}

fn run_ticks(seed: u64) {
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let clock = Rc::new(Cell::new(support::epoch()));
    let service = FakeService::new(clock.clone());
    let lock = Lock::parse(support::EMULATOR, "skew", "job").unwrap();
    let first_tick = guard::unix_ms(support::epoch()) / 1000 / INTERVAL * INTERVAL + INTERVAL;
    // scheduled tick (s) -> replicas granted a run when they fired for it
    let mut runs: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    let mut fired: Vec<u64> = Vec::new();
    for k in 0..40u64 {
        let tick_ms = (first_tick + k * INTERVAL) * 1000;
        // Every sixth tick nobody fires (a deploy, an outage): the next one has no recent run
        // to compare with, which is when an early replica used to run twice.
        if k % 6 == 5 {
            continue;
        }
        fired.push(tick_ms / 1000);
        let mut arrivals: Vec<(u64, usize)> = SKEWS_MS
            .iter()
            .enumerate()
            .map(|(replica, skew)| {
                let jitter = (next(&mut rng) % 900) as i64;
                ((tick_ms as i64 - skew + jitter) as u64, replica)
            })
            .collect();
        arrivals.sort();
        for (at_ms, replica) in arrivals {
            let at = std::time::UNIX_EPOCH + Duration::from_millis(at_ms);
            if at > clock.get() {
                clock.set(at);
            }
            let runtime = VirtualRuntime::on_clock(clock.clone(), next(&mut rng));
            let mut client = LeaseClient::new(service.clone(), runtime);
            let options =
                GuardOptions::every_interval(&format!("r{replica}"), 15, INTERVAL, None).unwrap();
            match guard::guarded_invoke(&mut client, &lock, &options) {
                Decision::Run(ticket) => {
                    runs.entry(tick_ms / 1000).or_default().push(replica);
                    // One winner in five crashes: its lease blocks the others for 15 s, and
                    // the run still counts for its tick.
                    if !next(&mut rng).is_multiple_of(5) {
                        guard::complete(&mut client, &ticket, &Outcome::Success).unwrap();
                    }
                }
                Decision::Skip(SkipReason::Error(e)) => panic!("seed {seed}: error {e}"),
                Decision::Skip(_) => {}
            }
        }
    }
    for tick in &fired {
        let winners = runs.get(tick).cloned().unwrap_or_default();
        assert_eq!(
            winners.len(),
            1,
            "seed {seed}: tick {tick} ran {} times: {winners:?}",
            winners.len()
        );
    }
    assert_eq!(runs.len(), fired.len(), "seed {seed}: runs outside the fired ticks: {runs:?}");
}

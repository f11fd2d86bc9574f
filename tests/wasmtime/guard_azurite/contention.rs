//! Contention through the built component against Azurite: many concurrent fresh instances,
//! real time, random crashes. Part of guard_azurite, so it overlaps the scenarios.

use traffic_cop_testbed::runner::Test;

use super::{now_ms, sleep_to_boundary, Real};
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::{Decision, Outcome, SkipReason, Skipped};

#[derive(Clone, Debug)]
struct Grant {
    contender: usize,
    token: u64,
    interval: u64,
    crashed: bool,
}

#[derive(Default)]
struct Tally {
    grants: Vec<Grant>,
    held: u64,
    already_ran: u64,
    errors: Vec<String>,
}

/// A tiny deterministic generator, so a failing run can be replayed from its seed.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn eight_contenders_over_fifty_ticks_with_crashes_never_double_run() {
    const CONTENDERS: usize = 8;
    const TICKS: u64 = 50;
    const LEASE_SECONDS: u64 = 15;
    let world = Real::new();
    let location = world.location.clone();
    let tally = Arc::new(Mutex::new(Tally::default()));
    let seed = now_ms();
    println!("contention seed {seed}");
    // Start everyone on the same boundary so every tick has eight live contenders.
    let start = (now_ms() / 1000 + 2) * 1000;
    let started = Instant::now();
    let threads: Vec<_> = (0..CONTENDERS)
        .map(|contender| {
            let (location, tally) = (location.clone(), tally.clone());
            std::thread::spawn(move || {
                let mut rng = seed ^ (contender as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                for tick in 0..TICKS {
                    let at = start + tick * 1000 + next(&mut rng) % 300;
                    std::thread::sleep(Duration::from_millis(at.saturating_sub(now_ms())));
                    let settings = location.settings("contended", &format!("c{contender}"), 1);
                    let mut instance = fresh();
                    match instance.guarded_invoke(&settings) {
                        Decision::Run(run) => {
                            let details = instance.run_details(run);
                            // The fifth run, and about one in fifteen others, "crashes" (at most
                            // two in all, so enough intervals stay unblocked to mean something):
                            // it never completes, and its lease blocks the lock until it expires.
                            let crashed = {
                                let tally = tally.lock().unwrap();
                                let crashes = tally.grants.iter().filter(|g| g.crashed).count();
                                crashes < 2
                                    && (tally.grants.len() == 4
                                        || next(&mut rng).is_multiple_of(15))
                            };
                            let grant = Grant {
                                contender,
                                token: details.fencing_token,
                                interval: details.past_due.due_at_ms / 1000,
                                crashed,
                            };
                            tally.lock().unwrap().grants.push(grant);
                            if !crashed {
                                std::thread::sleep(Duration::from_millis(50));
                                let done = Outcome::Success(String::new());
                                if let Some(e) = instance.run_complete(run, &done).error {
                                    tally.lock().unwrap().errors.push(format!("complete: {e:?}"));
                                }
                            }
                        }
                        Decision::Skip(Skipped { reason: SkipReason::HeldByOther(_), .. }) => {
                            tally.lock().unwrap().held += 1
                        }
                        Decision::Skip(Skipped { reason: SkipReason::AlreadyRan(_), .. }) => {
                            tally.lock().unwrap().already_ran += 1
                        }
                        Decision::Skip(skipped) => {
                            tally.lock().unwrap().errors.push(format!("{skipped:?}"))
                        }
                    }
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let tally = tally.lock().unwrap();

    let mut grants = tally.grants.clone();
    grants.sort_by_key(|g| g.token);
    let first_interval = start / 1000;
    let last_interval = first_interval + TICKS - 1;
    let crashes: Vec<u64> = grants.iter().filter(|g| g.crashed).map(|g| g.interval).collect();
    let ran: BTreeSet<u64> = grants.iter().map(|g| g.interval).collect();
    // An interval may go without a run only while a crashed holder's lease is still live.
    let blocked = |i: u64| crashes.iter().any(|c| *c < i && i <= c + LEASE_SECONDS + 1);
    let missed: Vec<u64> =
        (first_interval..=last_interval).filter(|i| !ran.contains(i) && !blocked(*i)).collect();
    let decisions = CONTENDERS as u64 * TICKS;
    println!(
        "contention: {decisions} decisions by {CONTENDERS} contenders over {TICKS} ticks in {:.1?}: {} runs, \
         {} crashed, {} skips held-by-other, {} skips already-ran, {} errors, {} intervals blocked by crashes",
        started.elapsed(),
        grants.len(),
        crashes.len(),
        tally.held,
        tally.already_ran,
        tally.errors.len(),
        (first_interval..=last_interval).filter(|i| !ran.contains(i) && blocked(*i)).count(),
    );
    assert!(tally.errors.is_empty(), "{:?}", tally.errors);
    assert_eq!(ran.len(), grants.len(), "two runs in one interval: {grants:?}");
    for pair in grants.windows(2) {
        assert_eq!(pair[1].token, pair[0].token + 1, "tokens are consecutive: {pair:?}");
        assert!(
            pair[1].interval > pair[0].interval,
            "later tokens run in later intervals: {pair:?}"
        );
    }
    assert!(missed.is_empty(), "intervals with live contenders and no run: {missed:?}");
    assert!(grants.len() as u64 >= TICKS / 3, "too few runs to mean anything: {}", grants.len());
    let winners: BTreeSet<usize> = grants.iter().map(|g| g.contender).collect();
    println!("contention: runs spread over {} contenders", winners.len());
}

fn four_workers_claiming_twenty_items_cover_each_item_once_per_interval() {
    const WORKERS: usize = 4;
    const ITEMS: usize = 20;
    const INTERVALS: u64 = 3;
    const INTERVAL_SECONDS: u64 = 3;
    let world = Real::new();
    let items: Vec<String> = (0..ITEMS).map(|i| format!("feed-{i:02}")).collect();
    // (interval, item) -> (worker, token) for every ticket granted.
    let claims = Arc::new(Mutex::new(Vec::<(u64, String, usize, u64)>::new()));
    let started = Instant::now();
    for _ in 0..INTERVALS {
        sleep_to_boundary(INTERVAL_SECONDS * 1000, 100);
        let threads: Vec<_> = (0..WORKERS)
            .map(|worker| {
                let (location, items, claims) =
                    (world.location.clone(), items.clone(), claims.clone());
                std::thread::spawn(move || {
                    let settings =
                        location.container_settings(&format!("w{worker}"), INTERVAL_SECONDS);
                    let mut instance = fresh();
                    let claimed = instance.claim(&settings, &items, 8).expect("claim succeeds");
                    assert!(claimed.stopped.is_none(), "{:?}", claimed.stopped);
                    for run in claimed.runs {
                        let details = instance.run_details(run);
                        let interval = details.past_due.due_at_ms / 1000 / INTERVAL_SECONDS;
                        let entry = (interval, details.lock, worker, details.fencing_token);
                        claims.lock().unwrap().push(entry);
                        std::thread::sleep(Duration::from_millis(10));
                        let finished = instance.run_complete(run, &Outcome::Success(String::new()));
                        assert!(finished.error.is_none(), "complete: {}", finished.text);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
    }
    let claims = claims.lock().unwrap();
    let mut per_interval: BTreeMap<u64, Vec<&String>> = BTreeMap::new();
    for (interval, item, _, _) in claims.iter() {
        per_interval.entry(*interval).or_default().push(item);
    }
    assert_eq!(per_interval.len() as u64, INTERVALS, "{per_interval:?}");
    for (interval, mut claimed) in per_interval {
        claimed.sort();
        let unique: BTreeSet<&String> = claimed.iter().copied().collect();
        assert_eq!(
            claimed.len(),
            unique.len(),
            "an item claimed twice in interval {interval}: {claimed:?}"
        );
        assert_eq!(unique.len(), ITEMS, "items missed in interval {interval}");
    }
    for item in &items {
        let tokens: Vec<u64> = claims.iter().filter(|c| &c.1 == item).map(|c| c.3).collect();
        assert_eq!(tokens, (1..=INTERVALS).collect::<Vec<_>>(), "tokens of {item}");
    }
    let by_worker: Vec<usize> =
        (0..WORKERS).map(|w| claims.iter().filter(|c| c.2 == w).count()).collect();
    println!(
        "claims: {WORKERS} workers x {ITEMS} items x {INTERVALS} intervals in {:.1?}: {} tickets, per worker {by_worker:?}",
        started.elapsed(),
        claims.len()
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        eight_contenders_over_fifty_ticks_with_crashes_never_double_run,
        four_workers_claiming_twenty_items_cover_each_item_once_per_interval,
    ]
}

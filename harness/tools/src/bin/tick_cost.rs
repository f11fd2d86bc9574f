//! What a scheduled job costs in storage requests, with and without the memory `guarded_tick`
//! keeps in key-value: replicas woken every minute (the templates' trigger) tick on one lock in
//! virtual time over the in-memory fake service (tests/support/tick_fleet.rs), a day to settle
//! and a day counted. Prints numbers, asserts only that it measured them. `scripts/bench` runs it.

#[allow(dead_code)]
#[path = "../../../../tests/support/fake_service/mod.rs"]
mod fake_service;
#[allow(dead_code)]
#[path = "../../../../tests/support/tick_fleet.rs"]
mod tick_fleet;

use tick_fleet::TickFleet;

/// Wed, 01 Jan 2025 00:00:00 UTC.
const START: u64 = 1_735_689_600_000;
const DAY: u64 = 86_400_000;
const MINUTE: u64 = 60_000;
/// A storage account's default request rate target (Azure's scalability targets).
const ACCOUNT_TARGET_PER_S: f64 = 20_000.0;

/// Replicas whose clocks are up to a few seconds off the service's.
fn skews(replicas: usize) -> Vec<i64> {
    (0..replicas).map(|i| (i as i64 % 5 - 2) * 1_500).collect()
}

/// What one job costs on `replicas` replicas over the counted day.
struct Day {
    requests: u64,
    runs: usize,
    /// Requests of the leader's tick at a due time, and of a follower's first tick at or after
    /// it (medians over the day's due times).
    leader: u64,
    follower: u64,
}

fn day(schedule: &str, zone: &str, replicas: usize, remember: bool) -> Day {
    let mut fleet = TickFleet::new(&skews(replicas), schedule, zone, None, remember, START);
    fleet.poll_until(START + DAY, MINUTE);
    let from = fleet.now_ms();
    let runs_before = fleet.runs.len();
    fleet.poll_until(START + 2 * DAY, MINUTE);
    let counted: Vec<_> = fleet.ticks.iter().filter(|t| t.at_ms >= from).collect();
    let mut leader: Vec<u64> =
        counted.iter().filter(|t| t.decision == "run").map(|t| t.requests).collect();
    // A follower's tick at a due time: one that found the run taken.
    let mut follower: Vec<u64> = counted
        .iter()
        .filter(|t| t.decision == "already-ran" || t.decision == "held-by-other")
        .map(|t| t.requests)
        .collect();
    let median = |v: &mut Vec<u64>| {
        v.sort();
        v.get(v.len() / 2).copied()
    };
    let runs = fleet.runs.len() - runs_before;
    let (Some(leader), Some(follower)) = (median(&mut leader), median(&mut follower)) else {
        panic!("{schedule} on {replicas} replicas: no run or no follower at a due time to count");
    };
    Day { requests: fleet.requests_since(from), runs, leader, follower }
}

fn main() {
    println!(
        "traffic-cop tick cost: replicas woken every minute, one counted day in virtual time\n"
    );
    println!("| schedule | replicas | runs | requests/day without memory | with memory (refresh 600 s) |");
    println!("|---|---|---|---|---|");
    let schedules = [
        ("daily at 02:00, Europe/Berlin", "0 0 2 * * *", "Europe/Berlin"),
        ("every five minutes", "0 */5 * * * *", "UTC"),
    ];
    let mut fleet_row = None;
    for (name, schedule, zone) in schedules {
        for replicas in [3, 10] {
            let (before, after) =
                (day(schedule, zone, replicas, false), day(schedule, zone, replicas, true));
            assert!(before.runs > 0 && before.runs == after.runs, "{name}: runs differ");
            println!(
                "| {name} | {replicas} | {} | {} | {} |",
                after.runs, before.requests, after.requests
            );
            if replicas == 3 {
                println!(
                    "|  | at a due time: leader | | {} requests | {} requests |",
                    before.leader, after.leader
                );
                println!(
                    "|  | at a due time: follower | | {} | {} |",
                    before.follower, after.follower
                );
            }
            if replicas == 10 && schedule == "0 0 2 * * *" {
                fleet_row = Some((before.requests, after.requests));
            }
        }
    }
    let (before, after) = fleet_row.expect("the daily job on ten replicas");
    let jobs = 10_000.0;
    let per_s = |per_day: u64| jobs * per_day as f64 / 86_400.0;
    println!("\nA fleet of 10,000 daily jobs on 10 replicas each, on one storage account:");
    for (what, per_day) in [("without memory", before), ("with memory", after)] {
        let rate = per_s(per_day);
        println!(
            "- {what}: {rate:.0} requests a second, {:.1} % of the account's {} a second",
            rate / ACCOUNT_TARGET_PER_S * 100.0,
            ACCOUNT_TARGET_PER_S as u64
        );
    }
}

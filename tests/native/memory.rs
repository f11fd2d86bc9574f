//! `guarded_tick`'s memory on a fleet in virtual time (support/tick_fleet.rs): what it pays per
//! due time, how soon it sees the operator's verbs, how a wrong memory is outlived, and that
//! without a store every tick asks as `guarded_invoke` does.

use crate::support::tick_fleet::TickFleet;
use traffic_cop::guard;

/// Wed, 01 Jan 2025 00:00:00 UTC: a whole hour, so every grid below has a due time there.
const START: u64 = 1_735_689_600_000;
const POLL: u64 = 2_000;
/// Three replicas: on time, 2 s ahead, 3 s behind the service's clock.
const SKEWS: [i64; 3] = [0, 2_000, -3_000];

/// Due times strictly between `from` and `to` on a grid of `every` ms.
fn grid(from: u64, to: u64, every: u64) -> Vec<u64> {
    ((from / every + 1)..).map(|k| k * every).take_while(|due| *due < to).collect()
}

/// Each of `dues` ran exactly once, and nothing else ran.
fn each_ran_once(fleet: &TickFleet, dues: &[u64], what: &str) {
    for due in dues {
        let ran = fleet.runs.get(due).map_or(0, Vec::len);
        assert_eq!(ran, 1, "{what}: due time {due} ran {ran} times: {:?}", fleet.runs);
    }
}

#[test]
fn a_fleet_pays_per_due_time_and_runs_each_due_time_once() {
    const EVERY: u64 = 30_000;
    let mut paid = Vec::new();
    for remember in [true, false] {
        let mut fleet = TickFleet::new(&SKEWS, "@every 30s", "UTC", None, remember, START + 1_000);
        fleet.poll_until(START + 2 * EVERY, POLL);
        let (from, to) = (fleet.now_ms(), START + 22 * EVERY);
        fleet.poll_until(to, POLL);
        let dues = grid(from, to, EVERY);
        each_ran_once(&fleet, &dues, if remember { "with memory" } else { "without" });
        paid.push(fleet.requests_since(from) as f64 / dues.len() as f64);
    }
    let (with, without) = (paid[0], paid[1]);
    println!("requests per due time, 3 replicas polled every 2 s: {with:.1} with memory, {without:.1} without");
    // A follower asks at most twice per due time (a tick in the second before the early
    // tolerance, and the first within it); the leader's run costs four more (acquire, record,
    // and complete's write and release).
    assert!(with >= 3.0 + 4.0, "each replica asks at each due time: {with}");
    assert!(with <= 10.0, "{with} requests per due time with memory");
    assert!(without >= 45.0, "every tick asks without memory: {without}");
}

#[test]
fn run_now_pause_and_resume_are_seen_within_the_refresh_period() {
    const REFRESH: u64 = 60_000;
    let mut fleet = TickFleet::new(&SKEWS, "0 0 2 * * *", "Europe/Berlin", Some("60"), true, START);
    fleet.poll_until(START + 2 * REFRESH, POLL);
    let bound = REFRESH + POLL + 1_000;
    let lock = fleet.lock.clone();
    // Each replica asks once per refresh period begun, and a run costs four requests more
    // (acquire, record, and complete's write and release) and its replica one look more (a
    // manual run leaves the due time owed). Without memory 90 s costs 135.
    let most = |seconds: u64| 3 * (seconds * 1000 / REFRESH + 1) + 5;

    let asked = fleet.now_ms();
    guard::run_now(&mut fleet.client(0), &lock, "alice").unwrap();
    fleet.poll_until(asked + 90_000, POLL);
    let ran = fleet.manual_runs.first().map(|(at, _)| *at).expect("the manual run");
    assert!(ran - asked <= bound, "run-now seen after {} ms", ran - asked);
    let paid = fleet.requests_since(asked);
    assert!(paid <= most(90), "run-now: {paid} requests in 90 s");

    let paused = fleet.now_ms();
    let drain = std::time::Duration::ZERO;
    guard::pause(&mut fleet.client(0), &lock, "alice", "deploy", drain).unwrap();
    fleet.poll_until(paused + 90_000, POLL);
    let seen = fleet.first("paused", paused).expect("a paused skip").at_ms;
    assert!(seen - paused <= bound, "pause seen after {} ms", seen - paused);
    let paid = fleet.requests_since(paused);
    assert!(paid <= most(90), "pause: {paid} requests in 90 s");

    let resumed = fleet.now_ms();
    guard::resume(&mut fleet.client(0), &lock, "alice").unwrap();
    fleet.poll_until(resumed + 90_000, POLL);
    let seen = fleet.first("not-due", resumed).expect("a look after the resume").at_ms;
    assert!(seen - resumed <= bound, "resume seen after {} ms", seen - resumed);
    let paid = fleet.requests_since(resumed);
    assert!(paid <= most(90), "resume: {paid} requests in 90 s");
    assert_eq!(fleet.manual_runs.len(), 1, "{:?}", fleet.manual_runs);
}

/// A memory's fields, as `guarded_tick` writes them: format, subject, looked at, clock offset,
/// next due time, paused.
const LOOKED_AT: usize = 2;
const OFFSET: usize = 3;
const NEXT_DUE: usize = 4;
const PAUSED: usize = 5;

/// A memory with one field rewritten, as a bug, a bad clock or an old deployment might leave it.
fn forged(kept: &str, field: usize, edit: impl Fn(&str) -> String) -> String {
    let mut fields: Vec<String> = kept.split(' ').map(str::to_string).collect();
    fields[field] = edit(&fields[field]);
    fields.join(" ")
}

/// A rewrite of one field's text.
type Edit = Box<dyn Fn(&str) -> String>;

fn plus(by: i64) -> impl Fn(&str) -> String {
    move |value| (value.parse::<i64>().unwrap() + by).to_string()
}

#[test]
fn a_wrong_memory_delays_the_next_run_by_at_most_the_refresh_period_and_never_doubles_it() {
    const EVERY: u64 = 300_000;
    const REFRESH: u64 = 600_000;
    // Learned under another schedule: kept under another key, and ignored if found.
    let old_schedule = {
        let mut fleet = TickFleet::new(&SKEWS, "@every 10m", "UTC", None, true, START + 1_000);
        fleet.poll_until(START + 2 * EVERY, POLL);
        fleet.kept[0].clone().expect("a memory")
    };
    let hour = 3_600_000i64;
    let cases: [(&str, usize, Edit); 5] = [
        ("a last run a day ahead", NEXT_DUE, Box::new(|_| (START + 86_400_000).to_string())),
        ("a clock offset of +1 h", OFFSET, Box::new(plus(hour))),
        ("a clock offset of -1 h", OFFSET, Box::new(plus(-hour))),
        ("an entry from the old schedule", 0, Box::new(str::to_string)),
        ("an entry of a paused replica", PAUSED, Box::new(|_| "1".to_string())),
    ];
    for (what, field, edit) in cases {
        let mut fleet = TickFleet::new(&SKEWS, "@every 5m", "UTC", None, true, START + 1_000);
        fleet.poll_until(START + EVERY + 30_000, POLL);
        let from = fleet.now_ms();
        let kept = match what {
            "an entry from the old schedule" => old_schedule.clone(),
            _ => forged(fleet.kept[0].as_deref().expect("a memory"), field, &edit),
        };
        let looked_at: u64 = kept.split(' ').nth(LOOKED_AT).unwrap().parse().unwrap();
        fleet.kept = vec![Some(kept); SKEWS.len()];
        let to = START + 6 * EVERY;
        fleet.poll_until(to, POLL);
        let first_run = fleet.first("run", from).map(|t| t.at_ms).expect("a run");
        let next_due = (from / EVERY + 1) * EVERY;
        let bound = next_due.max(looked_at + REFRESH) + POLL + 1_000;
        assert!(first_run <= bound, "{what}: ran at {first_run}, bound {bound}");
        // Every due time from the first after the bound ran once; none ran twice.
        each_ran_once(&fleet, &grid(bound, to, EVERY), what);
        assert!(fleet.runs.values().all(|r| r.len() == 1), "{what}: {:?}", fleet.runs);
    }
}

#[test]
fn without_a_store_every_tick_asks_once_as_without_memory() {
    let mut fleet = TickFleet::new(&SKEWS, "@every 1m", "UTC", None, false, START + 1_000);
    fleet.poll_until(START + 10 * 60_000, POLL);
    let skips: Vec<_> = fleet.ticks.iter().filter(|t| t.decision != "run").collect();
    assert!(skips.len() > 800, "{} skips", skips.len());
    assert!(skips.iter().all(|t| t.requests == 1), "a skip without a store asks once");
    assert!(fleet.ticks.iter().all(|t| t.decision != "remembered"));
}

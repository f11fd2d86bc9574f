//! Paying per due time on real Spin: three replicas of the async cron wrapper, each with its own
//! `--state-dir` (so its own key-value store), a job due every 15 s that the trigger wakes every
//! 3 s, behind the counting proxy. What each tick's look taught is kept in key-value, so the
//! ticks that cannot be due send nothing; without it every tick asks (about 19 requests per due
//! time here), which the count below refuses.

use super::wrapped_app::Wrapping;
use super::wrapped_fleet::{calls_by_due, Fleet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::runner::Test;

const DUE_EVERY_S: u64 = 15;
/// Due times counted over, once the fleet has settled.
const COUNTED: u64 = 3;

fn unix_s() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Sleeps until `phase` seconds after a due time.
fn sleep_to_phase(phase: f64) {
    let into = unix_s() % DUE_EVERY_S as f64;
    let wait = (phase - into).rem_euclid(DUE_EVERY_S as f64);
    std::thread::sleep(Duration::from_secs_f64(wait));
}

fn a_fleet_on_real_spin_pays_per_due_time_not_per_poll() {
    let handler = r#"HANDLER_MODE = "ok", HANDLER_MS = "200""#;
    let schedule = [("schedule", "*/15 * * * * *")];
    let fleet = Fleet::start("tick-cost", Wrapping::async_on_spin_4(), 3, handler, &schedule);
    let settled = fleet
        .wait(Duration::from_secs(60), |f| f.decisions().iter().filter(|d| d.run).count() >= 1);
    assert!(settled, "no run in a minute: {}", fleet.said());
    // Counted from 8 s after a due time (its run is over) over whole periods.
    sleep_to_phase(8.0);
    let (from_s, before) = (unix_s(), fleet.proxy.requests());
    std::thread::sleep(Duration::from_secs(COUNTED * DUE_EVERY_S));
    let paid = fleet.proxy.requests() - before;
    let said = fleet.said();
    let (calls, decisions) = (fleet.calls(), fleet.decisions());
    fleet.stop();
    let per_due = paid as f64 / COUNTED as f64;
    eprintln!("measured: {per_due:.1} storage requests per due time (3 replicas, due every 15 s, woken every 3 s)");
    // Each due time in the window ran once.
    let by_due = calls_by_due(&calls);
    let first = (from_s as u64).div_ceil(DUE_EVERY_S) * DUE_EVERY_S;
    for due in (0..COUNTED).map(|k| first + k * DUE_EVERY_S) {
        assert_eq!(by_due.get(&due), Some(&1), "due time {due}: {by_due:?}\n{said}");
    }
    let remembered = decisions.iter().filter(|d| d.detail.contains("not asking storage")).count();
    assert!(remembered > 0, "no tick skipped without asking\n{said}");
    // A replica asks at most twice per due time (a tick just before the due time's early
    // tolerance, the first within it), the leader's run costs four requests more (acquire,
    // record, complete's write and release): 10; one more for a tick a loaded host delays.
    assert!(per_due <= 11.0, "{per_due} requests per due time\n{said}");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![a_fleet_on_real_spin_pays_per_due_time_not_per_poll]
}

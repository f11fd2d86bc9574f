//! A schedule changed under a lock that has run, on real Spin 4.0.2 with trigger-cron 0.5.0 in
//! real time: a replica runs every 5 s; it is replaced by one whose schedule (daily, UTC) was
//! last due two seconds before the last run started. The newer schedule is in force at its
//! first tick, and that due time is covered: its ticks skip with `already ran`, naming the
//! covering run, and nothing runs (a day's job at a time nobody asked for).

use crate::story::{self, Tick};
use std::time::Duration;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{
    assert_manifest_built, cron_line, find_spin, manifest_copy, Launch,
};

fn a_new_schedules_due_time_before_the_last_start_does_not_run_on_real_spin() {
    let spin = require("real spin (schedule change)", find_spin());
    let data = require("real spin (schedule change, cron 0.5.0)", cron_line("0.5.0"));
    assert_manifest_built();
    let dir = story::story_dir("schedule-change");
    let launch = Launch {
        spin,
        data_dir: Some(data),
        // The trigger polls every second; the guard's schedule decides.
        manifest: manifest_copy(&dir.join("app"), "* * * * * *"),
        component: None,
        lifetime: Duration::from_secs(90),
        env: Vec::new(),
    };
    let container = format!("spinschedule{}", std::process::id());
    let every_5 = [("schedule", "*/5 * * * * *".to_string())];
    let mut before = story::start_nodes_with(&launch, &dir, &container, "every5", 1, &every_5);
    let ran = |t: &[Tick]| t.iter().any(|t| t.token.is_some());
    let seen = story::wait_for_ticks(&before, Duration::from_secs(30), ran);
    assert!(ran(&seen), "no run every 5 s:\n{}", story::dump(&seen));
    before[0].replica.kill();
    // The last run's start, read after the kill: no run can start after it.
    let entry = story::lock_entry(&container).expect("the lock");
    let start = entry.last_start_ms.expect("a start") / 1000;
    // Daily at two seconds before that start (UTC): its latest due time came before the start.
    let covered = start - 2;
    let daily = format!("{} {} {} * * *", covered % 60, covered / 60 % 60, covered / 3600 % 24);

    let changed = [("schedule", daily.clone()), ("time_zone", "UTC".to_string())];
    let after = story::start_nodes_with(&launch, &dir, &container, "daily", 1, &changed);
    let decided =
        |t: &[Tick]| t.iter().any(|t| t.detail.contains("already ran") || t.token.is_some());
    let seen = story::wait_for_ticks(&after, Duration::from_secs(30), decided);
    let all = format!("schedule {daily}, last start {start}:\n{}", story::dump(&seen));
    assert!(seen.iter().all(|t| t.token.is_none()), "nothing may run: {all}");
    let skip = seen
        .iter()
        .find(|t| t.detail.contains("already ran"))
        .unwrap_or_else(|| panic!("no tick came to the new schedule's decision in time: {all}"));
    assert!(
        skip.detail.contains(&format!("already ran for the due time {}", story::iso(covered))),
        "{all}"
    );
    assert!(
        skip.detail.contains(&format!("the run every5-0 started at {}", story::iso(start))),
        "{all}"
    );
    assert!(seen.iter().all(|t| !t.detail.contains("deferring")), "nothing defers: {all}");
    println!(
        "schedule change on real Spin: `{daily}` skipped its due time {} (covered by the run \
         at {})",
        story::iso(covered),
        story::iso(start)
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_new_schedules_due_time_before_the_last_start_does_not_run_on_real_spin
    ]
}

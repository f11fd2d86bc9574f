//! The schedule monitor on real Spin: three cron replicas (trigger-cron 0.5.0, the spin.toml
//! users run with its schedule shortened to every 3 s) run on schedule; then every replica is
//! stopped through several due times, and three are started again. The first due time after
//! the restart must have exactly one run, and that run must report as missed exactly the due
//! times the replicas' own logs show passing without a run.

use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

use crate::story::{self, Tick};
use std::time::Duration;
use traffic_cop_testbed::spin::{assert_built, cron_line, find_spin, manifest_copy, Launch};

const INTERVAL: u64 = 3;

fn after_all_replicas_were_down_one_catch_up_run_reports_the_missed_due_times() {
    let spin = require("real spin (catch-up)", find_spin());
    let data = require("real spin (catch-up, cron 0.5.0)", cron_line("0.5.0"));
    assert_built();
    let dir = story::story_dir("catchup");
    let launch = Launch {
        spin,
        data_dir: Some(data),
        manifest: manifest_copy(&dir.join("app"), "*/3 * * * * *"),
        component: None,
        lifetime: Duration::from_secs(180),
        env: Vec::new(),
    };
    let container = format!("spincatchup{}", std::process::id());
    let mut before = story::start_nodes(&launch, &dir, &container, "before", INTERVAL, 0);
    let runs = |ticks: &[Tick]| ticks.iter().filter(|t| t.token.is_some()).count();
    let seen = story::wait_for_ticks(&before, Duration::from_secs(40), |t| runs(t) >= 2);
    assert!(runs(&seen) >= 2, "no runs on schedule:\n{}", story::dump(&seen));
    before.iter_mut().for_each(|node| node.replica.kill());
    let seen = story::logged_ticks(&before);
    let last = seen.iter().rfind(|t| t.token.is_some()).unwrap().clone();

    // Down through at least three due times, then back.
    std::thread::sleep(Duration::from_secs(3 * INTERVAL + 1));
    let after = story::start_nodes(&launch, &dir, &container, "after", INTERVAL, 0);
    let back = story::wait_for_ticks(&after, Duration::from_secs(30), |t| runs(t) >= 1);
    let all = format!("{}\n--- after the restart ---\n{}", story::dump(&seen), story::dump(&back));
    let first = back.iter().find(|t| t.token.is_some()).unwrap_or_else(|| panic!("{all}"));
    let at_first: Vec<&Tick> = back.iter().filter(|t| t.at == first.at).collect();
    assert_eq!(at_first.iter().filter(|t| t.token.is_some()).count(), 1, "{all}");
    assert!(back.iter().all(|t| t.at >= first.at || t.token.is_none()), "{all}");
    // What the logs show: the due times between the last run before and this one.
    let missed = (first.at - last.at) / INTERVAL - 1;
    assert!(missed >= 3, "the replicas were down through at least three due times\n{all}");
    assert_eq!(first.token, Some(last.token.unwrap() + 1), "{all}");
    let log = after[first.node].replica.log("cron-job");
    let line = log
        .lines()
        .find(|l| traffic_cop_testbed::tick_line(l).is_some_and(|(at, _)| at == first.at));
    assert!(
        line.is_some_and(|l| l.contains(&format!(" (caught up {missed} missed due times): "))),
        "the catch-up run must report {missed} missed due times: {line:?}\n{all}"
    );
    for t in at_first.iter().filter(|t| t.token.is_none()) {
        // A follower that looked before the winner recorded its run lost the acquire race and
        // cannot name the holder yet.
        let winner = format!("held by {}", first.holder);
        let ok = ["already ran", &winner, "held by another replica whose run is not recorded yet"];
        assert!(ok.iter().any(|o| t.detail.contains(o)), "{t:?}\n{all}");
    }
    println!(
        "catch-up on real Spin: last run at {}, back at {}, {missed} missed",
        last.at, first.at
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        after_all_replicas_were_down_one_catch_up_run_reports_the_missed_due_times,
    ]
}

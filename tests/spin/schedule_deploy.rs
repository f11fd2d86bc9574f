//! A rolling deploy of a new schedule on real Spin 4.0.2 with trigger-cron 0.5.0, in real time:
//! two replicas due every 4 s, then two more due every 6 s on the same lock, then the old ones
//! stopped one by one. The newest schedule wins at its first tick: no due time runs twice, no
//! due time of the old schedule runs after a replica with the new one has run, the old replicas
//! say to which schedule they defer and until when, and the new schedule's due times run from
//! the first one after its replicas started. (Rollbacks, which wait out the three minutes a gone
//! schedule stays alive, are judged on virtual time: tests/native/schedule_deploy.rs.)

use crate::spin::decisions::{decisions, Decision};
use crate::story;
use std::collections::BTreeMap;
use std::time::Duration;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{
    assert_manifest_built, cron_line, find_spin, manifest_copy, Launch,
};
use traffic_cop_testbed::unix_secs;

const OLD: u64 = 4;
const NEW: u64 = 6;

fn a_rolling_deploy_hands_over_to_the_new_schedule_at_its_first_tick_on_real_spin() {
    let spin = require("real spin (schedule deploy)", find_spin());
    let data = require("real spin (schedule deploy, cron 0.5.0)", cron_line("0.5.0"));
    assert_manifest_built();
    let dir = story::story_dir("schedule-deploy");
    let launch = Launch {
        spin,
        data_dir: Some(data),
        // The trigger polls every second; the guard's schedule decides.
        manifest: manifest_copy(&dir.join("app"), "* * * * * *"),
        component: None,
        lifetime: Duration::from_secs(150),
        env: Vec::new(),
    };
    let container = format!("spindeploy{}", std::process::id());
    let every = |s: u64| [("schedule", format!("*/{s} * * * * *"))];
    let mut old = story::start_nodes_with(&launch, &dir, &container, "old", 2, &every(OLD));
    let ran = |nodes: &[story::Node]| nodes.iter().flat_map(decisions).filter(|d| d.run).count();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while ran(&old) < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(ran(&old) >= 2, "the old schedule did not run");
    let new_from = unix_secs();
    let mut new = story::start_nodes_with(&launch, &dir, &container, "new", 2, &every(NEW));
    let new_ready = unix_secs();
    std::thread::sleep(Duration::from_secs(3 * NEW));
    // The deploy goes on: the old replicas are stopped one by one.
    old[0].replica.kill();
    std::thread::sleep(Duration::from_secs(2 * NEW));
    old[1].replica.kill();
    let old_seen: Vec<Decision> = old.iter().flat_map(decisions).collect();
    std::thread::sleep(Duration::from_secs(2 * NEW));
    let new_until = unix_secs();
    let new_seen: Vec<Decision> = new.iter().flat_map(decisions).collect();
    new.iter_mut().for_each(|node| node.replica.kill());

    let all: Vec<&Decision> = old_seen.iter().chain(&new_seen).collect();
    let dump = format!("{all:#?}");
    let mut by_due: BTreeMap<u64, &Decision> = BTreeMap::new();
    for run in all.iter().filter(|d| d.run) {
        let due = run.due_s.expect("a run names its due time");
        if let Some(first) = by_due.insert(due, run) {
            panic!("due time {due} ran twice: {first:?} and {run:?}\n{dump}");
        }
    }
    let first_new = new_seen.iter().filter_map(|d| d.token).min().expect("the new schedule ran");
    let old_tokens: Vec<u64> = old_seen.iter().filter_map(|d| d.token).collect();
    assert!(
        old_tokens.iter().all(|token| *token < first_new),
        "an old due time ran after the new schedule's first run (token {first_new}): {dump}"
    );
    // Every due time of the new schedule from the first after its replicas were up.
    let first_due = (new_ready / NEW + 1) * NEW;
    let owed: Vec<u64> = (first_due..new_until - 1).filter(|s| s % NEW == 0).collect();
    let new_runs: Vec<u64> = new_seen.iter().filter(|d| d.run).filter_map(|d| d.due_s).collect();
    for due in &owed {
        assert!(new_runs.contains(due), "the new schedule's due time {due} did not run: {dump}");
    }
    assert!(new_runs.iter().all(|due| due % NEW == 0 && *due >= new_from - NEW), "{dump}");
    // The old replicas said to which schedule they deferred, and until when.
    let deferred: Vec<&Decision> =
        old_seen.iter().filter(|d| d.reason.as_deref() == Some("schedule-conflict")).collect();
    assert!(deferred.len() >= 2, "the old replicas never deferred: {dump}");
    let logs: Vec<String> = old.iter().map(|node| node.replica.log("cron-job")).collect();
    for line in logs.iter().flat_map(|log| log.lines()) {
        if line.contains("deferring") {
            assert!(
                line.contains(&format!(
                    "deferring to the newer schedule cron \"*/{NEW} * * * * *\""
                )) && line.contains(&format!("this replica's cron \"*/{OLD} * * * * *\""))
                    && line.contains("takes over at 20"),
                "{line}"
            );
        }
    }
    eprintln!(
        "measured, a rolling deploy on real Spin: {} old runs, {} new runs, {} deferrals, the \
         first new run token {first_new}",
        old_tokens.len(),
        new_runs.len(),
        deferred.len()
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_rolling_deploy_hands_over_to_the_new_schedule_at_its_first_tick_on_real_spin
    ]
}

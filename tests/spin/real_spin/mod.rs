//! The real Spin CLI on the project's own spin.toml against Azurite: three replicas of the
//! HTTP component under Spin 4.0.2 and under Spin 3.6.3 (SpinKube's runtime up to shim
//! v0.24.0), and three cron-triggered replicas under each trigger-cron plugin line (0.3.0 and
//! 0.5.0 with Spin 4.0.2, 0.3.0 with Spin 3.6.3), each with the running replica SIGKILLed
//! mid-work and the takeover.
//! Every replica talks to Azurite through a counting proxy of its own, which is how the round
//! trips per tick below are measured.
//!
//! Spin is found from `SPIN`, then PATH, then `target/spin/<line>/bin/spin`; the plugin lines
//! from `target/spin/<line>/data` (`TRAFFIC_COP_SPIN_HOME` replaces `target/spin`). Without
//! them each test says so in one line and returns; with `CI=true` it fails instead.

use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

mod cron;
mod http;
mod window;

use crate::story::{self, Tick};
use std::path::PathBuf;
use std::time::Instant;
use traffic_cop_testbed::spin::{
    assert_built, cron_line, cron_line_in, find_spin, spin_3, CRON_LINES, SPIN_3,
};

fn http_replicas_on_real_spin_run_once_per_interval_and_take_over_after_a_kill() {
    let spin = require("real spin (http)", find_spin());
    http_story(spin, "spin4", "http-job");
}

/// The HTTP story under Spin 3.6.3: the runtime SpinKube's shim embeds up to v0.24.0, where a
/// Kubernetes CronJob is the scheduler (the shim has no cron trigger).
fn http_replicas_on_spin_3_6_3_run_once_per_interval_and_take_over_after_a_kill() {
    let (spin, _) = require("real spin 3.6.3 (http)", spin_3());
    http_story(spin, "spin3", &format!("http-job, Spin {SPIN_3}"));
}

fn http_story(spin: PathBuf, label: &str, what: &str) {
    assert_built();
    let started = Instant::now();
    let story = http::run(spin, label);
    let takeover = story::check_story(&story.ticks, &story.killed, 3);
    assert!(
        story.overlap.contains("\"decision\":\"skip\"")
            && story.overlap.contains("the previous tick of this replica is still working"),
        "a second tick on the working replica: {}",
        story.overlap
    );
    http::check_status(&story);
    report(what, &story.ticks, &takeover, started);
}

fn cron_replicas_on_real_spin_under_both_plugin_lines() {
    let spin = require("real spin (cron)", find_spin());
    let mut lines = Vec::new();
    for line in CRON_LINES {
        let data = require(&format!("real spin (cron {line})"), cron_line(line));
        lines.push((line, data));
    }
    assert_built();
    let started = Instant::now();
    // Both lines at once: their replicas mostly wait for ticks, and each story's wall time
    // is dominated by the 15 s lease of the killed run.
    let stories: Vec<_> = lines
        .into_iter()
        .map(|(line, data)| {
            let spin = spin.clone();
            std::thread::spawn(move || cron::run(line, spin, data, "spin4"))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|story| story.join().expect("cron story"))
        .collect();
    for story in &stories {
        let takeover = cron::check(story);
        report(&format!("cron-job, trigger-cron {}", story.line), &story.ticks, &takeover, started);
    }
}

/// trigger-cron 0.3.0 (`fermyon:spin-cron@2.0.0`) under the Spin 3.6.3 CLI.
fn cron_replicas_on_spin_3_6_3_with_trigger_cron_0_3_0() {
    let (spin, data) = require("real spin 3.6.3 (cron 0.3.0)", spin_3());
    require("real spin 3.6.3 (cron 0.3.0)", cron_line_in(&data, "0.3.0"));
    assert_built();
    let started = Instant::now();
    let story = cron::run("0.3.0", spin, data, "spin3");
    let takeover = cron::check(&story);
    let what = format!("cron-job, trigger-cron 0.3.0, Spin {SPIN_3}");
    report(&what, &story.ticks, &takeover, started);
}

/// Issue 21's story: a cron schedule in a zone whose offset is not a whole hour, under Spin
/// 4.0.2 and trigger-cron 0.5.0, with a SIGKILL in the window.
fn a_kathmandu_schedule_on_real_spin_runs_once_per_due_time_in_its_window_only() {
    let spin = require("real spin (cron)", find_spin());
    let data = require("real spin (cron 0.5.0)", cron_line("0.5.0"));
    assert_built();
    let started = Instant::now();
    let summary = window::kathmandu_window_with_a_takeover(spin, data);
    use std::io::Write;
    let took = started.elapsed().as_secs_f64();
    let _ = writeln!(std::io::stderr(), "measured: {summary}; story took {took:.1} s");
}

/// Pure: the window's expression names the minute and the hour it starts at, on Kathmandu's
/// wall clock.
fn the_window_expression_names_its_minute_and_hour() {
    assert_eq!(window::window_expression(3 * 3600 + 10 * 60), "*/10 10 3 * * *");
    assert_eq!(window::window_expression(86_400 + 23 * 3600 + 59 * 60), "*/10 59 23 * * *");
}

/// The checker the stories rely on must be able to fail: fed a story with a second run in one
/// tick, a takeover before the lease could expire, a skip that does not name the killed holder,
/// or a tick held by the last runner without its run still working, it must refuse; fed the
/// good story (a run that outlasts the interval included), it must accept.
fn the_story_checker_refuses_what_the_guard_forbids() {
    let tick = |at: u64, node: usize, token: Option<u64>, took_over: bool, detail: &str| Tick {
        at,
        node,
        holder: format!("r-{node}"),
        token,
        took_over,
        detail: detail.to_string(),
        wall_ms: None,
        trips: None,
    };
    let killed = story::Killed { node: 0, holder: "r-0".into(), token: 2, start_ms: 3_000, at: 3 };
    let good = vec![
        tick(0, 0, Some(1), false, "ran"),
        tick(0, 1, None, false, "already ran this interval (r-0)"),
        tick(3, 1, None, false, "held by r-0"),
        tick(6, 1, None, false, "held by r-0"),
        tick(6, 2, None, false, "held by r-0"),
        tick(18, 2, Some(3), true, "ran"),
        tick(18, 1, None, false, "held by r-2"),
        // The takeover's run outlasts the interval: the next tick finds it still working.
        tick(21, 1, None, false, "held by r-2, running since 1970-01-01T00:00:18Z"),
        tick(21, 2, None, false, "the previous tick of this replica is still working (r-2)"),
    ];
    assert_eq!(story::check_story(&good, &killed, 3).holder, "r-2");
    let mut twice = good.clone();
    twice[1] = tick(0, 1, Some(2), false, "ran");
    let mut early = good.clone();
    early[5].at = 9;
    early[6].at = 9;
    let mut silent = good.clone();
    silent[3] = tick(6, 1, None, false, "already ran this interval (r-1)");
    // Held by the last runner, but not by its run: a lost tick.
    let mut lost = good.clone();
    lost[7] = tick(21, 1, None, false, "held by r-2");
    for bad in [twice, early, silent, lost] {
        let refused = std::panic::catch_unwind(|| story::check_story(&bad, &killed, 3));
        assert!(refused.is_err(), "accepted:\n{}", story::dump(&bad));
    }
}

/// The measured numbers, for the README and the closing note. Written straight to stderr so
/// that they show in CI logs (the harness swallows println! of a passing test).
fn report(what: &str, ticks: &[Tick], takeover: &Tick, started: Instant) {
    let stats = |values: Vec<u64>| -> String {
        let mut values = values;
        values.sort_unstable();
        match values.len() {
            0 => "none measured".into(),
            n => format!(
                "median {} (min {}, max {}, n={n})",
                values[n / 2],
                values[0],
                values[n - 1]
            ),
        }
    };
    let pick = |leader: bool, f: fn(&Tick) -> Option<u64>| -> Vec<u64> {
        ticks.iter().filter(|t| t.token.is_some() == leader).filter_map(f).collect()
    };
    let mut out = String::new();
    let mut line = |text: String| out.push_str(&(text + "\n"));
    line(format!("measured, {what}:"));
    line(format!("  round trips per follower tick  {}", stats(pick(false, |t| t.trips))));
    line(format!("  round trips per leader run     {}", stats(pick(true, |t| t.trips))));
    line(format!("  follower tick wall ms          {}", stats(pick(false, |t| t.wall_ms))));
    line(format!("  leader run wall ms (with work) {}", stats(pick(true, |t| t.wall_ms))));
    line(format!(
        "  takeover by {} at tick {} with token {:?}; story took {:.1} s",
        takeover.holder,
        takeover.at,
        takeover.token,
        started.elapsed().as_secs_f64()
    ));
    use std::io::Write;
    let _ = std::io::stderr().write_all(out.as_bytes());
    let trips = pick(false, |t| t.trips);
    assert!(!trips.is_empty(), "{what}: no follower tick could be measured");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_kathmandu_schedule_on_real_spin_runs_once_per_due_time_in_its_window_only,
        http_replicas_on_real_spin_run_once_per_interval_and_take_over_after_a_kill,
        http_replicas_on_spin_3_6_3_run_once_per_interval_and_take_over_after_a_kill,
        cron_replicas_on_real_spin_under_both_plugin_lines,
        cron_replicas_on_spin_3_6_3_with_trigger_cron_0_3_0,
        the_window_expression_names_its_minute_and_hour,
        the_story_checker_refuses_what_the_guard_forbids,
    ]
}

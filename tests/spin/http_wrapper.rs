//! The HTTP wrapper on real Spin 4.0.2: a plain WASI 0.3 HTTP handler (harness/cron-handler/http,
//! no traffic-cop call; it prints a line for every call) made a guarded singleton by spin.toml
//! alone, the wrapper on the `/run` route and the handler as its `wasi:http/handler`
//! dependency (`{ component = "job" }`). A scheduler calls `/run` on every replica at each due
//! time, as a Kubernetes CronJob's `curl` would. Three replicas run the handler once per due
//! time, answer a skip 200, and take over after the holder is SIGKILLed; `/hello`, routed to the
//! job itself, passes through unguarded; the board and `/metrics` (the app's `http-job` beside
//! the wrapper) agree with the lock blob as the Azure SDK for Python reads it; the job is given
//! its run's fencing token in a header, never the one the caller forged. A handler that
//! answers 500 is recorded as a failure and the caller gets the 500; one that traps is taken
//! over as abandoned.
//!
//! The same stories for the one-line form, `#[traffic_cop_guarded::guarded]` on a spin-sdk
//! WASI 0.2 handler (harness/cron-handler/guarded), where no wrapper can serve: the kill story
//! on Spin 3.6.3 (the line SpinKube's shims embed), the outcomes on Spin 4.0.2.

use super::wrapped_app::{Wrapping, EVERY_SECONDS, LEASE_SECONDS};
use super::wrapped_board::{check_board, recorded_outcomes};
use super::wrapped_fleet::{scheduler_body, Answer, Fleet};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{find_spin, http, spin_3};

/// The scheduler's answers that carry the wrapper's decision (skips) or the handler's answer.
fn skipped(answer: &Answer) -> bool {
    let Ok((_, body)) = &answer.reply else { return false };
    serde_json::from_str::<serde_json::Value>(body).is_ok_and(|json| json["decision"] == "skip")
}

fn http_wrapped_replicas_run_once_per_due_time_take_over_after_a_kill_and_show_the_board() {
    kill_story("http-wrapper-kill", Wrapping::http_on_spin_4());
}

/// The one-line form where no wrapper can serve (WASI 0.2, the Spin SpinKube's shims embed).
fn guarded_http_replicas_on_spin_3_6_3_run_once_per_due_time_and_take_over_after_a_kill() {
    let (spin, _) = require("real spin 3.6.3 (#[guarded])", spin_3());
    kill_story("guarded-http-kill", Wrapping::guarded_on(spin));
}

/// The same in Python: a componentize-py handler under `@guarded` (guests/http-python).
fn guarded_python_replicas_on_spin_3_6_3_run_once_per_due_time_and_take_over_after_a_kill() {
    let (spin, _) = require("real spin 3.6.3 (@guarded)", spin_3());
    kill_story("guarded-python-kill", Wrapping::guarded_guest_on(spin, "python"));
}

/// The same in JavaScript: a ComponentizeJS handler under `guarded(…)` (guests/http-js).
fn guarded_javascript_replicas_on_spin_3_6_3_run_once_per_due_time_and_take_over_after_a_kill() {
    let (spin, _) = require("real spin 3.6.3 (guarded in JavaScript)", spin_3());
    kill_story("guarded-js-kill", Wrapping::guarded_guest_on(spin, "js"));
}

/// Three replicas, the scheduler calling `/run` on each at every due time, the holder
/// SIGKILLed mid-run; `/hello` too where a wrapper lets it pass to the job.
fn kill_story(name: &str, how: Wrapping) {
    let pass_through = how.wrapped.is_some();
    let handler = r#"HANDLER_MODE = "ok", HANDLER_MS = "1500""#;
    let mut fleet = Fleet::start(name, how, 3, handler, &[]);
    let (victim, killed_calls, killed_at) = fleet.kill_mid_run();
    let took_over = fleet.wait(killed_at + Duration::from_secs(LEASE_SECONDS + 15), |f| {
        f.decisions().iter().any(|d| d.run && d.abandoned)
    });
    assert!(took_over, "nobody took over after the kill: {}", fleet.said());
    let live = (0..3).find(|&i| i != victim).unwrap();
    let port = fleet.port(live).unwrap();
    if pass_through {
        // Not guarded: the route the manifest sends straight to the job.
        let (status, body) = http(port, "GET", "/hello", Duration::from_secs(10)).unwrap();
        assert_eq!((status, body.as_str()), (200, "the job ran for /hello"));
        assert!(fleet.log(live, "job").contains("handler called for /hello"), "{}", fleet.said());
        let said = fleet.said();
        assert!(!fleet.stderr(live).contains("http /hello"), "the wrapper saw it: {said}");
    }
    // The board once the calls have stopped and the last run has finished.
    fleet.stop_calling();
    let idle = fleet.wait(fleet.started.elapsed() + Duration::from_secs(10), |f| {
        (0..3).all(|i| i == victim || f.called()[i].len() == runs_of(f, i))
    });
    assert!(idle, "a run did not finish: {}", fleet.said());
    check_board(&fleet, port);
    let said = fleet.said();
    let (called, decisions, answers) = (fleet.called(), fleet.decisions(), fleet.answers());
    let lines = fleet.lines_are_the_components();
    assert!(lines >= 8, "{lines} decision lines: {said}");
    let fleet_tokens: Vec<Vec<u64>> = (0..3).map(|i| fleet.given_tokens(i)).collect();
    let bodies: Vec<Vec<(usize, String)>> = (0..3).map(|i| fleet.bodies_read(i)).collect();
    fleet.stop();
    // One run per due time, across the fleet.
    let runs: Vec<u64> = decisions.iter().filter(|d| d.run).filter_map(|d| d.due_s).collect();
    let distinct: BTreeSet<u64> = runs.iter().copied().collect();
    assert_eq!(runs.len(), distinct.len(), "a due time ran twice: {runs:?}\n{said}");
    // The handler is called for runs only: a survivor's calls are its runs; the killed one
    // was called once more than it could report.
    for (i, calls) in called.iter().enumerate() {
        let ran = decisions.iter().filter(|d| d.replica == i && d.run).count();
        assert!(calls.iter().all(|c| c == "/run: ok"), "replica {i}: {calls:?}\n{said}");
        if i == victim {
            assert_eq!((calls.len(), ran + 1), (killed_calls, calls.len()), "{said}");
        } else {
            assert_eq!(calls.len(), ran, "replica {i}: calls and runs differ: {said}");
        }
    }
    // The job read the scheduler's body whole, the one sent to its own replica, at each call
    // (the calls to `/hello` send none), but the killed one's last, which the kill may have
    // cut off before the body was read.
    for (i, read) in bodies.iter().enumerate() {
        let runs = read.iter().filter(|(_, first)| first.starts_with("replica-"));
        let runs: Vec<&(usize, String)> = runs.collect();
        let cut_off = usize::from(i == victim && runs.len() < called[i].len());
        assert_eq!(runs.len() + cut_off, called[i].len(), "replica {i}: {read:?}\n{said}");
        for (length, first) in runs {
            let due: u64 = first.rsplit(' ').next().unwrap().parse().unwrap();
            assert_eq!(first, &format!("replica-{i} due {due}"), "{said}");
            assert_eq!(*length, scheduler_body(i, due).len(), "replica {i}\n{said}");
        }
    }
    // The job was given its run's fencing token, never the caller's forged one: a
    // survivor's tokens are its runs'; the killed one's, one more.
    for (i, given) in fleet_tokens.iter().enumerate() {
        let granted: Vec<u64> =
            decisions.iter().filter(|d| d.replica == i && d.run).filter_map(|d| d.token).collect();
        // The killed one's last call may have been cut off before it printed its token.
        let extra = usize::from(i == victim && given.len() > granted.len());
        assert_eq!(given.len(), granted.len() + extra, "replica {i}: {given:?}\n{said}");
        assert_eq!(&given[..granted.len()], &granted[..], "replica {i}\n{said}");
    }
    // Every answer a live replica gave: a skip is 200 with its reason, a run is the handler's.
    let mut by_kind = BTreeMap::new();
    for answer in &answers {
        let kind = match &answer.reply {
            Ok((200, _)) if skipped(answer) => "skip",
            Ok((200, body)) if body == "the job ran for /run" => "run",
            _ if answer.replica == victim => "cut off by the kill",
            _ => panic!("an unexpected answer: {answer:?}\n{said}"),
        };
        *by_kind.entry(kind).or_insert(0) += 1;
    }
    assert!(by_kind.get("skip").copied().unwrap_or(0) >= 5, "{by_kind:?}\n{said}");
    eprintln!(
        "measured: {} runs, one per due time; answers {by_kind:?}; replica-{victim} killed \
         mid-run at {:.0} s, taken over after its lease",
        runs.len(),
        killed_at.as_secs_f64()
    );
}

fn runs_of(fleet: &Fleet, replica: usize) -> usize {
    fleet.decisions().iter().filter(|d| d.replica == replica && d.run).count()
}

/// `cycle`: the handler answers 200, 500 or traps (or 200 again) by the wall clock's 3 s slot. Its stdout reads
/// in order: the call's line (`handler called for /run: <mode>`), then, unless it trapped, the
/// wrapper's decision for it.
fn an_http_wrapped_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned() {
    outcomes_story("http-wrapper-outcomes", Wrapping::http_on_spin_4());
}

/// The same through `#[guarded]`, whose handler fails with an `Err` (spin-sdk answers it 500).
fn a_guarded_http_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned() {
    let spin = require("real spin (#[guarded])", find_spin());
    outcomes_story("guarded-http-outcomes", Wrapping::guarded_on(spin));
}

/// The same in Python, whose failure is its own 500 and whose trap an uncaught exception.
fn a_guarded_python_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned() {
    let spin = require("real spin (@guarded)", find_spin());
    outcomes_story("guarded-python-outcomes", Wrapping::guarded_guest_on(spin, "python"));
}

/// The same in JavaScript, whose trap is a thrown error.
fn a_guarded_javascript_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned() {
    let spin = require("real spin (guarded in JavaScript)", find_spin());
    outcomes_story("guarded-js-outcomes", Wrapping::guarded_guest_on(spin, "js"));
}

fn outcomes_story(name: &str, how: Wrapping) {
    let fleet = Fleet::start(name, how, 1, r#"HANDLER_MODE = "cycle""#, &[]);
    let pairs = |f: &Fleet| {
        let mut pairs: Vec<(String, Option<super::wrapped_fleet::Decision>)> = Vec::new();
        for line in f.stdout(0).lines() {
            if let Some(mode) = line.strip_prefix("handler called for /run: ") {
                pairs.push((mode.to_string(), None));
            } else if let Some(d) = super::wrapped_fleet::decision(0, line).filter(|d| d.run) {
                match pairs.last_mut() {
                    Some((_, slot @ None)) => *slot = Some(d),
                    _ => panic!("a run without a call: {d:?}"),
                }
            }
        }
        pairs
    };
    let done = fleet.wait(Duration::from_secs(90), |f| {
        let pairs = pairs(f);
        let trap = pairs.iter().position(|(mode, _)| mode == "trap");
        let failed = pairs.iter().any(|(mode, _)| mode == "fail");
        failed && trap.is_some_and(|t| pairs[t + 1..].iter().any(|(_, d)| d.is_some()))
    });
    let said = fleet.said();
    let (pairs, answers, stderr) = (pairs(&fleet), fleet.answers(), fleet.stderr(0));
    // What the lock recorded for each run, by its token (the board, which the kill story
    // checks against the Azure SDK); the calls' tokens in call order, a trapped one's too.
    let recorded = recorded_outcomes(fleet.port(0).unwrap());
    fleet.lines_are_the_components();
    let given = fleet.given_tokens(0);
    fleet.stop();
    assert!(done, "no failure and abandoned trap seen: {said}");
    let trap = pairs.iter().position(|(mode, _)| mode == "trap").unwrap();
    for (mode, decision) in &pairs[..trap] {
        let d = decision.as_ref().unwrap_or_else(|| panic!("{mode} unreported: {said}"));
        let status = if mode == "ok" { 200 } else { 500 };
        // `failed: the handler answered 500` for a failure.
        assert!(d.detail.ends_with(&format!("the handler answered {status}")), "{said}");
        let answered = answers.iter().filter_map(|a| a.reply.as_ref().ok());
        assert!(answered.clone().any(|(s, _)| *s == status), "{answers:?}");
        let expected = match status {
            200 => ("success".to_string(), None),
            _ => ("failure".to_string(), Some("the handler answered 500".to_string())),
        };
        let token = d.token.unwrap();
        assert_eq!(recorded.get(&token), Some(&expected), "token {token}: {recorded:?}\n{said}");
    }
    assert!(pairs[trap].1.is_none(), "a trapped run reported: {said}");
    let trapped_token = given[trap];
    let abandoned = recorded.get(&trapped_token).map(|(outcome, _)| outcome.as_str());
    assert_eq!(abandoned, Some("abandoned"), "token {trapped_token}: {recorded:?}\n{said}");
    assert!(stderr.contains("the job trapped for /run"), "{said}");
    // The next run comes once the trapped run's lease has run out, and names it abandoned.
    let (_, next) = pairs[trap + 1..].iter().find(|(_, d)| d.is_some()).unwrap();
    let next = next.as_ref().unwrap();
    assert!(next.abandoned, "{next:?}\n{said}");
    // The trapped call's answer: the host's error, not a 2xx (a CronJob counts it failed),
    // and not the handler's own 500.
    let trapped = answers.iter().find(|a| match &a.reply {
        Ok((status, body)) => *status >= 500 && !body.starts_with("the job failed"),
        Err(_) => true,
    });
    let trapped = trapped.unwrap_or_else(|| panic!("no answer for the trap: {answers:?}"));
    let next_due = next.due_s.unwrap();
    assert!(next_due + EVERY_SECONDS >= trapped.at_s + LEASE_SECONDS, "{trapped:?} {next:?}");
    eprintln!("measured: the trap at {} was taken over for {next_due}", trapped.at_s);
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        http_wrapped_replicas_run_once_per_due_time_take_over_after_a_kill_and_show_the_board,
        an_http_wrapped_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned,
        guarded_http_replicas_on_spin_3_6_3_run_once_per_due_time_and_take_over_after_a_kill,
        a_guarded_http_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned,
        guarded_python_replicas_on_spin_3_6_3_run_once_per_due_time_and_take_over_after_a_kill,
        a_guarded_python_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned,
        guarded_javascript_replicas_on_spin_3_6_3_run_once_per_due_time_and_take_over_after_a_kill,
        a_guarded_javascript_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned,
    ]
}

//! Guest jobs in Python (componentize-py) and JavaScript (ComponentizeJS) that import
//! `traffic-cop:lease/guard@0.3.0`, composed with the lease component, in the test host: three
//! instances per language on a cron schedule, the kill a trap mid-run. Judged by the same story
//! checker as the Rust app (tests/support/story.rs): at most one run per interval, tokens rising
//! by one, the others skipping "held by" the killed holder until its lease expires, then one
//! takeover reporting the abandoned run. The same story on real Spin is in tests/spin/guests.rs.
//! The operator's routes (pause, resume, run-now) and their guard are in operator.rs.
//!
//! The components come from `scripts/build-guests` (toolchains from `scripts/guest-tools`).

mod host;
mod operator;

use crate::drive::{self, summary};
use crate::story;
use std::time::Instant;
use traffic_cop_testbed::built::guest_wasm;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

fn in_the_test_host(language: &str) {
    let wasm = built(language, "test host");
    let started = Instant::now();
    let story = host::run(language, &wasm);
    let takeover = story::check_story(&story.ticks, &story.killed, drive::INTERVAL);
    drive::check_printed(&story.ticks, &story.printed);
    summary(&format!("{language} guest, test host"), &story.ticks, &takeover, started);
}

/// The built guest, and a lease component no older than src/ (the host refuses it otherwise).
fn built(language: &str, what: &str) -> std::path::PathBuf {
    let wasm = require(&format!("guest {language} ({what})"), guest_wasm(language));
    traffic_cop_wasm_host::component::Host::shared();
    wasm
}

fn operated(language: &str) {
    let started = Instant::now();
    operator::pause_resume_and_run_now(language, &built(language, "operator"));
    finished(&format!("{language} guest: pause, resume, run-now"), started);
}

fn guarded(language: &str) {
    let started = Instant::now();
    operator::routes_are_guarded(language, &built(language, "operator routes"));
    finished(&format!("{language} guest: operator routes guarded"), started);
}

/// Straight to stderr: the harness swallows println! of a passing test.
fn finished(what: &str, started: Instant) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{what}: {:.1} s", started.elapsed().as_secs_f64());
}

fn python_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill() {
    in_the_test_host("python");
}

fn js_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill() {
    in_the_test_host("js");
}

fn python_guest_pause_skips_every_replica_resume_runs_once_and_run_now_runs_by_hand() {
    operated("python");
}

fn js_guest_pause_skips_every_replica_resume_runs_once_and_run_now_runs_by_hand() {
    operated("js");
}

fn python_guest_operator_routes_answer_404_without_a_board_token_and_401_with_a_wrong_one() {
    guarded("python");
}

fn js_guest_operator_routes_answer_404_without_a_board_token_and_401_with_a_wrong_one() {
    guarded("js");
}

/// The printed-lines check must be able to fail: a run answered but never printed, a run
/// printed that nobody answered (as the killed run would be), and no skip printed.
fn the_printed_lines_check_refuses_disagreements() {
    let run = |holder: &str, token: u64| story::Tick {
        at: 0,
        node: 0,
        holder: holder.into(),
        token: Some(token),
        took_over: false,
        detail: "ran".into(),
        wall_ms: None,
        trips: None,
    };
    let ticks = vec![run("a", 1), run("c", 3)];
    let line = |holder: &str, token: u64| {
        format!(
            "http tick: [{holder}] ran for the due time 2026-11-27T10:00:0{token}Z with fencing \
             token {token}: python job: 1 locks"
        )
    };
    let skip = "http tick: [b] skipped the due time 2026-11-27T10:00:01Z: held by a".to_string();
    let good = vec![line("a", 1), skip.clone(), line("c", 3)];
    drive::check_printed(&ticks, &good);
    let missing = vec![line("a", 1), skip.clone()];
    let killed_run = vec![line("a", 1), skip.clone(), line("c", 3), line("b", 2)];
    let no_skip = vec![line("a", 1), line("c", 3)];
    for bad in [missing, killed_run, no_skip] {
        let refused = std::panic::catch_unwind(|| drive::check_printed(&ticks, &bad));
        assert!(refused.is_err(), "accepted: {bad:#?}");
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        python_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill,
        js_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill,
        python_guest_pause_skips_every_replica_resume_runs_once_and_run_now_runs_by_hand,
        js_guest_pause_skips_every_replica_resume_runs_once_and_run_now_runs_by_hand,
        python_guest_operator_routes_answer_404_without_a_board_token_and_401_with_a_wrong_one,
        js_guest_operator_routes_answer_404_without_a_board_token_and_401_with_a_wrong_one,
        the_printed_lines_check_refuses_disagreements,
    ]
}

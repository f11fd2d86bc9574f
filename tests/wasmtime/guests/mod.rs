//! Guest jobs in Python (componentize-py) and JavaScript (ComponentizeJS) that import
//! `traffic-cop:lease/guard@0.2.0`, composed with the lease component, in the test host: three
//! instances per language, the kill a trap mid-run. Judged by the same story checker as the
//! Rust app (tests/support/story.rs): at most one run per interval, tokens rising by one, the
//! others skipping "held by" the killed holder until its lease expires, then one takeover
//! reporting the abandoned run. The same story on real Spin is in tests/spin/guests.rs.
//!
//! The components come from `scripts/build-guests` (toolchains from `scripts/guest-tools`).

mod host;

use crate::drive::{self, summary};
use crate::story;
use std::time::Instant;
use traffic_cop_testbed::built::guest_wasm;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

fn in_the_test_host(language: &str) {
    let wasm = require(&format!("guest {language} (test host)"), guest_wasm(language));
    traffic_cop_wasm_host::component::Host::shared(); // refuses a lease component older than src/
    let started = Instant::now();
    let story = host::run(language, &wasm);
    let takeover = story::check_story(&story.ticks, &story.killed, drive::INTERVAL);
    drive::check_printed(&story.ticks, &story.printed);
    summary(&format!("{language} guest, test host"), &story.ticks, &takeover, started);
}

fn python_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill() {
    in_the_test_host("python");
}

fn js_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill() {
    in_the_test_host("js");
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
        format!("http tick: [{holder}] ran with fencing token {token}: python job: 1 locks")
    };
    let skip = "http tick: [b] skipped: held by a".to_string();
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
        the_printed_lines_check_refuses_disagreements,
    ]
}

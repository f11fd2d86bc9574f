//! Guest jobs in Python (componentize-py) and JavaScript (ComponentizeJS) that import
//! `traffic-cop:lease/guard@0.2.0`, composed with the lease component, judged by the same
//! story checker as the Rust app (`tests/real_spin/story.rs`): at most one run per interval,
//! tokens rising by one, the others skipping "held by" a holder killed mid-run until its lease
//! expires, then one takeover reporting the abandoned run.
//!
//! - In the test host: three instances per language, the kill a trap.
//! - On the real Spin (HTTP trigger): three `spin up` replicas of guests/<language>/spin.toml,
//!   the kill a SIGKILL of the holder's process group.
//!
//! The components come from `scripts/build-guests` (toolchains from `scripts/guest-tools`).
//! Without them, or without Spin, a test says so in one line and returns; under `CI=true` it
//! fails instead.

#[path = "guests/drive.rs"]
mod drive;
#[path = "guests/host.rs"]
mod host;
#[path = "guests/spin.rs"]
mod spin;
#[allow(dead_code)]
#[path = "real_spin/story.rs"]
mod story;

use std::time::Instant;
use traffic_cop_host::guests::guest_wasm;
use traffic_cop_host::spin::{find_spin, or_skip};

fn in_the_test_host(language: &str) {
    let Some(wasm) = or_skip(&format!("guest {language} (test host)"), guest_wasm(language)) else {
        return;
    };
    traffic_cop_host::component::Host::shared(); // refuses a lease component older than src/
    let started = Instant::now();
    let story = host::run(language, &wasm);
    let takeover = story::check_story(&story.ticks, &story.killed, drive::INTERVAL);
    drive::check_printed(&story.ticks, &story.printed);
    summary(&format!("{language} guest, test host"), &story.ticks, &takeover, started);
}

fn on_real_spin(language: &str) {
    let what = format!("guest {language} (real spin)");
    if or_skip(&what, guest_wasm(language)).is_none() {
        return;
    }
    let Some(spin) = or_skip(&what, find_spin()) else { return };
    traffic_cop_host::component::Host::shared();
    let started = Instant::now();
    let story = spin::run(language, spin);
    let takeover = story::check_story(&story.ticks, &story.killed, drive::INTERVAL);
    drive::check_printed(&story.ticks, &story.printed);
    assert!(!story.nodes.is_empty());
    summary(&format!("{language} guest, real spin"), &story.ticks, &takeover, started);
}

#[test]
fn python_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill() {
    in_the_test_host("python");
}

#[test]
fn js_guest_in_the_test_host_runs_once_per_interval_and_takes_over_after_a_kill() {
    in_the_test_host("js");
}

#[test]
fn python_guest_on_real_spin_runs_once_per_interval_and_takes_over_after_a_kill() {
    on_real_spin("python");
}

#[test]
fn js_guest_on_real_spin_runs_once_per_interval_and_takes_over_after_a_kill() {
    on_real_spin("js");
}

/// The printed-lines check must be able to fail: a run answered but never printed, a run
/// printed that nobody answered (as the killed run would be), and no skip printed.
#[test]
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

/// The measured numbers, straight to stderr (the harness swallows println! of a passing test).
fn summary(what: &str, ticks: &[story::Tick], takeover: &story::Tick, started: Instant) {
    let mut walls: Vec<u64> =
        ticks.iter().filter(|t| t.token.is_none()).filter_map(|t| t.wall_ms).collect();
    walls.sort_unstable();
    let median = walls.get(walls.len() / 2).copied().unwrap_or_default();
    let runs = ticks.iter().filter(|t| t.token.is_some()).count();
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "{what}: {} answers, {runs} runs, follower answer median {median} ms; takeover by {} \
         at tick {} with token {:?}; {:.1} s",
        ticks.len(),
        takeover.holder,
        takeover.at,
        takeover.token,
        started.elapsed().as_secs_f64()
    );
}

//! `scripts/check-settings` on real Spin: the app's HTTP component alone answers `GET /check`
//! with the shell's SPIN_VARIABLE_* settings. Good settings exit 0 with the next due times on
//! the Berlin wall clock and in UTC, and storage reached without creating the lock; a zone typo
//! exits 1 naming `time_zone`.

use serde_json::Value;
use std::process::Command;
use std::time::Duration;
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::docs;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{assert_built, find_spin};
use traffic_cop_testbed::EMULATOR_KEY_B64;

/// Runs `scripts/check-settings` (with `args`) against the shared Azurite, with `key` as the
/// connection string's account key.
fn run_check(
    spin: &std::path::Path,
    container: &str,
    zone: &str,
    key: &str,
    args: &[&str],
) -> crate::run::Ran {
    let azurite = Azurite::shared();
    let connection_string = connection_string_for_port(azurite.port, key);
    crate::run::run(
        Command::new(traffic_cop_testbed::repo_root().join("scripts/check-settings"))
            .args(args)
            .env("SPIN", spin)
            .env("SPIN_VARIABLE_CONNECTION_STRING", connection_string)
            .env("SPIN_VARIABLE_STORAGE_ENDPOINT", format!("http://127.0.0.1:{}", azurite.port))
            .env("SPIN_VARIABLE_CONTAINER", container)
            .env("SPIN_VARIABLE_SCHEDULE", "0 0 2 * * Mon-Fri")
            .env("SPIN_VARIABLE_TIME_ZONE", zone),
        Duration::from_secs(90),
    )
}

/// The check as JSON (`--json`), for a script.
fn check(spin: &std::path::Path, container: &str, zone: &str) -> (crate::run::Ran, Value) {
    let ran = run_check(spin, container, zone, EMULATOR_KEY_B64, &["--json"]);
    let answer =
        serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {}", ran.said()));
    (ran, answer)
}

fn check_settings_shows_the_due_times_reaches_storage_and_names_what_to_fix() {
    let spin = require("real spin (check-settings)", find_spin());
    assert_built();
    let container = format!("spincheck{}", std::process::id());
    let (ran, answer) = check(&spin, &container, "Europe/Berlin");
    assert!(ran.ok(), "{}", ran.said());
    assert_eq!(answer["ok"], true);
    let first = &answer["next_due"][0];
    assert!(first["local"].as_str().unwrap().contains("T02:00:00+0"), "{answer}");
    assert!(first["utc"].as_str().unwrap().ends_with(":00:00Z"), "{answer}");
    assert_eq!(answer["storage"]["reached"], true, "{answer}");
    let board = crate::story::lock_entry(&container);
    assert!(board.is_none(), "the check created the lock: {board:?}");

    let (ran, answer) = check(&spin, &container, "Europe/Berln");
    assert_eq!(ran.status.and_then(|s| s.code()), Some(1), "{}", ran.said());
    assert_eq!(answer["problems"][0]["variable"], "time_zone", "{answer}");
    println!("check-settings on real Spin: {:.1} s for a check", ran.took.as_secs_f64());
}

/// Run by hand, the check answers in sentences: the verdict first, each variable to fix by
/// name, and for a refused look at storage what the service said and what to do, in words
/// rather than a programmer's debug text.
fn check_settings_by_hand_says_what_is_wrong_and_what_to_do_first() {
    let spin = require("real spin (check-settings)", find_spin());
    assert_built();
    let container = format!("spinchecktext{}", std::process::id());
    let ran = run_check(&spin, &container, "Europe/Berlin", EMULATOR_KEY_B64, &[]);
    assert!(ran.ok(), "{}", ran.said());
    assert!(
        ran.stdout.starts_with("The settings can be used, and storage answered.\n"),
        "{}",
        ran.said()
    );
    let due = ran.stdout.lines().find(|l| l.starts_with("  ") && l.contains("T02:00:00+0"));
    assert!(due.is_some(), "no due time on the Berlin wall clock: {}", ran.said());
    assert!(
        ran.stdout.contains("the first tick creates it (this check created nothing)"),
        "{}",
        ran.said()
    );

    // A wrong account key and a misspelt zone: both named, the zone by its variable, the key by
    // the service's refusal and what to do about it.
    let wrong_key = EMULATOR_KEY_B64.replacen("Eby8", "Xby8", 1);
    let ran = run_check(&spin, &container, "Europe/Berln", &wrong_key, &[]);
    let said = ran.said();
    assert_eq!(ran.status.and_then(|s| s.code()), Some(1), "{said}");
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines.first(), Some(&"The settings cannot be used yet:"), "{said}");
    let line = |i: usize, start: &str| lines.get(i).is_some_and(|l| l.starts_with(start));
    let zone = "- set the `time_zone` variable: unknown time zone";
    assert!(line(1, zone), "{said}");
    let refused = "- storage did not accept the look at the lock: unauthorized: HTTP 403";
    assert!(line(2, refused), "{said}");
    let fix = "  what to do: check the account key or SAS in `connection_string`";
    assert!(line(3, fix), "{said}");
    assert!(!ran.stdout.contains("LeaseError") && !ran.stdout.contains('{'), "{said}");
    assert!(!ran.stdout.contains(&wrong_key), "the key was printed: {said}");
    assert!(crate::story::lock_entry(&container).is_none(), "the check created the lock");
    // The docs' sample (docs/operations.md) is this answer, with this test's container and
    // Azurite's port.
    let port = format!("127.0.0.1:{}", Azurite::shared().port);
    let sample = docs::replaced(
        &docs::example("check-settings"),
        &[("\"traffic-cop\"", &format!("\"{container}\"")), ("127.0.0.1:10000", &port)],
    );
    if let Err(why) = docs::output_matches(&sample, &ran.stdout) {
        panic!("docs/operations.md's sample is not what the check says: {why}\n{said}");
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        check_settings_shows_the_due_times_reaches_storage_and_names_what_to_fix,
        check_settings_by_hand_says_what_is_wrong_and_what_to_do_first,
    ]
}

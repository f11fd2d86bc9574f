//! `scripts/check-settings` on real Spin: the app's HTTP component alone answers `GET /check`
//! with the shell's SPIN_VARIABLE_* settings. Good settings exit 0 with the next due times on
//! the Berlin wall clock and in UTC, and storage reached without creating the lock; a zone typo
//! exits 1 naming `time_zone`.

use std::process::Command;
use std::time::Duration;
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{assert_built, find_spin};

fn check(
    spin: &std::path::Path,
    container: &str,
    zone: &str,
) -> (crate::run::Ran, serde_json::Value) {
    let azurite = Azurite::shared();
    let ran = crate::run::run(
        Command::new(traffic_cop_testbed::repo_root().join("scripts/check-settings"))
            .env("SPIN", spin)
            .env("SPIN_VARIABLE_CONNECTION_STRING", azurite.connection_string())
            .env("SPIN_VARIABLE_STORAGE_ENDPOINT", format!("http://127.0.0.1:{}", azurite.port))
            .env("SPIN_VARIABLE_CONTAINER", container)
            .env("SPIN_VARIABLE_SCHEDULE", "0 0 2 * * Mon-Fri")
            .env("SPIN_VARIABLE_TIME_ZONE", zone),
        Duration::from_secs(90),
    );
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

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        check_settings_shows_the_due_times_reaches_storage_and_names_what_to_fix
    ]
}

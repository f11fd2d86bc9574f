//! The settings check: the guard's `check-settings` with each field it names turned into the
//! Spin variable a user sets. `GET /check` (and `scripts/check-settings`) asks storage once,
//! creating nothing; a tick that cannot decide and `/metrics` ask without a request.

use crate::guard::{self, SettingsCheck, StorageAnswer};
use crate::settings::BadVariable;
use crate::words::shown;
use crate::Settings;
use serde::Serialize;
use serde_json::{json, Value};

/// How many due times `/check` shows.
const SHOWN_DUE_TIMES: u32 = 5;

/// The Spin variable (spin.toml) that sets a field the guard names.
pub fn variable_of(field: &str) -> &'static str {
    match field {
        "holder" => "holder",
        "lease-seconds" | "keep-alive-seconds" => "lease_seconds",
        "starting-deadline-seconds" => "starting_deadline_seconds",
        "overlap" => "replace_after_seconds",
        "time-zone" => "time_zone",
        "connection-string" => "connection_string",
        "container" => "container",
        "blob" => "lock",
        // The expression and its fields (second, minute, …, day-of-week).
        _ => "schedule",
    }
}

/// The settings' problems, as variables to fix; no request is sent.
pub fn problems(settings: &Settings) -> Vec<BadVariable> {
    bad_variables(&guard::check_settings(&settings.lock(), &settings.options(), 0, false))
}

fn bad_variables(check: &SettingsCheck) -> Vec<BadVariable> {
    check
        .problems
        .iter()
        .map(|p| BadVariable {
            variable: variable_of(&p.field),
            message: format!("{}: {}", p.field, p.message),
        })
        .collect()
}

/// What `/check` answers, in the order a person reads it.
#[derive(Serialize)]
struct CheckAnswer<'a> {
    ok: bool,
    problems: Vec<Value>,
    lock: &'a str,
    container: &'a str,
    schedule: &'a str,
    time_zone: &'a str,
    next_due: Vec<Value>,
    account: Option<Value>,
    storage: Value,
}

/// `GET /check`: 200 when every setting can be used and storage answered with these
/// credentials, 422 otherwise; JSON for people and scripts alike.
pub fn check_json(settings: &Settings) -> (u16, String) {
    let check = guard::check_settings(&settings.lock(), &settings.options(), SHOWN_DUE_TIMES, true);
    let problems = bad_variables(&check);
    let zone = Some(check.time_zone.as_str());
    let storage = match &check.storage {
        None => json!({"reached": false}),
        Some(StorageAnswer::LockMissing) => json!({
            "reached": true,
            "lock": "missing: the first tick creates it (this check did not)",
        }),
        Some(StorageAnswer::LockExists(found)) => json!({
            "reached": true,
            "lock": "exists",
            "state": format!("{:?}", found.state).to_lowercase(),
            "last_holder": found.holder,
            "last_start": found.last_start_ms.map(|ms| shown(Some(ms), zone)),
        }),
        Some(StorageAnswer::Failed(error)) => json!({
            "reached": false,
            "error": crate::words::describe(&guard::GuardError::Lease(error.clone())),
        }),
    };
    let reached = storage["reached"] == Value::Bool(true);
    let ok = problems.is_empty() && reached;
    let body = CheckAnswer {
        ok,
        problems: problems
            .iter()
            .map(|p| json!({"variable": p.variable, "message": p.message}))
            .collect(),
        lock: &settings.lock,
        container: &settings.container,
        schedule: &settings.schedule,
        time_zone: &check.time_zone,
        next_due: check
            .next_due
            .iter()
            .map(|t| json!({"local": t.local, "utc": t.utc, "at_ms": t.at_ms}))
            .collect(),
        account: check
            .account
            .as_ref()
            .map(|a| json!({"name": a.name, "endpoint": a.endpoint, "credential": a.credential})),
        storage,
    };
    (if ok { 200 } else { 422 }, serde_json::to_string_pretty(&body).unwrap_or_default())
}

//! The operator's routes: pause (with an optional drain for deploys), resume and run-now, each
//! one call of the lease component, answered with the lock's state after it as JSON.

use crate::guard::{self, OperatorAnswer};
use crate::Settings;
use serde::Serialize;

/// The longest drain one request waits (a route is not a place for long waits; call again).
const MAX_DRAIN_MS: u32 = 120_000;

#[derive(Serialize)]
struct Answered {
    lock: String,
    verb: String,
    by: String,
    paused_by: Option<String>,
    paused_since_ms: Option<u64>,
    paused_reason: Option<String>,
    run_now_by: Option<String>,
    /// The run in progress when the call returned; after a drain, none means drained.
    running_holder: Option<String>,
    running_since_ms: Option<u64>,
    running_fencing_token: Option<u64>,
    running: bool,
}

/// Runs `verb` (`/pause`, `/resume` or `/run-now`) for the app's lock. `by` is required.
pub fn call(settings: &Settings, verb: &str, query: &str) -> Result<String, (u16, String)> {
    let by = query_value(query, "by")
        .filter(|by| !by.trim().is_empty())
        .ok_or((400, "say who asks: ?by=<name>".to_string()))?;
    let answer = match verb {
        "/pause" => {
            let reason = query_value(query, "reason").unwrap_or_default();
            let drain_ms = match query_value(query, "drain_ms") {
                None => 0,
                Some(ms) => ms.parse::<u32>().map_err(|_| {
                    (400, format!("drain_ms must be a whole number of ms, got {ms:?}"))
                })?,
            };
            guard::pause(&settings.guard, &by, &reason, drain_ms.min(MAX_DRAIN_MS))
        }
        "/resume" => guard::resume(&settings.guard, &by),
        _ => guard::run_now(&settings.guard, &by),
    }
    .map_err(|error| (502, guard::error_text(&error)))?;
    let line = answered(settings, verb, &by, answer);
    eprintln!("operator: {line}");
    Ok(line)
}

fn answered(settings: &Settings, verb: &str, by: &str, answer: OperatorAnswer) -> String {
    let running = answer.running.as_ref();
    let answered = Answered {
        lock: settings.lock.clone(),
        verb: verb.trim_start_matches('/').to_string(),
        by: by.to_string(),
        paused_by: answer.paused.as_ref().map(|p| p.by.clone()),
        paused_since_ms: answer.paused.as_ref().map(|p| p.since_ms),
        paused_reason: answer.paused.map(|p| p.reason),
        run_now_by: answer.run_now_by,
        running_holder: running.and_then(|r| r.holder.clone()),
        running_since_ms: running.map(|r| r.since_ms),
        running_fencing_token: running.map(|r| r.fencing_token),
        running: running.is_some(),
    };
    serde_json::to_string(&answered).unwrap_or_default()
}

/// The value of `name` in a query string, decoded as a form (`+` is a space).
fn query_value(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, v)| v.into_owned())
}

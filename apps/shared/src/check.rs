//! The settings check: the lease component's `check-settings`, whose problems name the Spin
//! variable to set. `GET /check` (and `scripts/check-settings`) asks storage once, creating
//! nothing; `/metrics` asks without a request.

use crate::guard::{self, SettingsCheck, StorageAnswer};
use crate::lease::Error as LeaseError;
use crate::settings::BadVariable;
use crate::words::shown;
use crate::Settings;
use serde::Serialize;
use serde_json::{json, Value};

/// How many due times `/check` shows.
const SHOWN_DUE_TIMES: u32 = 5;

/// Every variable whose value cannot be used, as the lease component judges them (no request).
pub fn problems(settings: &Settings) -> Vec<BadVariable> {
    bad_variables(&guard::check_settings(&settings.guard, 0, false))
}

fn bad_variables(check: &SettingsCheck) -> Vec<BadVariable> {
    check
        .problems
        .iter()
        .map(|p| BadVariable { variable: p.variable.clone(), message: p.message.clone() })
        .collect()
}

enum Storage {
    /// Not asked: the connection string or names cannot be used.
    NotAsked,
    Missing,
    Exists {
        state: String,
        holder: Option<String>,
        last_start_ms: Option<u64>,
    },
    /// The look failed: what happened, and what to do about it.
    Failed {
        error: String,
        fix: &'static str,
    },
}

/// The check's findings, rendered as JSON for scripts or as sentences for a person.
struct Findings {
    check: SettingsCheck,
    problems: Vec<BadVariable>,
    storage: Storage,
}

impl Findings {
    fn of(settings: &Settings) -> Findings {
        let check = guard::check_settings(&settings.guard, SHOWN_DUE_TIMES, true);
        let storage = match &check.storage {
            None => Storage::NotAsked,
            Some(StorageAnswer::LockMissing) => Storage::Missing,
            Some(StorageAnswer::LockExists(found)) => Storage::Exists {
                state: format!("{:?}", found.state).to_lowercase(),
                holder: found.holder.clone(),
                last_start_ms: found.last_start_ms,
            },
            Some(StorageAnswer::Failed(error)) => {
                Storage::Failed { error: guard::error_text(error), fix: fix_for(error) }
            }
        };
        Findings { problems: bad_variables(&check), check, storage }
    }

    fn ok(&self) -> bool {
        self.problems.is_empty()
            && matches!(self.storage, Storage::Missing | Storage::Exists { .. })
    }

    fn status(&self) -> u16 {
        if self.ok() {
            200
        } else {
            422
        }
    }
}

/// What to do when storage's answer to the check was an error.
fn fix_for(error: &LeaseError) -> &'static str {
    match error {
        LeaseError::Unauthorized(_) => {
            "check the account key or SAS in `connection_string` (and that this host's clock is \
             right: the service refuses a request more than 15 minutes off)"
        }
        LeaseError::Transport(_) => {
            "check `storage_endpoint` (or the endpoint in `connection_string`), that the host \
             is in the component's `allowed_outbound_hosts`, and that it is reachable from here"
        }
        LeaseError::InvalidConfig(_) | LeaseError::UnusableToken(_) => "fix `connection_string`",
        LeaseError::Throttled(_) => "try again later: the account is busy",
        _ => "see the storage service's answer above",
    }
}

/// What `/check` answers as JSON, in the order a person reads it.
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

/// `GET /check` as JSON: 200 when every setting can be used and storage answered with these
/// credentials, 422 otherwise.
pub fn check_json(settings: &Settings) -> (u16, String) {
    let found = Findings::of(settings);
    let check = &found.check;
    let zone = Some(check.time_zone.as_str());
    let storage = match &found.storage {
        Storage::NotAsked => json!({"reached": false}),
        Storage::Missing => json!({
            "reached": true,
            "lock": "missing: the first tick creates it (this check did not)",
        }),
        Storage::Exists { state, holder, last_start_ms } => json!({
            "reached": true,
            "lock": "exists",
            "state": state,
            "last_holder": holder,
            "last_start": last_start_ms.map(|ms| shown(Some(ms), zone)),
        }),
        Storage::Failed { error, fix } => json!({"reached": false, "error": error, "fix": fix}),
    };
    let body = CheckAnswer {
        ok: found.ok(),
        problems: found
            .problems
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
    (found.status(), serde_json::to_string_pretty(&body).unwrap_or_default())
}

/// `GET /check` for a person: the verdict and what to fix first, then what the settings mean.
pub fn check_text(settings: &Settings) -> (u16, String) {
    let found = Findings::of(settings);
    let check = &found.check;
    let mut lines = Vec::new();
    if found.ok() {
        lines.push("The settings can be used, and storage answered.".to_string());
    } else {
        lines.push("The settings cannot be used yet:".to_string());
        for problem in &found.problems {
            lines.push(format!("- {problem}"));
        }
        match &found.storage {
            Storage::NotAsked => lines.push(
                "- storage was not asked: fix the connection string, container or lock first"
                    .to_string(),
            ),
            Storage::Failed { error, fix } => {
                lines.push(format!("- storage did not accept the look at the lock: {error}"));
                lines.push(format!("  what to do: {fix}"));
            }
            Storage::Missing | Storage::Exists { .. } => {}
        }
    }
    lines.push(String::new());
    lines.push(format!("lock: {:?} in the container {:?}", settings.lock, settings.container));
    if let Some(account) = &check.account {
        lines.push(format!(
            "account: {} at {} ({})",
            account.name, account.endpoint, account.credential
        ));
    }
    if settings.schedule.is_empty() {
        lines.push("schedule: none (the job runs when asked)".to_string());
    } else {
        // The zone as set, even one the check refused (it judges such a schedule in UTC).
        let zone_set = Some(settings.time_zone.as_str()).filter(|z| !z.trim().is_empty());
        lines.push(format!(
            "schedule: {:?} in {}",
            settings.schedule,
            zone_set.unwrap_or(&check.time_zone)
        ));
        if !check.next_due.is_empty() {
            lines.push("next due times:".to_string());
            // As the check rendered them: on the zone's wall clock, UTC beside when it differs.
            lines.extend(check.next_due.iter().map(|t| {
                if t.local == t.utc {
                    format!("  {}", t.utc)
                } else {
                    format!("  {} ({})", t.local, t.utc)
                }
            }));
        }
    }
    let zone = Some(check.time_zone.as_str());
    match &found.storage {
        Storage::Missing => lines.push(
            "storage: answered; the lock does not exist yet, and the first tick creates it \
             (this check created nothing)"
                .to_string(),
        ),
        Storage::Exists { state, holder, last_start_ms } => lines.push(format!(
            "storage: answered; the lock exists ({state}), its last run by {} at {}",
            holder.as_deref().unwrap_or("nobody yet"),
            shown(*last_start_ms, zone)
        )),
        Storage::NotAsked | Storage::Failed { .. } => {}
    }
    (found.status(), lines.join("\n") + "\n")
}

/// Whether a request for `/check` asks for sentences (`Accept: text/plain`) rather than JSON.
pub fn wants_text(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.split(',').any(|t| t.trim().starts_with("text/plain")))
}

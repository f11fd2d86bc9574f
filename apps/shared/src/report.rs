//! What a tick did: the decision log's JSON line (one per decision, on stdout, documented in
//! docs/operations.md) and the line for people (on stderr), which is the lease component's
//! own text for the decision or the run.

use crate::guard::{self, Finished, RunDetails, SkipReason, Skipped};
use crate::lease::{Error, RanOutWhen};
use crate::settings::BadVariable;
use crate::Settings;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct TickReport {
    pub lock: String,
    /// The run's holder; for a skip, the `holder` variable if set.
    pub holder: Option<String>,
    /// `run`, `skip`, or `error`: the settings cannot be used (the event fails).
    pub decision: &'static str,
    /// Why it skipped: `held-by-other`, `already-ran`, `too-late`, `not-due`, `paused`,
    /// `schedule-conflict` or `error`; an error's: `misconfigured`.
    pub reason: Option<&'static str>,
    /// A misconfigured app's variable to fix (`time_zone`).
    pub variable: Option<String>,
    pub fencing_token: Option<u64>,
    /// The due time the run is for, or the one the skip is about (ms since the Unix epoch).
    pub due_at_ms: Option<u64>,
    /// The same due time in ISO 8601, on the job's wall clock (`time_zone`) with its offset.
    pub due_at: Option<String>,
    pub late_by_ms: Option<u64>,
    /// Due times missed before this run, which it catches up for (runs only).
    pub missed: Option<u64>,
    /// A manual run (`run-now`): who asked.
    pub manual_by: Option<String>,
    pub previous_abandoned: bool,
    /// The decision or the run in words: the lease component's line, as printed.
    pub detail: String,
    /// The run's instance could not renew its lease when due (a blocking call in the job, or a
    /// frozen host): the run is a failure, and the event fails with it.
    pub blocked: bool,
}

impl TickReport {
    fn of(settings: &Settings, decision: &'static str, detail: String) -> Self {
        TickReport {
            lock: settings.lock.clone(),
            holder: settings.holder().map(str::to_string),
            decision,
            reason: None,
            variable: None,
            fencing_token: None,
            due_at_ms: None,
            due_at: None,
            late_by_ms: None,
            missed: None,
            manual_by: None,
            previous_abandoned: false,
            detail,
            blocked: false,
        }
    }

    /// One of the app's own variables cannot be used: the event fails, naming it.
    pub fn misconfigured(settings: &Settings, bad: &BadVariable) -> Self {
        let holder = settings.holder().unwrap_or("this replica");
        TickReport {
            reason: Some("misconfigured"),
            variable: Some(bad.variable.clone()),
            ..TickReport::of(settings, "error", format!("[{holder}] error: {bad}"))
        }
    }

    /// A skip's report; a setting the lease component cannot use is an error that names it.
    pub fn skipped(settings: &Settings, skipped: Skipped) -> Self {
        let report = TickReport::of(settings, "skip", skipped.text);
        let (reason, due) = match skipped.reason {
            SkipReason::HeldByOther(held) => ("held-by-other", held.due_at_ms),
            SkipReason::AlreadyRan(ran) => ("already-ran", Some(ran.due_at_ms)),
            SkipReason::TooLate(late) => ("too-late", Some(late.due_at_ms)),
            SkipReason::NotDue(not_due) => ("not-due", not_due.next_due_ms),
            SkipReason::Paused(_) => ("paused", None),
            SkipReason::ScheduleConflict(_) => ("schedule-conflict", None),
            SkipReason::Error(Error::BadSetting(bad)) => {
                let variable = Some(bad.variable);
                return TickReport {
                    decision: "error",
                    reason: Some("misconfigured"),
                    variable,
                    ..report
                };
            }
            SkipReason::Error(_) => ("error", None),
        };
        TickReport {
            reason: Some(reason),
            due_at_ms: due,
            due_at: due.map(|ms| local(settings, ms)),
            ..report
        }
    }

    /// A run's report: the component's line for how it ended.
    pub fn ran(settings: &Settings, details: &RunDetails, finished: Finished) -> Self {
        let due = details.past_due.due_at_ms;
        TickReport {
            holder: Some(details.holder.clone()),
            fencing_token: Some(details.fencing_token),
            due_at_ms: Some(due),
            due_at: Some(local(settings, due)),
            late_by_ms: Some(details.past_due.late_by_ms),
            missed: Some(details.past_due.missed),
            manual_by: details.manual_by.clone(),
            previous_abandoned: details.previous_abandoned,
            blocked: matches!(
                &finished.error,
                Some(Error::LeaseRanOut(ran_out)) if ran_out.when == RanOutWhen::Blocked
            ),
            ..TickReport::of(settings, "run", finished.text)
        }
    }

    /// The decision log's line: one JSON object.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether the settings cannot be used: the event should fail, not skip.
    pub fn is_misconfigured(&self) -> bool {
        self.decision == "error"
    }

    /// Prints the decision: its JSON line on stdout, the line for people on stderr, prefixed.
    pub fn print(&self, prefix: &str) {
        println!("{}", self.json());
        eprintln!("{prefix}{}", self.detail);
    }
}

/// `at_ms` in ISO 8601 on the job's wall clock (UTC without a zone).
fn local(settings: &Settings, at_ms: u64) -> String {
    guard::show_time(at_ms, settings.zone())
        .or_else(|_| guard::show_time(at_ms, None))
        .map_or_else(|_| at_ms.to_string(), |t| t.local)
}

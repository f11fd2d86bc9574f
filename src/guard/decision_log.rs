//! The decision log: one JSON object per decision, which every adapter prints on stdout as it
//! is (its fields are documented in docs/operations.md, "Logs"), so that no adapter spells a
//! field, a reason's name or a sentence of its own. `detail` is the line for people, the same
//! text the guard hands out beside it.

use super::describe::{shown, RunEnd};
use super::{GuardOptions, SkipReason, Ticket};
use crate::error::{Error, LeaseLoss, RanOutWhen};
use serde::Serialize;

#[derive(Default, Serialize)]
struct Line<'a> {
    lock: &'a str,
    /// The replica's label: the `holder` variable, or the instance's random one.
    holder: &'a str,
    /// `run`, `skip`, or `error`: the settings cannot be used.
    decision: &'static str,
    reason: Option<&'static str>,
    /// The variable to fix, for `misconfigured`.
    variable: Option<&'static str>,
    fencing_token: Option<u64>,
    due_at_ms: Option<u64>,
    /// The same due time in ISO 8601 on the schedule's wall clock, with its offset.
    due_at: Option<String>,
    late_by_ms: Option<u64>,
    missed: Option<u64>,
    manual_by: Option<&'a str>,
    previous_abandoned: bool,
    detail: &'a str,
    /// The run's instance could not renew its lease when due (a blocking call in the job, or a
    /// frozen host): the run failed whatever the job said.
    blocked: bool,
}

impl Line<'_> {
    fn json(&self) -> String {
        // Strings, numbers and booleans only: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A skip's line; a setting that cannot be used is an `error` that names the variable to fix.
pub fn skip_log(
    lock: &str,
    holder: &str,
    reason: &SkipReason,
    options: Option<&GuardOptions>,
    detail: &str,
) -> String {
    let (name, due) = match reason {
        SkipReason::HeldByOther { due_at_ms, .. } => ("held-by-other", *due_at_ms),
        SkipReason::AlreadyRan { due_at_ms, .. } => ("already-ran", Some(*due_at_ms)),
        SkipReason::TooLate { due_at_ms, .. } => ("too-late", Some(*due_at_ms)),
        SkipReason::NotDue { next_due_ms } => ("not-due", *next_due_ms),
        SkipReason::Paused(_) => ("paused", None),
        SkipReason::ScheduleConflict { .. } => ("schedule-conflict", None),
        SkipReason::Remembered(remembered) => ("remembered", remembered.next_due_ms),
        SkipReason::Error(Error::BadOption(bad)) => {
            let variable = Some(super::variable_of(bad.field));
            let line =
                Line { lock, holder, decision: "error", detail, variable, ..Line::default() };
            return Line { reason: Some("misconfigured"), ..line }.json();
        }
        SkipReason::Error(_) => ("error", None),
    };
    Line {
        lock,
        holder,
        decision: "skip",
        reason: Some(name),
        due_at_ms: due,
        due_at: due.map(|due| shown(due, options)),
        detail,
        ..Line::default()
    }
    .json()
}

/// A finished run's line.
pub fn run_log(ticket: &Ticket, end: &RunEnd, detail: &str) -> String {
    let failed = match end {
        RunEnd::Stopped(error) => Some(error),
        RunEnd::Closed { failed, .. } => failed.as_ref(),
    };
    let blocked = matches!(
        failed,
        Some(Error::LeaseLost(LeaseLoss::RanOut(ran_out))) if ran_out.when == RanOutWhen::Blocked
    );
    let due = ticket.past_due.due_at_ms;
    Line {
        lock: &ticket.lock.blob,
        holder: ticket.options.holder(),
        decision: "run",
        fencing_token: Some(ticket.fencing_token),
        due_at_ms: Some(due),
        due_at: Some(shown(due, Some(&ticket.options))),
        late_by_ms: Some(ticket.past_due.late_by_ms),
        missed: Some(ticket.past_due.missed),
        manual_by: ticket.manual_by.as_deref(),
        previous_abandoned: ticket.previous_abandoned,
        detail,
        blocked,
        ..Line::default()
    }
    .json()
}

//! One timer tick: ask the guard, do the singleton job if it is our turn, record the outcome.
//!
//! The job is a janitor's report over the lock container: how many locks there are, which are
//! held, and which runs were abandoned (granted, never completed, lease gone). Small, but it
//! reads real state, and it must not run on every replica at once.

use crate::board::{time, BoardRow};
use crate::guard::{self, Decision, GuardError, Outcome, SkipReason};
use crate::Settings;
use serde::Serialize;

/// What a tick did: the decision log's JSON line (one per decision, on stdout), the HTTP
/// response, and a line for people (on stderr).
#[derive(Clone, Debug, Serialize)]
pub struct TickReport {
    pub lock: String,
    pub holder: String,
    /// `run` or `skip`.
    pub decision: &'static str,
    /// Why it skipped: `held-by-other`, `already-ran`, `too-late`, `not-due`, `paused`,
    /// `schedule-conflict` or `error` (runs: none).
    pub reason: Option<&'static str>,
    pub fencing_token: Option<u64>,
    /// The due time the run is for, or the one the skip is about (ms since the Unix epoch).
    pub due_at_ms: Option<u64>,
    pub late_by_ms: Option<u64>,
    /// Due times missed before this run, which it catches up for (runs only).
    pub missed: Option<u64>,
    /// A manual run (`run-now`): who asked.
    pub manual_by: Option<String>,
    pub previous_abandoned: bool,
    /// Why it skipped, or what the job found.
    pub detail: String,
}

impl TickReport {
    fn skip(settings: &Settings, reason: &'static str, due: Option<u64>, detail: String) -> Self {
        TickReport {
            lock: settings.lock.clone(),
            holder: settings.holder.clone(),
            decision: "skip",
            reason: Some(reason),
            fencing_token: None,
            due_at_ms: due,
            late_by_ms: None,
            missed: None,
            manual_by: None,
            previous_abandoned: false,
            detail,
        }
    }

    /// The decision log's line: one JSON object, documented in docs/operations.md.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn line(&self) -> String {
        match self.fencing_token {
            Some(token) => {
                let took_over =
                    if self.previous_abandoned { " (took over an abandoned run)" } else { "" };
                let caught_up = match self.missed {
                    Some(missed) if missed > 0 => {
                        format!(" (caught up {missed} missed due times)")
                    }
                    _ => String::new(),
                };
                let manual = match &self.manual_by {
                    Some(by) => format!(" (run now, asked by {by})"),
                    None => String::new(),
                };
                format!(
                    "[{}] ran with fencing token {token}{took_over}{caught_up}{manual}: {}",
                    self.holder, self.detail
                )
            }
            None => format!("[{}] skipped: {}", self.holder, self.detail),
        }
    }

    /// Prints the decision: its JSON line on stdout, the line for people on stderr, prefixed.
    pub fn print(&self, prefix: &str) {
        println!("{}", self.json());
        eprintln!("{prefix}{}", self.line());
    }
}

pub fn tick(settings: &Settings) -> TickReport {
    let skip = |reason, due, detail| TickReport::skip(settings, reason, due, detail);
    let ticket = match guard::guarded_invoke(&settings.lock(), &settings.options()) {
        Decision::Run(ticket) => ticket,
        // Spin makes an instance per event, so a replica's earlier tick may still be working
        // when its next one fires; naming ourselves as "another" holder would mislead.
        Decision::Skip(SkipReason::HeldByOther(held))
            if held.holder.as_ref() == Some(&settings.holder) =>
        {
            let detail = format!(
                "the previous tick of this replica is still working (lease held by {} until it completes or expires)",
                settings.holder
            );
            return skip("held-by-other", None, detail);
        }
        Decision::Skip(SkipReason::HeldByOther(held)) => {
            let by = held.holder.unwrap_or_else(|| "another instance".into());
            return skip("held-by-other", None, format!("held by {by}"));
        }
        Decision::Skip(SkipReason::AlreadyRan(ran)) => {
            let by = ran.holder.unwrap_or_else(|| "another instance".into());
            let detail = format!(
                "already ran for the due time {} ({by}); next due {}",
                time(Some(ran.due_at_ms)),
                time(Some(ran.next_due_ms))
            );
            return skip("already-ran", Some(ran.due_at_ms), detail);
        }
        Decision::Skip(SkipReason::TooLate(late)) => {
            let detail = format!(
                "too late: {} s after the due time, past the starting deadline; next due at {}",
                late.late_by_ms / 1000,
                time(Some(late.next_due_ms))
            );
            return skip("too-late", Some(late.due_at_ms), detail);
        }
        Decision::Skip(SkipReason::NotDue(not_due)) => {
            let detail = format!("not due yet: next due at {}", time(Some(not_due.next_due_ms)));
            return skip("not-due", Some(not_due.next_due_ms), detail);
        }
        Decision::Skip(SkipReason::Paused(paused)) => {
            let detail = format!(
                "paused by {} since {}: {}",
                paused.by,
                time(Some(paused.since_ms)),
                paused.reason
            );
            return skip("paused", None, detail);
        }
        Decision::Skip(SkipReason::ScheduleConflict(conflict)) => {
            let detail = format!(
                "schedule conflict: the lock runs on {}, which is kept; this replica's is {}",
                conflict.recorded, conflict.ours
            );
            return skip("schedule-conflict", None, detail);
        }
        Decision::Skip(SkipReason::Error(error)) => {
            return skip("error", None, format!("could not decide: {}", describe(&error)))
        }
    };
    let report = |detail: String| TickReport {
        reason: None,
        decision: "run",
        fencing_token: Some(ticket.fencing_token),
        due_at_ms: Some(ticket.past_due.due_at_ms),
        late_by_ms: Some(ticket.past_due.late_by_ms),
        missed: Some(ticket.past_due.missed),
        manual_by: ticket.manual_by.clone(),
        previous_abandoned: ticket.previous_abandoned,
        ..TickReport::skip(settings, "", None, detail)
    };
    if let Err(lost) = work(settings, &ticket) {
        return report(lost);
    }
    let (outcome, detail) = match janitor(settings) {
        Ok(summary) => (Outcome::Success, summary),
        Err(error) => (Outcome::Failure(error.clone()), format!("job failed: {error}")),
    };
    // After the work, before `complete`: the write is fenced by the run's token, so a run
    // that overshot its lease is refused here rather than overwriting a newer result.
    let detail = format!("{detail}; {}", crate::result::write_result(settings, &ticket));
    let detail = match guard::complete(&ticket, &outcome) {
        Ok(()) => detail,
        Err(error) => format!("{detail}; complete failed: {}", describe(&error)),
    };
    report(detail)
}

/// A guard error in a sentence (its Debug is for programmers).
pub fn describe(error: &GuardError) -> String {
    match error {
        GuardError::BadSchedule(bad) => format!("bad schedule: {}: {}", bad.field, bad.message),
        GuardError::Lease(error) => format!("{error:?}"),
    }
}

/// The long part of the job: works in small steps and keeps the lease alive when due; stops
/// at once if the lease is lost (another run may already have started).
fn work(settings: &Settings, ticket: &guard::Ticket) -> Result<(), String> {
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    };
    // A grant that reached us only after its deadline (a paused host) is no grant.
    if now_ms() >= ticket.deadline_ms {
        return Err("stopped before starting: the lease's deadline had passed".into());
    }
    let (until, mut keep_alive_by) = (now_ms() + settings.work_ms, ticket.keep_alive_by_ms);
    while now_ms() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Work that is done goes straight to writing its result, even when a pause (a frozen
        // VM, SIGSTOP) made it overshoot the lease: the fenced write is what protects the
        // store then, and `complete` reports the lost lease. Renewing first would only hide
        // the case the fencing token exists for.
        if now_ms() >= until {
            break;
        }
        if now_ms() >= keep_alive_by {
            guard::keep_alive(ticket)
                .map_err(|e| format!("stopped: lease lost during the work ({})", describe(&e)))?;
            keep_alive_by =
                now_ms() + u64::from(ticket.options.keep_alive_seconds.unwrap_or(5)) * 1000;
        }
    }
    Ok(())
}

fn janitor(settings: &Settings) -> Result<String, String> {
    let rows: Vec<BoardRow> = guard::board(&settings.location())
        .map_err(|e| describe(&e))?
        .locks
        .into_iter()
        .map(BoardRow::from)
        .collect();
    let held = rows.iter().filter(|r| r.state == "leased" || r.state == "breaking").count();
    let abandoned: Vec<&str> = rows
        .iter()
        .filter(|r| r.running && !(r.state == "leased" || r.state == "breaking"))
        .map(|r| r.name.as_str())
        .collect();
    Ok(format!(
        "janitor report: {} locks, {held} held, {} abandoned{}",
        rows.len(),
        abandoned.len(),
        if abandoned.is_empty() { String::new() } else { format!(" ({})", abandoned.join(", ")) }
    ))
}

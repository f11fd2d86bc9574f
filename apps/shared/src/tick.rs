//! One timer tick: ask the guard, do the singleton job if it is our turn, record the outcome.
//!
//! The job is a janitor's report over the lock container: how many locks there are, which are
//! held, and which runs were abandoned (granted, never completed, lease gone). Small, but it
//! reads real state, and it must not run on every replica at once.

use crate::board::{now_ms, BoardRow};
use crate::grant::Grant;
use crate::guard::{self, Decision, Outcome, SkipReason};
use crate::settings::BadVariable;
use crate::words::{describe, duration, shown};
use crate::Settings;
use serde::Serialize;

/// What a tick did: the decision log's JSON line (one per decision, on stdout), the HTTP
/// response, and a line for people (on stderr).
#[derive(Clone, Debug, Serialize)]
pub struct TickReport {
    pub lock: String,
    pub holder: String,
    /// `run`, `skip`, or `error`: the settings cannot be used (the event fails).
    pub decision: &'static str,
    /// Why it skipped: `held-by-other`, `already-ran`, `too-late`, `not-due`, `paused`,
    /// `schedule-conflict` or `error`; an error's: `misconfigured` (runs: none).
    pub reason: Option<&'static str>,
    /// A misconfigured app's variable to fix (`time_zone`).
    pub variable: Option<&'static str>,
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
    /// Why it skipped, or what the job found.
    pub detail: String,
    /// The run's instance could not renew its lease when due (a blocking call in the job, or a
    /// frozen host): the run is a failure, and the event fails with it.
    pub blocked: bool,
    /// The settings name a schedule: a run is for a due time.
    #[serde(skip)]
    pub scheduled: bool,
}

impl TickReport {
    fn skip(settings: &Settings, reason: &'static str, due: Option<u64>, detail: String) -> Self {
        TickReport {
            lock: settings.lock.clone(),
            holder: settings.holder.clone(),
            decision: "skip",
            reason: Some(reason),
            variable: None,
            fencing_token: None,
            due_at_ms: due,
            due_at: due.map(|ms| local(settings, ms)),
            late_by_ms: None,
            missed: None,
            manual_by: None,
            previous_abandoned: false,
            detail,
            blocked: false,
            scheduled: !settings.schedule.trim().is_empty(),
        }
    }

    /// Settings that cannot be used: the variable to fix, named.
    pub fn misconfigured(settings: &Settings, bad: &BadVariable) -> Self {
        TickReport {
            decision: "error",
            variable: Some(bad.variable),
            ..TickReport::skip(settings, "misconfigured", None, bad.to_string())
        }
    }

    /// The decision log's line: one JSON object, documented in docs/operations.md.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The line for people. It names the due time the decision is about (a manual run: who
    /// asked), never the tick that woke the replica: a frozen replica's late tick can run a
    /// later due time than its own.
    pub fn line(&self) -> String {
        let holder = &self.holder;
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
                let what = match (&self.manual_by, &self.due_at) {
                    (Some(by), _) => format!("ran the manual run asked by {by}"),
                    (None, Some(due)) if self.scheduled => format!("ran for the due time {due}"),
                    (None, _) => "ran".to_string(),
                };
                format!(
                    "[{holder}] {what} with fencing token {token}{took_over}{caught_up}: {}",
                    self.detail
                )
            }
            None if self.decision == "error" => format!("[{holder}] error: {}", self.detail),
            None => match (&self.due_at, self.reason) {
                // A not-due skip names the next due time in its detail; it skips none.
                (Some(due), Some(reason)) if reason != "not-due" => {
                    format!("[{holder}] skipped the due time {due}: {}", self.detail)
                }
                _ => format!("[{holder}] skipped: {}", self.detail),
            },
        }
    }

    /// Whether the settings cannot be used: the event should fail, not skip.
    pub fn is_misconfigured(&self) -> bool {
        self.decision == "error"
    }

    /// Prints the decision: its JSON line on stdout, the line for people on stderr, prefixed.
    pub fn print(&self, prefix: &str) {
        println!("{}", self.json());
        eprintln!("{prefix}{}", self.line());
    }
}

/// `at_ms` in ISO 8601 on the job's wall clock (UTC without a zone).
fn local(settings: &Settings, at_ms: u64) -> String {
    let zone = settings.zone();
    guard::show_time(at_ms, zone)
        .or_else(|_| guard::show_time(at_ms, None))
        .map_or_else(|_| at_ms.to_string(), |t| t.local)
}

impl TickReport {
    /// A granted run's report, with what the job did (or why it stopped).
    pub fn ran(settings: &Settings, grant: &Grant, detail: String) -> Self {
        TickReport {
            reason: None,
            decision: "run",
            due_at: Some(local(settings, grant.past_due.due_at_ms)),
            fencing_token: Some(grant.fencing_token),
            due_at_ms: Some(grant.past_due.due_at_ms),
            late_by_ms: Some(grant.past_due.late_by_ms),
            missed: Some(grant.past_due.missed),
            manual_by: grant.manual_by.clone(),
            previous_abandoned: grant.previous_abandoned,
            ..TickReport::skip(settings, "", None, detail)
        }
    }

    /// A skip's report (or, when a setting is at fault, the misconfiguration's).
    pub fn skipped(settings: &Settings, reason: SkipReason) -> Self {
        let skip = |reason, due, detail| TickReport::skip(settings, reason, due, detail);
        let at = |ms: u64| shown(Some(ms), settings.zone());
        match reason {
            // Spin makes an instance per event, so a replica's earlier tick may still be
            // working when its next one fires; naming ourselves as "another" holder would
            // mislead.
            SkipReason::HeldByOther(held) if held.holder.as_ref() == Some(&settings.holder) => {
                let detail = format!(
                    "the previous tick of this replica is still working (lease held by {} until it completes or expires)",
                    settings.holder
                );
                skip("held-by-other", held.due_at_ms, detail)
            }
            SkipReason::HeldByOther(held) => {
                let due = held.due_at_ms;
                let detail = match (held.holder, held.since_ms) {
                    (Some(by), Some(since)) => format!("held by {by}, running since {}", at(since)),
                    (Some(by), None) => format!("held by {by}"),
                    // The lease is taken and no run is recorded under it yet (a grant in
                    // flight, or a run closing): nobody can be named.
                    (None, _) => "held by another replica whose run is not recorded yet".into(),
                };
                skip("held-by-other", due, detail)
            }
            SkipReason::AlreadyRan(ran) => {
                let by = ran.holder.unwrap_or_else(|| "a holder the record does not name".into());
                let state = match (ran.running, ran.outcome) {
                    (true, _) => "still running".to_string(),
                    (false, Some(outcome)) => outcome,
                    (false, None) => "ended".to_string(),
                };
                let detail = format!(
                    "already ran for the due time {}: the run {by} started at {} ({state}); next due {}",
                    at(ran.due_at_ms),
                    at(ran.started_at_ms),
                    at(ran.next_due_ms)
                );
                skip("already-ran", Some(ran.due_at_ms), detail)
            }
            SkipReason::TooLate(late) => {
                let detail = format!(
                    "too late: {} after the due time, past the starting deadline; next due {}",
                    duration(late.late_by_ms),
                    at(late.next_due_ms)
                );
                skip("too-late", Some(late.due_at_ms), detail)
            }
            SkipReason::NotDue(not_due) => {
                let detail = format!("not due yet: next due {}", at(not_due.next_due_ms));
                skip("not-due", Some(not_due.next_due_ms), detail)
            }
            SkipReason::Paused(paused) => {
                let detail = format!(
                    "paused by {} since {}: {}",
                    paused.by,
                    at(paused.since_ms),
                    paused.reason
                );
                skip("paused", None, detail)
            }
            SkipReason::ScheduleConflict(conflict) => {
                let detail = format!(
                    "deferring to the newer schedule {} (on this lock since {}): this replica's \
                     {} is being replaced; if no replica with the newer schedule ticks again, \
                     this one takes over at {}",
                    conflict.newer,
                    at(conflict.since_ms),
                    conflict.ours,
                    at(conflict.until_ms)
                );
                skip("schedule-conflict", None, detail)
            }
            SkipReason::Error(error) => {
                // Misconfiguration is an error to fix, not a skip to wait out.
                if let Some(bad) = crate::check::problems(settings).into_iter().next() {
                    return TickReport::misconfigured(settings, &bad);
                }
                skip("error", None, format!("could not decide: {}", describe(&error)))
            }
        }
    }
}

/// One tick under guard@0.3.0: the job keeps its lease with `keep-alive` between its steps.
pub fn tick(settings: &Settings) -> TickReport {
    let ticket = match guard::guarded_invoke(&settings.lock(), &settings.options()) {
        Decision::Run(ticket) => ticket,
        Decision::Skip(reason) => return TickReport::skipped(settings, reason),
    };
    let grant = Grant::of(&ticket);
    if let Err(lost) = work(settings, &ticket) {
        return TickReport::ran(settings, &grant, lost);
    }
    let (outcome, detail) = janitor(settings);
    // After the work, before `complete`: the write is fenced by the run's token, so a run
    // that overshot its lease is refused here rather than overwriting a newer result.
    let written = crate::result::write_result(settings, &grant, |name, contents| {
        guard::write_fenced(&ticket, name, contents)
    });
    let detail = format!("{detail}; {written}");
    let detail = match guard::complete(&ticket, &outcome) {
        Ok(()) => detail,
        Err(error) => format!("{detail}; complete failed: {}", describe(&error)),
    };
    TickReport::ran(settings, &grant, detail)
}

/// The long part of the job: works in small steps and keeps the lease alive when due; stops
/// at once if the lease is lost (another run may already have started).
fn work(settings: &Settings, ticket: &guard::Ticket) -> Result<(), String> {
    // A grant that reached us only after its deadline (a paused host) is no grant.
    if now_ms() >= ticket.deadline_ms {
        return Err("stopped before starting: the lease's deadline had passed".into());
    }
    // The core's period: the options' keep-alive, by default a third of the lease.
    let period_ms = u64::from(
        ticket.options.keep_alive_seconds.unwrap_or(ticket.options.lease_seconds / 3).max(1),
    ) * 1000;
    let until = now_ms() + settings.work_ms;
    let (mut keep_alive_by, mut deadline) = (ticket.keep_alive_by_ms, ticket.deadline_ms);
    while now_ms() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Work that is done goes straight to writing its result, even when a pause (a frozen
        // VM, SIGSTOP) made it overshoot the lease: the fenced write is what protects the
        // store then, and `complete` reports the lost lease. Renewing first would only hide
        // the case the fencing token exists for.
        if now_ms() >= until {
            break;
        }
        // Work not done past the lease's deadline stops: another run may have started.
        if now_ms() >= deadline {
            return Err("stopped: the lease's deadline passed before a keep-alive".into());
        }
        if now_ms() >= keep_alive_by {
            deadline = guard::keep_alive(ticket)
                .map_err(|e| format!("stopped: lease lost during the work ({})", describe(&e)))?;
            keep_alive_by = now_ms() + period_ms;
        }
    }
    Ok(())
}

/// The job itself: its outcome, and what it found (or why it failed) for the report.
pub fn janitor(settings: &Settings) -> (Outcome, String) {
    match janitor_report(settings) {
        Ok(summary) => (Outcome::Success, summary),
        Err(error) => (Outcome::Failure(error.clone()), format!("job failed: {error}")),
    }
}

fn janitor_report(settings: &Settings) -> Result<String, String> {
    let rows: Vec<BoardRow> = guard::board(&settings.location())
        .map_err(|e| describe(&e))?
        .locks
        .into_iter()
        .map(BoardRow::from)
        .collect();
    let held = rows.iter().filter(|r| r.held()).count();
    let abandoned: Vec<&str> =
        rows.iter().filter(|r| r.running && !r.held()).map(|r| r.name.as_str()).collect();
    Ok(format!(
        "janitor report: {} locks, {held} held, {} abandoned{}",
        rows.len(),
        abandoned.len(),
        if abandoned.is_empty() { String::new() } else { format!(" ({})", abandoned.join(", ")) }
    ))
}

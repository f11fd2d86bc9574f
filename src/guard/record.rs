//! The run record kept in the lock blob's metadata: the last grant's fencing token, start,
//! stop, running flag, outcome and holder; the due time and schedule of the last scheduled
//! grant; the operator's pause and run-now; the schedules replicas ticked with. Pure; the keys and their
//! encoding are in `record_keys`, its text in `record_text`.

use super::history::{self, PastOutcome, PastRun, Totals};
use super::record_text::{fit, NAME_BYTES, TEXT_BYTES};
use super::seen::SeenSchedule;
use super::Outcome;
use crate::schedule::Schedule;

/// Outcome text is kept short: it is a status line, not a log.
const MAX_OUTCOME_CHARS: usize = 200;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunRecord {
    /// The last fencing token granted on this lock (0: never).
    pub fence: u64,
    /// Service time the last run started, in ms since the Unix epoch.
    pub started_ms: Option<u64>,
    /// Service time the last run stopped, if it did.
    pub stopped_ms: Option<u64>,
    /// True from a grant until its `complete`; still true after a crash (the run was abandoned).
    pub running: bool,
    /// How the last completed run ended.
    pub outcome: Option<Outcome>,
    /// Label of the last run's holder.
    pub holder: Option<String>,
    /// The grid of the last grant under an interval schedule: what builds that speak only
    /// intervals read for their boards.
    pub every: Option<Grid>,
    /// The due time (ms) of the last scheduled grant made by a build that records due times.
    pub due: Option<OfGrant<u64>>,
    /// The due times that grant caught up for.
    pub missed: u64,
    /// The schedule of the last scheduled grant ([`Schedule::recorded`]).
    pub schedule: Option<String>,
    /// Who asked for that run: it was a manual one.
    pub manual: Option<OfGrant<String>>,
    /// The token of the stuck run that run replaced.
    pub replaced: Option<OfGrant<u64>>,
    pub paused: Option<Paused>,
    pub run_now: Option<RunNow>,
    /// The schedules replicas ticked with on this lock, newest first (see `schedules`).
    pub schedules: Vec<SeenSchedule>,
    /// The lease id of the last grant by a build that records it: an operator's call writes
    /// under it while that run holds the lock (see `operator`).
    pub lease: Option<OfGrant<String>>,
    /// The last finished runs, newest first.
    pub history: Vec<PastRun>,
    pub totals: Totals,
    /// `tc_` keys this build does not know, with their values, written back unchanged.
    pub unknown: Vec<(String, String)>,
}

/// A value written by the grant with token `fence`: it speaks of the current run only while
/// that grant is the last one (a build that does not write it leaves an older grant's behind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfGrant<T> {
    pub fence: u64,
    pub value: T,
}

impl<T> OfGrant<T> {
    /// The value, when it was written by the grant with token `fence`.
    pub fn of(&self, fence: u64) -> Option<&T> {
        (self.fence == fence).then_some(&self.value)
    }
}

/// An interval schedule's grid, as builds that speak only intervals record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub interval_seconds: u64,
    /// Below the interval.
    pub offset_seconds: u64,
}

/// Who paused the job, when (service clock, ms) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paused {
    pub by: String,
    pub since_ms: u64,
    pub reason: String,
}

/// A manual run asked for and not yet run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunNow {
    pub by: String,
    pub at_ms: u64,
}

/// The last run granted for a due time rather than by `run-now`: the run that covers every due
/// time at or before its start (or its own due time, when it started early).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledRun {
    pub fence: u64,
    /// Its due time, when the build that granted it recorded one.
    pub due_ms: Option<u64>,
    /// Its start; when neither the record nor the history has it any more, its due time.
    pub started_ms: u64,
    pub holder: Option<String>,
    /// Granted and not completed (it may be abandoned).
    pub running: bool,
    /// How it ended, once completed.
    pub outcome: Option<Outcome>,
}

impl ScheduledRun {
    /// The latest instant it covers: its start, or its due time when it started early.
    pub fn covers_until_ms(&self) -> u64 {
        self.started_ms.max(self.due_ms.unwrap_or(0))
    }
}

impl RunRecord {
    /// The current run (the last grant) was a manual one: who asked.
    pub fn manual_by(&self) -> Option<&str> {
        self.manual.as_ref()?.of(self.fence).map(String::as_str)
    }

    /// The lease id of the current run (the last grant), if its build recorded it.
    pub fn lease_id(&self) -> Option<crate::ops::LeaseId> {
        crate::ops::LeaseId::parse(self.lease.as_ref()?.of(self.fence)?).ok()
    }

    /// The due time the current run (the last grant) was for, if its build recorded one.
    fn current_due_ms(&self) -> Option<u64> {
        self.due.as_ref()?.of(self.fence).copied()
    }

    /// The due time the last *scheduled* run was for. Manual runs do not count. A grant by a
    /// build that does not record due times (a rolling upgrade) is read from its start, as that
    /// build judged it: the due time of `schedule` a tick at its start counted for.
    pub fn last_due_ms(&self, schedule: &Schedule, early_ms: u64) -> Option<u64> {
        if self.current_due_ms().is_some() || self.manual_by().is_some() {
            return self.due.as_ref().map(|due| due.value);
        }
        let started = self.started_ms?;
        schedule.counts_for(started, early_ms).or(Some(started))
    }

    /// The last scheduled run. Manual runs come on top of the schedule and cover no due time, so
    /// behind a manual grant the history is searched; when it no longer reaches that far, the
    /// recorded due time stands for the start.
    pub fn last_scheduled_run(&self) -> Option<ScheduledRun> {
        if self.manual_by().is_none() {
            return Some(ScheduledRun {
                fence: self.fence,
                due_ms: self.current_due_ms(),
                started_ms: self.started_ms?,
                holder: self.holder.clone(),
                running: self.running,
                outcome: self.outcome.clone(),
            });
        }
        if let Some(run) = self.history.iter().find(|run| !run.manual) {
            return Some(ScheduledRun {
                fence: run.fence,
                due_ms: run.due_ms,
                started_ms: run.started_ms,
                holder: run.holder.clone(),
                running: false,
                outcome: run.completed_outcome(),
            });
        }
        let OfGrant { fence, value: due_ms } = self.due?;
        Some(ScheduledRun {
            fence,
            due_ms: Some(due_ms),
            started_ms: due_ms,
            holder: None,
            running: false,
            outcome: None,
        })
    }

    /// The current run (the last grant) as the history keeps it, ended with `outcome`.
    fn as_past_run(&self, stopped_ms: Option<u64>, outcome: PastOutcome) -> Option<PastRun> {
        let manual = self.manual_by().is_some();
        let due = self.current_due_ms().filter(|_| !manual);
        Some(PastRun {
            fence: self.fence,
            due_ms: due,
            started_ms: self.started_ms?,
            stopped_ms,
            missed: if due.is_some() { self.missed } else { 0 },
            manual,
            holder: self.holder.clone(),
            outcome,
        })
    }

    /// Runs in a row, newest first, that did not succeed (failed, abandoned or replaced), as
    /// far as the history reaches.
    pub fn consecutive_failures(&self) -> u32 {
        self.history.iter().take_while(|run| !run.succeeded()).count() as u32
    }

    /// The record a new grant writes: the next token, running, no stop yet; the operator's and
    /// a newer build's fields carried over, a fulfilled run-now dropped.
    /// A previous run still marked running never completed: it goes into the history as
    /// abandoned.
    pub fn granted(
        &self,
        fence: u64,
        started_ms: u64,
        holder: &str,
        lease_id: &crate::ops::LeaseId,
    ) -> RunRecord {
        let (mut history, mut totals) = (self.history.clone(), self.totals.clone());
        let in_history = history.first().is_some_and(|run| run.fence == self.fence);
        if self.running {
            if let Some(run) = self.as_past_run(None, PastOutcome::Abandoned) {
                history = history::with(&history, run);
                totals.abandoned += 1;
            }
        } else if let (false, Some(stopped_ms)) = (in_history, self.stopped_ms) {
            // The last run completed under a build that keeps no history (one before
            // guard@0.3.0, in a rolling upgrade): it goes in now, from the record's fields.
            let outcome = self.outcome.as_ref().unwrap_or(&Outcome::Success);
            let past = counted(&mut totals, stopped_ms, outcome);
            if let Some(run) = self.as_past_run(Some(stopped_ms), past) {
                history = history::with(&history, run);
            }
        }
        RunRecord {
            fence,
            history,
            totals,
            lease: Some(OfGrant { fence, value: lease_id.to_string() }),
            started_ms: Some(started_ms),
            stopped_ms: None,
            running: true,
            outcome: None,
            holder: Some(fit(holder, NAME_BYTES)).filter(|h| !h.is_empty()),
            manual: None,
            replaced: None,
            run_now: None,
            ..self.clone()
        }
    }

    /// This grant was for `due_ms` under `schedule`, catching up for `missed` due times.
    pub fn scheduled_for(self, schedule: &Schedule, due_ms: u64, missed: u64) -> RunRecord {
        let every = match schedule {
            Schedule::Every(every) => Some(Grid {
                interval_seconds: every.interval_seconds(),
                offset_seconds: every.offset_seconds(),
            }),
            _ => None,
        };
        let due = schedule.is_scheduled().then_some(OfGrant { fence: self.fence, value: due_ms });
        let totals = Totals { missed: self.totals.missed.saturating_add(missed), ..self.totals };
        RunRecord { every, due, missed, totals, schedule: Some(schedule.recorded()), ..self }
    }

    /// This grant broke the lease of the run with token `old` (overlap `replace`).
    pub fn replacing(self, old: u64) -> RunRecord {
        let mut history = self.history;
        if let Some(run) = history.first_mut().filter(|run| run.fence == old) {
            run.outcome = PastOutcome::Replaced;
        }
        RunRecord { replaced: Some(OfGrant { fence: self.fence, value: old }), history, ..self }
    }

    /// This grant was a manual run asked for by `by`.
    pub fn manual_for(self, by: &str) -> RunRecord {
        RunRecord {
            manual: Some(OfGrant { fence: self.fence, value: fit(by, NAME_BYTES) }),
            ..self
        }
    }

    /// The record `complete` writes for a run whose instance could not renew its lease when due
    /// (see `hold`): closed with `outcome`, and counted as blocked.
    pub fn completed_blocked(&self, stopped_ms: u64, outcome: &Outcome) -> RunRecord {
        let mut closed = self.completed(stopped_ms, outcome);
        closed.totals.blocked += 1;
        closed
    }

    /// A blocked run counted after its lease was gone (another replica may hold the lock now):
    /// the total goes up, and when a later grant already put the run in the history as
    /// abandoned, it becomes the failure it was, saying why.
    pub fn noted_blocked(&self, fence: u64, reason: &str) -> RunRecord {
        let mut noted = self.clone();
        noted.totals.blocked += 1;
        let abandoned = noted
            .history
            .iter_mut()
            .find(|run| run.fence == fence && run.outcome == PastOutcome::Abandoned);
        if let Some(run) = abandoned {
            run.outcome =
                PastOutcome::Failure(reason.chars().take(history::FAILURE_CHARS).collect());
            noted.totals.abandoned = noted.totals.abandoned.saturating_sub(1);
            noted.totals.failures += 1;
        }
        noted
    }

    /// The record `complete` writes: the run closed, and added to the history and totals. A
    /// failure's reason is shortened so that its text (`failure: …`) keeps to the limits.
    pub fn completed(&self, stopped_ms: u64, outcome: &Outcome) -> RunRecord {
        let text: String = outcome.as_record_text().chars().take(MAX_OUTCOME_CHARS).collect();
        let outcome = Outcome::from_record_text(&fit(&text, TEXT_BYTES));
        let (mut history, mut totals) = (self.history.clone(), self.totals.clone());
        let past = counted(&mut totals, stopped_ms, &outcome);
        if let Some(run) = self.as_past_run(Some(stopped_ms), past) {
            history = history::with(&history, run);
        }
        RunRecord {
            stopped_ms: Some(stopped_ms),
            running: false,
            outcome: Some(outcome),
            history,
            totals,
            ..self.clone()
        }
    }

    /// The recorded schedule, when this build can read it.
    pub fn recorded_schedule(&self) -> Option<Schedule> {
        if let Some(text) = &self.schedule {
            return Schedule::from_recorded(text);
        }
        let grid = self.every?;
        crate::schedule::Every::new(grid.interval_seconds, grid.offset_seconds)
            .ok()
            .map(Schedule::Every)
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;

/// A finished run's outcome, counted in `totals`.
fn counted(totals: &mut Totals, stopped_ms: u64, outcome: &Outcome) -> PastOutcome {
    match outcome {
        Outcome::Success => {
            totals.successes += 1;
            totals.last_success_ms = Some(stopped_ms);
            PastOutcome::Success
        }
        Outcome::Failure(reason) => {
            totals.failures += 1;
            totals.last_failure_ms = Some(stopped_ms);
            PastOutcome::Failure(reason.clone())
        }
    }
}

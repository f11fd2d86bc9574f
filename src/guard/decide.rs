//! The guard's decision: a pure function of (run record, lease state, service time, the lock's
//! creation time, options). Every exported call that decides decides here.

use super::schedules::{self, SeenSchedule};
use super::{unix_ms, FirstRun, GuardOptions, Overlap, PastDue, RunRecord, SkipReason};
use crate::ops::LeaseState;
use std::time::SystemTime;

/// How long after a due time a lock created by a tick still owes that due time its run: the
/// tick that fires at the due time creates the lock a moment later.
const FIRST_RUN_GRACE_MS: u64 = 60_000;

/// How far ahead of the service's now a recorded start must be to be read as a clock that
/// stepped back rather than as a run of now (the service's `Date` has whole seconds, and two of
/// its front ends may differ by some).
const CLOCK_STEP_MS: u64 = 60_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Skip(SkipReason),
    /// Try to take the lease; a successful grant carries `fence`.
    Contend(Contend),
}

/// What a grant would be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contend {
    pub fence: u64,
    pub previous_abandoned: bool,
    pub past_due: PastDue,
    /// A manual run (`run-now`), for whom.
    pub manual_by: Option<String>,
    /// The token of a stuck run whose lease to break first (overlap `replace`).
    pub replace: Option<u64>,
    /// The lock's schedules with this replica's stamped, for the grant to write.
    pub schedules: Vec<SeenSchedule>,
}

/// Decides from one look at the lock. `now` is the storage service's time (its `Date`), the
/// one clock every replica shares; a tick counts for the due time [`crate::schedule::Schedule::counts_for`]
/// names.
pub fn decide(
    record: &RunRecord,
    lease: LeaseState,
    now: SystemTime,
    created: Option<SystemTime>,
    options: &GuardOptions,
) -> Verdict {
    if let Some(paused) = &record.paused {
        return Verdict::Skip(SkipReason::Paused(paused.clone()));
    }
    let schedule = &options.schedule;
    let now_ms = unix_ms(now);
    let held = matches!(lease, LeaseState::Leased | LeaseState::Breaking);
    // Replicas on an older schedule are being replaced: they run nothing, manual runs included.
    let seen = schedules::seen(record, schedule, now_ms, held && record.running);
    if let Some(deferral) = seen.defer {
        return Verdict::Skip(SkipReason::ScheduleConflict {
            newer: deferral.newer,
            ours: schedule.to_string(),
            since_ms: deferral.since_ms,
            until_ms: deferral.until_ms,
        });
    }
    let due = schedule.counts_for(now_ms, options.early_ms);
    let last_due = record.last_due_ms(schedule, options.early_ms);
    let mut replace = None;
    if held {
        match stuck(record, now_ms, due, last_due, options) {
            Some(fence) => replace = Some(fence),
            None => {
                return Verdict::Skip(SkipReason::HeldByOther {
                    holder: record.running.then(|| record.holder.clone()).flatten(),
                    since_ms: record.running.then_some(record.started_ms).flatten(),
                    waited_ms: 0,
                    due_at_ms: due,
                })
            }
        }
    }
    let contend = |past_due: PastDue, manual_by: Option<String>| {
        Verdict::Contend(Contend {
            fence: record.fence.saturating_add(1),
            // Running, yet nobody holds the lease (or we are replacing it): that run is over.
            previous_abandoned: record.running,
            past_due,
            manual_by,
            replace,
            schedules: seen.schedules.clone(),
        })
    };
    let mut past_due = PastDue {
        due_at_ms: due.unwrap_or(now_ms),
        late_by_ms: due.map_or(0, |due| now_ms.saturating_sub(due)),
        previous_due_ms: last_due.filter(|_| schedule.is_scheduled()),
        previous_start_ms: record.started_ms,
        missed: 0,
    };
    if let Some(asked) = &record.run_now {
        return contend(past_due, Some(asked.by.clone()));
    }
    if !schedule.is_scheduled() {
        return contend(past_due, None);
    }
    let next_due_ms = schedule.after(due.map_or(now_ms, |due| due.max(now_ms)));
    let Some(due) = due else {
        return Verdict::Skip(SkipReason::NotDue { next_due_ms });
    };
    if let (Some(started_ms), Some(last_due)) = (record.started_ms, last_due) {
        if last_due == due && replace.is_none() {
            return Verdict::Skip(SkipReason::AlreadyRan {
                due_at_ms: due,
                started_ms,
                holder: record.holder.clone(),
                running: record.running,
                outcome: record.outcome.clone(),
                next_due_ms,
            });
        }
    }
    match record.last_scheduled_run() {
        // A start later than the service's now cannot come from its clock (it stepped back, or
        // the record was edited by hand): it must not block runs until then, so it is passed
        // over, and the grant replaces it.
        Some(last) if last.started_ms > now_ms.saturating_add(CLOCK_STEP_MS) => {}
        // Every due time up to the last scheduled start is covered by that run, whichever
        // schedule it ran under: after a schedule change, an earlier due time of the new
        // schedule is not owed (a CronJob whose schedule is edited counts from its last
        // scheduled run, too).
        Some(last) if due <= last.covers_until_ms() && replace.is_none() => {
            return Verdict::Skip(SkipReason::AlreadyRan {
                due_at_ms: due,
                started_ms: last.started_ms,
                holder: last.holder,
                running: last.running,
                outcome: last.outcome,
                next_due_ms,
            });
        }
        Some(last) => {
            let from = last.covers_until_ms().max(seen.ours_since_ms.saturating_sub(1));
            past_due.missed = schedule.count_between(from, due)
        }
        None if options.first_run == FirstRun::AtFirstDueTime => {
            let created_ms = created.map(unix_ms).unwrap_or(0);
            if due.saturating_add(FIRST_RUN_GRACE_MS) < created_ms {
                return Verdict::Skip(SkipReason::NotDue { next_due_ms });
            }
        }
        None => {}
    }
    if let Some(deadline) = options.starting_deadline_seconds {
        if past_due.late_by_ms > deadline.saturating_mul(1000) {
            let next_due_ms = next_due_ms.unwrap_or(u64::MAX);
            return Verdict::Skip(SkipReason::TooLate {
                due_at_ms: due,
                late_by_ms: past_due.late_by_ms,
                next_due_ms,
            });
        }
    }
    contend(past_due, None)
}

/// The token of the run holding the lock, if overlap `replace` says to break it now: it has
/// held the lock longer than the limit, and a due time later than its own has come.
fn stuck(
    record: &RunRecord,
    now_ms: u64,
    due: Option<u64>,
    last_due: Option<u64>,
    options: &GuardOptions,
) -> Option<u64> {
    let Overlap::Replace { after_seconds } = options.overlap else { return None };
    let held_since = record.started_ms.filter(|_| record.running)?;
    let long_enough = now_ms.saturating_sub(held_since) >= u64::from(after_seconds) * 1000;
    let newer_due = due? > last_due.unwrap_or(0);
    (long_enough && newer_due && record.manual_by().is_none()).then_some(record.fence)
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;

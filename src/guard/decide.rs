//! The guard's decision: a pure function of (run record, lease state, service time, options).

use super::{unix_ms, GuardOptions, PastDue, RunRecord, SkipReason};
use crate::ops::LeaseState;
use std::time::SystemTime;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Skip(SkipReason),
    /// Try to take the lease; a successful grant carries `fence`.
    Contend {
        fence: u64,
        previous_abandoned: bool,
        past_due: PastDue,
    },
}

/// Decides from one look at the lock. `now` is the storage service's time (its `Date`), the
/// one clock every replica shares; which due time an arrival counts for tolerates replicas
/// whose clocks (and so whose triggers) run early, see [`super::Schedule`].
pub fn decide(
    record: &RunRecord,
    lease: LeaseState,
    now: SystemTime,
    options: &GuardOptions,
) -> Verdict {
    if matches!(lease, LeaseState::Leased | LeaseState::Breaking) {
        return Verdict::Skip(SkipReason::HeldByOther {
            holder: record.running.then(|| record.holder.clone()).flatten(),
            since_ms: record.running.then_some(record.started_ms).flatten(),
        });
    }
    let schedule = options.schedule();
    let now_ms = unix_ms(now);
    let due = schedule.due_index(now_ms);
    let mut past_due = PastDue {
        due_at_ms: schedule.due_time_ms(due),
        late_by_ms: schedule.lateness_ms(now_ms),
        previous_start_ms: record.started_ms,
        missed: 0,
    };
    if let (Some(started_ms), true) = (record.started_ms, schedule.is_deduplicating()) {
        let ran = schedule.due_index(started_ms);
        if ran == due {
            return Verdict::Skip(SkipReason::AlreadyRan {
                started_ms,
                holder: record.holder.clone(),
                running: record.running,
                outcome: record.outcome.clone(),
            });
        }
        // A start that counts for a *later* due time than now cannot come from the service's
        // clock (it stepped back, or the record was edited by hand): it must not block runs
        // until then, so it is passed over, and the grant replaces it.
        past_due.missed = due.saturating_sub(ran).saturating_sub(1);
    }
    if let Some(deadline) = options.starting_deadline_seconds {
        if schedule.is_deduplicating() && past_due.late_by_ms > deadline.saturating_mul(1000) {
            return Verdict::Skip(SkipReason::TooLate {
                due_at_ms: past_due.due_at_ms,
                late_by_ms: past_due.late_by_ms,
                next_due_ms: schedule.next_due_ms(now_ms),
            });
        }
    }
    Verdict::Contend {
        fence: record.fence.saturating_add(1),
        // Running, yet nobody holds the lease: that holder is gone.
        previous_abandoned: record.running,
        past_due,
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;

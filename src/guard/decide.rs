//! The guard's decision: a pure function of (run record, lease state, service time, options).

use super::{unix_ms, GuardOptions, RunRecord, SkipReason};
use crate::ops::LeaseState;
use std::time::SystemTime;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Skip(SkipReason),
    /// Try to take the lease; a successful grant carries `fence`.
    Contend {
        fence: u64,
        previous_abandoned: bool,
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
    if let Some(started_ms) = record.started_ms {
        // A start that counts for a *later* due time than now cannot come from the service's
        // clock (it stepped back, or the record was edited by hand): it must not block runs
        // until then, so it is treated as an earlier due time and the grant replaces it.
        if schedule.is_deduplicating()
            && schedule.due_index(started_ms) == schedule.due_index(unix_ms(now))
        {
            return Verdict::Skip(SkipReason::AlreadyRan {
                started_ms,
                holder: record.holder.clone(),
                running: record.running,
                outcome: record.outcome.clone(),
            });
        }
    }
    Verdict::Contend {
        fence: record.fence.saturating_add(1),
        // Running, yet nobody holds the lease: that holder is gone.
        previous_abandoned: record.running,
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;

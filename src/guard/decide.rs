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
/// one clock every replica shares, so replicas with skewed clocks still agree on intervals.
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
    if let Some(started_ms) = record.started_ms {
        if same_interval(started_ms, unix_ms(now), options.interval_seconds) {
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

/// The interval index of a service time (0 when deduplication is off).
pub fn interval_of(at_ms: u64, interval_seconds: u64) -> u64 {
    match interval_seconds {
        0 => 0,
        seconds => at_ms / (seconds * 1000),
    }
}

/// A start "in the future" (it cannot happen with one service clock, but a record may have
/// been written by hand) counts as this interval, so it never causes a second run.
fn same_interval(started_ms: u64, now_ms: u64, interval_seconds: u64) -> bool {
    interval_seconds > 0
        && (started_ms >= now_ms
            || interval_of(started_ms, interval_seconds) == interval_of(now_ms, interval_seconds))
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;

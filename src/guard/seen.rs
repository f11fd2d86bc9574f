//! One schedule replicas ticked with on a lock, as the run record keeps it (see `schedules`
//! for what the list means).

use crate::schedule::Schedule;

/// A schedule counts as alive while a replica with it has ticked within this: three periods of
/// a trigger that fires every minute (the templates' trigger; a trigger must fire at least that
/// often for a rolling deploy to be judged right).
pub const ALIVE_MS: u64 = 180_000;

/// A schedule replicas ticked with on the lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenSchedule {
    /// As the record keeps schedules ([`Schedule::recorded`]), its first 256 bytes encoded.
    pub schedule: String,
    /// Service time a replica with it first ticked on the lock.
    pub first_seen_ms: u64,
    /// Service time of its last stamp.
    pub last_seen_ms: u64,
}

impl SeenSchedule {
    pub fn alive(&self, now_ms: u64) -> bool {
        now_ms.saturating_sub(self.last_seen_ms) <= ALIVE_MS
    }

    /// The schedule for people (`cron "0 0 2 * * *" in Europe/Berlin (spin)`), or its recorded
    /// text when this build cannot read it.
    pub fn shown(&self) -> String {
        Schedule::from_recorded(&self.schedule).map_or(self.schedule.clone(), |s| s.to_string())
    }

    /// How long its due times are apart around `at_ms` (none for no schedule, or unreadable).
    pub fn period_ms(&self, at_ms: u64) -> Option<u64> {
        let schedule = Schedule::from_recorded(&self.schedule)?;
        let next = schedule.after(at_ms)?;
        Some(schedule.after(next)?.saturating_sub(next))
    }
}

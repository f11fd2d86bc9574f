//! Due times: when a job's runs are due, by the storage service's clock, and which due time an
//! arrival belongs to. Pure arithmetic on milliseconds since the Unix epoch.
//!
//! A job is due at `offset + k * interval`. A timer trigger fires on every replica at (its own
//! idea of) each due time, so arrivals for one due time are spread around it by the replicas'
//! clock skew and by latency. Cutting time at the due times themselves (`floor(t / interval)`)
//! puts a replica whose clock runs ahead into the *previous* slot, where it may find no run and
//! run a second time for the same tick. So each due time owns the slot that starts
//! [`Schedule::tolerance_ms`] before it: an arrival up to that much early, or up to
//! `interval - tolerance` late, counts for that due time.

/// The largest skew tolerance: a quarter of the interval, but never more than five minutes
/// (Azure refuses requests from clocks 15 minutes off anyway, and a daily job should not treat
/// a run hours early as today's).
const MAX_TOLERANCE_MS: u64 = 5 * 60 * 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    interval_ms: u64,
    offset_ms: u64,
}

impl Schedule {
    /// `interval_seconds == 0` means no schedule: every arrival may run once the lease is free.
    /// `offset_seconds` must be below the interval (checked by [`super::GuardOptions`]).
    pub fn new(interval_seconds: u64, offset_seconds: u64) -> Schedule {
        Schedule {
            interval_ms: interval_seconds.saturating_mul(1000),
            offset_ms: offset_seconds.saturating_mul(1000),
        }
    }

    pub fn is_deduplicating(&self) -> bool {
        self.interval_ms > 0
    }

    /// How early an arrival may be and still count for the coming due time: a quarter of the
    /// interval, at most five minutes. This is the clock-skew bound the guard promises.
    pub fn tolerance_ms(&self) -> u64 {
        (self.interval_ms / 4).min(MAX_TOLERANCE_MS)
    }

    /// The index `k` of the due time an instant counts for (0 without a schedule): the latest
    /// due time at or before `at + tolerance`.
    pub fn due_index(&self, at_ms: u64) -> u64 {
        if self.interval_ms == 0 {
            return 0;
        }
        at_ms.saturating_add(self.tolerance_ms()).saturating_sub(self.offset_ms) / self.interval_ms
    }

    /// When due time `index` is, in ms since the Unix epoch.
    pub fn due_time_ms(&self, index: u64) -> u64 {
        self.offset_ms.saturating_add(index.saturating_mul(self.interval_ms))
    }

    /// How long after its due time an arrival is (0 when it is early, within the tolerance).
    pub fn lateness_ms(&self, at_ms: u64) -> u64 {
        at_ms.saturating_sub(self.due_time_ms(self.due_index(at_ms)))
    }

    /// The first due time after `at`'s own.
    pub fn next_due_ms(&self, at_ms: u64) -> u64 {
        self.due_time_ms(self.due_index(at_ms).saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    const MINUTE: u64 = 60_000;

    #[test]
    fn an_early_arrival_within_the_tolerance_counts_for_the_coming_due_time() {
        let every_minute = Schedule::new(60, 0);
        assert_eq!(every_minute.tolerance_ms(), 15_000);
        let tick = 1_000 * MINUTE;
        assert_eq!(every_minute.due_index(tick - 15_000), 1_000);
        assert_eq!(every_minute.due_index(tick - 15_001), 999);
        assert_eq!(every_minute.due_index(tick + 44_999), 1_000);
        assert_eq!(every_minute.due_index(tick + 45_000), 1_001);
        assert_eq!(every_minute.lateness_ms(tick - 500), 0);
        assert_eq!(every_minute.lateness_ms(tick + 700), 700);
        assert_eq!(every_minute.next_due_ms(tick - 500), tick + MINUTE);
    }

    #[test]
    fn the_offset_moves_the_due_times_and_the_tolerance_is_capped() {
        let daily_at_two = Schedule::new(86_400, 7_200);
        assert_eq!(daily_at_two.tolerance_ms(), 300_000);
        let day = 20_000 * 86_400_000;
        let due = day + 7_200_000;
        assert_eq!(daily_at_two.due_time_ms(daily_at_two.due_index(due)), due);
        assert_eq!(daily_at_two.due_index(due - 1), daily_at_two.due_index(due));
        assert_eq!(daily_at_two.due_index(due - 300_001) + 1, daily_at_two.due_index(due));
        assert_eq!(daily_at_two.lateness_ms(due + 3_600_000), 3_600_000);
    }

    #[test]
    fn no_interval_means_one_slot_for_all_time() {
        let none = Schedule::new(0, 0);
        assert!(!none.is_deduplicating());
        assert_eq!(none.due_index(0), none.due_index(u64::MAX));
    }
}

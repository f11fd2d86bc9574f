//! A fixed grid of due times: `offset + k * interval`, in ms since the Unix epoch. Pure
//! arithmetic; what `@every <duration>` schedules are.

use crate::error::FieldError;

/// Due every `interval_ms`, from `offset_ms` past the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Every {
    interval_ms: u64,
    offset_ms: u64,
}

impl Every {
    /// `interval_seconds` 1 s to a year; `offset_seconds` below it.
    pub fn new(interval_seconds: u64, offset_seconds: u64) -> Result<Every, FieldError> {
        if !(1..=366 * 24 * 3600).contains(&interval_seconds) {
            return Err(FieldError::new(
                "interval-seconds",
                format!("must be 1 second to a year (31622400), got {interval_seconds}"),
            ));
        }
        if offset_seconds >= interval_seconds {
            return Err(FieldError::new(
                "offset-seconds",
                format!(
                    "must be below interval-seconds; got {offset_seconds} and {interval_seconds}"
                ),
            ));
        }
        Ok(Every { interval_ms: interval_seconds * 1000, offset_ms: offset_seconds * 1000 })
    }

    pub fn interval_seconds(&self) -> u64 {
        self.interval_ms / 1000
    }

    pub fn offset_seconds(&self) -> u64 {
        self.offset_ms / 1000
    }

    pub(super) fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// The latest due time at or before `at_ms`.
    pub fn at_or_before(&self, at_ms: u64) -> Option<u64> {
        let since = at_ms.checked_sub(self.offset_ms)?;
        Some(self.offset_ms + since / self.interval_ms * self.interval_ms)
    }

    /// The first due time after `at_ms`.
    pub fn after(&self, at_ms: u64) -> u64 {
        match self.at_or_before(at_ms) {
            Some(due) => due.saturating_add(self.interval_ms),
            None => self.offset_ms,
        }
    }

    /// Due times strictly between `after_ms` and `before_ms`.
    pub fn count_between(&self, after_ms: u64, before_ms: u64) -> u64 {
        let first = self.after(after_ms);
        if first >= before_ms {
            return 0;
        }
        (before_ms - 1 - first) / self.interval_ms + 1
    }
}

#[cfg(test)]
mod tests {
    use super::Every;

    const MINUTE: u64 = 60_000;

    #[test]
    fn due_times_fall_on_the_grid_from_the_offset() {
        let daily_at_two = Every::new(86_400, 7_200).unwrap();
        let day = 20_000 * 86_400_000;
        let due = day + 7_200_000;
        assert_eq!(daily_at_two.at_or_before(due), Some(due));
        assert_eq!(daily_at_two.at_or_before(due - 1), Some(due - 86_400_000));
        assert_eq!(daily_at_two.after(due), due + 86_400_000);
        assert_eq!(daily_at_two.at_or_before(7_199_999), None);
        assert_eq!(daily_at_two.after(0), 7_200_000);
    }

    #[test]
    fn counting_between_two_instants_excludes_both_ends() {
        let every_minute = Every::new(60, 0).unwrap();
        let t = 1_000 * MINUTE;
        assert_eq!(every_minute.count_between(t, t + MINUTE), 0);
        assert_eq!(every_minute.count_between(t, t + MINUTE + 1), 1);
        assert_eq!(every_minute.count_between(t - 1, t + 3 * MINUTE), 3);
        assert_eq!(every_minute.count_between(t + 5, t), 0);
    }

    #[test]
    fn out_of_range_intervals_and_offsets_are_refused_naming_the_field() {
        assert_eq!(Every::new(0, 0).unwrap_err().field, "interval-seconds");
        assert_eq!(Every::new(60, 60).unwrap_err().field, "offset-seconds");
        assert!(Every::new(366 * 24 * 3600, 0).is_ok());
    }
}

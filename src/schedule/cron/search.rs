//! Finding and counting matches. Times of day are bitmask lookups; dates are found a month at a
//! time (one mask of matching days per month), so every search is bounded by the 400-year
//! Gregorian cycle — about 4,800 month masks — whatever the input, and a count over any span
//! multiplies whole cycles instead of walking them.
//!
//! Croner's `find_next_occurrence` (`lib.rs:233-275`) walks month, day, hour, minute and second
//! forward until all match; in UTC that is the first matching second at or after the start,
//! which is what [`Cron::next_civil`] computes. (Croner gives up at the year 5000,
//! `lib.rs:95,671`; this does not, as nothing in the calendar changes there.)

use super::Cron;
use crate::civil::{civil_from_days, days_in_month, weekday, DAYS_PER_CYCLE, SECONDS_PER_DAY};

/// Seconds in a day, as a time of day.
const DAY: u32 = SECONDS_PER_DAY as u32;

/// Month masks to look through for the next or previous matching day. A match, if there is
/// one, lies within one cycle of any day; the start's own month and the 4,800 after it (or
/// before it) cover that cycle, since the month 400 years on is the same month, as long.
const HORIZON_MONTHS: u32 = 4_800 + 1;

/// A calendar month being walked: its year and number, the day number of its 1st, and the
/// weekday of its 1st.
struct Month {
    year: i64,
    month: u32,
    first: i64,
    weekday: u32,
}

impl Month {
    /// The month holding `days`, and the day's number in it.
    fn containing(days: i64) -> (Month, u32) {
        let (year, month, day) = civil_from_days(days);
        let first = days - i64::from(day - 1);
        (Month { year, month, first, weekday: weekday(first) }, day)
    }

    fn length(&self) -> u32 {
        days_in_month(self.year, self.month)
    }

    fn next(&self) -> Month {
        let length = self.length();
        let (year, month) =
            if self.month == 12 { (self.year + 1, 1) } else { (self.year, self.month + 1) };
        let first = self.first + i64::from(length);
        Month { year, month, first, weekday: (self.weekday + length) % 7 }
    }

    fn previous(&self) -> Month {
        let (year, month) =
            if self.month == 1 { (self.year - 1, 12) } else { (self.year, self.month - 1) };
        let length = days_in_month(year, month);
        let first = self.first - i64::from(length);
        Month { year, month, first, weekday: (self.weekday + 35 - length) % 7 }
    }
}

impl Cron {
    /// The first matching time of day (seconds since midnight) at or after `from`; `None` when
    /// none is left in the day.
    pub fn next_time_of_day(&self, from: u32) -> Option<u32> {
        if from >= DAY {
            return None;
        }
        let (hour, minute, second) = (from / 3600, from / 60 % 60, from % 60);
        if self.hours & 1 << hour != 0 {
            if self.minutes & 1 << minute != 0 {
                if let Some(second) = first_bit(self.seconds, second) {
                    return Some(clock(hour, minute, second));
                }
            }
            if let Some(minute) = first_bit(self.minutes, minute + 1) {
                return Some(clock(hour, minute, first_bit(self.seconds, 0)?));
            }
        }
        let hour = first_bit(self.hours, hour + 1)?;
        Some(clock(hour, first_bit(self.minutes, 0)?, first_bit(self.seconds, 0)?))
    }

    /// The last matching time of day at or before `to` (later than the day's last second
    /// means the whole day); `None` when none is that early.
    pub fn prev_time_of_day(&self, to: u32) -> Option<u32> {
        let to = to.min(DAY - 1);
        let (hour, minute, second) = (to / 3600, to / 60 % 60, to % 60);
        if self.hours & 1 << hour != 0 {
            if self.minutes & 1 << minute != 0 {
                if let Some(second) = last_bit(self.seconds, second) {
                    return Some(clock(hour, minute, second));
                }
            }
            if let Some(minute) = minute.checked_sub(1).and_then(|m| last_bit(self.minutes, m)) {
                return Some(clock(hour, minute, last_bit(self.seconds, 63)?));
            }
        }
        let hour = last_bit(self.hours, hour.checked_sub(1)?)?;
        Some(clock(hour, last_bit(self.minutes, 63)?, last_bit(self.seconds, 63)?))
    }

    /// How many matching times of day lie in `[from, to)` (bounds past the day's end mean the
    /// day's end).
    pub fn count_times_of_day(&self, from: u32, to: u32) -> u64 {
        if from >= to {
            return 0;
        }
        self.times_before(to) - self.times_before(from)
    }

    /// Matching times of day before `time`, by counting bits: whole hours, then whole minutes
    /// of `time`'s hour, then seconds of its minute.
    fn times_before(&self, time: u32) -> u64 {
        let time = time.min(DAY);
        let (hour, minute, second) = (time / 3600, time / 60 % 60, time % 60);
        let per_minute = u64::from(self.seconds.count_ones());
        let per_hour = u64::from(self.minutes.count_ones()) * per_minute;
        let mut count = bits_below(self.hours, hour) * per_hour;
        if self.hours & 1 << hour != 0 {
            count += bits_below(self.minutes, minute) * per_minute;
            if self.minutes & 1 << minute != 0 {
                count += bits_below(self.seconds, second);
            }
        }
        count
    }

    /// The first matching civil second (seconds since 1970-01-01T00:00:00 on a wall clock) at
    /// or after `from`. `None` only when the answer would not fit an `i64`: a parsed expression
    /// matches at least once in every 400 years.
    pub fn next_civil(&self, from: i64) -> Option<i64> {
        let (day, time) = split(from);
        if self.matches_day(day) {
            if let Some(time) = self.next_time_of_day(time) {
                return at(day, time);
            }
        }
        let day = self.next_day(day + 1)?;
        at(day, self.next_time_of_day(0)?)
    }

    /// The last matching civil second at or before `to`; `None` only when it would not fit an
    /// `i64`.
    pub fn prev_civil(&self, to: i64) -> Option<i64> {
        let (day, time) = split(to);
        if self.matches_day(day) {
            if let Some(time) = self.prev_time_of_day(time) {
                return at(day, time);
            }
        }
        let day = self.prev_day(day - 1)?;
        at(day, self.prev_time_of_day(DAY - 1)?)
    }

    /// How many matching civil seconds lie in `[from, to)`: counted by days (a matching day
    /// contributes its count of times of day) and by whole 400-year cycles, never second by
    /// second, so a per-second schedule over any span costs the same as a daily one.
    pub fn count_civil(&self, from: i64, to: i64) -> u64 {
        if to <= from {
            return 0;
        }
        let ((first_day, first_time), (last_day, last_time)) = (split(from), split(to));
        let partial = |day: i64, from: u32, to: u32| {
            if self.matches_day(day) {
                u128::from(self.count_times_of_day(from, to))
            } else {
                0
            }
        };
        if first_day == last_day {
            return partial(first_day, first_time, last_time) as u64;
        }
        let whole_days = u128::from(self.count_days(first_day + 1, last_day));
        let total = partial(first_day, first_time, DAY)
            + whole_days * u128::from(self.count_times_of_day(0, DAY))
            + partial(last_day, 0, last_time);
        // At most `to - from`, which fits; saturating only keeps the arithmetic total.
        u64::try_from(total).unwrap_or(u64::MAX)
    }

    fn next_day(&self, from: i64) -> Option<i64> {
        let (mut month, day) = Month::containing(from);
        let mut mask = self.month_mask(&month) & u32::MAX << day;
        for _ in 0..HORIZON_MONTHS {
            if mask != 0 {
                return Some(month.first + i64::from(mask.trailing_zeros()) - 1);
            }
            month = month.next();
            mask = self.month_mask(&month);
        }
        None
    }

    fn prev_day(&self, to: i64) -> Option<i64> {
        let (mut month, day) = Month::containing(to);
        let mut mask = self.month_mask(&month) & u32::MAX >> (31 - day);
        for _ in 0..HORIZON_MONTHS {
            if mask != 0 {
                return Some(month.first + i64::from(31 - mask.leading_zeros()) - 1);
            }
            month = month.previous();
            mask = self.month_mask(&month);
        }
        None
    }

    /// Matching days in `[from, to)`: whole cycles by multiplication (every 146,097-day span
    /// holds the same count), the rest month by month.
    fn count_days(&self, from: i64, to: i64) -> u64 {
        if to <= from {
            return 0;
        }
        let cycles = (to - from) / DAYS_PER_CYCLE;
        let per_cycle = if cycles > 0 { self.walk_days(from, from + DAYS_PER_CYCLE) } else { 0 };
        cycles as u64 * per_cycle + self.walk_days(from + cycles * DAYS_PER_CYCLE, to)
    }

    /// Matching days in `[from, to)`, a month mask at a time; `to - from` is at most a cycle.
    fn walk_days(&self, from: i64, to: i64) -> u64 {
        let (mut month, _) = Month::containing(from);
        let mut count = 0;
        while month.first < to {
            let low = (from - month.first + 1).max(1) as u32;
            let high = (to - month.first).min(i64::from(month.length())) as u32;
            if low <= high {
                let window = u32::MAX >> (31 - high) & u32::MAX << low;
                count += u64::from((self.month_mask(&month) & window).count_ones());
            }
            month = month.next();
        }
        count
    }

    fn month_mask(&self, month: &Month) -> u32 {
        self.days.month_mask(month.year, month.month, month.weekday)
    }
}

fn split(seconds: i64) -> (i64, u32) {
    (seconds.div_euclid(SECONDS_PER_DAY), seconds.rem_euclid(SECONDS_PER_DAY) as u32)
}

/// `day`'s second `time`, when it fits an `i64`. Before 1970 the day's start may not fit
/// although the second does (the earliest `i64` falls inside a day), so that side counts back
/// from the next day's start.
fn at(day: i64, time: u32) -> Option<i64> {
    if day < 0 {
        (day + 1).checked_mul(SECONDS_PER_DAY)?.checked_sub(SECONDS_PER_DAY - i64::from(time))
    } else {
        day.checked_mul(SECONDS_PER_DAY)?.checked_add(i64::from(time))
    }
}

fn clock(hour: u32, minute: u32, second: u32) -> u32 {
    hour * 3600 + minute * 60 + second
}

/// The lowest set bit at or above `from`.
fn first_bit(mask: u64, from: u32) -> Option<u32> {
    let rest = mask.checked_shr(from)?;
    (rest != 0).then(|| from + rest.trailing_zeros())
}

/// The highest set bit at or below `to`.
fn last_bit(mask: u64, to: u32) -> Option<u32> {
    let kept = if to >= 63 { mask } else { mask & ((2 << to) - 1) };
    (kept != 0).then(|| 63 - kept.leading_zeros())
}

fn bits_below(mask: u64, below: u32) -> u64 {
    let kept = if below >= 64 { mask } else { mask & ((1 << below) - 1) };
    u64::from(kept.count_ones())
}

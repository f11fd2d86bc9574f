//! Proleptic Gregorian calendar arithmetic on whole days since 1970-01-01 (negative before it):
//! the one calendar of the crate, at its bottom. HTTP dates (`http_date`), cron's wall-clock
//! fields (`schedule`), time-zone rules (`zone`) and the times shown to people (ISO 8601) all
//! translate between civil dates and instants here, without a date library. The algorithms
//! are Howard Hinnant's `days_from_civil` / `civil_from_days` (public domain), which count in
//! 400-year eras: the Gregorian calendar repeats exactly every 146,097 days (20,871 weeks).
//!
//! Every function is total: no input panics. `civil_from_days` is exact for every `i64`;
//! `days_from_civil` is exact while the answer fits an `i64` (years within about ±2.5e16) and
//! saturates beyond.

/// Seconds in a civil day. Civil time has no leap seconds (POSIX time, like croner's and
/// chrono's naive date-times), so every day has exactly this many.
pub const SECONDS_PER_DAY: i64 = 86_400;

/// Days in one 400-year Gregorian cycle, after which dates and weekdays repeat exactly.
pub const DAYS_PER_CYCLE: i64 = 146_097;

/// Days from 0000-03-01 (the start of era 0 in Hinnant's March-based years) to 1970-01-01.
const EPOCH_SHIFT: i64 = 719_468;

/// Whether `year` has a February 29th.
pub fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days since 1970-01-01 of the civil date `year-month-day`.
///
/// Months outside 1..=12 and days outside the month roll over as `mktime` does (month 13 is
/// January of the next year, day 0 the last day of the previous month), so callers can step
/// a date by adding to its fields.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let month0 = i64::from(month) - 1;
    let year = year.saturating_add(month0.div_euclid(12));
    let month = month0.rem_euclid(12) + 1;
    // Hinnant's years start in March, so February's leap day ends the year.
    let year = if month <= 2 { year.saturating_sub(1) } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let day_of_month = i64::from(day) - 1;
    // Summed in an order whose partial sums stay between 0 and the answer, so that the answer
    // is exact whenever it fits an `i64` (the era's multiple alone may not fit at the extremes).
    if era > 0 {
        (era - 5)
            .saturating_mul(DAYS_PER_CYCLE)
            .saturating_add(day_of_era + 5 * DAYS_PER_CYCLE - EPOCH_SHIFT)
            .saturating_add(day_of_month)
    } else {
        era.saturating_mul(DAYS_PER_CYCLE)
            .saturating_add(day_of_month)
            .saturating_add(day_of_era - EPOCH_SHIFT)
    }
}

/// The civil date `(year, month 1..=12, day 1..=31)` of `days` since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // The shift to the March-based era, split so that no `i64` overflows: 719,468 days is
    // four whole cycles plus 135,080 days.
    let shifted = days.rem_euclid(DAYS_PER_CYCLE) + (EPOCH_SHIFT - 4 * DAYS_PER_CYCLE);
    let era = days.div_euclid(DAYS_PER_CYCLE) + 4 + shifted / DAYS_PER_CYCLE;
    let day_of_era = shifted % DAYS_PER_CYCLE;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = era * 400 + year_of_era + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

/// The weekday of `days` since 1970-01-01: 0 = Sunday .. 6 = Saturday, as cron numbers them.
pub fn weekday(days: i64) -> u32 {
    // 1970-01-01 was a Thursday.
    ((days.rem_euclid(7) + 4) % 7) as u32
}

/// How many days the month has (28..=31). Months outside 1..=12 roll over into the
/// neighbouring years, as in [`days_from_civil`].
pub fn days_in_month(year: i64, month: u32) -> u32 {
    let month0 = i64::from(month) - 1;
    let year = year.saturating_add(month0.div_euclid(12));
    match month0.rem_euclid(12) + 1 {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `unix_ms` on a wall clock `offset_seconds` east of UTC, as ISO 8601 to the second:
/// `2026-11-27T02:00:00+01:00`, or `…Z` when the offset is zero. Milliseconds are dropped
/// (people read these; the `-ms` fields beside them keep the exact instant).
pub fn iso8601(unix_ms: u64, offset_seconds: i32) -> String {
    let local = (unix_ms / 1000) as i64 + i64::from(offset_seconds);
    let (days, second) = (local.div_euclid(SECONDS_PER_DAY), local.rem_euclid(SECONDS_PER_DAY));
    let (year, month, day) = civil_from_days(days);
    let (h, m, s) = (second / 3600, second / 60 % 60, second % 60);
    let offset = match offset_seconds {
        0 => "Z".to_string(),
        o => {
            let sign = if o < 0 { '-' } else { '+' };
            let o = o.unsigned_abs();
            match o % 60 {
                0 => format!("{sign}{:02}:{:02}", o / 3600, o / 60 % 60),
                // Local mean times before 1900 carry seconds; ISO 8601 allows them in extended form.
                secs => format!("{sign}{:02}:{:02}:{secs:02}", o / 3600, o / 60 % 60),
            }
        }
    };
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}{offset}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_convert_both_ways() {
        for (days, date) in [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (11_016, (2000, 2, 29)),
            (19_723, (2024, 1, 1)),
            (-719_468, (0, 3, 1)),
            (-719_469, (0, 2, 29)),
            (2_932_896, (9999, 12, 31)),
        ] {
            assert_eq!(civil_from_days(days), date, "{days}");
            assert_eq!(days_from_civil(date.0, date.1, date.2), days, "{date:?}");
        }
        assert_eq!(weekday(0), 4);
        assert_eq!(weekday(-1), 3);
        assert_eq!(weekday(19_723), 1, "2024-01-01 was a Monday");
    }

    #[test]
    fn consecutive_days_walk_the_calendar_over_a_whole_cycle() {
        let start = days_from_civil(1600, 1, 1);
        let mut previous = civil_from_days(start - 1);
        for days in start..start + DAYS_PER_CYCLE + 10 {
            let (year, month, day) = civil_from_days(days);
            let (py, pm, pd) = previous;
            if pd == days_in_month(py, pm) {
                let (ny, nm) = if pm == 12 { (py + 1, 1) } else { (py, pm + 1) };
                assert_eq!((year, month, day), (ny, nm, 1));
            } else {
                assert_eq!((year, month, day), (py, pm, pd + 1));
            }
            assert_eq!(days_from_civil(year, month, day), days);
            assert_eq!(weekday(days), weekday(days + DAYS_PER_CYCLE), "the cycle is whole weeks");
            previous = (year, month, day);
        }
    }

    #[test]
    fn out_of_range_fields_roll_over_and_extremes_do_not_panic() {
        assert_eq!(days_from_civil(2023, 13, 1), days_from_civil(2024, 1, 1));
        assert_eq!(days_from_civil(2024, 0, 1), days_from_civil(2023, 12, 1));
        assert_eq!(days_from_civil(2024, 3, 0), days_from_civil(2024, 2, 29));
        assert_eq!(days_in_month(2023, 14), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        for days in [i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1] {
            let (year, month, day) = civil_from_days(days);
            assert!((1..=12).contains(&month) && (1..=31).contains(&day));
            assert_eq!(days_from_civil(year, month, day), days);
            let _ = weekday(days);
        }
        let _ = days_from_civil(i64::MAX, u32::MAX, u32::MAX);
        let _ = days_from_civil(i64::MIN, 0, 0);
        let _ = days_in_month(i64::MIN, 0);
    }
}

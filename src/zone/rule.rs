//! What a [`Rule`] says: the offset at an instant and the instants where it changes.
//!
//! A year's DST start and end fall within that year give or take eight days (a day of the year
//! plus up to 167 hours, read on a clock up to 25 hours off UTC), so the changes around an
//! instant are among those of the years next to its own; no sorting needed (nor its code).

use super::posix::{Change, Day, Rule};
use crate::civil::{civil_from_days, days_from_civil, is_leap_year};

const DAY: i64 = 86_400;
/// Rules are read for years 1..=9999 and clamp outside, which keeps the calendar arithmetic
/// far from overflow for any i64 instant.
const FIRST: i64 = -62_135_596_800; // 0001-01-01T00:00:00Z
const LAST: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z

impl Rule {
    /// Seconds east of UTC at `t` (Unix seconds).
    pub(crate) fn offset_at(&self, t: i64) -> i32 {
        match &self.dst {
            Some(dst) if self.in_dst(t) => dst.offset,
            _ => self.std,
        }
    }

    /// The instants in `[from, to)` where the offset changes, in order.
    pub(crate) fn changes(&self, from: i64, to: i64) -> Vec<i64> {
        let (from, to) = (from.max(FIRST), to.min(LAST + 1));
        let mut found = Vec::new();
        let mut after = from - 1;
        while let Some(next) = self.next_change(after).filter(|&next| next < to) {
            // A rule may start DST the instant it ends it (permanent DST: `J1/0,J365/25`).
            if self.offset_at(next - 1) != self.offset_at(next) {
                found.push(next);
            }
            after = next;
        }
        found
    }

    /// The first DST start or end after `t`: among the changes of the years around `t`'s.
    fn next_change(&self, t: i64) -> Option<i64> {
        let year = year_of(t.clamp(FIRST, LAST));
        let changes = (year - 1..=year + 2).flat_map(|y| self.year_changes(y));
        changes.map(|(at, _)| at).filter(|&at| at > t).min()
    }

    /// Whether the latest change at or before `t` starts DST, among the changes of the years
    /// around `t`'s. Where a start and an end fall on the same instant, DST goes on.
    fn in_dst(&self, t: i64) -> bool {
        let t = t.clamp(FIRST, LAST);
        let year = year_of(t);
        let mut latest: Option<(i64, bool)> = None;
        for (at, starts) in (year - 2..=year + 1).flat_map(|y| self.year_changes(y)) {
            let later = latest.is_none_or(|(l, s)| at > l || (at == l && starts && !s));
            if at <= t && later {
                latest = Some((at, starts));
            }
        }
        latest.is_some_and(|(_, starts)| starts)
    }

    /// `year`'s DST start and end as instants, each flagged whether it starts DST.
    fn year_changes(&self, year: i64) -> impl Iterator<Item = (i64, bool)> {
        let std = self.std;
        self.dst.into_iter().flat_map(move |dst| {
            // The start is read on the standard clock, the end on the DST clock.
            [(instant(year, dst.start, std), true), (instant(year, dst.end, dst.offset), false)]
        })
    }
}

fn instant(year: i64, change: Change, offset: i32) -> i64 {
    day_of(year, change.day) * DAY + i64::from(change.time) - i64::from(offset)
}

/// Days since 1970-01-01 of a rule's day in `year`.
fn day_of(year: i64, day: Day) -> i64 {
    let january_1 = days_from_civil(year, 1, 1);
    match day {
        Day::Julian(n) => {
            let leap_day = is_leap_year(year) && n >= 60;
            january_1 + i64::from(n) - 1 + i64::from(leap_day)
        }
        Day::Zero(n) => january_1 + i64::from(n),
        Day::Weekday { month, week, weekday } => {
            let first = days_from_civil(year, month.into(), 1);
            let next_month = match month {
                12 => days_from_civil(year + 1, 1, 1),
                m => days_from_civil(year, u32::from(m) + 1, 1),
            };
            // 1970-01-01 was a Thursday (weekday 4).
            let first_weekday = (first + 4).rem_euclid(7);
            let mut day = first
                + (i64::from(weekday) - first_weekday).rem_euclid(7)
                + 7 * i64::from(week - 1);
            // Week 5 is the last such weekday, the fourth in months that have only four.
            while day >= next_month {
                day -= 7;
            }
            day
        }
    }
}

/// The proleptic Gregorian year (UTC) of Unix second `t`.
fn year_of(t: i64) -> i64 {
    civil_from_days(t.div_euclid(DAY)).0
}

//! Which days of a month match: croner 2.2.0's `day_match` (`pattern.rs:288-364`) and
//! `month_match`, evaluated for a whole month at once as a bitmask (bit `d` for day `d`).
//!
//! A month's answer depends only on the month, its length, the previous month's length and the
//! weekday of its 1st. Every combination of those that the calendar has occurs in every 400-year
//! Gregorian cycle (all fourteen year types do), so trying them all — at most 12 × 2 × 7 —
//! decides at parse time whether an expression can ever match, without walking 146,097 days.

use crate::civil::{civil_from_days, days_in_month, weekday};

/// Bits 1, 8, 15, 22 and 29: the days of a month that share the 1st's weekday.
const SAME_WEEKDAY_AS_FIRST: u64 = 0x2040_8102;

/// The date fields of a parsed expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DayRule {
    /// Bits 1..=12.
    pub months: u16,
    /// Day of month: bits 1..=31 for plain values.
    pub dom: u32,
    /// `L` in the day-of-month field: the month's last day.
    pub dom_last: bool,
    /// `nW`: the weekday closest to day n (croner's rule, which crosses month boundaries).
    pub dom_closest: u32,
    /// Day of week, bits 0..=6 (Sunday = 0; croner's 7 is already folded onto 0).
    pub dow: u8,
    /// `d#n`: `dow_nth[n - 1]` has bit d.
    pub dow_nth: [u8; 5],
    /// `dL`: the last weekday d of the month. Croner does not fold `7L` onto Sunday
    /// (`pattern.rs:121-137` moves every bit of 7 but this one), so bit 7 is dropped: `7L` never
    /// matches.
    pub dow_last: u8,
    /// The day-of-month or day-of-week field was exactly `*` (or `?`) as written.
    pub star_dom: bool,
    pub star_dow: bool,
    /// Both restricted day fields must match (Spin: `with_dom_and_dow`), not either.
    pub dom_and_dow: bool,
}

/// Which of the day conditions can ever hold, for naming the field that makes an expression
/// never match.
pub(super) struct Reach {
    pub any_dom: bool,
    pub any_dow: bool,
    pub any_day: bool,
}

impl DayRule {
    /// The matching days of `month` in `year` whose 1st is weekday `first_weekday`.
    pub fn month_mask(&self, year: i64, month: u32, first_weekday: u32) -> u32 {
        // Month 0 rolls over to the previous December.
        let (length, previous_length) =
            (days_in_month(year, month), days_in_month(year, month - 1));
        let (dom, dow) = self.parts(month, length, previous_length, first_weekday);
        self.combine(dom, dow)
    }

    /// The matching days of the month that holds `days` (days since 1970-01-01), and that
    /// day's number in it.
    pub fn mask_around(&self, days: i64) -> (u32, u32) {
        let (year, month, day) = civil_from_days(days);
        let first_weekday = (weekday(days) + 35 - (day - 1)) % 7;
        (self.month_mask(year, month, first_weekday), day)
    }

    /// Croner's combination (`pattern.rs:353-363`): a `*` field defers to the other one; two
    /// restricted fields must both match (`dom_and_dow`) or either.
    fn combine(&self, dom: u32, dow: u32) -> u32 {
        match (self.star_dom, self.star_dow) {
            (true, true) => dom | dow,
            (false, true) => dom,
            (true, false) => dow,
            (false, false) if self.dom_and_dow => dom & dow,
            (false, false) => dom | dow,
        }
    }

    /// The days that the day-of-month and the day-of-week conditions each select (both 0 when
    /// the month itself does not match).
    fn parts(&self, month: u32, length: u32, previous_length: u32, first: u32) -> (u32, u32) {
        if self.months & (1 << month) == 0 {
            return (0, 0);
        }
        let valid = ((1u64 << (length + 1)) - 2) as u32;
        let mut dom = self.dom & valid;
        if self.dom_last {
            dom |= 1 << length;
        }
        if self.dom_closest != 0 {
            dom |= self.closest_days(length, previous_length, first);
        }
        let mut dow = 0u64;
        for weekday in 0..7u32 {
            // The days of this weekday: the first falls `offset` days after the 1st.
            let offset = (weekday + 7 - first) % 7;
            let days = (SAME_WEEKDAY_AS_FIRST << offset) & u64::from(valid);
            let bit = 1u8 << weekday;
            if self.dow & bit != 0 {
                dow |= days;
            }
            for (index, nth) in self.dow_nth.iter().enumerate() {
                if nth & bit != 0 {
                    dow |= days & (1 << (1 + offset + 7 * index as u32));
                }
            }
            if self.dow_last & bit != 0 && days != 0 {
                dow |= 1 << (63 - days.leading_zeros());
            }
        }
        (dom, dow as u32)
    }

    /// Croner's `closest_weekday` (`pattern.rs:388-418`): a Monday-to-Friday matches if `nW`
    /// names it, or yesterday was a Sunday numbered n, or tomorrow is a Saturday numbered n. The
    /// neighbours' numbers come from the neighbouring months, so `1W` with a Saturday 1st fires
    /// on the previous month's last day, and `31W` with a Sunday 31st on the next month's 1st.
    fn closest_days(&self, length: u32, previous_length: u32, first: u32) -> u32 {
        let mut days = 0;
        for day in 1..=length {
            let weekday = (first + day - 1) % 7;
            let named = |n: u32| self.dom_closest & (1 << n) != 0;
            let matches = match weekday {
                1 => named(day) || named(if day == 1 { previous_length } else { day - 1 }),
                5 => named(day) || named(if day == length { 1 } else { day + 1 }),
                2..=4 => named(day),
                _ => false,
            };
            if matches {
                days |= 1 << day;
            }
        }
        days
    }

    /// Whether some day, in some year, matches; and, when none does, which conditions can hold
    /// at all. Stops at the first match, which for most expressions is in January.
    pub fn reach(&self) -> Reach {
        let mut reach = Reach { any_dom: false, any_dow: false, any_day: false };
        for month in 1..=12u32 {
            // February's length matters to February and, through `W` on the 1st, to March.
            let leap_matters = month == 2 || month == 3;
            for year in [2001, 2000].into_iter().take(if leap_matters { 2 } else { 1 }) {
                let (length, previous_length) =
                    (days_in_month(year, month), days_in_month(year, month - 1));
                for first in 0..7 {
                    let (dom, dow) = self.parts(month, length, previous_length, first);
                    reach.any_dom |= dom != 0;
                    reach.any_dow |= dow != 0;
                    reach.any_day |= self.combine(dom, dow) != 0;
                    if reach.any_day {
                        return reach;
                    }
                }
            }
        }
        reach
    }
}

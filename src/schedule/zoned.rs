//! A cron expression read on a time zone's wall clock: due times as instants, with the
//! daylight-saving changes made explicit.
//!
//! Time is cut into segments of constant UTC offset, bounded by the zone's transitions; within
//! one, a wall-clock second maps to one instant. At a transition:
//! - **Spring forward** (a gap: wall-clock times that do not exist): a job whose hour field is
//!   restricted (at 02:30) runs once, at the first instant after the gap (03:00 local), however
//!   many of its times fall in the gap. A job that runs every hour skips them: that hour did not
//!   happen, and it keeps its cadence in elapsed time.
//! - **Fall back** (a fold: wall-clock times that happen twice): a job whose hour field is
//!   restricted runs at the first occurrence only; a job that runs every hour runs at both, as
//!   elapsed time goes on.
//!
//! That is Vixie cron's rule and croner 4's; croniter agrees except that it runs a fixed-time job
//! twice in a fold, which is the double run this avoids.

use super::cron::{Cron, Dialect};
use crate::error::FieldError;
use crate::zone::Zone;

/// Seconds in two days: more than any two UTC offsets differ by, so a jump this far short of a
/// wall-clock match never passes over one.
const MARGIN: i64 = 2 * 86_400;
/// How many offset segments one search visits at most (two transitions a year for 400 years).
const MAX_SEGMENTS: usize = 1_000;

/// Far more than any real expression; it keeps the recorded schedule small.
const MAX_EXPRESSION_CHARS: usize = 200;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZonedCron {
    cron: Cron,
    zone: Zone,
}

/// One stretch of constant offset around an instant.
struct Segment {
    offset: i64,
    /// The transition that began it, and the offset before it.
    start: Option<(i64, i64)>,
    /// The transition that ends it, and the offset after it.
    end: Option<(i64, i64)>,
}

pub fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Spin => "spin",
        Dialect::Classic => "classic",
    }
}

pub fn dialect_from_name(name: &str) -> Option<Dialect> {
    match name {
        "spin" => Some(Dialect::Spin),
        "classic" => Some(Dialect::Classic),
        _ => None,
    }
}

impl ZonedCron {
    /// `zone` is an IANA name; `None` is UTC.
    pub fn new(
        expression: &str,
        zone: Option<&str>,
        dialect: Dialect,
    ) -> Result<ZonedCron, FieldError> {
        if expression.chars().count() > MAX_EXPRESSION_CHARS {
            let message = format!("longer than {MAX_EXPRESSION_CHARS} characters");
            return Err(FieldError::new("expression", message));
        }
        let cron =
            Cron::parse(expression, dialect).map_err(|e| FieldError::new(e.field, e.message))?;
        let zone = match zone {
            None => Zone::utc(),
            Some(name) => {
                Zone::named(name).map_err(|e| FieldError::new("time-zone", e.to_string()))?
            }
        };
        Ok(ZonedCron { cron, zone })
    }

    pub fn expression(&self) -> &str {
        self.cron.expression()
    }

    pub fn zone(&self) -> &Zone {
        &self.zone
    }

    pub fn dialect(&self) -> Dialect {
        self.cron.dialect()
    }

    /// The dialect as the record and the logs write it.
    pub fn dialect_name(&self) -> &'static str {
        dialect_name(self.cron.dialect())
    }

    pub fn at_or_before(&self, at_ms: u64) -> Option<u64> {
        let seconds = (at_ms / 1000) as i64;
        self.last_at_or_before(seconds).and_then(|s| u64::try_from(s).ok()).map(|s| s * 1000)
    }

    pub fn after(&self, at_ms: u64) -> Option<u64> {
        let seconds = (at_ms / 1000) as i64 + 1;
        self.first_at_or_after(seconds).and_then(|s| u64::try_from(s).ok()).map(|s| s * 1000)
    }

    pub fn count_between(&self, after_ms: u64, before_ms: u64) -> u64 {
        let from = (after_ms / 1000) as i64 + 1;
        let to = before_ms.div_ceil(1000) as i64;
        if from >= to {
            return 0;
        }
        self.count_in(from, to)
    }

    fn every_hour(&self) -> bool {
        self.cron.every_hour()
    }

    fn segment(&self, at: i64) -> Segment {
        let offset = i64::from(self.zone.offset_at(at));
        let before = |t: i64| i64::from(self.zone.offset_at(t - 1));
        let after = |t: i64| i64::from(self.zone.offset_at(t));
        Segment {
            offset,
            start: self.previous_transition(at).map(|t| (t, before(t))),
            end: self.next_transition(at).map(|t| (t, after(t))),
        }
    }

    /// The last transition at or before `at`, looking back up to 800 years.
    fn previous_transition(&self, at: i64) -> Option<i64> {
        let mut window = 366 * 86_400;
        while window <= 800 * 366 * 86_400 {
            if let Some(t) = self.zone.transitions(at.saturating_sub(window), at + 1).last() {
                return Some(*t);
            }
            window *= 8;
        }
        None
    }

    /// The first transition after `at`, looking ahead up to 800 years.
    fn next_transition(&self, at: i64) -> Option<i64> {
        let mut window = 366 * 86_400;
        while window <= 800 * 366 * 86_400 {
            if let Some(t) = self.zone.transitions(at + 1, at.saturating_add(window)).first() {
                return Some(*t);
            }
            window *= 8;
        }
        None
    }

    /// Wall-clock seconds at the start of `segment` that already happened in the one before (a
    /// fold): a fixed-time job does not run at them again. Returns the first wall-clock second
    /// it may run at.
    fn after_fold(&self, segment: &Segment, low: i64) -> i64 {
        match segment.start {
            Some((t, before)) if !self.every_hour() && before > segment.offset => {
                low.max(t + before)
            }
            _ => low,
        }
    }

    /// The transition ending `segment`, if it opens a gap in which this job has a time: the
    /// instant such a fixed-time job runs at instead.
    fn gap_run(&self, segment: &Segment) -> Option<i64> {
        let (t, after) = segment.end?;
        let (low, high) = (t + segment.offset, t + after);
        let in_gap = self.cron.next_civil(low).is_some_and(|c| c < high);
        (!self.every_hour() && after > segment.offset && in_gap).then_some(t)
    }

    fn first_at_or_after(&self, from: i64) -> Option<i64> {
        let mut at = from;
        for _ in 0..MAX_SEGMENTS {
            let segment = self.segment(at);
            let low = self.after_fold(&segment, at + segment.offset);
            let found = self.cron.next_civil(low);
            let end = segment.end.map(|(t, _)| t);
            if let Some(civil) = found {
                if end.is_none_or(|t| civil < t + segment.offset) {
                    return Some(civil - segment.offset);
                }
            }
            if let Some(t) = self.gap_run(&segment) {
                return Some(t);
            }
            let (end, civil) = (end?, found?);
            // Nothing matches in wall-clock [low, civil): skip the segments in between.
            at = end.max(civil - segment.offset - MARGIN);
        }
        None
    }

    fn last_at_or_before(&self, to: i64) -> Option<i64> {
        let mut at = to;
        for _ in 0..MAX_SEGMENTS {
            let segment = self.segment(at);
            let found = self.cron.prev_civil(at + segment.offset);
            let start = segment.start.map(|(t, _)| t);
            let floor = start.map(|t| self.after_fold(&segment, t + segment.offset));
            if let Some(civil) = found {
                if floor.is_none_or(|low| civil >= low) {
                    return Some(civil - segment.offset);
                }
            }
            let start = start?;
            let previous = self.segment(start - 1);
            // The run a gap at this segment's start moved to its first instant.
            if self.gap_run(&previous) == Some(start) {
                return Some(start);
            }
            // After a fold the segment before ran its wall clock past this one's start: its
            // last hour may hold a time later than `found` (croniter found this), so look at it
            // whole rather than jump.
            if previous.offset > segment.offset {
                at = start - 1;
                continue;
            }
            let civil = found?;
            at = (start - 1).min(civil - segment.offset + MARGIN);
        }
        None
    }

    fn count_in(&self, from: i64, to: i64) -> u64 {
        let (mut total, mut at) = (0, from);
        for _ in 0..MAX_SEGMENTS.saturating_mul(4) {
            if at >= to {
                break;
            }
            let segment = self.segment(at);
            let end = segment.end.map_or(to, |(t, _)| t.min(to));
            let low = self.after_fold(&segment, at + segment.offset);
            let high = end + segment.offset;
            if low < high {
                total += self.cron.count_civil(low, high);
            }
            if let (Some(t), Some((_, after))) = (self.gap_run(&segment), segment.end) {
                // Counted once: unless the first second after the gap is one of its own times.
                if t < to && self.cron.next_civil(t + after) != Some(t + after) {
                    total += 1;
                }
            }
            match segment.end {
                Some((t, _)) => at = t,
                None => break,
            }
        }
        total
    }
}

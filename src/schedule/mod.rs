//! Schedules: when a guarded job is due. A [`Schedule`] is none (any tick may run), a fixed
//! grid ([`every`]), or a cron expression in the trigger's dialect ([`cron`]) read on a time
//! zone's wall clock ([`zoned`], over [`crate::zone`]); all answer the same three questions in
//! ms since the Unix epoch: the latest due time at or before an instant, the first after one, and
//! how many lie between two (counted, never enumerated). Calendar arithmetic is in [`civil`].

pub mod cron;
pub mod every;
pub mod zoned;

pub use every::Every;
pub use zoned::ZonedCron;

use std::fmt;

/// When a guarded job is due.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Any tick may run once the lease is free.
    None,
    Every(Every),
    Cron(ZonedCron),
}

impl Schedule {
    pub fn is_scheduled(&self) -> bool {
        !matches!(self, Schedule::None)
    }

    /// The latest due time at or before `at_ms`.
    pub fn at_or_before(&self, at_ms: u64) -> Option<u64> {
        match self {
            Schedule::None => None,
            Schedule::Every(every) => every.at_or_before(at_ms),
            Schedule::Cron(cron) => cron.at_or_before(at_ms),
        }
    }

    /// The due time a tick at `at_ms` counts for: the latest at or before it, or the next one
    /// when that is at most `early_ms` away *and* at most a quarter of the gap before it. The
    /// second bound keeps a tolerance longer than a short schedule's period from counting a
    /// tick for a due time seconds ahead (and passing over the one just come); for a grid it
    /// is a quarter interval.
    pub fn counts_for(&self, at_ms: u64, early_ms: u64) -> Option<u64> {
        let latest = self.at_or_before(at_ms);
        let next = self.after(at_ms).filter(|next| {
            let gap = latest.map_or(u64::MAX, |latest| next.saturating_sub(latest));
            next.saturating_sub(at_ms) <= early_ms.min(gap / 4)
        });
        next.or(latest)
    }

    /// The first due time after `at_ms` (none for `None`, or a cron that never matches again
    /// within 400 years).
    pub fn after(&self, at_ms: u64) -> Option<u64> {
        match self {
            Schedule::None => None,
            Schedule::Every(every) => Some(every.after(at_ms)),
            Schedule::Cron(cron) => cron.after(at_ms),
        }
    }

    /// Due times strictly between `after_ms` and `before_ms`.
    pub fn count_between(&self, after_ms: u64, before_ms: u64) -> u64 {
        match self {
            Schedule::None => 0,
            Schedule::Every(every) => every.count_between(after_ms, before_ms),
            Schedule::Cron(cron) => cron.count_between(after_ms, before_ms),
        }
    }

    /// How long past a due time with no run for it a job is overdue: a minute for a cron
    /// schedule (a trigger polling every minute is on time), a quarter interval (at most five
    /// minutes) for a grid.
    pub fn overdue_grace_ms(&self) -> u64 {
        match self {
            Schedule::None => 0,
            Schedule::Every(every) => (every.interval_ms() / 4).min(5 * 60 * 1000),
            Schedule::Cron(_) => 60 * 1000,
        }
    }

    /// The schedule as kept in a lock's record (see [`Schedule::from_recorded`]).
    pub fn recorded(&self) -> String {
        match self {
            Schedule::None => "none".into(),
            Schedule::Every(e) => format!("every:{}:{}", e.interval_seconds(), e.offset_seconds()),
            Schedule::Cron(c) => {
                format!("cron:{}:{}:{}", c.dialect_name(), c.zone().name(), c.expression())
            }
        }
    }

    /// Reads what [`Schedule::recorded`] wrote; `None` for anything else.
    pub fn from_recorded(text: &str) -> Option<Schedule> {
        let mut parts = text.splitn(4, ':');
        match parts.next()? {
            "none" => Some(Schedule::None),
            "every" => {
                let interval = parts.next()?.parse().ok()?;
                Every::new(interval, parts.next()?.parse().ok()?).ok().map(Schedule::Every)
            }
            "cron" => {
                let dialect = zoned::dialect_from_name(parts.next()?)?;
                let zone = parts.next()?;
                ZonedCron::new(parts.next()?, Some(zone), dialect).ok().map(Schedule::Cron)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::None => write!(f, "no schedule"),
            Schedule::Every(e) => {
                write!(f, "every {} s from {} s", e.interval_seconds(), e.offset_seconds())
            }
            Schedule::Cron(c) => write!(
                f,
                "cron \"{}\" in {} ({})",
                c.expression(),
                c.zone().name(),
                c.dialect_name()
            ),
        }
    }
}

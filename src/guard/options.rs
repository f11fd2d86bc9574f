//! How a guarded job behaves, validated when built (client-go's leader election does the same:
//! a config that cannot work is refused before anything runs).

use crate::error::Error;
use crate::error::FieldError;
use crate::ops::LeaseDuration;
use crate::schedule::{Every, Schedule};
use std::time::Duration;

/// The longest a call waits for a held lock (`wait`): ten minutes, far past any lease period,
/// so a caller's own limit is what ends it in practice.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
/// The most a tick may be early and still count for the coming due time.
pub const MAX_EARLY_MS: u64 = 5 * 60 * 1000;
/// The default early tolerance: more than the clock skew between synchronized hosts,
/// less than a polling trigger's period (Spin's cron trigger fires on whole seconds).
pub const DEFAULT_EARLY_MS: u64 = 5_000;

/// Built only by its constructors, which validate every field (a caller outside the crate reads
/// the fields through the methods of the same names), so the drivers can trust them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardOptions {
    /// Who is asking (shown to followers and on the board), 1-64 printable characters.
    pub(crate) holder: String,
    /// Lease period in seconds (15..=60): how long a crashed holder can block the others.
    pub(crate) lease_seconds: u32,
    /// How often the work should call `keep-alive`, in seconds.
    pub(crate) keep_alive_seconds: u32,
    pub(crate) schedule: Schedule,
    /// How early (ms, service clock) a tick may come and still count for the coming due time.
    pub(crate) early_ms: u64,
    /// Opt-in: a tick later than this after its due time skips (`TooLate`) instead of running.
    pub(crate) starting_deadline_seconds: Option<u64>,
    pub(crate) overlap: Overlap,
    /// How long to wait for a held lock before skipping (zero: skip at once).
    pub(crate) wait: Duration,
    /// When a lock that never ran first runs.
    pub(crate) first_run: FirstRun,
}

/// When a lock that never ran first runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstRun {
    /// At its first tick, whatever the due time (the interval schedules of guard@0.1.0 and
    /// @0.2.0 behave so).
    AtFirstTick,
    /// At the first due time since the lock was created: due times before a job existed are
    /// not owed (guard@0.3.0).
    AtFirstDueTime,
}

/// What a due time does to a run still holding the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    Forbid,
    /// Break the running run's lease once it has held the lock this long (and a later due time
    /// has come).
    Replace {
        after_seconds: u32,
    },
}

/// An option refused: the field, as the WIT names it, and what is wrong with it.
fn bad(field: &'static str, message: String) -> Error {
    Error::BadOption(FieldError::new(field, message))
}

fn check_holder(holder: &str) -> Result<(), Error> {
    let length = holder.chars().count();
    if !(1..=64).contains(&length) || holder.chars().any(char::is_control) {
        return Err(bad("holder", "must be 1-64 characters without control characters".into()));
    }
    Ok(())
}

impl GuardOptions {
    /// A grid of `interval_seconds` from the epoch (0: no schedule), the early tolerance a quarter
    /// interval (at most five minutes), the first run at the first tick (guard@0.1.0's
    /// options). `keep_alive_seconds` defaults to a third of the lease; it must be at least 1 and
    /// at most half the lease, so that a keep-alive needing retries still lands in time.
    pub fn every_interval(
        holder: &str,
        lease_seconds: u32,
        interval_seconds: u64,
        keep_alive_seconds: Option<u32>,
    ) -> Result<GuardOptions, Error> {
        let schedule = match interval_seconds {
            0 => Schedule::None,
            every => Schedule::Every(Every::new(every, 0).map_err(Error::BadOption)?),
        };
        let mut options =
            GuardOptions::scheduled(holder, lease_seconds, keep_alive_seconds, schedule)?;
        options.early_ms = (interval_seconds.saturating_mul(1000) / 4).min(MAX_EARLY_MS);
        options.first_run = FirstRun::AtFirstTick;
        Ok(options)
    }

    /// A phase (`offset_seconds`, below the interval) and an optional starting deadline
    /// (1..=interval seconds) for an interval schedule (guard@0.2.0's additions).
    pub fn with_phase_and_deadline(
        self,
        offset_seconds: u64,
        starting_deadline_seconds: Option<u64>,
    ) -> Result<GuardOptions, Error> {
        let interval = match &self.schedule {
            Schedule::Every(every) => every.interval_seconds(),
            _ => 0,
        };
        if offset_seconds > 0 && offset_seconds >= interval {
            return Err(bad(
                "offset-seconds",
                format!("must be below interval-seconds; got {offset_seconds} and {interval}"),
            ));
        }
        if let Some(deadline) = starting_deadline_seconds {
            if deadline == 0 || deadline > interval {
                return Err(bad(
                    "starting-deadline-seconds",
                    format!(
                        "must satisfy 1 <= starting-deadline-seconds <= interval-seconds; got \
                         {deadline} and {interval}"
                    ),
                ));
            }
        }
        let schedule = match interval {
            0 => Schedule::None,
            _ => Schedule::Every(Every::new(interval, offset_seconds).map_err(Error::BadOption)?),
        };
        Ok(GuardOptions { schedule, starting_deadline_seconds, ..self })
    }

    /// Any schedule, the default early tolerance, no overlap, no wait, the first run at the first
    /// due time since the lock was created (guard@0.3.0's options).
    pub fn scheduled(
        holder: &str,
        lease_seconds: u32,
        keep_alive_seconds: Option<u32>,
        schedule: Schedule,
    ) -> Result<GuardOptions, Error> {
        check_holder(holder)?;
        if !(15..=60).contains(&lease_seconds) {
            return Err(bad("lease-seconds", format!("must be 15..=60, got {lease_seconds}")));
        }
        let keep_alive = keep_alive_seconds.unwrap_or(lease_seconds / 3);
        if keep_alive == 0 || keep_alive * 2 > lease_seconds {
            return Err(bad(
                "keep-alive-seconds",
                format!(
                    "must satisfy 1 <= keep-alive-seconds and keep-alive-seconds * 2 <= \
                     lease-seconds; got {keep_alive} and {lease_seconds}"
                ),
            ));
        }
        Ok(GuardOptions {
            holder: holder.to_string(),
            lease_seconds,
            keep_alive_seconds: keep_alive,
            schedule,
            early_ms: DEFAULT_EARLY_MS,
            starting_deadline_seconds: None,
            overlap: Overlap::Forbid,
            wait: Duration::ZERO,
            first_run: FirstRun::AtFirstDueTime,
        })
    }

    /// The early tolerance, at most five minutes.
    pub fn early_by(self, early_ms: u64) -> Result<GuardOptions, Error> {
        if early_ms > MAX_EARLY_MS {
            return Err(bad(
                "early-tolerance-ms",
                format!("must be at most {MAX_EARLY_MS} (five minutes), got {early_ms}"),
            ));
        }
        Ok(GuardOptions { early_ms, ..self })
    }

    /// A starting deadline (at least one second; needs a schedule).
    pub fn starting_deadline(self, seconds: Option<u64>) -> Result<GuardOptions, Error> {
        if seconds.is_some_and(|s| s == 0 || !self.schedule.is_scheduled()) {
            return Err(bad(
                "starting-deadline-seconds",
                "must be at least 1, and needs a schedule".into(),
            ));
        }
        Ok(GuardOptions { starting_deadline_seconds: seconds, ..self })
    }

    /// An overlap policy: `Replace` needs a schedule and at least 60 s.
    pub fn overlapping(self, overlap: Overlap) -> Result<GuardOptions, Error> {
        if let Overlap::Replace { after_seconds } = overlap {
            if after_seconds < 60 || !self.schedule.is_scheduled() {
                return Err(bad(
                    "overlap",
                    format!(
                        "replace needs a schedule (a due time must come to replace at) and at \
                         least 60 s, so a healthy run is not replaced within a lease period or \
                         two; got {after_seconds} s"
                    ),
                ));
            }
        }
        Ok(GuardOptions { overlap, ..self })
    }

    /// How long to wait for a held lock (at most [`MAX_WAIT`]).
    pub fn waiting(self, wait: Duration) -> Result<GuardOptions, Error> {
        if wait > MAX_WAIT {
            return Err(bad(
                "wait-ms",
                format!("must be at most {} ms, got {}", MAX_WAIT.as_millis(), wait.as_millis()),
            ));
        }
        Ok(GuardOptions { wait, ..self })
    }

    /// The same options for another holder (a replica of its own), checked as when built.
    pub fn for_holder(self, holder: &str) -> Result<GuardOptions, Error> {
        check_holder(holder)?;
        Ok(GuardOptions { holder: holder.to_string(), ..self })
    }

    pub fn holder(&self) -> &str {
        &self.holder
    }

    pub fn lease_seconds(&self) -> u32 {
        self.lease_seconds
    }

    pub fn keep_alive_seconds(&self) -> u32 {
        self.keep_alive_seconds
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn early_ms(&self) -> u64 {
        self.early_ms
    }

    pub fn starting_deadline_seconds(&self) -> Option<u64> {
        self.starting_deadline_seconds
    }

    pub fn overlap(&self) -> Overlap {
        self.overlap
    }

    pub fn wait(&self) -> Duration {
        self.wait
    }

    pub fn first_run(&self) -> FirstRun {
        self.first_run
    }

    pub(crate) fn lease_duration(&self) -> LeaseDuration {
        LeaseDuration::Fixed(self.lease_seconds)
    }

    pub(crate) fn lease_period(&self) -> Duration {
        Duration::from_secs(self.lease_seconds.into())
    }

    /// The (interval, offset) of an interval schedule, (0, 0) for any other: all the versions
    /// that speak only intervals can show.
    pub fn every(&self) -> (u64, u64) {
        match &self.schedule {
            Schedule::Every(every) => (every.interval_seconds(), every.offset_seconds()),
            _ => (0, 0),
        }
    }
}

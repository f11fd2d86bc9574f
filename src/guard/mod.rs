//! Guarded invoke: "is it my turn?" for timer-triggered functions, plus work-item claims and a
//! status board. The decision is a pure function ([`decide`]); the drivers ([`invoke`],
//! [`items`]) perform the round trips.
//!
//! Protocol, per lock blob:
//! 1. HEAD the blob: lease state, run record (metadata) and ETag in one round trip. A follower
//!    that must skip (lease held, or a run already started in this interval) stops here.
//! 2. Acquire the lease with `If-Match: <that ETag>`: it fails if anyone recorded a run since.
//! 3. Write the new record (next fencing token, start, running) under the lease with
//!    `If-Match`. Only a successful write grants `run`; the token is then durable.
//!
//! Runs are serialised by the lease, and every grant is a compare-and-swap on the record, so
//! two replicas can never both be granted the same interval, and tokens strictly increase.
//!
//! A run writes its result with [`write_fenced`]: the fencing token is kept with the data, and
//! a write carrying an older token than the one kept is refused ([`FencedError::Stale`]).

mod decide;
mod fenced;
mod invoke;
mod items;
mod pages;
mod record;
mod run;
mod schedule;

pub use decide::{decide, Verdict};
pub use fenced::{
    read_fenced, write_fenced, FencedData, FencedError, FencedWrite, FENCING_TOKEN_METADATA,
    MAX_FENCED_BYTES,
};
pub use invoke::guarded_invoke;
pub use items::{board, claim, BoardEntry, Claim};
pub use record::RunRecord;
pub use run::{complete, keep_alive};
pub use schedule::Schedule;

use crate::config::Lock;
use crate::error::Error;
use crate::ops::{LeaseDuration, LeaseId};
use crate::transport::Deadline;
use std::time::{Duration, SystemTime};

/// How a guarded job behaves. Validated when built; see [`GuardOptions::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardOptions {
    /// Who is asking (shown to followers and on the board), 1-64 printable characters.
    pub holder: String,
    /// Lease period in seconds (15..=60): how long a crashed holder can block the others.
    pub lease_seconds: u32,
    /// The job's interval in seconds: a run that started in the current interval (by the
    /// storage service's clock) is not started again. 0 turns deduplication off.
    pub interval_seconds: u64,
    /// How often the work should call `keep-alive`, in seconds.
    pub keep_alive_seconds: u32,
    /// The phase: runs are due at `offset_seconds + k * interval_seconds` (service clock).
    pub offset_seconds: u64,
    /// Opt-in: a tick later than this after its due time skips (`TooLate`) instead of running.
    pub starting_deadline_seconds: Option<u64>,
}

impl GuardOptions {
    /// `keep_alive_seconds` defaults to a third of the lease. It must be at least 1 and at
    /// most half the lease, so that a keep-alive needing retries still lands in time.
    pub fn new(
        holder: &str,
        lease_seconds: u32,
        interval_seconds: u64,
        keep_alive_seconds: Option<u32>,
    ) -> Result<GuardOptions, Error> {
        let invalid = |m: String| Err(Error::InvalidArgument(m));
        let length = holder.chars().count();
        if !(1..=64).contains(&length) || holder.chars().any(char::is_control) {
            return invalid("holder must be 1-64 characters without control characters".into());
        }
        if !(15..=60).contains(&lease_seconds) {
            return invalid(format!("lease-seconds must be 15..=60, got {lease_seconds}"));
        }
        if interval_seconds > 366 * 24 * 3600 {
            return invalid(format!(
                "interval-seconds must be at most a year, got {interval_seconds}"
            ));
        }
        let keep_alive = keep_alive_seconds.unwrap_or(lease_seconds / 3);
        if keep_alive == 0 || keep_alive * 2 > lease_seconds {
            return invalid(format!(
                "keep-alive-seconds must satisfy 1 <= keep-alive-seconds and \
                 keep-alive-seconds * 2 <= lease-seconds; got {keep_alive} and {lease_seconds}"
            ));
        }
        Ok(GuardOptions {
            holder: holder.to_string(),
            lease_seconds,
            interval_seconds,
            keep_alive_seconds: keep_alive,
            offset_seconds: 0,
            starting_deadline_seconds: None,
        })
    }

    /// Gives the schedule a phase (`offset_seconds`, below the interval) and, optionally, a
    /// starting deadline (1..=interval seconds). Both need a schedule (`interval_seconds > 0`).
    pub fn with_schedule(
        self,
        offset_seconds: u64,
        starting_deadline_seconds: Option<u64>,
    ) -> Result<GuardOptions, Error> {
        let interval = self.interval_seconds;
        if offset_seconds > 0 && offset_seconds >= interval {
            return Err(Error::InvalidArgument(format!(
                "offset-seconds must be below interval-seconds; got {offset_seconds} and {interval}"
            )));
        }
        if let Some(deadline) = starting_deadline_seconds {
            if deadline == 0 || deadline > interval {
                return Err(Error::InvalidArgument(format!(
                    "starting-deadline-seconds must satisfy 1 <= starting-deadline-seconds <= \
                     interval-seconds; got {deadline} and {interval}"
                )));
            }
        }
        Ok(GuardOptions { offset_seconds, starting_deadline_seconds, ..self })
    }

    pub(crate) fn lease_duration(&self) -> LeaseDuration {
        LeaseDuration::Fixed(self.lease_seconds)
    }

    pub(crate) fn lease_period(&self) -> Duration {
        Duration::from_secs(self.lease_seconds.into())
    }

    /// When runs are due: every `interval_seconds`, from `offset_seconds` past the Unix epoch.
    pub fn schedule(&self) -> Schedule {
        Schedule::new(self.interval_seconds, self.offset_seconds)
    }
}

/// The right to run once: carried to `keep_alive` and `complete`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    pub lock: Lock,
    pub lease_id: LeaseId,
    /// Strictly increasing across all runs ever granted on this lock. Pass it to downstream
    /// systems so they can refuse writes from an older run.
    pub fencing_token: u64,
    /// The index of the due time this run is for (see [`Schedule::due_index`]; 0 when
    /// deduplication is off): the run is for due time `interval * index`.
    pub interval: u64,
    /// Service time of the grant, ms since the Unix epoch.
    pub started_ms: u64,
    /// Local wall-clock time by which the work must stop unless a keep-alive succeeds.
    /// Conservative: it counts the lease from before the acquire was sent. Never in the past
    /// when granted. A wall clock may be stepped: the calls that serve the lease measure their
    /// budget with `lease_deadline` when they have it, and never trust more than one lease
    /// period from this (see [`keep_alive`]).
    pub deadline: SystemTime,
    /// Local wall-clock time by which the next keep-alive should be sent.
    pub keep_alive_by: SystemTime,
    /// The same end of the lease on the granting instance's monotonic clock, which a wall-clock
    /// step cannot move; `None` for a ticket that came from outside (a WIT value), since each
    /// instance's monotonic clock starts anew.
    pub lease_deadline: Option<Deadline>,
    /// The previous run was granted but never completed: its holder died or lost its lease.
    pub previous_abandoned: bool,
    /// When this run was due, and the due times missed before it.
    pub past_due: PastDue,
    pub options: GuardOptions,
}

/// A granted run's place in its schedule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PastDue {
    /// The due time the run is for (service clock, ms since the Unix epoch).
    pub due_at_ms: u64,
    /// How long after that due time it was granted (0 when early, within the tolerance).
    pub late_by_ms: u64,
    /// When the previous run started, if there was one.
    pub previous_start_ms: Option<u64>,
    /// Due times that passed with no run between the previous run and this one.
    pub missed: u64,
}

/// Why a caller should not run now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// Someone holds the lease; `holder` is its label when its run is recorded.
    HeldByOther { holder: Option<String>, since_ms: Option<u64> },
    /// A run already started for the current due time.
    AlreadyRan { started_ms: u64, holder: Option<String>, running: bool, outcome: Option<String> },
    /// The tick came more than the starting deadline after its due time.
    TooLate { due_at_ms: u64, late_by_ms: u64, next_due_ms: u64 },
    /// The decision could not be made.
    Error(Error),
}

// One value per call, moved straight out: boxing the ticket would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Run(Ticket),
    Skip(SkipReason),
}

/// How a run ended, recorded by `complete`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure(String),
}

impl Outcome {
    pub(crate) fn as_record_text(&self) -> String {
        match self {
            Outcome::Success => "success".to_string(),
            Outcome::Failure(reason) => format!("failure: {reason}"),
        }
    }
}

pub fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The storage service's time from an answer's `Date`. Due times are judged by that one clock
/// every replica shares; an answer without it is refused rather than judged by this host's.
pub(crate) fn service_clock(time: Option<SystemTime>, answer: &str) -> Result<SystemTime, Error> {
    time.ok_or_else(|| {
        unexpected(&format!(
            "{answer} has no usable Date header, and due times are judged by the storage \
             service's clock, not this host's"
        ))
    })
}

/// An answer that does not say what the protocol promises (status 200: it was a success).
pub(crate) fn unexpected(what: &str) -> Error {
    Error::Service(crate::error::ServiceError {
        status: 200,
        code: None,
        request_id: None,
        message: format!("unexpected response: {what}; nothing was changed"),
    })
}

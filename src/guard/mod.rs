//! Guarded invoke: "is it my turn?" for timer-triggered functions, plus work-item claims, a
//! status board, fenced writes and the operator's verbs. The decision is a pure function
//! ([`decide`]); the drivers perform the round trips. The exported guard (`traffic-cop:lease`
//! 1.0) converts its values onto these types, and the Rust API uses them directly.
//!
//! Protocol, per lock blob:
//! 1. HEAD the blob: lease state, run record (metadata), ETag and creation time in one round
//!    trip. A follower that must skip (lease held, a run already started for this due time,
//!    paused) stops here.
//! 2. Acquire the lease with `If-Match: <that ETag>`: it fails if anyone recorded a run since.
//! 3. Write the new record (next fencing token, start, due time, running) under the lease with
//!    `If-Match`. Only a successful write grants `run`; the token is then durable.
//!
//! Runs are serialised by the lease, and every grant is a compare-and-swap on the record, so
//! two replicas can never both be granted the same due time, and tokens strictly increase.
//!
//! | file | what it holds |
//! |---|---|
//! | `options` | [`GuardOptions`], validated when built |
//! | `settings` | a job's settings as its deployment spells them (the variables' raw strings), parsed and judged once |
//! | `check` | settings judged before a deployment runs them: one look, nothing written |
//! | `decide` | the pure decision |
//! | `describe` | skips and runs in one line each, for people |
//! | `record`, `record_keys`, `record_text` | the run record; its metadata keys (the codec); how it writes text |
//! | `invoke`, `grant`, `unheard` | `guarded_invoke`: look, acquire, record; waiting for a held lock; a grant whose answer was lost |
//! | `memory` | what a look taught, kept between ticks: a tick that cannot be due costs no request |
//! | `keep_alive`, `complete`, `hold` | a granted run's calls; `hold` renews in the background (async component) |
//! | `blocked` | a run whose instance could not renew its lease when due: closed or counted as blocked |
//! | `claim`, `claim_state`, `pages`, `board` | many items: claims and the board over a listing |
//! | `schedules` | which schedule is in force while replicas disagree (a deploy, a rollback) |
//! | `fenced` | writes that refuse an older run's token |
//! | `operator`, `operator_drain` | pause, resume and run-now, written under the running run's lease id; the run in progress and the drain |

mod blocked;
mod board;
mod check;
mod claim;
mod claim_state;
mod complete;
mod decide;
mod decision_log;
mod describe;
mod fenced;
mod grant;
mod history;
mod hold;
mod invoke;
mod keep_alive;
mod memory;
mod operator;
mod operator_drain;
mod options;
mod pages;
mod record;
mod record_keys;
mod record_text;
mod schedules;
mod seen;
mod settings;
mod unheard;

pub use blocked::{complete_held, note_blocked};
pub use board::{board, BoardEntry};
pub use check::{
    bad_option, check_settings, due_times, AccountShown, BadSetting, Settings, SettingsCheck,
    ShownTime, StorageAnswer, MAX_SHOWN_DUE_TIMES,
};
pub use claim::{claim, Claim};
pub use complete::complete;
pub use decide::{decide, Contend, Verdict};
pub use decision_log::{run_log, skip_log};
pub use describe::{
    deferral, describe_run, describe_skip, duration, error_text, finished_line, run_line,
    skip_line, RunEnd,
};
pub use fenced::{
    read_fenced, write_fenced, FencedData, FencedError, FencedWrite, FENCING_TOKEN_METADATA,
    MAX_FENCED_BYTES,
};
pub use history::{PastOutcome, PastRun, Totals, HISTORY_BYTES, HISTORY_LEN};
pub use hold::{hold, keep_alive_held, Held, HoldPlan};
pub use invoke::{guarded_invoke, guarded_tick};
pub use keep_alive::keep_alive;
pub use memory::{key as memory_key, Remembered, DEFAULT_REFRESH_SECONDS, MAX_REFRESH_SECONDS};
pub use operator::{pause, resume, run_now, OperatorAnswer};
pub use operator_drain::RunningRun;
pub use options::{FirstRun, GuardOptions, Overlap, DEFAULT_EARLY_MS, MAX_EARLY_MS, MAX_WAIT};
pub use record::{Grid, OfGrant, Paused, RunNow, RunRecord};
pub use schedules::{
    agreement, Agreement, SeenSchedule, ALIVE_MS, DEPLOY_LIMIT_MS, FORGET_MS, STAMP_MS,
};
pub use settings::{variable_of, RawSettings, DEFAULT_LEASE_SECONDS};

use crate::config::Lock;
use crate::error::Error;
use crate::ops::LeaseId;
use crate::transport::Deadline;
use std::time::SystemTime;

/// The right to run once: carried to `keep_alive` and `complete`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    pub lock: Lock,
    pub lease_id: LeaseId,
    /// Strictly increasing across all runs ever granted on this lock. Pass it to downstream
    /// systems so they can refuse writes from an older run.
    pub fencing_token: u64,
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
    /// The token of the stuck run this one replaced (overlap `replace`).
    pub replaced: Option<u64>,
    /// A manual run (`run-now`): who asked.
    pub manual_by: Option<String>,
    /// When this run was due, and the due times missed before it.
    pub past_due: PastDue,
    pub options: GuardOptions,
    /// The record as written at the grant and the lock's ETag after it: what `complete` needs
    /// to close the run without reading it again. `None` from versions whose ticket does not
    /// carry it; `complete` then reads the record under the lease.
    pub grant: Option<Grant>,
}

/// The grant's record and the lock's ETag after writing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub etag: String,
    pub record: RunRecord,
}

/// A granted run's place in its schedule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PastDue {
    /// The due time the run is for (service clock, ms since the Unix epoch); the start when
    /// there is no schedule.
    pub due_at_ms: u64,
    /// How long after that due time it was granted (0 when early, within the tolerance).
    pub late_by_ms: u64,
    /// The due time the previous scheduled run was for.
    pub previous_due_ms: Option<u64>,
    /// When the previous run started, if there was one.
    pub previous_start_ms: Option<u64>,
    /// Due times that passed with no run between the previous scheduled run and this one.
    pub missed: u64,
}

/// Why a caller should not run now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// Someone holds the lease; `holder` is its label when its run is recorded.
    HeldByOther {
        holder: Option<String>,
        since_ms: Option<u64>,
        waited_ms: u64,
        /// The due time this tick counted for, when the job has a schedule.
        due_at_ms: Option<u64>,
    },
    /// A run already started for the current due time.
    AlreadyRan {
        due_at_ms: u64,
        started_ms: u64,
        holder: Option<String>,
        running: bool,
        outcome: Option<Outcome>,
        next_due_ms: Option<u64>,
    },
    /// The tick came more than the starting deadline after its due time.
    TooLate { due_at_ms: u64, late_by_ms: u64, next_due_ms: u64 },
    /// The lock never ran and no due time has come since it was created.
    NotDue { next_due_ms: Option<u64> },
    /// An operator paused the job.
    Paused(Paused),
    /// A replica with a newer schedule is still ticking on this lock: this replica's schedule is
    /// being replaced, so it defers (see `schedules`).
    ScheduleConflict {
        /// The newer schedule, in force, for people.
        newer: String,
        /// This replica's.
        ours: String,
        /// When a replica with the newer schedule first ticked on the lock.
        since_ms: u64,
        /// The latest this lasts: unless a replica with the newer schedule ticks by then, its
        /// replicas count as gone and this replica's schedule is in force again.
        until_ms: u64,
    },
    /// What this replica learned at its last look says nothing can be due yet: skipped without
    /// a request (`guarded_tick`).
    Remembered(Remembered),
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
    /// `success` or `failure: <reason>`: how the record, the board and every WIT version write
    /// an outcome.
    pub fn as_record_text(&self) -> String {
        match self {
            Outcome::Success => "success".to_string(),
            Outcome::Failure(reason) => format!("failure: {reason}"),
        }
    }

    /// Reads [`Outcome::as_record_text`] back. Text in neither form (no build writes it) is a
    /// failure with that text as its reason.
    pub fn from_record_text(text: &str) -> Outcome {
        match text {
            "success" => Outcome::Success,
            other => Outcome::Failure(other.strip_prefix("failure: ").unwrap_or(other).to_string()),
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

/// An answer that does not say what the protocol promises.
pub(crate) fn unexpected(what: &str) -> Error {
    Error::UnexpectedAnswer(format!("{what}; nothing was changed"))
}

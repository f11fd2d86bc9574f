//! The operator's verbs: pause, resume and run-now, written into the lock's run record, where
//! every replica's look (the one HEAD a follower's tick costs) sees them at once.
//!
//! Azure refuses a metadata write to a leased blob without the lease id (412 `LeaseIdMissing`).
//! A grant therefore records its lease id in the record (`tc_lease`, tagged with its token), and
//! a call that finds a run holding the lock writes with that id. The running run is not
//! disturbed: its lease, keep-alives and fenced writes go on; only the record's ETag moves, so
//! its `complete`, whose conditional write then fails, reads the record again and closes the run
//! on top of the change (two round trips more, only then). The change applies to the due times
//! after that run. The lease id is not a credential: every write still needs the account's key,
//! SAS or token, and whoever has those can break a lease anyway.
//!
//! A run granted by a build that does not record its lease id (before guard@0.3.0) cannot be
//! written around: the call waits for that run to end, up to its limit, and otherwise says so.

use super::keep_alive::is_condition_failure;
use super::operator_drain::{drained, running, RunningRun};
use super::record_text::{fit, NAME_BYTES, TEXT_BYTES};
use super::{service_clock, unix_ms, Paused, RunNow, RunRecord};
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::{Contention, Error};
use crate::ops::SetMetadata;
use crate::transport::{Deadline, Runtime, Transport};
use std::time::Duration;

/// How long one call may take, waits included (a drain adds its own).
const CALL_LIMIT: Duration = Duration::from_secs(30);
/// How long a call waits before looking again at a record it could not write.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// The lock as an operator's call left it: the change is in the record when it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorAnswer {
    /// The pause in force.
    pub paused: Option<Paused>,
    /// A manual run waiting for the next tick.
    pub run_now: Option<RunNow>,
    /// The run in progress when the call returned (for a pause with a drain, after the drain):
    /// it goes on undisturbed, and the change applies to the due times after it.
    pub running: Option<RunningRun>,
}

/// Pauses the job: from the next tick every replica skips with `paused`. With `drain`, waits up
/// to that long for a run in progress to end (pause, drain, deploy, resume).
pub fn pause<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    by: &str,
    reason: &str,
    drain: Duration,
) -> Result<OperatorAnswer, Error> {
    check_by(by)?;
    let reason = fit(&reason.chars().take(200).collect::<String>(), TEXT_BYTES);
    let answer = operate(client, lock, &|record, now| {
        // Paused already: the first pause (its time and reason) stands.
        let paused = record.paused.clone().unwrap_or_else(|| Paused {
            by: fit(by, NAME_BYTES),
            since_ms: now,
            reason: reason.clone(),
        });
        RunRecord { paused: Some(paused), ..record }
    })?;
    let running = drained(client, lock, answer.running.clone(), drain)?;
    Ok(OperatorAnswer { running, ..answer })
}

/// Ends a pause. The latest due time that passed while paused runs at the next tick (unless it is
/// past the starting deadline); the others count as missed.
pub fn resume<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    by: &str,
) -> Result<OperatorAnswer, Error> {
    check_by(by)?;
    operate(client, lock, &|record, _| RunRecord { paused: None, ..record })
}

/// One manual run at the next tick; a second call before it changes nothing but who asked.
pub fn run_now<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    by: &str,
) -> Result<OperatorAnswer, Error> {
    check_by(by)?;
    operate(client, lock, &|record, now| RunRecord {
        run_now: Some(RunNow { by: fit(by, NAME_BYTES), at_ms: now }),
        ..record
    })
}

fn check_by(by: &str) -> Result<(), Error> {
    let length = by.chars().count();
    if !(1..=64).contains(&length) || by.chars().any(char::is_control) {
        return Err(Error::InvalidArgument(
            "by must be 1-64 characters without control characters".into(),
        ));
    }
    Ok(())
}

/// Writes `change` into the record, conditional on the look it was made from; under the
/// holder's lease id while a run holds the lock. Looks again while the record moves. A failure
/// after a write that may have landed says so.
fn operate<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    change: &dyn Fn(RunRecord, u64) -> RunRecord,
) -> Result<OperatorAnswer, Error> {
    let mut maybe_written = false;
    attempts(client, lock, change, &mut maybe_written).map_err(|error| {
        if maybe_written {
            error.context("the change may or may not have been written: look at the board")
        } else {
            error
        }
    })
}

fn attempts<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    change: &dyn Fn(RunRecord, u64) -> RunRecord,
    maybe_written: &mut bool,
) -> Result<OperatorAnswer, Error> {
    let until = Deadline::after(client.runtime(), CALL_LIMIT);
    // A lease the record does not name was seen: a run of an older build, or a lease taken
    // with the raw lease verbs.
    let mut foreign_lease = false;
    let mut looks = 0;
    while until.left(client.runtime()).is_some() {
        looks += 1;
        let status = match client.inspect(lock) {
            Err(Error::NotFound(missing)) => {
                client.create_lock(lock, &missing)?;
                continue;
            }
            other => other?,
        };
        let now = unix_ms(service_clock(status.server_time, "the look at the lock")?);
        let record = RunRecord::readable(&status.metadata)?;
        let lease_id = match (status.locked, record.lease_id()) {
            (false, _) => None,
            (true, Some(id)) => Some(id),
            // Held by a grant that has not written its record yet, or by an older build.
            (true, None) => {
                foreign_lease = true;
                client.runtime().sleep(LOOK_EVERY);
                continue;
            }
        };
        let changed = change(record.clone(), now);
        match client.execute(lock, &SetMetadata::new(changed.to_metadata(), lease_id, status.etag)?)
        {
            Ok(_) => {
                let running = if status.locked { running(&record) } else { None };
                return Ok(OperatorAnswer {
                    paused: changed.paused,
                    run_now: changed.run_now,
                    running,
                });
            }
            // The record or the lease moved since the look (a grant, a complete, or this
            // write, landed unheard before its retry): look again.
            Err(error) if is_moved(&error) => {
                *maybe_written = true;
                foreign_lease |= status.locked && !is_condition_failure(&error);
                client.runtime().sleep(LOOK_EVERY / 5)
            }
            Err(error) => {
                *maybe_written |= crate::client::outcome_unknown(&error);
                return Err(error);
            }
        }
    }
    let message = if foreign_lease {
        "the lock was held for the whole 30 s under a lease its record does not name (a run of \
         a replica built before guard@0.3.0, or a lease taken with the raw lease verbs): nothing \
         was written; try again when it has ended"
    } else {
        "the lock's record moved under every attempt for 30 s: nothing was written"
    };
    Err(Error::Contended(Contention { attempts: looks, message: message.into() }))
}

fn is_moved(error: &Error) -> bool {
    match error {
        Error::LeaseLost(_) | Error::HeldByOther(_) => true,
        other => other.service_error().is_some_and(|e| e.status == 412),
    }
}

//! A granted run's calls: `keep_alive` (1 round trip: renew) and `complete` (3: a look under
//! the lease, the conditional record write, release). Each is bounded by the time left on the
//! lease it serves, so retries can never outlast the lease.

use super::{service_clock, unix_ms, Outcome, RunRecord, Ticket};
use crate::client::{outcome_unknown, LeaseClient};
use crate::config::Lock;
use crate::error::Error;
use crate::ops::{InspectHeld, LeaseId, LockStatus, Release, Renew, SetMetadata};
use crate::transport::{Deadline, Runtime, Transport};
use std::time::{Duration, SystemTime};

/// Renews the ticket's lease. Returns the new local deadline, or `LeaseLost` when the lease is
/// gone: the work must stop before it does anything more.
pub fn keep_alive<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
) -> Result<SystemTime, Error> {
    let sent_at = client.runtime().now();
    let by = lease_ends(ticket, client.runtime());
    client.execute_by(&ticket.lock, &Renew { lease_id: ticket.lease_id.clone() }, Some(by))?;
    Ok(sent_at + ticket.options.lease_period())
}

/// Records the stop time and outcome under the lease, then releases it. The record written is
/// the stored one (read under our lease id) with the run closed, written with `If-Match`, so a
/// modified or stale ticket can neither rewind the fencing token nor close someone else's run.
/// Fails with `LeaseLost` if the lease is gone (the record then keeps `running`, and the next
/// run reports the previous one as abandoned). A failure after the record was written says so.
pub fn complete<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    outcome: &Outcome,
) -> Result<(), Error> {
    let by = lease_ends(ticket, client.runtime());
    let held = InspectHeld { lease_id: ticket.lease_id.clone() };
    let status = client.execute_by(&ticket.lock, &held, Some(by))?;
    let stored = RunRecord::from_metadata(&status.metadata);
    if !stored.running
        || stored.fence != ticket.fencing_token
        || stored.started_ms != Some(ticket.started_ms)
    {
        return Err(Error::InvalidArgument(format!(
            "the ticket (fencing token {}, started {}) is not the lock's open run (fencing token \
             {}, started {:?}, running {}); nothing was written",
            ticket.fencing_token,
            ticket.started_ms,
            stored.fence,
            stored.started_ms,
            stored.running
        )));
    }
    // The service's clock, like the start; never before the recorded start.
    let now = service_clock(status.server_time, "the look at the lock")?;
    let stopped_ms = unix_ms(now).max(ticket.started_ms);
    let closed = stored.completed(stopped_ms, &outcome.as_record_text());
    let write = SetMetadata::new(closed.to_metadata(), Some(ticket.lease_id.clone()), status.etag)?;
    if let Err(error) = client.execute_by(&ticket.lock, &write, Some(by)) {
        // A write whose answer was lost and whose retry then failed its `If-Match` (or never
        // got an answer) may have landed: a look under the lease settles it.
        let settle = is_condition_failure(&error) || outcome_unknown(&error);
        match settle.then(|| client.execute_by(&ticket.lock, &held, Some(by))) {
            Some(Ok(status)) if is(&status, &closed) => {}
            // The lease ran out meanwhile: closed and nothing held is what was asked for.
            Some(Err(Error::LeaseLost(_)))
                if client.inspect(&ticket.lock).is_ok_and(|status| is(&status, &closed)) =>
            {
                return Ok(())
            }
            Some(Err(look)) if outcome_unknown(&look) => {
                return Err(error.context(
                    "the run's record may or may not have been closed: the service could not \
                     be asked; the lease was not released and expires within one lease period",
                ))
            }
            _ => return Err(error.context("the run's record was not closed")),
        }
    }
    match client.execute_by(&ticket.lock, &Release { lease_id: ticket.lease_id.clone() }, Some(by))
    {
        // Expired between the write and the release: the record is written, nothing is held.
        Ok(()) | Err(Error::LeaseLost(_)) => Ok(()),
        Err(error) => Err(error.context(&format!(
            "the run's record was closed ({}), but the lease could not be released: it \
             expires on its own within {} s",
            outcome.as_record_text(),
            ticket.options.lease_seconds
        ))),
    }
}

/// Whether the lock's record is exactly `record` (the grant's token, start and holder make it
/// one run's; the rest says whether it was closed).
fn is(status: &LockStatus, record: &RunRecord) -> bool {
    RunRecord::from_metadata(&status.metadata) == *record
}

/// When the time left on a ticket's lease ends, on this instance's monotonic clock: the
/// grant's own deadline when this instance granted it and it is still ahead; else, from the
/// ticket's wall-clock deadline while that is ahead, but never more than one lease period from
/// now (a wall clock stepped back cannot stretch the budget past a lease); once it has passed
/// (a ticket from before the last keep-alive: a WIT ticket is a value, so its deadline is the
/// grant's), the least a lease renewed on schedule has left.
pub(super) fn lease_ends(ticket: &Ticket, runtime: &dyn Runtime) -> Deadline {
    if let Some(deadline) = ticket.lease_deadline.filter(|d| d.left(runtime).is_some()) {
        return deadline;
    }
    let options = &ticket.options;
    let left = match ticket.deadline.duration_since(runtime.now()) {
        Ok(left) if !left.is_zero() => left.min(options.lease_period()),
        _ => Duration::from_secs(u64::from(options.lease_seconds - options.keep_alive_seconds)),
    };
    Deadline::after(runtime, left)
}

pub(super) fn release_quietly<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    id: &LeaseId,
    by: Deadline,
) {
    // Best effort: if it fails, the lease expires on its own after one period.
    let _ = client.execute_by(lock, &Release { lease_id: id.clone() }, Some(by));
}

pub(super) fn is_condition_failure(error: &Error) -> bool {
    error
        .service_error()
        .is_some_and(|e| e.status == 412 && e.code.as_deref() == Some("ConditionNotMet"))
}

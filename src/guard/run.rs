//! A granted run's calls: `keep_alive` (1 round trip: renew) and `complete` (3: a look under
//! the lease, the conditional record write, release). Each is bounded by the time left on the
//! lease it serves, so retries can never outlast the lease.

use super::{unix_ms, Outcome, RunRecord, Ticket};
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::Error;
use crate::ops::{InspectHeld, LeaseId, Release, Renew, SetMetadata};
use crate::transport::{Runtime, Transport};
use std::time::{Duration, SystemTime};

/// Renews the ticket's lease. Returns the new local deadline, or `LeaseLost` when the lease is
/// gone: the work must stop before it does anything more.
pub fn keep_alive<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
) -> Result<SystemTime, Error> {
    let sent_at = client.runtime().now();
    let by = lease_ends(ticket, sent_at);
    client.execute_by(&ticket.lock, &Renew { lease_id: ticket.lease_id.clone() }, Some(by))?;
    Ok(sent_at + ticket.options.lease_period())
}

/// Records the stop time and outcome under the lease, then releases it. The record written is
/// the stored one (read under our lease id) with the run closed, written with `If-Match`, so a
/// modified or stale ticket can neither rewind the fencing token nor close someone else's run.
/// Fails with `LeaseLost` if the lease is gone (the record then keeps `running`, and the next
/// run reports the previous one as abandoned).
pub fn complete<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    outcome: &Outcome,
) -> Result<(), Error> {
    let by = lease_ends(ticket, client.runtime().now());
    let status = client.execute_by(
        &ticket.lock,
        &InspectHeld { lease_id: ticket.lease_id.clone() },
        Some(by),
    )?;
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
    let now = status.server_time.unwrap_or_else(|| client.runtime().now());
    let stopped_ms = unix_ms(now).max(ticket.started_ms);
    let closed = stored.completed(stopped_ms, &outcome.as_record_text());
    let write = SetMetadata::new(closed.to_metadata(), Some(ticket.lease_id.clone()), status.etag)?;
    client.execute_by(&ticket.lock, &write, Some(by))?;
    match client.execute_by(&ticket.lock, &Release { lease_id: ticket.lease_id.clone() }, Some(by))
    {
        // Expired between the write and the release: the record is written, nothing is held.
        Ok(()) | Err(Error::LeaseLost(_)) => Ok(()),
        Err(error) => Err(error),
    }
}

/// When the time left on a ticket's lease ends, by the local clock: its deadline while that is
/// ahead; once it has passed (a ticket from before the last keep-alive: a WIT ticket is a
/// value, so its deadline is the grant's), the least a lease renewed on schedule has left.
pub(super) fn lease_ends(ticket: &Ticket, now: SystemTime) -> SystemTime {
    if ticket.deadline > now {
        return ticket.deadline;
    }
    let options = &ticket.options;
    now + Duration::from_secs(u64::from(options.lease_seconds - options.keep_alive_seconds))
}

pub(super) fn release_quietly<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    id: &LeaseId,
    by: SystemTime,
) {
    // Best effort: if it fails, the lease expires on its own after one period.
    let _ = client.execute_by(lock, &Release { lease_id: id.clone() }, Some(by));
}

pub(super) fn is_condition_failure(error: &Error) -> bool {
    error
        .service_error()
        .is_some_and(|e| e.status == 412 && e.code.as_deref() == Some("ConditionNotMet"))
}

//! `keep_alive`: a granted run renews its lease for long work (one round trip), bounded by the
//! time left on the lease it serves, so retries can never outlast it.

use super::Ticket;
use crate::client::LeaseClient;
use crate::error::Error;
use crate::ops::{LeaseId, Release, Renew};
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
    lock: &crate::config::Lock,
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

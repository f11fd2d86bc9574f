//! `complete`: closes a granted run. Writes the stop time and outcome to the run's record under
//! the lease, conditional on the record's version, then releases. Two round trips with a ticket
//! that carries its grant (a run on the instance that granted it); three for a ticket without
//! it, which first reads the record under the lease; two more
//! when an operator's call wrote the record during the run. Bounded by the time left on the
//! lease, like `keep_alive`.

use super::keep_alive::{is_condition_failure, lease_ends};
use super::{service_clock, unix_ms, Outcome, RunRecord, Ticket};
use crate::client::{outcome_unknown, LeaseClient};
use crate::error::{Contention, Error, LeaseLoss};
use crate::ops::{InspectHeld, Release, SetMetadata};
use crate::transport::{Runtime, Transport};

/// Records the stop time and outcome under the lease, then releases it. The record written is
/// the grant's (from the ticket, or read under our lease id) with the run closed, written with
/// `If-Match`, so a stale ticket can neither rewind the fencing token nor close someone else's
/// run. Fails with `LeaseLost` if the lease is gone (the record then keeps `running`, and the
/// next run reports the previous one as abandoned). A failure after the record was written says
/// so.
pub fn complete<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    outcome: &Outcome,
) -> Result<(), Error> {
    close(client, ticket, outcome, false)
}

/// [`complete`], for a run `blocked` or not (its instance could not renew the lease when due:
/// the lock's totals count it).
pub(crate) fn close<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    outcome: &Outcome,
    blocked: bool,
) -> Result<(), Error> {
    let lock = &ticket.lock;
    let by = lease_ends(ticket, client.runtime());
    let held = InspectHeld { lease_id: ticket.lease_id.clone() };
    let (mut record, mut etag, now_ms) = match &ticket.grant {
        Some(grant) => {
            (grant.record.clone(), Some(grant.etag.clone()), service_now(ticket, client))
        }
        None => {
            let status = client.execute_by(lock, &held, Some(by))?;
            let now = service_clock(status.server_time, "the look at the lock")?;
            (RunRecord::readable(&status.metadata)?, status.etag, unix_ms(now))
        }
    };
    if !is_open(&record, ticket) {
        return Err(Error::InvalidArgument(format!(
            "the ticket (fencing token {}, started {}) is not the lock's open run (fencing token \
             {}, started {:?}, running {}); nothing was written",
            ticket.fencing_token,
            ticket.started_ms,
            record.fence,
            record.started_ms,
            record.running
        )));
    }
    let stopped_ms = now_ms.max(ticket.started_ms);
    for _ in 0..MAX_MERGES {
        let closed = match blocked {
            true => record.completed_blocked(stopped_ms, outcome),
            false => record.completed(stopped_ms, outcome),
        };
        let write = SetMetadata::new(closed.to_metadata(), Some(ticket.lease_id.clone()), etag)?;
        let error = match client.execute_by(lock, &write, Some(by)) {
            Ok(_) => return release(client, ticket, outcome, by),
            Err(error) => error,
        };
        // A failed `If-Match`: an operator's call wrote the record under our lease (see
        // `operator`), or a write whose answer was lost landed before its retry. No answer at
        // all: it may have landed. A look under the lease settles each.
        if !is_condition_failure(&error) && !outcome_unknown(&error) {
            return Err(error.context(NOT_CLOSED));
        }
        match client.execute_by(lock, &held, Some(by)) {
            Ok(status) => {
                let now = RunRecord::from_metadata(&status.metadata);
                if is_closed(&now, &closed) {
                    return release(client, ticket, outcome, by);
                }
                if !is_open(&now, ticket) {
                    return Err(error.context(NOT_CLOSED));
                }
                // Still our open run, with someone's change: closed on top of it.
                (record, etag) = (now, status.etag);
            }
            // The service says the lease is gone: closed and nothing held is what was asked
            // for, so the lock (read within what is left of the budget) settles it.
            Err(lost @ Error::LeaseLost(LeaseLoss::Service(_))) => {
                let read = client.execute_by(lock, &crate::ops::Inspect, Some(by));
                return match read {
                    Ok(status)
                        if is_closed(&RunRecord::from_metadata(&status.metadata), &closed) =>
                    {
                        Ok(())
                    }
                    Ok(_) => {
                        Err(lost.context("the run's record was not closed (it keeps `running`)"))
                    }
                    Err(_) => Err(lost.context(UNSETTLED)),
                };
            }
            Err(look) if outcome_unknown(&look) || matches!(look, Error::LeaseLost(_)) => {
                return Err(error.context(&format!(
                    "{UNSETTLED}; the lease was not released and expires within one lease period"
                )))
            }
            Err(_) => return Err(error.context(NOT_CLOSED)),
        }
    }
    Err(Error::Contended(Contention {
        attempts: MAX_MERGES,
        message: format!(
            "the run's record changed under each of {MAX_MERGES} attempts to close it; the lease \
             was left to expire (within {} s)",
            ticket.options.lease_seconds
        ),
    }))
}

/// How often `complete` closes the run again on top of a record that changed under it (each
/// change is an operator's call).
const MAX_MERGES: u32 = 4;

const NOT_CLOSED: &str = "the run's record was not closed";

const UNSETTLED: &str =
    "the run's record may or may not have been closed: the service could not be asked";

/// Releases the lease of a run whose record is closed.
fn release<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    outcome: &Outcome,
    by: crate::transport::Deadline,
) -> Result<(), Error> {
    match client.execute_by(&ticket.lock, &Release { lease_id: ticket.lease_id.clone() }, Some(by))
    {
        // Expired between the write and the release: the record is written, nothing is held.
        Ok(()) | Err(Error::LeaseLost(_)) => Ok(()),
        Err(error) => Err(error.context(&format!(
            "the run's record was closed ({}), but the lease could not be released: it expires \
             on its own within {} s",
            outcome.as_record_text(),
            ticket.options.lease_seconds
        ))),
    }
}

/// The record is the ticket's run, still open.
fn is_open(record: &RunRecord, ticket: &Ticket) -> bool {
    record.running
        && record.fence == ticket.fencing_token
        && record.started_ms == Some(ticket.started_ms)
}

/// The record is `closed`'s run, closed as `closed` closes it (whatever else changed since).
fn is_closed(record: &RunRecord, closed: &RunRecord) -> bool {
    !record.running
        && record.fence == closed.fence
        && record.started_ms == closed.started_ms
        && record.stopped_ms == closed.stopped_ms
        && record.outcome == closed.outcome
}

/// The storage service's time now, without asking it: this host's clock, corrected by how far
/// it was from the service's when the run was granted (the grant's start is the service's time;
/// the ticket's deadline is this host's lease period past the moment the acquire was sent).
fn service_now<T: Transport, R: Runtime>(ticket: &Ticket, client: &LeaseClient<T, R>) -> u64 {
    let sent_local =
        unix_ms(ticket.deadline).saturating_sub(ticket.options.lease_period().as_millis() as u64);
    let skew = ticket.started_ms as i128 - sent_local as i128;
    (unix_ms(client.runtime().now()) as i128 + skew).max(0) as u64
}

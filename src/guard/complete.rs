//! `complete`: closes a granted run. Writes the stop time and outcome to the run's record under
//! the lease, conditional on the record's version, looks for an operator's pending call and
//! applies it, then releases. Three round trips with a ticket that carries its grant (guard@0.3.0);
//! a ticket without it first reads the record under the lease (four). Bounded by the time left
//! on the lease, like `keep_alive`.

use super::keep_alive::{is_condition_failure, lease_ends};
use super::{operator, service_clock, unix_ms, Outcome, RunRecord, Ticket};
use crate::client::{outcome_unknown, LeaseClient};
use crate::error::Error;
use crate::ops::{InspectHeld, LockStatus, Release, SetMetadata};
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
    let lock = &ticket.lock;
    let by = lease_ends(ticket, client.runtime());
    let held = InspectHeld { lease_id: ticket.lease_id.clone() };
    let (granted, etag, now_ms) = match &ticket.grant {
        Some(grant) => {
            (grant.record.clone(), Some(grant.etag.clone()), service_now(ticket, client))
        }
        None => {
            let status = client.execute_by(lock, &held, Some(by))?;
            let now = service_clock(status.server_time, "the look at the lock")?;
            (RunRecord::from_metadata(&status.metadata), status.etag, unix_ms(now))
        }
    };
    if !granted.running
        || granted.fence != ticket.fencing_token
        || granted.started_ms != Some(ticket.started_ms)
    {
        return Err(Error::InvalidArgument(format!(
            "the ticket (fencing token {}, started {}) is not the lock's open run (fencing token \
             {}, started {:?}, running {}); nothing was written",
            ticket.fencing_token,
            ticket.started_ms,
            granted.fence,
            granted.started_ms,
            granted.running
        )));
    }
    let closed = granted.completed(now_ms.max(ticket.started_ms), &outcome.as_record_text());
    let write = SetMetadata::new(closed.to_metadata(), Some(ticket.lease_id.clone()), etag)?;
    let etag = match client.execute_by(lock, &write, Some(by)) {
        Ok(etag) => etag,
        Err(error) => {
            // A write whose answer was lost and whose retry then failed its `If-Match` (or never
            // got an answer) may have landed: a look under the lease settles it.
            let settle = is_condition_failure(&error) || outcome_unknown(&error);
            let look = match settle.then(|| client.execute_by(lock, &held, Some(by))) {
                Some(look) => look,
                None => return Err(error.context("the run's record was not closed")),
            };
            match look {
                Ok(status) if is(&status, &closed) => status.etag,
                Ok(_) => return Err(error.context("the run's record was not closed")),
                // The service says the lease is gone: closed and nothing held is what was asked
                // for, so the lock (read within what is left of the budget) settles it.
                Err(Error::LeaseLost(lost)) if lost.status != 0 => {
                    let read = client.execute_by(lock, &crate::ops::Inspect, Some(by));
                    return match read {
                        Ok(status) if is(&status, &closed) => Ok(()),
                        Ok(_) => Err(Error::LeaseLost(lost)
                            .context("the run's record was not closed (the run keeps `running`)")),
                        Err(_) => Err(Error::LeaseLost(lost).context(UNSETTLED)),
                    };
                }
                Err(look) if outcome_unknown(&look) || matches!(look, Error::LeaseLost(_)) => {
                    return Err(error.context(&format!(
                        "{UNSETTLED}; the lease was not released and expires within one lease \
                         period"
                    )))
                }
                Err(_) => return Err(error.context("the run's record was not closed")),
            }
        }
    };
    let leave = |error: Error, what: &str| {
        error.context(&format!(
            "the run's record was closed ({}), but {what}: the lease was left to expire (within \
             {} s)",
            outcome.as_record_text(),
            ticket.options.lease_seconds
        ))
    };
    // An operator's call that came while this run held the lock; left unread, a clean release
    // would hide it from the next grant, so a failure here keeps the lease to expire instead.
    let pending = operator::pending(client, lock, Some(by))
        .map_err(|e| leave(e, "a pending operator call could not be looked for"))?;
    if let Some(pending) = &pending {
        let applied = pending.apply(closed.clone());
        let write = SetMetadata::new(applied.to_metadata(), Some(ticket.lease_id.clone()), etag)?;
        client
            .execute_by(lock, &write, Some(by))
            .map_err(|e| leave(e, "an operator's pending call could not be applied"))?;
    }
    match client.execute_by(lock, &Release { lease_id: ticket.lease_id.clone() }, Some(by)) {
        // Expired between the write and the release: the record is written, nothing is held.
        Ok(()) | Err(Error::LeaseLost(_)) => {}
        Err(error) => {
            return Err(error.context(&format!(
                "the run's record was closed ({}), but the lease could not be released: it \
                 expires on its own within {} s",
                outcome.as_record_text(),
                ticket.options.lease_seconds
            )))
        }
    }
    if let Some(pending) = &pending {
        // Applied: the marker goes (kept if written again meanwhile). If this fails, applying
        // it again later changes nothing that was not asked for.
        let _ = operator::clear(client, lock, pending);
    }
    Ok(())
}

const UNSETTLED: &str =
    "the run's record may or may not have been closed: the service could not be asked";

/// Whether the lock's record is exactly `record` (the grant's token, start and holder make it
/// one run's; the rest says whether it was closed).
fn is(status: &LockStatus, record: &RunRecord) -> bool {
    RunRecord::from_metadata(&status.metadata) == *record
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

//! The single-lock driver: `guarded_invoke`, `keep_alive`, `complete`. Round trips: a follower
//! that must skip, 1 (HEAD); a leader, 3 (HEAD, acquire, record); `complete`, 2 (record,
//! release); `keep_alive`, 1 (renew).

use super::decide::interval_of;
use super::{
    decide, unix_ms, Decision, GuardOptions, Outcome, RunRecord, SkipReason, Ticket, Verdict,
};
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::Error;
use crate::ops::{Acquire, LeaseId, LeaseState, Release, SetMetadata};
use crate::transport::{Runtime, Transport};
use std::time::{Duration, SystemTime};

/// How often one call re-reads a record that changed under it before giving up. Each change is
/// someone else's progress, so this only runs out under pathological churn.
const MAX_REREADS: usize = 4;

/// What one attempt at a lock came to.
// One value per call, moved straight out: boxing the ticket would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Attempt {
    Run(Ticket),
    Skip(SkipReason),
    /// The record changed between our look and our acquire or write: look again.
    Changed,
}

/// Asks "is it my turn?" for `lock`. Errors become `Skip(Error(…))`: a caller that cannot
/// decide must not run.
pub fn guarded_invoke<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
) -> Decision {
    match invoke(client, lock, options) {
        Ok(decision) => decision,
        Err(error) => Decision::Skip(SkipReason::Error(error)),
    }
}

fn invoke<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
) -> Result<Decision, Error> {
    for _ in 0..MAX_REREADS {
        let status = match client.inspect(lock) {
            Err(Error::NotFound(missing)) => {
                client.create_lock(lock, &missing)?;
                continue;
            }
            other => other?,
        };
        let record = RunRecord::from_metadata(&status.metadata);
        let now = status.server_time.unwrap_or_else(|| client.runtime().now());
        match attempt(client, lock, options, &record, status.state, status.etag, now)? {
            Attempt::Run(ticket) => return Ok(Decision::Run(ticket)),
            Attempt::Skip(reason) => return Ok(Decision::Skip(reason)),
            Attempt::Changed => continue,
        }
    }
    Err(Error::InvalidArgument(format!(
        "the lock record changed {MAX_REREADS} times while deciding; try again on the next tick"
    )))
}

/// Decides from one look (`record`, `state`, `etag`, service time `now`) and, if it is our
/// turn, takes the lease and records the grant, each conditional on that look.
pub(crate) fn attempt<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
    record: &RunRecord,
    state: LeaseState,
    etag: Option<String>,
    now: SystemTime,
) -> Result<Attempt, Error> {
    let (fence, previous_abandoned) = match decide(record, state, now, options) {
        Verdict::Skip(reason) => return Ok(Attempt::Skip(reason)),
        Verdict::Contend { fence, previous_abandoned } => (fence, previous_abandoned),
    };
    let lease_id = LeaseId::random(client.runtime());
    let sent_at = client.runtime().now();
    let acquire = Acquire::new(options.lease_duration(), lease_id.clone())?.if_match(etag);
    let grant = match client.execute(lock, &acquire) {
        Ok(grant) => grant,
        Err(Error::HeldByOther(_)) => {
            return Ok(Attempt::Skip(SkipReason::HeldByOther { holder: None, since_ms: None }))
        }
        Err(error) if is_condition_failure(&error) => return Ok(Attempt::Changed),
        Err(error) => return Err(error),
    };
    // The interval is judged again at the grant's service time: the look may have been in the
    // previous interval. The record is unchanged since the look (the acquire was conditional).
    let started = grant.server_time.unwrap_or(now).max(now);
    if let Verdict::Skip(reason) = decide(record, LeaseState::Available, started, options) {
        release_quietly(client, lock, &lease_id);
        return Ok(Attempt::Skip(reason));
    }
    let started_ms = unix_ms(started);
    let granted = record.granted(fence, started_ms, &options.holder);
    let write = SetMetadata::new(granted.to_metadata(), Some(lease_id.clone()), grant.etag)?;
    if let Err(error) = client.execute(lock, &write) {
        // A write whose answer was lost and whose retry then failed its own `If-Match` may
        // have landed: if the record is exactly ours, the grant stands.
        if !(is_condition_failure(&error) && record_is(client, lock, &granted)) {
            release_quietly(client, lock, &lease_id);
            return if is_condition_failure(&error) { Ok(Attempt::Changed) } else { Err(error) };
        }
    }
    let period = options.lease_period();
    Ok(Attempt::Run(Ticket {
        lock: lock.clone(),
        lease_id,
        fencing_token: fence,
        interval: interval_of(started_ms, options.interval_seconds),
        started_ms,
        deadline: sent_at + period,
        keep_alive_by: sent_at + Duration::from_secs(options.keep_alive_seconds.into()),
        previous_abandoned,
        options: options.clone(),
    }))
}

/// Renews the ticket's lease. Returns the new local deadline, or `LeaseLost` when the lease is
/// gone: the work must stop before it does anything more.
pub fn keep_alive<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
) -> Result<SystemTime, Error> {
    let sent_at = client.runtime().now();
    client.renew(&ticket.lock, &ticket.lease_id)?;
    Ok(sent_at + ticket.options.lease_period())
}

/// Records the stop time and outcome under the lease, then releases it. Fails with
/// `LeaseLost` if the lease is gone (the record then keeps `running`, and the next run reports
/// the previous one as abandoned).
pub fn complete<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    outcome: &Outcome,
) -> Result<(), Error> {
    let started = RunRecord::default().granted(
        ticket.fencing_token,
        ticket.started_ms,
        &ticket.options.holder,
    );
    // The stop time is local (no response to read a service time from yet), but never before
    // the recorded start.
    let stopped_ms = unix_ms(client.runtime().now()).max(ticket.started_ms);
    let record = started.completed(stopped_ms, &outcome.as_record_text());
    let write = SetMetadata::new(record.to_metadata(), Some(ticket.lease_id.clone()), None)?;
    client.execute(&ticket.lock, &write)?;
    match client.release(&ticket.lock, &ticket.lease_id) {
        // Expired between the write and the release: the record is written, nothing is held.
        Ok(()) | Err(Error::LeaseLost(_)) => Ok(()),
        Err(error) => Err(error),
    }
}

/// Whether the lock is leased and carries exactly `expected` (token, start and holder are
/// unique to one grant).
fn record_is<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    expected: &RunRecord,
) -> bool {
    client.inspect(lock).is_ok_and(|status| {
        status.state == LeaseState::Leased
            && RunRecord::from_metadata(&status.metadata) == *expected
    })
}

fn release_quietly<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    id: &LeaseId,
) {
    // Best effort: if it fails, the lease expires on its own after one period.
    let _ = client.execute(lock, &Release { lease_id: id.clone() });
}

fn is_condition_failure(error: &Error) -> bool {
    error
        .service_error()
        .is_some_and(|e| e.status == 412 && e.code.as_deref() == Some("ConditionNotMet"))
}

//! `guarded_invoke`: look, then (if it is our turn) a conditional acquire and a conditional
//! record write. Round trips: a follower that must skip, 1 (HEAD); a leader, 3.

use super::run::{is_condition_failure, release_quietly};
use super::{decide, unix_ms, Decision, GuardOptions, RunRecord, SkipReason, Ticket, Verdict};
use crate::client::{outcome_unknown, LeaseClient};
use crate::config::Lock;
use crate::error::{Error, ServiceError};
use crate::ops::{Acquire, InspectHeld, LeaseId, LeaseState, SetMetadata};
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
    // Requests were sent and answered: this is the service's last word, a failed condition.
    Err(Error::Service(ServiceError {
        status: 412,
        code: Some("ConditionNotMet".into()),
        request_id: None,
        message: format!(
            "the lock record changed under each of {MAX_REREADS} attempts to decide; \
             nothing is held; try again on the next tick"
        ),
    }))
}

/// Decides from one look (`record`, `state`, `etag`, service time `now`) and, if it is our
/// turn, takes the lease and records the grant, each conditional on that look. Never grants a
/// run whose lease period (counted locally from before the acquire) has already run out.
pub(crate) fn attempt<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
    record: &RunRecord,
    state: LeaseState,
    etag: Option<String>,
    now: SystemTime,
) -> Result<Attempt, Error> {
    let fence = match decide(record, state, now, options) {
        Verdict::Skip(reason) => return Ok(Attempt::Skip(reason)),
        Verdict::Contend { fence, .. } => fence,
    };
    let lease_id = LeaseId::random(client.runtime());
    let sent_at = client.runtime().now();
    let deadline = sent_at + options.lease_period();
    let acquire = Acquire::new(options.lease_duration(), lease_id.clone())?.if_match(etag);
    let grant = match client.execute_by(lock, &acquire, Some(deadline)) {
        Ok(grant) => grant,
        Err(Error::HeldByOther(_)) => {
            return Ok(Attempt::Skip(SkipReason::HeldByOther { holder: None, since_ms: None }))
        }
        Err(error) if is_condition_failure(&error) => return Ok(Attempt::Changed),
        Err(error) => {
            if outcome_unknown(&error) {
                client.release_unheard(lock, &lease_id, Some(deadline));
            }
            return Err(error);
        }
    };
    // The due time is judged again at the grant's service time: the look may have counted for
    // the previous one. The record is unchanged since the look (the acquire was conditional).
    let started = grant.server_time.unwrap_or(now).max(now);
    let (previous_abandoned, past_due) =
        match decide(record, LeaseState::Available, started, options) {
            Verdict::Contend { previous_abandoned, past_due, .. } => (previous_abandoned, past_due),
            Verdict::Skip(reason) => {
                release_quietly(client, lock, &lease_id, deadline);
                return Ok(Attempt::Skip(reason));
            }
        };
    let started_ms = unix_ms(started);
    let granted = record.granted(fence, started_ms, &options.holder).scheduled(options);
    let write = SetMetadata::new(granted.to_metadata(), Some(lease_id.clone()), grant.etag)?;
    if let Err(error) = client.execute_by(lock, &write, Some(deadline)) {
        // A write whose answer was lost and whose retry then failed its own `If-Match` may
        // have landed: if the lease is still ours and the record is exactly ours, it did.
        let landed = is_condition_failure(&error)
            && record_is_ours(client, lock, &lease_id, &granted, deadline);
        if !landed {
            release_quietly(client, lock, &lease_id, deadline);
            return if is_condition_failure(&error) { Ok(Attempt::Changed) } else { Err(error) };
        }
    }
    if client.runtime().now() >= deadline {
        // Granted too late to be safe: the lease may already be someone else's. Ours may still
        // live a moment on the service (its period started when the acquire arrived): one
        // release attempt, outside the spent budget, frees it.
        client.release_unheard(lock, &lease_id, None);
        return Err(Error::LeaseLost(ServiceError {
            status: 0,
            code: None,
            request_id: None,
            message: format!(
                "granting the run took longer than the {} s lease; not running",
                options.lease_seconds
            ),
        }));
    }
    Ok(Attempt::Run(Ticket {
        lock: lock.clone(),
        lease_id,
        fencing_token: fence,
        interval: options.schedule().due_index(started_ms),
        started_ms,
        deadline,
        keep_alive_by: sent_at + Duration::from_secs(options.keep_alive_seconds.into()),
        previous_abandoned,
        past_due,
        options: options.clone(),
    }))
}

/// Whether `lease_id` still holds the lock and the record is exactly `expected` (token, start
/// and holder are unique to one grant). The look carries the lease id, so the service itself
/// refuses it if the lease expired or was taken meanwhile.
fn record_is_ours<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    lease_id: &LeaseId,
    expected: &RunRecord,
    deadline: SystemTime,
) -> bool {
    let look = InspectHeld { lease_id: lease_id.clone() };
    client.execute_by(lock, &look, Some(deadline)).is_ok_and(|status| {
        status.state == LeaseState::Leased
            && RunRecord::from_metadata(&status.metadata) == *expected
    })
}

//! `guarded_invoke`: look, then (if it is our turn) a conditional acquire and a conditional
//! record write. Round trips: a follower that must skip, 1 (HEAD); a leader, 3.

use super::run::{is_condition_failure, release_quietly};
use super::{
    decide, service_clock, unix_ms, Decision, GuardOptions, RunRecord, SkipReason, Ticket, Verdict,
};
use crate::client::{outcome_unknown, LeaseClient};
use crate::config::Lock;
use crate::error::{Error, ServiceError};
use crate::ops::{Acquire, Inspect, InspectHeld, LeaseId, LeaseState, SetMetadata};
use crate::transport::{Deadline, Runtime, Transport};
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
        let now = service_clock(status.server_time, "the look at the lock")?;
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
/// run whose lease period (counted on the monotonic clock from before the acquire) has run out.
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
    // Without it the acquire would not be conditional on the look: a record written since
    // (another replica's grant) would be overwritten.
    let etag = etag.ok_or_else(|| {
        super::unexpected("the look at the lock has no ETag, so the acquire cannot be conditional")
    })?;
    let lease_id = LeaseId::random(client.runtime());
    let sent_at = client.runtime().now();
    let deadline = Deadline::after(client.runtime(), options.lease_period());
    let acquire = Acquire::new(options.lease_duration(), lease_id.clone())?.if_match(Some(etag));
    let grant = match client.execute_by(lock, &acquire, Some(deadline)) {
        Ok(grant) => grant,
        Err(Error::HeldByOther(_)) => {
            return Ok(Attempt::Skip(SkipReason::HeldByOther { holder: None, since_ms: None }))
        }
        Err(error) if is_condition_failure(&error) => return Ok(Attempt::Changed),
        Err(error) => {
            if outcome_unknown(&error) && !client.release_unheard(lock, &lease_id, Some(deadline)) {
                return Err(error.context(&format!(
                    "the lease may have been granted (id {lease_id}) and its release was not \
                     heard either: it may hold the lock until it expires (within {} s); no run \
                     was recorded",
                    options.lease_seconds
                )));
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
    let used_up = UsedUp { fence, holder: &options.holder, due_at_ms: past_due.due_at_ms };
    let write = SetMetadata::new(granted.to_metadata(), Some(lease_id.clone()), grant.etag)?;
    if let Err(error) = client.execute_by(lock, &write, Some(deadline)) {
        match landed(client, lock, &lease_id, &granted, deadline, &error) {
            Landed::Yes => {}
            Landed::No => {
                release_quietly(client, lock, &lease_id, deadline);
                return if is_condition_failure(&error) {
                    Ok(Attempt::Changed)
                } else {
                    Err(error)
                };
            }
            Landed::WithoutLease => return Err(error.context(&used_up.lost())),
            Landed::Unknown => {
                client.release_unheard(lock, &lease_id, None);
                return Err(error.context(&used_up.maybe()));
            }
        }
    }
    if deadline.left(client.runtime()).is_none() {
        // Granted too late to be safe: the lease may already be someone else's. Ours may still
        // live a moment on the service (its period started when the acquire arrived): one
        // release attempt, outside the spent budget, frees it.
        client.release_unheard(lock, &lease_id, None);
        return Err(Error::LeaseLost(ServiceError {
            status: 0,
            code: None,
            request_id: None,
            message: format!(
                "granting the run took longer than the {} s lease; not running; {}",
                options.lease_seconds,
                used_up.lost()
            ),
        }));
    }
    Ok(Attempt::Run(Ticket {
        lock: lock.clone(),
        lease_id,
        fencing_token: fence,
        interval: options.schedule().due_index(started_ms),
        started_ms,
        deadline: sent_at + options.lease_period(),
        keep_alive_by: sent_at + Duration::from_secs(options.keep_alive_seconds.into()),
        lease_deadline: Some(deadline),
        previous_abandoned,
        past_due,
        options: options.clone(),
    }))
}

/// Whether a record write that failed landed after all.
enum Landed {
    Yes,
    No,
    /// It landed, but our lease is gone: the grant stands in the record and will not run.
    WithoutLease,
    /// It may have: nothing more could be learned.
    Unknown,
}

/// After a failed write of `expected`: a refusal that says nothing was written is `No`; an
/// answer that was lost or a failed condition (the retry of a write that landed unheard fails
/// its `If-Match`) is settled by one more look, under our lease id, so the service itself
/// refuses it if the lease expired or was taken meanwhile. Token, start and holder are unique
/// to one grant, so an equal record is ours.
fn landed<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    lease_id: &LeaseId,
    expected: &RunRecord,
    deadline: Deadline,
    error: &Error,
) -> Landed {
    if !is_condition_failure(error) && !outcome_unknown(error) {
        return Landed::No;
    }
    let ours = |metadata: &[(String, String)]| RunRecord::from_metadata(metadata) == *expected;
    match client.execute_by(lock, &InspectHeld { lease_id: lease_id.clone() }, Some(deadline)) {
        Ok(status) if status.state == LeaseState::Leased && ours(&status.metadata) => Landed::Yes,
        Ok(_) => Landed::No,
        Err(Error::LeaseLost(_)) => match client.execute(lock, &Inspect) {
            Ok(status) if ours(&status.metadata) => Landed::WithoutLease,
            Ok(_) => Landed::No,
            Err(_) => Landed::Unknown,
        },
        Err(_) => Landed::Unknown,
    }
}

/// What a grant that will not run leaves in the record, for the error that says so.
struct UsedUp<'a> {
    fence: u64,
    holder: &'a str,
    due_at_ms: u64,
}

impl UsedUp<'_> {
    fn due(&self) -> String {
        match self.due_at_ms {
            0 => "this run".into(),
            at => format!("the due time {at} (ms since the Unix epoch)"),
        }
    }

    fn lost(&self) -> String {
        format!(
            "{} is used up: the record names this call's grant (holder {:?}, fencing token {}), \
             which will not run and shows as abandoned",
            self.due(),
            self.holder,
            self.fence
        )
    }

    fn maybe(&self) -> String {
        format!(
            "{} may be used up: the record naming this call's grant (holder {:?}, fencing token \
             {}) may have been written; if so it shows as abandoned, and the lease was released \
             or expires within one lease period",
            self.due(),
            self.holder,
            self.fence
        )
    }
}

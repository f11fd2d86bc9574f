//! One attempt at a lock from one look: decide, and if it is our turn take the lease and record
//! the grant, each conditional on that look. Shared by `guarded_invoke` and `claim`.

use super::decide::Contend;
use super::keep_alive::{is_condition_failure, release_quietly};
use super::unheard::{landed, Landed, UsedUp};
use super::{decide, unix_ms, Grant, GuardOptions, RunRecord, SkipReason, Ticket, Verdict};
use crate::client::{outcome_unknown, LeaseClient};
use crate::config::Lock;
use crate::error::{Error, LeaseLoss, RanOut, RanOutWhen};
use crate::ops::{Acquire, Break, BreakPeriod, LeaseId, LeaseState, SetMetadata};
use crate::transport::{Deadline, Runtime, Transport};
use std::time::{Duration, SystemTime};

/// What one look at a lock showed.
pub(crate) struct Look {
    pub record: RunRecord,
    pub state: LeaseState,
    pub etag: Option<String>,
    /// The storage service's time of the look.
    pub now: SystemTime,
    /// When the lock blob was created, if the service said.
    pub created: Option<SystemTime>,
}

/// What one attempt at a lock came to.
// One value per call, moved straight out: boxing the ticket would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Attempt {
    Run(Ticket),
    Skip(SkipReason),
    /// The record changed between our look and our acquire or write: look again.
    Changed,
    /// Another replica took the lease between our look and our acquire: a look now names its
    /// run once its record is written (a follower's line should say who holds the lock).
    Outraced,
}

/// Decides from `look` and, if it is our turn, takes the lease and records the grant. Never
/// grants a run whose lease period (counted on the monotonic clock from before the acquire) has
/// run out.
pub(crate) fn attempt<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
    look: &Look,
) -> Result<Attempt, Error> {
    let contend = match decide(&look.record, look.state, look.now, look.created, options) {
        Verdict::Skip(reason) => return Ok(Attempt::Skip(reason)),
        Verdict::Contend(contend) => contend,
    };
    // Without it the acquire would not be conditional on the look: a record written since
    // (another replica's grant) would be overwritten.
    let etag = look.etag.clone().ok_or_else(|| {
        super::unexpected("the look at the lock has no ETag, so the acquire cannot be conditional")
    })?;
    if contend.replace.is_some() {
        // A stuck run: its lease broken now, and the acquire below is still conditional on the
        // look (a break does not change the record).
        client.execute(lock, &Break::new(BreakPeriod(Some(0)))?)?;
    }
    let lease_id = LeaseId::random(client.runtime());
    let sent_at = client.runtime().now();
    let deadline = Deadline::after(client.runtime(), options.lease_period());
    let acquire = Acquire::new(options.lease_duration(), lease_id.clone())?.if_match(Some(etag));
    let grant = match client.execute_by(lock, &acquire, Some(deadline)) {
        Ok(grant) => grant,
        Err(Error::HeldByOther(_)) => return Ok(Attempt::Outraced),
        Err(error) if is_condition_failure(&error) => return Ok(Attempt::Changed),
        Err(error) => {
            if outcome_unknown(&error) && !client.release_unheard(lock, &lease_id, None) {
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
    let started = grant.server_time.unwrap_or(look.now).max(look.now);
    let contend = match decide(&look.record, LeaseState::Available, started, look.created, options)
    {
        Verdict::Contend(again) => Contend { replace: contend.replace, ..again },
        Verdict::Skip(reason) => {
            release_quietly(client, lock, &lease_id, deadline);
            return Ok(Attempt::Skip(reason));
        }
    };
    let started_ms = unix_ms(started);
    let granted = granted_record(&look.record, &contend, started_ms, options, &lease_id);
    let used_up = UsedUp {
        fence: contend.fence,
        holder: &options.holder,
        due_at_ms: contend.past_due.due_at_ms,
    };
    let write = SetMetadata::new(granted.to_metadata(), Some(lease_id.clone()), grant.etag)?;
    let etag = match client.execute_by(lock, &write, Some(deadline)) {
        Ok(etag) => etag,
        Err(error) => match landed(client, lock, &lease_id, &granted, deadline, &error) {
            Landed::Yes(etag) => etag,
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
        },
    };
    if deadline.left(client.runtime()).is_none() {
        // Granted too late to be safe: the lease may already be someone else's. Ours may still
        // live a moment on the service (its period started when the acquire arrived): one
        // release attempt, outside the spent budget, frees it.
        client.release_unheard(lock, &lease_id, None);
        let message = format!(
            "granting the run took longer than the {} s lease; not running; {}",
            options.lease_seconds,
            used_up.lost()
        );
        let when = RanOutWhen::GrantedTooLate;
        return Err(Error::LeaseLost(LeaseLoss::RanOut(RanOut { when, message })));
    }
    Ok(Attempt::Run(Ticket {
        lock: lock.clone(),
        lease_id,
        fencing_token: contend.fence,
        started_ms,
        deadline: sent_at + options.lease_period(),
        keep_alive_by: sent_at + Duration::from_secs(options.keep_alive_seconds.into()),
        lease_deadline: Some(deadline),
        previous_abandoned: contend.previous_abandoned,
        replaced: contend.replace,
        manual_by: contend.manual_by,
        past_due: contend.past_due,
        options: options.clone(),
        grant: etag.map(|etag| Grant { etag, record: granted }),
    }))
}

/// The record a grant writes: the next token and start; for a scheduled run its due time and
/// schedule, for a manual one who asked (the last scheduled due time stays as it was).
fn granted_record(
    record: &RunRecord,
    contend: &Contend,
    started_ms: u64,
    options: &GuardOptions,
    lease_id: &LeaseId,
) -> RunRecord {
    let granted = RunRecord {
        schedules: contend.schedules.clone(),
        ..record.granted(contend.fence, started_ms, &options.holder, lease_id)
    };
    let granted = match &contend.manual_by {
        Some(by) => granted.manual_for(by),
        None => {
            let past_due = &contend.past_due;
            granted.scheduled_for(&options.schedule, past_due.due_at_ms, past_due.missed)
        }
    };
    match contend.replace {
        Some(old) => granted.replacing(old),
        None => granted,
    }
}

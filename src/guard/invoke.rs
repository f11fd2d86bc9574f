//! `guarded_invoke`: look, then (if it is our turn) a conditional acquire and a conditional
//! record write. Round trips: a follower that must skip, 1 (HEAD); a leader, 3 (4 the first time,
//! when the lock blob is created); a replica that loses the race for the lease, 3 (its second
//! look names the winner's run once that is recorded). With `wait`, a held lock is looked at again, with backoff and
//! jitter, until it is free or the wait is over.

use super::grant::{attempt, Attempt, Look};
use super::memory::{self, Looked};
use super::{service_clock, Decision, GuardOptions, RunRecord, SkipReason};
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::{Contention, Error};
use crate::ops::{LeaseState, SetMetadata};
use crate::retry::RetryPolicy;
use crate::transport::{Deadline, Runtime, Transport};
use std::time::{Duration, SystemTime};

/// How often one call re-reads a record that changed under it before giving up. Each change is
/// someone else's progress, so this only runs out under pathological churn.
const MAX_REREADS: u32 = 4;

/// The backoff between looks at a held lock: 100 ms doubling to 2 s, half of it random so
/// waiters that started together spread out.
const WAIT_BACKOFF: RetryPolicy = RetryPolicy {
    max_attempts: u32::MAX,
    base_delay: Duration::from_millis(100),
    max_delay: Duration::from_secs(2),
};

/// Asks "is it my turn?" for `lock`. Errors become `Skip(Error(…))`: a caller that cannot
/// decide must not run.
pub fn guarded_invoke<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
) -> Decision {
    invoke_looking(client, lock, options).0
}

/// [`guarded_invoke`] for a caller that keeps what each look taught (`kept`, as the last call
/// left it): a tick that [`memory::recall`] says cannot be due skips without a request
/// (`Remembered`). With what to keep for the next tick (none: forget what was kept).
/// `refresh_ms` bounds how long a memory is trusted.
pub fn guarded_tick<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
    kept: Option<&str>,
    refresh_ms: u64,
) -> (Decision, Option<String>) {
    let now_ms = super::unix_ms(client.runtime().now());
    if let Some(remembered) = memory::recall(kept, lock, options, now_ms, refresh_ms) {
        return (Decision::Skip(SkipReason::Remembered(remembered)), kept.map(str::to_string));
    }
    let (decision, looked) = invoke_looking(client, lock, options);
    let memory = looked.and_then(|looked| memory::learned(&decision, &looked, lock, options));
    (decision, memory)
}

/// The decision, and what the last look at the lock showed (none when no look was answered).
fn invoke_looking<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
) -> (Decision, Option<Looked>) {
    let mut looked = None;
    let waiting = Deadline::after(client.runtime(), options.wait);
    // Waiting for the holder starts when the first look finds it: the look's own retries are
    // not waiting.
    let mut held_since = None;
    let mut looks = 0;
    loop {
        let decision = match invoke(client, lock, options, &mut looked) {
            Ok(decision) => decision,
            Err(error) => Decision::Skip(SkipReason::Error(error)),
        };
        let Decision::Skip(SkipReason::HeldByOther { holder, since_ms, due_at_ms, .. }) = decision
        else {
            return (decision, looked);
        };
        let now = client.runtime().monotonic();
        let waited = now.saturating_sub(*held_since.get_or_insert(now));
        let pause = WAIT_BACKOFF.delay(looks + 1, client.runtime());
        match waiting.left(client.runtime()) {
            Some(left) if !options.wait.is_zero() => client.runtime().sleep(pause.min(left)),
            _ => {
                let waited_ms = waited.as_millis() as u64;
                let held = SkipReason::HeldByOther { holder, since_ms, waited_ms, due_at_ms };
                return (Decision::Skip(held), looked);
            }
        }
        looks += 1;
    }
}

fn invoke<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
    looked: &mut Option<Looked>,
) -> Result<Decision, Error> {
    let mut outraced = false;
    for _ in 0..MAX_REREADS {
        let sent_ms = super::unix_ms(client.runtime().now());
        let status = match client.inspect(lock) {
            Err(Error::NotFound(missing)) => {
                client.create_lock(lock, &missing)?;
                continue;
            }
            other => other?,
        };
        let look = Look {
            record: RunRecord::readable(&status.metadata)?,
            state: status.state,
            etag: status.etag,
            now: service_clock(status.server_time, "the look at the lock")?,
            created: status.created,
        };
        *looked = Some(looked_at(&look, options, sent_ms, client.runtime().now()));
        match attempt(client, lock, options, &look)? {
            Attempt::Run(ticket) => return Ok(Decision::Run(ticket)),
            Attempt::Skip(reason) => {
                stamp_schedule(client, lock, options, &look);
                return Ok(Decision::Skip(reason));
            }
            Attempt::Changed => {}
            // One look more, not a loop: a lease that keeps changing hands is held by others.
            Attempt::Outraced if outraced => {
                let due_at_ms =
                    options.schedule.counts_for(super::unix_ms(look.now), options.early_ms);
                return Ok(Decision::Skip(SkipReason::HeldByOther {
                    holder: None,
                    since_ms: None,
                    waited_ms: 0,
                    due_at_ms,
                }));
            }
            Attempt::Outraced => outraced = true,
        }
    }
    Err(Error::Contended(Contention {
        attempts: MAX_REREADS,
        message: format!(
            "the lock record changed under each of {MAX_REREADS} attempts to decide; \
             nothing is held; try again on the next tick"
        ),
    }))
}

/// What `memory` needs of a look sent at `sent_ms` and answered at `answered` (this host's
/// clock).
fn looked_at(look: &Look, options: &GuardOptions, sent_ms: u64, answered: SystemTime) -> Looked {
    let (record, service_ms) = (&look.record, super::unix_ms(look.now));
    let schedules = super::schedules::seen(record, &options.schedule, service_ms, false).schedules;
    let held = matches!(look.state, LeaseState::Leased | LeaseState::Breaking);
    let scheduled_run = held && record.running && record.manual_by().is_none();
    Looked {
        service_ms,
        sent_ms,
        local_ms: super::unix_ms(answered),
        other_schedules: schedules.len() > 1,
        running_for_ms: scheduled_run
            .then(|| record.last_due_ms(&options.schedule, options.early_ms))
            .flatten(),
    }
}

/// Writes this replica's schedule into the lock's list when other replicas must learn of it
/// (it appeared, or its stamp went stale while another schedule is alive: see `schedules`). One
/// write, conditional on the look, under the running run's lease id when a run holds the lock
/// (as the operator's calls write). Best effort: a record that changed since the look keeps its
/// change, and the next tick stamps again.
fn stamp_schedule<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
    look: &Look,
) {
    let held = matches!(look.state, LeaseState::Leased | LeaseState::Breaking);
    let now_ms = super::unix_ms(look.now);
    let seen = super::schedules::seen(
        &look.record,
        &options.schedule,
        now_ms,
        held && look.record.running,
    );
    if !seen.stamp || look.record.paused.is_some() {
        return;
    }
    let lease_id = match held {
        true => match look.record.lease_id() {
            Some(id) => Some(id),
            // A run by a build that keeps no lease id: nothing can be written around it.
            None => return,
        },
        false => None,
    };
    let stamped = RunRecord { schedules: seen.schedules, ..look.record.clone() };
    if let Ok(write) = SetMetadata::new(stamped.to_metadata(), lease_id, look.etag.clone()) {
        let _ = client.execute(lock, &write);
    }
}

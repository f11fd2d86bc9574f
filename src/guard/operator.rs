//! The operator's verbs: pause, resume and run-now, written into the lock's run record, where
//! every replica's look (the one HEAD a follower's tick costs) sees them.
//!
//! Azure refuses a metadata write to a leased blob without the lease id (412 `LeaseIdMissing`),
//! so a call that finds a run holding the lock cannot write the record. It leaves a *pending
//! marker* instead: a small blob beside the lock (`.traffic-cop/pending/<lock>`) carrying the
//! change. The running run is not disturbed; its `complete` looks for the marker after writing
//! its record and applies it before releasing. If that run never completes (a crash), its lease
//! expires and the next grant, which sees the lock `expired` or the record still running, looks
//! for the marker first. A call that finds the run already closing (its record written, the lease
//! not yet released) waits the moment it takes and applies the change itself, so a marker is never
//! left after the last look for it.

use super::{service_clock, unix_ms, Paused, RunNow, RunRecord};
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::Error;
use crate::ops::{DeleteBlob, Deleted, Inspect, PutBlob, PutOutcome, SetMetadata, WriteCondition};
use crate::transport::{Deadline, Runtime, Transport};
use std::time::Duration;

/// Where pending markers live, beside the locks; the board shows them with their locks.
pub const MARKER_PREFIX: &str = ".traffic-cop/pending/";
const PAUSE_KEY: &str = "tc_op_pause";
const RUN_NOW_KEY: &str = "tc_op_runnow";
/// How long one call may take, waits included (a drain adds its own).
const CALL_LIMIT: Duration = Duration::from_secs(30);
/// How often a call looks again while a run is closing.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// What an operator's call did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorAnswer {
    /// Written to the record now, or pending until the run in progress completes.
    pub applied: bool,
    /// The run in progress when the call returned.
    pub running: Option<RunningRun>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningRun {
    pub holder: Option<String>,
    pub since_ms: u64,
    pub fencing_token: u64,
}

/// A change an operator asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Pause(Paused),
    Resume,
    RunNow(RunNow),
}

/// The changes a marker carries, and its ETag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    pause: Option<Change>,
    run_now: Option<RunNow>,
    pub etag: Option<String>,
}

impl Pending {
    /// The record with the pending changes made.
    pub(crate) fn apply(&self, record: RunRecord) -> RunRecord {
        let record = match &self.pause {
            Some(Change::Pause(paused)) => RunRecord { paused: Some(paused.clone()), ..record },
            Some(Change::Resume) => RunRecord { paused: None, ..record },
            _ => record,
        };
        match &self.run_now {
            Some(asked) => RunRecord { run_now: Some(asked.clone()), ..record },
            None => record,
        }
    }

    fn with(mut self, change: Change) -> Pending {
        match change {
            Change::RunNow(asked) => self.run_now = Some(asked),
            pause => self.pause = Some(pause),
        }
        self
    }

    fn metadata(&self) -> Vec<(String, String)> {
        let text = |t: &str| crate::percent::encode(t, crate::percent::record_part);
        let mut pairs = Vec::new();
        match &self.pause {
            Some(Change::Pause(p)) => pairs.push((
                PAUSE_KEY.to_string(),
                format!("p:{}:{}:{}", p.since_ms, text(&p.by), text(&p.reason)),
            )),
            Some(Change::Resume) => pairs.push((PAUSE_KEY.to_string(), "r".to_string())),
            _ => {}
        }
        if let Some(asked) = &self.run_now {
            pairs.push((RUN_NOW_KEY.to_string(), format!("{}:{}", asked.at_ms, text(&asked.by))));
        }
        pairs
    }

    /// The pause or resume it carries.
    pub(crate) fn pause_change(&self) -> Option<&Change> {
        self.pause.as_ref()
    }

    /// The run-now it carries.
    pub(crate) fn asked_to_run(&self) -> Option<&RunNow> {
        self.run_now.as_ref()
    }

    pub(crate) fn read(metadata: &[(String, String)], etag: Option<String>) -> Pending {
        let get = |key: &str| metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        let untext = |t: &str| crate::percent::decode(t, false);
        let pause = get(PAUSE_KEY).and_then(|v| {
            let mut parts = v.splitn(4, ':');
            match (parts.next()?, parts.next(), parts.next(), parts.next()) {
                ("r", ..) => Some(Change::Resume),
                ("p", Some(since), Some(by), reason) => Some(Change::Pause(Paused {
                    since_ms: since.parse().ok()?,
                    by: untext(by),
                    reason: untext(reason.unwrap_or("")),
                })),
                _ => None,
            }
        });
        let run_now = get(RUN_NOW_KEY).and_then(|v| {
            let (at, by) = v.split_once(':')?;
            Some(RunNow { at_ms: at.parse().ok()?, by: untext(by) })
        });
        Pending { pause, run_now, etag }
    }
}

/// The marker blob of `lock`.
pub(crate) fn marker(lock: &Lock) -> Result<Lock, Error> {
    Lock::new(lock.account.clone(), &lock.container, &format!("{MARKER_PREFIX}{}", lock.blob))
}

/// The lock's pending marker, if there is one (one HEAD).
pub(crate) fn pending<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    by: Option<Deadline>,
) -> Result<Option<Pending>, Error> {
    match client.execute_by(&marker(lock)?, &Inspect, by) {
        Ok(status) => Ok(Some(Pending::read(&status.metadata, status.etag))),
        Err(Error::NotFound(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Removes a marker that was applied, unless it was written again since it was read.
pub(crate) fn clear<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    applied: &Pending,
) -> Result<Deleted, Error> {
    let delete = DeleteBlob { if_match: applied.etag.clone() };
    client.execute(&marker(lock)?, &delete)
}

/// Pauses the job: every replica's next tick skips. With `drain`, waits up to that long for a
/// run in progress to end.
pub fn pause<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    by: &str,
    reason: &str,
    drain: Duration,
) -> Result<OperatorAnswer, Error> {
    check_by(by)?;
    let reason: String = reason.chars().take(200).collect();
    let answer = operate(client, lock, &|now| {
        Change::Pause(Paused { by: by.to_string(), since_ms: now, reason: reason.clone() })
    })?;
    super::operator_drain::drained(client, lock, answer, drain)
}

/// Ends a pause.
pub fn resume<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    by: &str,
) -> Result<OperatorAnswer, Error> {
    check_by(by)?;
    operate(client, lock, &|_| Change::Resume)
}

/// One manual run at the next tick.
pub fn run_now<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    by: &str,
) -> Result<OperatorAnswer, Error> {
    check_by(by)?;
    operate(client, lock, &|now| Change::RunNow(RunNow { by: by.to_string(), at_ms: now }))
}

fn check_by(by: &str) -> Result<(), Error> {
    let length = by.chars().count();
    if !(1..=64).contains(&length) || by.chars().any(char::is_control) {
        return Err(Error::InvalidArgument(
            "by must be 1-64 characters without control characters".into(),
        ));
    }
    Ok(())
}

pub(crate) fn running(record: &RunRecord) -> Option<RunningRun> {
    record.running.then(|| RunningRun {
        holder: record.holder.clone(),
        since_ms: record.started_ms.unwrap_or(0),
        fencing_token: record.fence,
    })
}

/// Writes the change into the record when no lease is held; else leaves it in the marker and,
/// if the run holding the lock is closing, waits for it and writes it itself.
fn operate<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    change: &dyn Fn(u64) -> Change,
) -> Result<OperatorAnswer, Error> {
    marker(lock)?;
    let until = Deadline::after(client.runtime(), CALL_LIMIT);
    let mut marked = false;
    while until.left(client.runtime()).is_some() {
        let status = match client.inspect(lock) {
            Err(Error::NotFound(missing)) => {
                client.create_lock(lock, &missing)?;
                continue;
            }
            other => other?,
        };
        let now = unix_ms(service_clock(status.server_time, "the look at the lock")?);
        let record = RunRecord::from_metadata(&status.metadata);
        if !status.locked {
            let pending = merged(pending(client, lock, None)?, change(now));
            let write =
                SetMetadata::new(pending.apply(record.clone()).to_metadata(), None, status.etag)?;
            match client.execute(lock, &write) {
                Ok(_) => {
                    if pending.etag.is_some() {
                        clear(client, lock, &pending)?;
                    }
                    return Ok(OperatorAnswer { applied: true, running: None });
                }
                Err(error) if is_changed(&error) => continue,
                Err(error) => return Err(error),
            }
        }
        if !marked {
            mark(client, lock, change(now))?;
            marked = true;
            continue;
        }
        if record.running {
            return Ok(OperatorAnswer { applied: false, running: running(&record) });
        }
        // Leased, the record closed: a run closing, or a grant about to write its record.
        client.runtime().sleep(LOOK_EVERY);
    }
    Ok(OperatorAnswer { applied: false, running: None })
}

fn is_changed(error: &Error) -> bool {
    error.service_error().is_some_and(|e| {
        e.status == 412 && matches!(e.code.as_deref(), Some("ConditionNotMet" | "LeaseIdMissing"))
    })
}

/// Adds `change` to the lock's marker (a compare-and-swap on the marker blob).
fn mark<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    change: Change,
) -> Result<(), Error> {
    for _ in 0..4 {
        let existing = pending(client, lock, None)?;
        let condition = match existing.as_ref().and_then(|p| p.etag.clone()) {
            Some(etag) => WriteCondition::IfMatch(etag),
            None => WriteCondition::IfAbsent,
        };
        let put = PutBlob {
            contents: &[],
            metadata: merged(existing, change.clone()).metadata(),
            condition,
        };
        if let PutOutcome::Written(_) = client.execute(&marker(lock)?, &put)? {
            return Ok(());
        }
    }
    Err(Error::Service(crate::error::ServiceError {
        status: 412,
        code: Some("ConditionNotMet".into()),
        request_id: None,
        message: "the pending marker changed under each of 4 attempts to add to it".into(),
    }))
}

/// `existing` (if any) with `change` added: the newest pause or resume wins, and so does the
/// newest run-now.
fn merged(existing: Option<Pending>, change: Change) -> Pending {
    existing.unwrap_or(Pending { pause: None, run_now: None, etag: None }).with(change)
}

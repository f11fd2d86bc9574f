//! A run in progress, as an operator's answer shows it, and the drain for deploys: after a
//! pause, wait (bounded) until no run is in progress, so the replicas can be replaced without
//! abandoning a run (Spin does not drain on SIGTERM).

use super::RunRecord;
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Deadline, Runtime, Transport};
use std::time::Duration;

/// How often a drain looks again.
const LOOK_EVERY: Duration = Duration::from_secs(1);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningRun {
    pub holder: Option<String>,
    pub since_ms: u64,
    pub fencing_token: u64,
}

/// The run `record` says is in progress (the caller knows whether a lease holds the lock).
pub(crate) fn running(record: &RunRecord) -> Option<RunningRun> {
    record.running.then(|| RunningRun {
        holder: record.holder.clone(),
        since_ms: record.started_ms.unwrap_or(0),
        fencing_token: record.fence,
    })
}

/// The run in progress after waiting up to `drain` for `running` (the one the operator's call
/// saw) to end: none once no run is.
pub(super) fn drained<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    running_now: Option<RunningRun>,
    drain: Duration,
) -> Result<Option<RunningRun>, Error> {
    if drain.is_zero() {
        return Ok(running_now);
    }
    let until = Deadline::after(client.runtime(), drain);
    loop {
        let status = client.inspect(lock)?;
        let record = RunRecord::from_metadata(&status.metadata);
        // A run is in progress while its record says so and a lease is held.
        let still = if status.locked { running(&record) } else { None };
        match until.left(client.runtime()) {
            Some(left) if still.is_some() => client.runtime().sleep(left.min(LOOK_EVERY)),
            _ => return Ok(still),
        }
    }
}

//! A drain for deploys: after a pause, wait (bounded) until no run is in progress, so the
//! replicas can be replaced without abandoning a run (Spin does not drain on SIGTERM).

use super::operator::{running, OperatorAnswer};
use super::RunRecord;
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Deadline, Runtime, Transport};
use std::time::Duration;

/// How often a drain looks again.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// `answer`, after waiting up to `drain` for the run in progress (if any) to end; the answer's
/// `running` says whether one still is.
pub(super) fn drained<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    answer: OperatorAnswer,
    drain: Duration,
) -> Result<OperatorAnswer, Error> {
    if drain.is_zero() {
        return Ok(answer);
    }
    let until = Deadline::after(client.runtime(), drain);
    loop {
        let status = client.inspect(lock)?;
        let record = RunRecord::from_metadata(&status.metadata);
        // A run is in progress while its record says so and a lease is held.
        let still = if status.locked { running(&record) } else { None };
        match until.left(client.runtime()) {
            Some(left) if still.is_some() => client.runtime().sleep(left.min(LOOK_EVERY)),
            _ => return Ok(OperatorAnswer { running: still, ..answer }),
        }
    }
}

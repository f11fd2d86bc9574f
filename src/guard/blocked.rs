//! A run whose instance could not renew its lease when due (a blocking call in the job, or a
//! host that froze it; see `hold`). Its work may have overlapped another replica's run, so
//! however the job ended, the run is a failure that names the block, and the lock's totals
//! count it: `complete_held` closes it when the lease is still this run's, and `note_blocked`
//! counts it when the lease is gone.

use super::complete::close;
use super::hold::{blocked, Held};
use super::keep_alive::is_condition_failure;
use super::{Outcome, RunRecord, Ticket};
use crate::client::LeaseClient;
use crate::config::Lock;
use crate::error::{Error, LeaseLoss};
use crate::ops::{Inspect, LeaseState, SetMetadata};
use crate::transport::{Runtime, Transport};

/// How often `note_blocked` writes again over a record that changed under it.
const NOTE_ATTEMPTS: u32 = 3;

/// `complete` for a run `hold` renewed. When the instance stalled (see [`Held::stalled`]), the
/// run is closed as a blocked failure whatever `outcome` says, and the answer is that
/// failure's error, so the caller reports the run failed; when the lease is already gone, the
/// block is counted by [`note_blocked`] instead.
pub fn complete_held<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    held: &Held,
    outcome: &Outcome,
) -> Result<(), Error> {
    let now = client.runtime().monotonic();
    if held.stalled(now).is_none() {
        return close(client, ticket, outcome, false);
    }
    let stopped = blocked(held, client.runtime(), now);
    let said = match outcome {
        Outcome::Success => "the job said it succeeded".to_string(),
        Outcome::Failure(why) => format!("the job failed: {why}"),
    };
    let reason = format!("{}; {said}", stopped_text(&stopped));
    if close(client, ticket, &Outcome::Failure(reason.clone()), true).is_err() {
        note_blocked(client, &ticket.lock, ticket.fencing_token, &reason);
    }
    Err(stopped)
}

/// Counts a blocked run whose lease is gone: one conditional write of the lock's record (under
/// the current run's lease id when one holds the lock, as the operator's calls write), a few
/// times over a record that changed meanwhile. Best effort: a count that cannot be written is
/// lost, never a run.
pub fn note_blocked<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    fence: u64,
    reason: &str,
) {
    for _ in 0..NOTE_ATTEMPTS {
        let Ok(status) = client.execute(lock, &Inspect) else { return };
        let record = RunRecord::from_metadata(&status.metadata);
        let lease_id = match status.state {
            LeaseState::Leased | LeaseState::Breaking => match record.lease_id() {
                Some(id) => Some(id),
                None => return,
            },
            _ => None,
        };
        let noted = record.noted_blocked(fence, reason);
        let Ok(write) = SetMetadata::new(noted.to_metadata(), lease_id, status.etag) else {
            return;
        };
        match client.execute(lock, &write) {
            Err(error) if is_condition_failure(&error) => continue,
            Err(Error::LeaseLost(LeaseLoss::Service(_))) => continue,
            _ => return,
        }
    }
}

/// A stop's own words, without the error's kind in front.
fn stopped_text(error: &Error) -> String {
    match error {
        Error::LeaseLost(LeaseLoss::RanOut(ran_out)) => ran_out.message.clone(),
        other => other.to_string(),
    }
}

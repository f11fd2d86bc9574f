//! A grant's record write that failed: did it land after all? And the words for a grant that
//! will not run but is in the record (its due time is used up).

use super::keep_alive::is_condition_failure;
use super::RunRecord;
use crate::client::{outcome_unknown, LeaseClient};
use crate::config::Lock;
use crate::error::Error;
use crate::ops::{Inspect, InspectHeld, LeaseId, LeaseState};
use crate::transport::{Deadline, Runtime, Transport};

/// Whether a record write that failed landed after all.
pub(super) enum Landed {
    /// It did, and the lease is still ours: the lock's ETag now.
    Yes(Option<String>),
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
pub(super) fn landed<T: Transport, R: Runtime>(
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
        Ok(status) if status.state == LeaseState::Leased && ours(&status.metadata) => {
            Landed::Yes(status.etag)
        }
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
pub(super) struct UsedUp<'a> {
    pub fence: u64,
    pub holder: &'a str,
    pub due_at_ms: u64,
}

impl UsedUp<'_> {
    fn due(&self) -> String {
        match self.due_at_ms {
            0 => "this run".into(),
            at => format!("the due time {at} (ms since the Unix epoch)"),
        }
    }

    pub fn lost(&self) -> String {
        format!(
            "{} is used up: the record names this call's grant (holder {:?}, fencing token {}), \
             which will not run and shows as abandoned",
            self.due(),
            self.holder,
            self.fence
        )
    }

    pub fn maybe(&self) -> String {
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

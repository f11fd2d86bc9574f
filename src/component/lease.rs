//! `traffic-cop:lease/lease`: the raw lease verbs.

use super::{client, lease_state, Component};
use crate::config::Lock as LockRef;
use crate::error::Error;
use crate::ops::{BreakPeriod, LeaseDuration as CoreDuration, LeaseGrant as CoreGrant, LeaseId};

use super::exports::traffic_cop::lease0_1_0::lease::{
    Guest, LeaseDuration, LeaseError, LeaseGrant, Lock, LockStatus,
};

impl Guest for Component {
    fn acquire(
        lock: Lock,
        duration: LeaseDuration,
        proposed_id: Option<String>,
    ) -> Result<LeaseGrant, LeaseError> {
        let lock = lock_ref(&lock)?;
        let duration = match duration {
            LeaseDuration::Fixed(seconds) => CoreDuration::Fixed(seconds),
            LeaseDuration::Infinite => CoreDuration::Infinite,
        };
        let proposed_id = proposed_id.as_deref().map(LeaseId::parse).transpose()?;
        Ok(grant(client().acquire(&lock, duration, proposed_id)?))
    }

    fn renew(lock: Lock, lease_id: String) -> Result<LeaseGrant, LeaseError> {
        let lock = lock_ref(&lock)?;
        Ok(grant(client().renew(&lock, &LeaseId::parse(&lease_id)?)?))
    }

    fn change(lock: Lock, lease_id: String, proposed_id: String) -> Result<LeaseGrant, LeaseError> {
        let lock = lock_ref(&lock)?;
        let (current, proposed) = (LeaseId::parse(&lease_id)?, LeaseId::parse(&proposed_id)?);
        Ok(grant(client().change(&lock, &current, &proposed)?))
    }

    fn release(lock: Lock, lease_id: String) -> Result<(), LeaseError> {
        let lock = lock_ref(&lock)?;
        Ok(client().release(&lock, &LeaseId::parse(&lease_id)?)?)
    }

    fn break_lease(lock: Lock, break_period: Option<u32>) -> Result<u32, LeaseError> {
        let lock = lock_ref(&lock)?;
        Ok(client().break_lease(&lock, BreakPeriod(break_period))?)
    }

    fn inspect(lock: Lock) -> Result<LockStatus, LeaseError> {
        let status = client().inspect(&lock_ref(&lock)?)?;
        Ok(LockStatus {
            state: lease_state(status.state),
            locked: status.locked,
            infinite: status.infinite,
            metadata: status.metadata,
            etag: status.etag,
            last_modified: status.last_modified,
        })
    }
}

pub(super) fn lock_ref(lock: &Lock) -> Result<LockRef, Error> {
    LockRef::parse(&lock.connection_string, &lock.container, &lock.blob)
}

fn grant(grant: CoreGrant) -> LeaseGrant {
    LeaseGrant {
        lease_id: grant.lease_id.to_string(),
        etag: grant.etag,
        last_modified: grant.last_modified,
    }
}

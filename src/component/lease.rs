//! `traffic-cop:lease/lease`: the raw lease verbs.

use super::{client, lease_state, Component};
use crate::config::Lock as LockRef;
use crate::error::{Error, LeaseLoss, TokenProblem};
use crate::guard as core;
use crate::ops::{BreakPeriod, LeaseDuration as CoreDuration, LeaseGrant as CoreGrant, LeaseId};

use super::exports::traffic_cop::lease0_1_0::lease::{
    Guest, LeaseDuration, LeaseError, LeaseGrant, Lock, LockStatus, ServiceError,
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

/// lease@0.1.0's `lease-error` is also how guard@0.1.0 and @0.2.0 report every failure. Its
/// `service-error` was their only shape for what this component decided, so these two
/// conversions, and only they, build one without a service answer: status 0 where nothing was
/// heard, and the 412 or 200 those versions reported before the core had variants of its own.
impl From<Error> for LeaseError {
    fn from(error: Error) -> LeaseError {
        let service = |e: crate::ServiceError| ServiceError {
            status: e.status,
            code: e.code,
            request_id: e.request_id,
            message: e.message,
        };
        let decided = |status, code: Option<&str>, message| ServiceError {
            status,
            code: code.map(str::to_string),
            request_id: None,
            message,
        };
        match error {
            Error::HeldByOther(e) => LeaseError::HeldByOther(service(e)),
            Error::LeaseLost(LeaseLoss::Service(e)) => LeaseError::LeaseLost(service(e)),
            Error::LeaseLost(LeaseLoss::RanOut(r)) => {
                LeaseError::LeaseLost(decided(0, None, r.message))
            }
            Error::NotFound(e) => LeaseError::NotFound(service(e)),
            Error::Unauthorized(e) => LeaseError::Unauthorized(service(e)),
            Error::InvalidConfig(m) => LeaseError::InvalidConfig(m),
            Error::InvalidArgument(m) => LeaseError::InvalidArgument(m),
            // Versions before 0.3.0 have no schedule errors of their own: an argument error
            // that names the field.
            Error::BadOption(e) => LeaseError::InvalidArgument(e.to_string()),
            Error::Throttled(e) => LeaseError::Throttled(service(e)),
            Error::Transport(e) => LeaseError::Transport(e.to_string()),
            Error::Service(e) => LeaseError::Service(service(e)),
            Error::Contended(c) => {
                LeaseError::Service(decided(412, Some("ConditionNotMet"), c.message))
            }
            Error::UnexpectedAnswer(m) => {
                LeaseError::Service(decided(200, None, format!("unexpected response: {m}")))
            }
            Error::LimitReached(m) => LeaseError::Service(decided(200, None, m)),
            Error::UnusableToken(t) => {
                let code = match t.problem {
                    TokenProblem::Expired => "TokenExpired",
                    TokenProblem::WrongAudience => "InvalidAudience",
                };
                LeaseError::Unauthorized(decided(0, Some(code), t.message))
            }
        }
    }
}

/// A skip guard@0.1.0 and @0.2.0 have no case for (an operator's pause, a schedule another
/// replica keeps): an error skip that says which, so the caller does not run.
pub(super) fn unspeakable(reason: &core::SkipReason) -> LeaseError {
    let (code, message) = match reason {
        core::SkipReason::Paused(paused) => (
            "Paused",
            format!("paused by {} since {} ms: {}", paused.by, paused.since_ms, paused.reason),
        ),
        core::SkipReason::ScheduleConflict { newer, ours, since_ms, until_ms } => (
            "ScheduleConflict",
            core::deferral(newer, ours, format!("{since_ms} ms"), format!("{until_ms} ms")),
        ),
        core::SkipReason::NotDue { .. } => ("NotDue", "no due time has come yet".to_string()),
        other => ("Skip", format!("{other:?}")),
    };
    LeaseError::Service(ServiceError {
        status: 0,
        code: Some(code.into()),
        request_id: None,
        message,
    })
}

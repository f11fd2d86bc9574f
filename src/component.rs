//! The WIT export glue: the only file that sees generated bindings. It converts WIT values to
//! the crate's validated types, calls [`LeaseClient`] over `wasi:http`, and converts back.
//! Nothing here can trap: every input is validated and every failure is a `lease-error`.

use crate::config::Lock as LockRef;
use crate::error::{Error, ServiceError as CoreServiceError};
use crate::ops::{
    BreakPeriod, LeaseDuration as CoreDuration, LeaseGrant as CoreGrant, LeaseId,
    LeaseState as CoreState,
};
use crate::transport::StdRuntime;
use crate::wasi_http::WasiHttp;
use crate::LeaseClient;

wit_bindgen::generate!({ world: "lease-provider", path: "wit" });

use exports::traffic_cop::lease::lease::{
    Guest, LeaseDuration, LeaseError, LeaseGrant, LeaseState, Lock, LockStatus, ServiceError,
};

struct Component;

export!(Component);

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
            state: match status.state {
                CoreState::Available => LeaseState::Available,
                CoreState::Leased => LeaseState::Leased,
                CoreState::Expired => LeaseState::Expired,
                CoreState::Breaking => LeaseState::Breaking,
                CoreState::Broken => LeaseState::Broken,
            },
            locked: status.locked,
            infinite: status.infinite,
            metadata: status.metadata,
            etag: status.etag,
            last_modified: status.last_modified,
        })
    }
}

fn client() -> LeaseClient<WasiHttp, StdRuntime> {
    LeaseClient::new(WasiHttp, StdRuntime)
}

fn lock_ref(lock: &Lock) -> Result<LockRef, Error> {
    LockRef::parse(&lock.connection_string, &lock.container, &lock.blob)
}

fn grant(grant: CoreGrant) -> LeaseGrant {
    LeaseGrant {
        lease_id: grant.lease_id.to_string(),
        etag: grant.etag,
        last_modified: grant.last_modified,
    }
}

impl From<Error> for LeaseError {
    fn from(error: Error) -> LeaseError {
        let service = |e: CoreServiceError| ServiceError {
            status: e.status,
            code: e.code,
            request_id: e.request_id,
            message: e.message,
        };
        match error {
            Error::HeldByOther(e) => LeaseError::HeldByOther(service(e)),
            Error::LeaseLost(e) => LeaseError::LeaseLost(service(e)),
            Error::NotFound(e) => LeaseError::NotFound(service(e)),
            Error::Unauthorized(e) => LeaseError::Unauthorized(service(e)),
            Error::InvalidConfig(m) => LeaseError::InvalidConfig(m),
            Error::InvalidArgument(m) => LeaseError::InvalidArgument(m),
            Error::Throttled(e) => LeaseError::Throttled(service(e)),
            Error::Transport(e) => LeaseError::Transport(e.to_string()),
            Error::Service(e) => LeaseError::Service(service(e)),
        }
    }
}

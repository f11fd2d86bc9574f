//! The WIT export glue. Bindings are generated here, once; `lease` and `guard` implement the
//! two exported interfaces by converting WIT values to the crate's validated types, calling
//! the core over `wasi:http`, and converting back. Nothing here can trap: every input is
//! validated and every failure is a `lease-error`.

mod guard;
mod guard_v2;
mod lease;

use crate::error::Error;
use crate::transport::StdRuntime;
use crate::wasi_http::WasiHttp;
use crate::LeaseClient;

wit_bindgen::generate!({ world: "traffic-cop:lease/lease-provider@0.2.0", path: "wit" });

use exports::traffic_cop::lease0_1_0::lease::{LeaseError, LeaseState, ServiceError};

struct Component;

export!(Component);

/// A client for one exported call: a fresh instance per event has nothing to reuse anyway.
fn client() -> LeaseClient<WasiHttp, StdRuntime> {
    LeaseClient::new(WasiHttp, StdRuntime)
}

fn lease_state(state: crate::LeaseState) -> LeaseState {
    match state {
        crate::LeaseState::Available => LeaseState::Available,
        crate::LeaseState::Leased => LeaseState::Leased,
        crate::LeaseState::Expired => LeaseState::Expired,
        crate::LeaseState::Breaking => LeaseState::Breaking,
        crate::LeaseState::Broken => LeaseState::Broken,
    }
}

impl From<Error> for LeaseError {
    fn from(error: Error) -> LeaseError {
        let service = |e: crate::ServiceError| ServiceError {
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

//! The WIT export glue. Bindings are generated here, once, for the world
//! `traffic-cop:lease/lease-provider@0.3.0`; `lease`, `identity` and one file per guard version
//! implement the exported interfaces by converting WIT values to the crate's validated types,
//! calling the one core over `wasi:http`, and converting back (`shared` holds what the
//! versions' conversions have in common). Nothing here can trap: every input is validated and
//! every failure is a typed error.

mod glue;
mod guard_v1;
mod guard_v2;
mod guard_v3;
mod guard_v3_convert;
#[cfg(feature = "async")]
mod guard_v4;
mod identity;
mod lease;
mod shared;
mod v1;
mod v1_convert;
#[cfg(feature = "async")]
mod v1_hold;

use crate::transport::StdRuntime;
use crate::wasi_http::WasiHttp;
use crate::LeaseClient;

#[cfg(not(feature = "async"))]
wit_bindgen::generate!({ world: "traffic-cop:build/lease-component@0.0.0", path: "wit" });
// The async component (async/Cargo.toml): the same exports and guard@0.4.0, with wit-bindgen
// 0.57.1, whose async runtime is wasip3 0.6.0's.
#[cfg(feature = "async")]
wit_bindgen::generate!({ world: "traffic-cop:build/lease-component-async@0.0.0", path: "wit" });

use exports::traffic_cop::lease0_1_0::lease::LeaseState;

struct Component;

export!(Component);

thread_local! {
    /// Bearer tokens outlive one call: the calls of one event (guarded-invoke, then complete)
    /// reach the same instance of this component, which fetches one token for all of them.
    static TOKENS: crate::identity::TokenCache = crate::identity::TokenCache::default();
}

/// A client for one exported call, sharing the instance's bearer tokens.
fn client() -> LeaseClient<WasiHttp, StdRuntime> {
    LeaseClient::new(WasiHttp, StdRuntime).with_token_cache(TOKENS.with(Clone::clone))
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

#[cfg(test)]
#[path = "conversion_tests.rs"]
mod tests;

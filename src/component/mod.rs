//! The WIT export glue for `traffic-cop:lease@1.0.0` (and, in the async component, `hold`).
//! Bindings are generated here, once; `lease` and `guard` implement the exported interfaces by
//! converting WIT values to the crate's validated types (`convert`), calling the one core over
//! `wasi:http`, and converting back. Nothing here can trap: every input is validated and every
//! failure is a typed error.

mod convert;
mod guard;
#[cfg(feature = "async")]
mod hold;
mod lease;

use crate::transport::StdRuntime;
use crate::wasi_http::WasiHttp;
use crate::LeaseClient;

#[cfg(not(feature = "async"))]
wit_bindgen::generate!({ world: "traffic-cop:lease/lease-provider@1.0.0", path: "wit" });
// The async component (async/Cargo.toml): the same exports and `hold`, with wit-bindgen
// 0.57.1, whose async runtime is wasip3 0.6.0's.
#[cfg(feature = "async")]
wit_bindgen::generate!({ world: "traffic-cop:lease/lease-provider-async@0.5.0", path: "wit" });

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

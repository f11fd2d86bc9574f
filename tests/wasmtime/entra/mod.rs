//! Entra ID (bearer token) authorization end to end: the built component in wasmtime against
//! Azurite in OAuth mode over HTTPS, with a fake identity endpoint in the test host. The
//! throwaway certificate is trusted by this test process only (traffic_cop_testbed::tls,
//! traffic_cop_wasm_host::outbound). Everything runs on 127.0.0.1 and stops with the test. The
//! Spin app with bearer tokens under real Spin is in tests/spin/entra.rs.

mod cache;
mod infra;
mod refusals;
mod sources;
mod suite;

use crate::env;
use traffic_cop_testbed::runner::Test;

/// The guard's behaviour suite with bearer authorization.
mod guard_suite {
    use super::suite::bearer_world;
    use crate::scenarios;
    crate::scenario_trials!(bearer_world());
}

pub fn tests() -> Vec<Test> {
    [cache::tests(), infra::tests(), refusals::tests(), sources::tests(), guard_suite::scenarios()]
        .concat()
}

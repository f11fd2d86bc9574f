//! Entra ID (bearer token) authorization end to end: the built component in wasmtime against
//! Azurite in OAuth mode over HTTPS, with a fake identity endpoint in the test host. The
//! throwaway certificate is trusted by this test process only (traffic_cop_host::tls,
//! traffic_cop_host::outbound). Everything runs on 127.0.0.1 and stops with the test.

#[path = "entra/cache.rs"]
mod cache;
#[path = "support/component_world.rs"]
mod component_world;
#[path = "entra/env.rs"]
mod env;
#[path = "entra/infra.rs"]
mod infra;
#[path = "entra/refusals.rs"]
mod refusals;
#[path = "support/scenarios.rs"]
mod scenarios;
#[path = "entra/sources.rs"]
mod sources;
#[path = "entra/spin.rs"]
mod spin;
#[path = "entra/suite.rs"]
mod suite;

/// The guard's behaviour suite with bearer authorization.
mod guard_suite {
    use crate::scenarios;
    use crate::suite::bearer_world;
    crate::scenario_tests!(bearer_world());
}

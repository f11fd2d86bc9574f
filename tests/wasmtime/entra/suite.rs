//! The guard's behaviour suite (tests/support/scenarios.rs, as tests/wasmtime/guard_azurite runs it)
//! with bearer authorization: client-secret tokens from the fake IdP, fetched by every fresh
//! instance, against OAuth Azurite. `requests()` counts storage round trips only, so the
//! suite's "one round trip per follower" holds the storage side to the same bar as SharedKey;
//! the token requests each step adds are counted in sources.rs.

use super::env::{Env, Source};
use crate::component_world::ComponentWorld;
use crate::component_world::Location;

/// A world of its own (container, fake IdP) whose storage round trips are counted by the
/// host's outbound hooks: a proxy would see only TLS.
pub fn bearer_world() -> ComponentWorld {
    let env = Env::new();
    let connection_string = env.connection_string(Source::ClientSecret);
    let location = Location { connection_string, container: env.container.clone() };
    ComponentWorld::over(location, Box::new(move || env.storage_trips() as u64))
}

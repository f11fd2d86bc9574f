//! The built artifacts, in one test binary that links the test host (wasmtime) once:
//! - `spin::`: real `spin up` replicas of this project's spin.toml (and of the templates' and
//!   the guests' apps) against Azurite on 127.0.0.1, under each Spin CLI and trigger-cron
//!   plugin line the tests install from ../shared/tools/spin;
//! - `wasmtime::`: the built lease component (and the Spin app's and the guests' components
//!   composed with it) in a wasmtime host against Azurite, plus the ecosystem checks around
//!   the artifact (Node via jco, the SpinKube manifests, publishing).
//!
//! Real time. The groups run side by side, each at most its own number of tests at once, in
//! its listed order (`--test-threads` runs them one after the other instead); a test whose
//! tool is missing is reported as ignored with the reason (a failure under `CI=true`).

#[path = "support/component_world.rs"]
mod component_world;
#[path = "support/entra_env.rs"]
mod env;
#[path = "support/loopback.rs"]
mod loopback;
#[path = "support/ecosystem.rs"]
mod run;
#[path = "support/scenarios.rs"]
mod scenarios;
#[path = "support/story.rs"]
mod story;

#[path = "spin/mod.rs"]
mod spin;
#[path = "wasmtime/mod.rs"]
mod wasmtime;

fn main() {
    use traffic_cop_testbed::runner::Slots;
    traffic_cop_testbed::runner::run_groups(vec![
        // The longest stories first within the group (see spin::tests); they mostly wait for
        // ticks and lease periods, so a few at once fit two cores. Once the wasmtime group has
        // ended (about a quarter of the way), a fifth: with four, a cold run's last stories
        // left the cores about a third idle.
        ("spin", spin::tests(), Slots { beside: 4, alone: 5 }),
        // Most of these wait on real time (lease periods, due times) more than they compute.
        ("wasmtime", wasmtime::tests(), Slots::fixed(6)),
    ])
}

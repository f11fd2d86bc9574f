//! The component in a wasmtime host: the built lease component (and the Spin app's
//! components composed with it) called through its exports against Azurite on
//! 127.0.0.1, plus the ecosystem checks around the artifact (Node via jco, the SpinKube
//! manifests, publishing). Real time; the runner reports a test whose tool is missing as
//! ignored (a failure under `CI=true`).

mod azurite_runner;
mod board_html;
mod boundary;
mod component;
mod contract;
mod entra;
mod faults;
mod fenced_azurite;
mod guard_azurite;
mod listing_azurite;
mod lossy;
mod metrics;
mod mixed_fleet;
mod node_jco;
mod past_due;
mod prometheus_files;
mod publishing;
mod schedule_change;
mod settings_check;
mod spin_app;
mod spinkube;
mod transport;

pub fn tests() -> Vec<traffic_cop_testbed::runner::Test> {
    let tests = [
        azurite_runner::tests(),
        board_html::tests(),
        boundary::tests(),
        component::tests(),
        contract::tests(),
        entra::tests(),
        faults::tests(),
        fenced_azurite::tests(),
        guard_azurite::tests(),
        listing_azurite::tests(),
        lossy::tests(),
        metrics::tests(),
        mixed_fleet::tests(),
        node_jco::tests(),
        past_due::tests(),
        prometheus_files::tests(),
        publishing::tests(),
        schedule_change::tests(),
        settings_check::tests(),
        spin_app::tests(),
        spinkube::tests(),
        transport::tests(),
    ];
    tests.concat()
}

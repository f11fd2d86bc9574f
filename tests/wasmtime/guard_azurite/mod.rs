//! The guard through the built component in wasmtime, over Azurite on real time: the same
//! behaviour suite as tests/native/guard.rs, then contention runs with many concurrent instances.

use traffic_cop_testbed::runner::Test;

mod contention;

use crate::component_world::{now_ms, sleep_to_boundary, ComponentWorld, Location};
use crate::scenarios::{self, World};
use std::sync::atomic::{AtomicU32, Ordering};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::{self, Decision, SkipReason};

/// Shared Key through a counting proxy: one container per world.
type Real = ComponentWorld;

impl ComponentWorld {
    fn new() -> ComponentWorld {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let proxy = CountingProxy::start(Azurite::shared().port);
        let container = format!("g{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        let connection_string = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
        let location = Location { connection_string, container };
        ComponentWorld::over(location, Box::new(move || proxy.requests()))
    }
}

crate::scenario_trials!(Real::new());

/// Settings the guard cannot use are a typed error naming the variable, without a trap and
/// without a request.
fn bad_guard_input_is_a_typed_error_without_a_trap() {
    let world = Real::new();
    let settings = |lock: &str, holder: &str| world.location.settings(lock, holder, 60);
    let bad = [
        ("lease_seconds", v1::Settings { lease_seconds: Some("14".into()), ..settings("x", "x") }),
        (
            "keep_alive_seconds",
            v1::Settings { keep_alive_seconds: Some("8".into()), ..settings("x", "x") },
        ),
        ("lock", settings("../x", "x")),
    ];
    for (variable, settings) in bad {
        match fresh().guarded_invoke(&settings) {
            Decision::Skip(v1::Skipped {
                reason: SkipReason::Error(v1::Error::BadSetting(bad)),
                ..
            }) => assert_eq!(bad.variable, variable, "{bad:?}"),
            other => panic!("{settings:?} gave {other:?}"),
        }
    }
    let bogus = v1::Settings {
        connection_string: Some("nope".into()),
        ..world.location.container_settings("x", 60)
    };
    assert!(matches!(
        fresh().board(&bogus),
        Err(v1::Error::BadSetting(bad)) if bad.variable == "connection_string"
    ));
    let claim = world.location.container_settings("x", 60);
    assert!(matches!(
        fresh().claim(&claim, &["a/../b".into()], 1),
        Err(v1::Error::InvalidArgument(_))
    ));
    assert_eq!(world.requests(), 0);
    assert!(
        fresh().board(&claim).unwrap().locks.is_empty(),
        "a container never used is an empty board"
    );
}

pub fn tests() -> Vec<Test> {
    let own = traffic_cop_testbed::tests![bad_guard_input_is_a_typed_error_without_a_trap];
    [own, scenarios(), contention::tests()].concat()
}

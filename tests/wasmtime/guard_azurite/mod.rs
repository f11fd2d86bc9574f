//! The guard through the built component in wasmtime, over Azurite on real time: the same
//! behaviour suite as tests/native/guard.rs, then contention runs with many concurrent instances.

use traffic_cop_testbed::runner::Test;

mod contention;

use crate::component_world::{now_ms, options, sleep_to_boundary, ComponentWorld};
use crate::scenarios::{self, World};
use std::sync::atomic::{AtomicU32, Ordering};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::{
    fresh, Decision, GuardOptions, LeaseError, Location, Lock, Outcome, SkipReason,
};

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

fn bad_guard_input_is_a_typed_error_without_a_trap() {
    let world = Real::new();
    let bad = [
        options("", 60),
        GuardOptions { lease_seconds: 14, ..options("x", 60) },
        GuardOptions { keep_alive_seconds: Some(8), ..options("x", 60) },
    ];
    for options in bad {
        match fresh().guarded_invoke(&world.lock("x"), &options) {
            Decision::Skip(SkipReason::Error(LeaseError::InvalidArgument(_))) => {}
            other => panic!("{options:?} gave {other:?}"),
        }
    }
    let outside = Lock { blob: "../x".into(), ..world.lock("x") };
    assert!(matches!(
        fresh().guarded_invoke(&outside, &options("x", 60)),
        Decision::Skip(SkipReason::Error(LeaseError::InvalidArgument(_)))
    ));
    let bogus = Location { connection_string: "nope".into(), container: "abc".into() };
    assert!(matches!(fresh().board(&bogus), Err(LeaseError::InvalidConfig(_))));
    assert!(matches!(
        fresh().claim(&world.location, &["a/../b".into()], &options("x", 60), 1),
        Err(LeaseError::InvalidArgument(_))
    ));
    assert_eq!(world.requests(), 0);
    assert!(
        fresh().board(&world.location).unwrap().is_empty(),
        "a container never used is an empty board"
    );
}

/// A ticket kept past its event (a queue, a later request) comes back to an instance that never
/// saw its grant: `complete` reads the record under the lease first, one round trip more than
/// on the granting instance, and closes the run all the same.
fn a_ticket_completed_on_another_instance_reads_the_record_first() {
    let world = Real::new();
    let ticket = match fresh().guarded_invoke(&world.lock("elsewhere"), &options("alpha", 60)) {
        Decision::Run(ticket) => ticket,
        other => panic!("expected a run, got {other:?}"),
    };
    let before = world.requests();
    fresh().complete(&ticket, &Outcome::Success).unwrap();
    assert_eq!(world.requests() - before, 3, "look under the lease, record, release");
    let next = fresh().guarded_invoke(&world.lock("elsewhere"), &options("bravo", 0));
    assert!(matches!(&next, Decision::Run(t) if t.fencing_token == 2), "{next:?}");
}

pub fn tests() -> Vec<Test> {
    let own = traffic_cop_testbed::tests![
        bad_guard_input_is_a_typed_error_without_a_trap,
        a_ticket_completed_on_another_instance_reads_the_record_first
    ];
    [own, scenarios(), contention::tests()].concat()
}

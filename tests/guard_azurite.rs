//! The guard through the built component in wasmtime, over Azurite on real time: the same
//! behaviour suite as tests/guard.rs, then contention runs with many concurrent instances.

#[path = "support/contention.rs"]
mod contention;
#[path = "support/scenarios.rs"]
mod scenarios;

use scenarios::{Failure, Row, Seen, World};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};
use traffic_cop_host::azurite::{connection_string_for_port, Azurite};
use traffic_cop_host::component::{
    fresh, Decision, GuardOptions, LeaseError, LeaseState, Location, Lock, Outcome, SkipReason,
    Ticket,
};
use traffic_cop_host::proxy::CountingProxy;
use traffic_cop_host::EMULATOR_KEY_B64;

struct Real {
    proxy: CountingProxy,
    location: Location,
}

impl Real {
    fn new() -> Real {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let proxy = CountingProxy::start(Azurite::shared().port);
        let container = format!("g{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        let connection_string = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
        Real { proxy, location: Location { connection_string, container } }
    }

    fn lock(&self, name: &str) -> Lock {
        Lock {
            connection_string: self.location.connection_string.clone(),
            container: self.location.container.clone(),
            blob: name.into(),
        }
    }
}

fn options(holder: &str, interval_seconds: u64) -> GuardOptions {
    GuardOptions {
        holder: holder.into(),
        lease_seconds: 15,
        interval_seconds,
        keep_alive_seconds: None,
    }
}

fn failure(error: LeaseError) -> Failure {
    match error {
        LeaseError::LeaseLost(_) => Failure::Lost,
        other => Failure::Other(format!("{other:?}")),
    }
}

fn seen(decision: Decision) -> Seen<Ticket> {
    match decision {
        Decision::Run(ticket) => {
            Seen::Run { token: ticket.fencing_token, abandoned: ticket.previous_abandoned, ticket }
        }
        Decision::Skip(SkipReason::HeldByOther(h)) => Seen::Held { holder: h.holder },
        Decision::Skip(SkipReason::AlreadyRan(r)) => {
            Seen::AlreadyRan { holder: r.holder, running: r.running, outcome: r.outcome }
        }
        Decision::Skip(SkipReason::Error(e)) => Seen::Error(format!("{e:?}")),
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Sleeps until `offset_ms` past the next multiple of `interval_ms` (Azurite runs on this
/// machine's clock, so this is the service's interval boundary too).
fn sleep_to_boundary(interval_ms: u64, offset_ms: u64) {
    let now = now_ms();
    std::thread::sleep(Duration::from_millis(interval_ms - now % interval_ms + offset_ms));
}

impl World for Real {
    type Ticket = Ticket;

    fn interval_seconds(&self) -> u64 {
        4
    }

    fn invoke_every(&mut self, lock: &str, holder: &str, interval_seconds: u64) -> Seen<Ticket> {
        seen(fresh().guarded_invoke(&self.lock(lock), &options(holder, interval_seconds)))
    }

    fn keep_alive(&mut self, ticket: &Ticket) -> Result<(), Failure> {
        fresh().keep_alive(ticket).map(drop).map_err(failure)
    }

    fn complete(&mut self, ticket: &Ticket, success: bool) -> Result<(), Failure> {
        let outcome = if success { Outcome::Success } else { Outcome::Failure("scripted".into()) };
        fresh().complete(ticket, &outcome).map_err(failure)
    }

    fn claim(
        &mut self,
        items: &[String],
        holder: &str,
        max: u32,
    ) -> Result<Vec<(Ticket, String, u64)>, Failure> {
        let tickets = fresh()
            .claim(&self.location, items, &options(holder, self.interval_seconds()), max)
            .map_err(failure)?;
        Ok(tickets.into_iter().map(|t| (t.clone(), t.lock.blob.clone(), t.fencing_token)).collect())
    }

    fn board(&mut self) -> Vec<Row> {
        fresh()
            .board(&self.location)
            .unwrap()
            .into_iter()
            .map(|e| Row {
                name: e.name,
                state: match e.state {
                    LeaseState::Available => "available",
                    LeaseState::Leased => "leased",
                    LeaseState::Expired => "expired",
                    LeaseState::Breaking => "breaking",
                    LeaseState::Broken => "broken",
                }
                .to_string(),
                holder: e.holder,
                token: e.fencing_token,
                running: e.running,
                outcome: e.last_outcome,
            })
            .collect()
    }

    fn advance(&mut self, by: Duration) {
        std::thread::sleep(by);
    }

    fn align(&mut self) {
        sleep_to_boundary(self.interval_seconds() * 1000, 100);
    }

    fn requests(&self) -> u64 {
        self.proxy.requests()
    }
}

scenario_tests!(Real::new());

#[test]
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

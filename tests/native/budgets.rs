//! The time left on a lease, as the calls that serve it measure it, on virtual time: a wall
//! clock stepped back during a grant cannot make a late grant look timely, a ticket from
//! outside (a WIT value, wall-clock instants only) never buys more than one lease period
//! however far the clock was stepped, and `claim` stops granting before the first tickets'
//! leases run down. Each failed on the code before it.

use crate::support::fake_world::{advance, FakeWorld as World};
use crate::support::hooked::{step, Hooked};
use crate::support::{VirtualRuntime, EMULATOR};
use std::time::Duration;
use traffic_cop::guard::{self, Decision, GuardOptions, SkipReason, Ticket};
use traffic_cop::transport::{TransportError, TransportErrorKind};
use traffic_cop::{Account, Error, LeaseClient, LeaseLoss, Lock, RanOutWhen};

fn lock() -> Lock {
    Lock::parse(EMULATOR, "budgets", "job").unwrap()
}

fn options(holder: &str) -> GuardOptions {
    GuardOptions::every_interval(holder, 15, 0, None).unwrap()
}

#[test]
fn a_wall_clock_stepped_back_during_a_grant_does_not_make_a_late_grant_a_run() {
    let world = World::new();
    let runtime = world.runtime();
    let (clock, wall_step) = (world.clock.clone(), runtime.wall_step_ms.clone());
    // The record write's answer takes 16 s of real (monotonic) time to arrive, longer than the
    // 15 s lease, and this replica's wall clock is stepped back a minute meanwhile (an NTP
    // correction): by the wall clock the grant looks timely.
    let hooked = Hooked::new(world.service.clone()).after(move |_, request, response| {
        if step(request) == "comp=metadata" {
            advance(&clock, Duration::from_secs(16));
            wall_step.set(-60_000);
        }
        Ok(response)
    });
    let mut client = LeaseClient::new(hooked, runtime);
    match guard::guarded_invoke(&mut client, &lock(), &options("alpha")) {
        Decision::Skip(SkipReason::Error(Error::LeaseLost(LeaseLoss::RanOut(r)))) => {
            assert_eq!(r.when, RanOutWhen::GrantedTooLate);
            assert!(r.message.contains("longer than the 15 s lease"), "{}", r.message)
        }
        other => panic!("a grant past its lease was a run: {other:?}"),
    }
}

/// Every attempt times out, and the shared clock moves by the whole time the client allowed.
fn stalling(world: &World) -> Hooked {
    let clock = world.clock.clone();
    Hooked::new(world.service.clone()).before(move |_, _, timeouts| {
        advance(&clock, timeouts.connect + timeouts.response);
        Some(Err(TransportError::new(TransportErrorKind::Timeout, "stalled (hook)")))
    })
}

#[test]
fn a_ticket_from_outside_never_buys_more_than_one_lease_period_whatever_the_wall_clock_says() {
    let world = World::new();
    let granted = match guard::guarded_invoke(&mut world.client(), &lock(), &options("alpha")) {
        Decision::Run(ticket) => ticket,
        other => panic!("{other:?}"),
    };
    // As the component rebuilds it from WIT: wall-clock instants only.
    let outside = Ticket { lease_deadline: None, ..granted };
    // This replica's clock was stepped back an hour: the ticket's deadline looks an hour away.
    let runtime = VirtualRuntime::on_clock(world.clock.clone(), 3);
    runtime.wall_step_ms.set(-3_600_000);
    let started = world.clock.get();
    let mut client = LeaseClient::new(stalling(&world), runtime);
    let error = guard::keep_alive(&mut client, &outside).unwrap_err();
    let spent = world.clock.get().duration_since(started).unwrap();
    assert!(spent <= Duration::from_secs(15), "keep-alive tried for {spent:?}: {error}");
    assert!(matches!(error, Error::Transport(_) | Error::LeaseLost(_)), "{error}");
}

#[test]
fn claim_stops_granting_when_the_oldest_ticket_has_less_than_its_keep_alive_left() {
    let world = World::new();
    let clock = world.clock.clone();
    // A slow service: every request takes 400 ms, so a grant (acquire and record) takes 800.
    let hooked = Hooked::new(world.service.clone()).before(move |_, _, _| {
        advance(&clock, Duration::from_millis(400));
        None
    });
    let items: Vec<String> = (0..50).map(|i| format!("item-{i:02}")).collect();
    let account = Account::from_connection_string(EMULATOR).unwrap();
    let options = GuardOptions::every_interval("worker", 15, 60, Some(5)).unwrap();
    let mut client = world.client_over(hooked);
    let tickets =
        guard::claim(&mut client, &account, "budgets", &items, &options, 50).unwrap().tickets;
    assert!(!tickets.is_empty() && tickets.len() < 50, "{} tickets", tickets.len());
    // The oldest had at least its keep-alive period left when the last was granted, which took
    // at most one grant more.
    let left = tickets[0].lease_deadline.unwrap();
    let remaining = left.left(client.runtime()).unwrap_or_default();
    assert!(remaining + Duration::from_millis(1600) >= Duration::from_secs(5), "{remaining:?}");
}

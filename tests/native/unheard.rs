//! Writes that landed while their answers were lost, over the fake service on virtual time:
//! `complete` whose record write landed unheard still closes the run and releases the lease,
//! and a grant whose record write landed (or may have) says what it used up. Each failed on
//! the code before it (complete answered 412 and kept the lease; the grant answered a plain
//! transport error).

use crate::support::fake_world::FakeWorld as World;
use crate::support::hooked::{lost, step, Hooked};
use crate::support::EMULATOR;
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, RunRecord, SkipReason, Ticket};
use traffic_cop::{Error, Lock};

fn lock() -> Lock {
    Lock::parse(EMULATOR, "unheard", "job").unwrap()
}

fn options(holder: &str) -> GuardOptions {
    GuardOptions::every_interval(holder, 15, 0, None).unwrap()
}

fn record(world: &World) -> RunRecord {
    RunRecord::from_metadata(&world.client().inspect(&lock()).unwrap().metadata)
}

fn granted(world: &World, holder: &str) -> Ticket {
    match guard::guarded_invoke(&mut world.client(), &lock(), &options(holder)) {
        Decision::Run(ticket) => ticket,
        other => panic!("expected a run, got {other:?}"),
    }
}

#[test]
fn complete_whose_record_write_landed_unheard_still_releases() {
    let world = World::new();
    let ticket = granted(&world, "alpha");
    // The record write (complete's first request: the ticket carries the grant's record) lands;
    // its answer is lost; the retry's If-Match then fails, since the write it repeats changed
    // the ETag.
    let hooked =
        Hooked::new(world.service.clone())
            .after(|i, _, response| if i == 0 { lost() } else { Ok(response) });
    let mut client = world.client_over(hooked);
    guard::complete(&mut client, &ticket, &Outcome::Success).unwrap();
    let steps: Vec<&str> = client.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    // Write, its retry, the settling look, release.
    assert_eq!(steps, ["comp=metadata", "comp=metadata", "look", "release"]);
    let stored = record(&world);
    assert_eq!((stored.running, stored.outcome), (false, Some(Outcome::Success)));
    // Released: the next replica is granted at once, not after the lease period.
    assert_eq!(granted(&world, "bravo").fencing_token, ticket.fencing_token + 1);
}

#[test]
fn complete_that_cannot_learn_whether_its_write_landed_says_so() {
    let world = World::new();
    let ticket = granted(&world, "alpha");
    // Every answer from the record write on is lost (the writes land).
    let hooked = Hooked::new(world.service.clone()).after(|_, _, _| lost());
    let error =
        guard::complete(&mut world.client_over(hooked), &ticket, &Outcome::Success).unwrap_err();
    assert!(matches!(error, Error::Transport(_)), "{error}");
    assert!(error.to_string().contains("may or may not have been closed"), "{error}");
}

#[test]
fn a_grant_whose_record_write_landed_with_every_answer_lost_says_the_due_time_may_be_used_up() {
    let world = World::new();
    granted(&world, "setup");
    advance_past_lease(&world);
    let hooked = Hooked::new(world.service.clone()).after(|_, request, response| {
        if step(request) == "comp=metadata" || request.headers().contains_key("x-ms-lease-id") {
            lost()
        } else {
            Ok(response)
        }
    });
    let mut client = world.client_over(hooked);
    let text = match guard::guarded_invoke(&mut client, &lock(), &options("alpha")) {
        Decision::Skip(SkipReason::Error(error @ Error::Transport(_))) => error.to_string(),
        other => panic!("expected a transport error, got {other:?}"),
    };
    assert!(text.contains("may be used up") && text.contains("fencing token 2"), "{text}");
    // It did land: the record names the grant, which shows as abandoned to the next look.
    let stored = record(&world);
    assert_eq!((stored.fence, stored.running, stored.holder.as_deref()), (2, true, Some("alpha")));
    let steps: Vec<&str> = client.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(steps.last(), Some(&"release"), "the lease is let go: {steps:?}");
}

fn advance_past_lease(world: &World) {
    crate::support::fake_world::advance(&world.clock, std::time::Duration::from_secs(20));
}

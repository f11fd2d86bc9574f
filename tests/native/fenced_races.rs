//! Fenced writes that race, over the fake service on virtual time: another write landing
//! between the look and the write (on an existing blob and on a missing one) makes the writer
//! look and decide again; an answer lost after the write landed is written once more; endless
//! contention ends in an error after a few rounds; and a write never outlasts its lease.

use crate::fenced_support::*;
use crate::support::fake_service::FakeService;
use crate::support::fake_world::{advance, FakeWorld as World};
use crate::support::hooked::{lost, Hooked};
use crate::support::VirtualRuntime;
use std::time::Duration;
use traffic_cop::guard::{write_fenced, FencedError, Ticket};
use traffic_cop::{Error, LeaseClient};

/// A write by `ticket` from another replica, at whatever point the hook calls it.
fn interloper(world: &World, ticket: Ticket, contents: &'static [u8]) -> impl FnMut() {
    let (service, clock) = (world.service.clone(), world.clock.clone());
    move || {
        let mut client =
            LeaseClient::new(service.clone(), VirtualRuntime::on_clock(clock.clone(), 5));
        write_fenced(&mut client, &ticket, RESULT, contents).unwrap();
    }
}

/// `service` behind a hook that lets `interfere` act just before each of the writer's Put
/// Blobs in `puts` (request indices).
fn racing(
    service: &FakeService,
    puts: &'static [usize],
    mut interfere: impl FnMut() + 'static,
) -> Hooked {
    Hooked::new(service.clone()).before(move |i, _, _| {
        if puts.contains(&i) {
            interfere();
        }
        None
    })
}

#[test]
fn a_newer_write_between_look_and_write_makes_the_older_run_stale() {
    let world = World::new();
    let first = run(&world, "a");
    write_fenced(&mut world.client(), &first, RESULT, b"a1").unwrap();
    let second = takeover(&world, &first, "b");
    // The first run looks (its own token), then the newer run writes before its Put lands.
    let hooked = racing(&world.service, &[1], interloper(&world, second.clone(), b"b1"));
    let mut client = world.client_over(hooked);
    match write_fenced(&mut client, &first, RESULT, b"a2") {
        Err(FencedError::Stale { presented, stored }) => {
            assert_eq!((presented, stored), (first.fencing_token, second.fencing_token))
        }
        other => panic!("expected a stale token, got {other:?}"),
    }
    // Look, the refused write (412), the second look that finds the newer token.
    assert_eq!(client.round_trips(), 3);
    assert_eq!(stored(&world).unwrap().0, b"b1");
}

#[test]
fn a_newer_run_creating_the_blob_first_makes_the_older_run_stale() {
    let world = World::new();
    let first = run(&world, "a");
    let second = takeover(&world, &first, "b");
    // The first run finds no blob; the newer run creates it before the create lands (409).
    let hooked = racing(&world.service, &[1], interloper(&world, second.clone(), b"b1"));
    let outcome = write_fenced(&mut world.client_over(hooked), &first, RESULT, b"a1");
    assert!(matches!(outcome, Err(FencedError::Stale { .. })), "{outcome:?}");
    assert_eq!(stored(&world).unwrap().0, b"b1");
}

#[test]
fn an_older_write_between_look_and_write_is_overwritten_on_the_next_round() {
    let world = World::new();
    let first = run(&world, "a");
    let second = takeover(&world, &first, "b");
    // The stale run's write got past its own look just before the newer run's look and write.
    let hooked = racing(&world.service, &[1], interloper(&world, first.clone(), b"a1"));
    let mut client = world.client_over(hooked);
    let written = write_fenced(&mut client, &second, RESULT, b"b1").unwrap();
    assert_eq!(written.fencing_token, second.fencing_token);
    // Look (absent), create refused (409), look (older token), write conditional on it.
    assert_eq!(client.round_trips(), 4);
    let token = second.fencing_token.to_string();
    assert_eq!(stored(&world), Some((b"b1".to_vec(), Some(token))));
}

#[test]
fn a_write_whose_answer_was_lost_is_decided_again_and_written_once_more() {
    let world = World::new();
    let ticket = run(&world, "a");
    write_fenced(&mut world.client(), &ticket, RESULT, b"first").unwrap();
    // The write lands, its answer is lost; the retry's If-Match no longer matches (412).
    let hooked =
        Hooked::new(world.service.clone())
            .after(|i, _, response| if i == 1 { lost() } else { Ok(response) });
    let mut client = world.client_over(hooked);
    let written = write_fenced(&mut client, &ticket, RESULT, b"second").unwrap();
    assert_eq!(written.fencing_token, ticket.fencing_token);
    // Look, write (lost), its retry (412), look (our own token: equal), write.
    assert_eq!(client.round_trips(), 5);
    assert_eq!(stored(&world).unwrap().0, b"second");
}

#[test]
fn endless_contention_ends_after_a_few_rounds_with_nothing_written_by_this_run() {
    let world = World::new();
    let ticket = run(&world, "a");
    // Before each of its writes, another write with the same token lands.
    let hooked =
        racing(&world.service, &[1, 3, 5, 7, 9], interloper(&world, ticket.clone(), b"other"));
    let mut client = world.client_over(hooked);
    match write_fenced(&mut client, &ticket, RESULT, b"mine") {
        Err(FencedError::Failed(Error::Service(e))) => {
            assert_eq!((e.status, e.code.as_deref()), (412, Some("ConditionNotMet")));
            assert!(e.message.contains("4 times"), "{}", e.message);
        }
        other => panic!("expected the contention error, got {other:?}"),
    }
    assert_eq!(client.round_trips(), 8);
    assert_eq!(stored(&world).unwrap().0, b"other");
}

#[test]
fn a_write_gives_up_when_the_time_left_on_the_lease_runs_out() {
    let world = World::new();
    let ticket = run(&world, "a");
    // Every request stalls for 8 s and is answered "busy": retried, but only while the lease
    // has time left (15 s from the grant), never the four attempts a plain call would make.
    let clock = world.clock.clone();
    let hooked = Hooked::new(world.service.clone()).before(move |_, _, _| {
        advance(&clock, Duration::from_secs(8));
        Some(Ok(http::Response::builder()
            .status(503)
            .header("x-ms-error-code", "ServerBusy")
            .body(Vec::new())
            .unwrap()))
    });
    let mut client = world.client_over(hooked);
    let outcome = write_fenced(&mut client, &ticket, RESULT, b"x");
    // The last answer, once no retry fits in the time left.
    assert!(matches!(outcome, Err(FencedError::Failed(Error::Throttled(_)))), "{outcome:?}");
    assert_eq!(client.round_trips(), 2);
    assert!(client.transport().log.iter().all(|(_, what, _)| what == "look"));
}

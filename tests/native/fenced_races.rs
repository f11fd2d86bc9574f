//! Fenced writes that race, over the fake service on virtual time: a newer run granted and
//! writing between the looks and the write (on an existing blob and on a missing one) makes the
//! writer look and decide again; a newer run granted before the write makes it stale at the
//! first look; an answer lost after the write landed is written once more; endless contention
//! ends in an error after a few rounds; and a write never outlasts its lease. Request 0 of a
//! write is the look at the lock, 1 the look at the data, 2 the Put.

use crate::fenced_support::*;
use crate::support::fake_service::FakeService;
use crate::support::fake_world::{advance, FakeWorld as World};
use crate::support::hooked::{lost, Hooked};
use crate::support::VirtualRuntime;
use std::time::Duration;
use traffic_cop::guard::{write_fenced, FencedError, Ticket, FENCING_TOKEN_METADATA};
use traffic_cop::ops::{PutBlob, PutOutcome, WriteCondition};
use traffic_cop::{BreakPeriod, Error, LeaseClient, Lock};

/// A newer run replacing `previous` (its lease broken, as an operator or the `replace`
/// overlap policy does, so no time passes) and writing `contents`, at whatever point the hook
/// calls it.
fn newer_run_writes(world: &World, previous: Ticket, contents: &'static [u8]) -> impl FnMut() {
    let (service, clock) = (world.service.clone(), world.clock.clone());
    move || {
        let world = World::on(service.clone(), clock.clone());
        world.client().break_lease(&previous.lock, BreakPeriod(Some(0))).unwrap();
        let newer = run(&world, "newer");
        assert!(newer.fencing_token > previous.fencing_token);
        write_fenced(&mut world.client(), &newer, RESULT, contents).unwrap();
    }
}

/// A write that got past all its looks while its run was still the newest, landing now: the
/// Put alone, with `ticket`'s token, on whatever the blob is at this moment.
fn late_put(world: &World, ticket: Ticket, contents: &'static [u8]) -> impl FnMut() {
    let (service, clock) = (world.service.clone(), world.clock.clone());
    move || {
        let mut client =
            LeaseClient::new(service.clone(), VirtualRuntime::on_clock(clock.clone(), 5));
        let target = Lock::new(ticket.lock.account.clone(), CONTAINER, RESULT).unwrap();
        let condition = match client.inspect(&target) {
            Ok(status) => WriteCondition::IfMatch(status.etag.unwrap()),
            Err(_) => WriteCondition::IfAbsent,
        };
        let metadata = vec![(FENCING_TOKEN_METADATA.into(), ticket.fencing_token.to_string())];
        let put = PutBlob { contents, metadata, condition };
        assert!(matches!(client.execute(&target, &put), Ok(PutOutcome::Written(_))), "late put");
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
    // The first run looks (the lock: still its token; the data: its own), then a newer run is
    // granted and writes before its Put lands.
    let hooked = racing(&world.service, &[2], newer_run_writes(&world, first.clone(), b"b1"));
    let mut client = world.client_over(hooked);
    match write_fenced(&mut client, &first, RESULT, b"a2") {
        Err(FencedError::Stale { presented, stored }) => {
            assert_eq!((presented, stored), (first.fencing_token, first.fencing_token + 1))
        }
        other => panic!("expected a stale token, got {other:?}"),
    }
    // Two looks, the refused write (412), the look at the data that finds the newer token.
    assert_eq!(client.round_trips(), 4);
    assert_eq!(stored(&world).unwrap().0, b"b1");
}

#[test]
fn a_newer_run_creating_the_blob_first_makes_the_older_run_stale() {
    let world = World::new();
    let first = run(&world, "a");
    // The first run finds no blob; a newer run creates it before the create lands (409).
    let hooked = racing(&world.service, &[2], newer_run_writes(&world, first.clone(), b"b1"));
    let outcome = write_fenced(&mut world.client_over(hooked), &first, RESULT, b"a1");
    assert!(matches!(outcome, Err(FencedError::Stale { .. })), "{outcome:?}");
    assert_eq!(stored(&world).unwrap().0, b"b1");
}

#[test]
fn a_run_is_stale_as_soon_as_a_newer_one_is_granted_before_anything_is_written() {
    let world = World::new();
    let first = run(&world, "a");
    let second = takeover(&world, &first, "b");
    // The newer run has not written yet: the lock's record alone makes the first one stale.
    let mut client = world.client();
    match write_fenced(&mut client, &first, RESULT, b"a1") {
        Err(FencedError::Stale { presented, stored }) => {
            assert_eq!((presented, stored), (first.fencing_token, second.fencing_token))
        }
        other => panic!("expected a stale token, got {other:?}"),
    }
    assert_eq!((client.round_trips(), stored(&world)), (1, None));
}

#[test]
fn a_token_never_granted_is_refused_and_locks_nobody_out() {
    let world = World::new();
    let ticket = run(&world, "a");
    let forged = Ticket { fencing_token: u64::MAX, ..ticket.clone() };
    let mut client = world.client();
    let refused = write_fenced(&mut client, &forged, RESULT, b"forged");
    match &refused {
        Err(FencedError::Failed(Error::InvalidArgument(m))) => {
            assert!(m.contains("never granted"), "{m}")
        }
        other => panic!("a forged token was not refused: {other:?}"),
    }
    assert_eq!((client.round_trips(), stored(&world)), (1, None));
    // The real ticket still writes.
    write_fenced(&mut world.client(), &ticket, RESULT, b"real").unwrap();
}

#[test]
fn an_older_write_between_look_and_write_is_overwritten_on_the_next_round() {
    let world = World::new();
    let first = run(&world, "a");
    let second = takeover(&world, &first, "b");
    // The stale run's write got past its looks while it was the newest, and lands just before
    // the newer run's Put.
    let hooked = racing(&world.service, &[2], late_put(&world, first.clone(), b"a1"));
    let mut client = world.client_over(hooked);
    let written = write_fenced(&mut client, &second, RESULT, b"b1").unwrap();
    assert_eq!(written.fencing_token, second.fencing_token);
    // Two looks (data absent), create refused (409), look (older token), write conditional.
    assert_eq!(client.round_trips(), 5);
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
            .after(|i, _, response| if i == 2 { lost() } else { Ok(response) });
    let mut client = world.client_over(hooked);
    let written = write_fenced(&mut client, &ticket, RESULT, b"second").unwrap();
    assert_eq!(written.fencing_token, ticket.fencing_token);
    // Two looks, write (lost), its retry (412), look (our own token: equal), write.
    assert_eq!(client.round_trips(), 6);
    assert_eq!(stored(&world).unwrap().0, b"second");
}

#[test]
fn endless_contention_ends_after_a_few_rounds_with_nothing_written_by_this_run() {
    let world = World::new();
    let ticket = run(&world, "a");
    // Before each of its writes, another write with the same token lands.
    let hooked =
        racing(&world.service, &[2, 4, 6, 8, 10], late_put(&world, ticket.clone(), b"other"));
    let mut client = world.client_over(hooked);
    match write_fenced(&mut client, &ticket, RESULT, b"mine") {
        Err(FencedError::Failed(Error::Contended(c))) => {
            assert_eq!(c.attempts, 4);
            assert!(c.message.contains("4 times"), "{}", c.message);
        }
        other => panic!("expected the contention error, got {other:?}"),
    }
    assert_eq!(client.round_trips(), 9);
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

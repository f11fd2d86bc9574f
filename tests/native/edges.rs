//! The guard at its edges, deterministically, over the fake service on virtual time: a record
//! write whose answer is lost while the lease changes hands, a grant that completes after its
//! lease period, retries that would outlast the lease, an acquire nobody heard, a doctored
//! ticket, endless churn, and a service that sends no `Date`. Each failed on the code before it.

use crate::support::fake_world::{advance, FakeWorld as World};
use crate::support::hooked::{lost, step, Hooked};
use crate::support::{VirtualRuntime, EMULATOR};
use std::time::Duration;
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, RunRecord, SkipReason, Ticket};
use traffic_cop::transport::{TransportError, TransportErrorKind};
use traffic_cop::{Error, LeaseClient, LeaseDuration, LeaseLoss, Lock, RanOutWhen};

fn record(world: &World) -> RunRecord {
    RunRecord::from_metadata(&world.client().inspect(&lock()).unwrap().metadata)
}

fn lock() -> Lock {
    Lock::parse(EMULATOR, "edges", "job").unwrap()
}

/// No deduplication: the lease alone decides, so a takeover needs nothing but expiry.
fn options(holder: &str) -> GuardOptions {
    GuardOptions::every_interval(holder, 15, 0, None).unwrap()
}

fn ticket(decision: Decision) -> Ticket {
    match decision {
        Decision::Run(ticket) => ticket,
        other => panic!("expected a run, got {other:?}"),
    }
}

/// A first run, completed, so the lock exists and later steps are steady-state.
fn prepared() -> World {
    let world = World::new();
    let first = ticket(guard::guarded_invoke(&mut world.client(), &lock(), &options("setup")));
    guard::complete(&mut world.client(), &first, &Outcome::Success).unwrap();
    world
}

#[test]
fn a_lost_record_write_is_not_a_run_once_the_lease_changed_hands() {
    let world = prepared();
    let (clock, service) = (world.clock.clone(), world.service.clone());
    let hooked = Hooked::new(world.service.clone())
        // A's record write lands but its answer is lost ...
        .after(|i, _, response| if i == 2 { lost() } else { Ok(response) })
        // ... and before its retry, A stalls past the lease and B takes the lock.
        .before(move |i, _, _| {
            if i == 3 {
                advance(&clock, Duration::from_secs(20));
                let mut b =
                    LeaseClient::new(service.clone(), VirtualRuntime::on_clock(clock.clone(), 99));
                b.acquire(&lock(), LeaseDuration::Fixed(15), None).unwrap();
            }
            None
        });
    let mut a = world.client_over(hooked);
    let decision = guard::guarded_invoke(&mut a, &lock(), &options("alpha"));
    // A's lease is gone and B holds the lock: no run. A's grant did land, though, so the call
    // says what it used up rather than fail plainly.
    match &decision {
        Decision::Skip(SkipReason::Error(e)) => {
            let text = e.to_string();
            assert!(text.contains("is used up") && text.contains("fencing token 2"), "{text}");
            assert!(text.contains("\"alpha\""), "{text}");
        }
        other => panic!("A's lease is gone and B holds the lock, yet: {other:?}"),
    }
    let record = record(&world);
    assert_eq!((record.fence, record.running, record.holder.as_deref()), (2, true, Some("alpha")));
    // The look under the lease is not even sent (the lease's time ran out during the stall);
    // the plain look finds A's grant in the record.
    let steps: Vec<&str> = a.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(steps, ["look", "acquire", "comp=metadata", "comp=metadata", "look"]);
}

#[test]
fn a_grant_whose_answer_comes_after_the_lease_period_is_not_a_run() {
    let world = prepared();
    let clock = world.clock.clone();
    let hooked = Hooked::new(world.service.clone())
        .before({
            let clock = clock.clone();
            move |i, _, _| {
                if i == 2 {
                    advance(&clock, Duration::from_secs(14));
                }
                None
            }
        })
        .after(move |i, _, response| {
            if i == 2 {
                advance(&clock, Duration::from_secs(2));
            }
            Ok(response)
        });
    let mut a = world.client_over(hooked);
    match guard::guarded_invoke(&mut a, &lock(), &options("alpha")) {
        Decision::Skip(SkipReason::Error(Error::LeaseLost(LeaseLoss::RanOut(r)))) => {
            assert_eq!(r.when, RanOutWhen::GrantedTooLate);
            assert!(r.message.contains("longer than the 15 s lease"), "{}", r.message)
        }
        other => panic!("a run past its deadline was granted: {other:?}"),
    }
    // And it let go of a lease that may still live a moment on the service.
    assert_eq!(a.transport().log.last().map(|(_, s, _)| s.as_str()), Some("release"));
    ticket(guard::guarded_invoke(&mut world.client(), &lock(), &options("bravo")));
}

/// Every attempt times out, and the clock moves by the whole time the client allowed it.
fn stalling(world: &World) -> Hooked {
    let clock = world.clock.clone();
    Hooked::new(world.service.clone()).before(move |_, _, timeouts| {
        advance(&clock, timeouts.connect + timeouts.response);
        Some(Err(TransportError::new(TransportErrorKind::Timeout, "stalled (hook)")))
    })
}

#[test]
fn retries_of_keep_alive_and_complete_never_outlast_the_lease() {
    let world = prepared();
    let granted = ticket(guard::guarded_invoke(&mut world.client(), &lock(), &options("alpha")));
    for call in ["keep-alive", "complete"] {
        let started = world.clock.get();
        let mut stalled = world.client_over(stalling(&world));
        let error = match call {
            "keep-alive" => guard::keep_alive(&mut stalled, &granted).unwrap_err(),
            _ => guard::complete(&mut stalled, &granted, &Outcome::Success).unwrap_err(),
        };
        let spent = world.clock.get().duration_since(started).unwrap();
        let left = granted.deadline.duration_since(started).unwrap();
        assert!(spent <= left, "{call} took {spent:?} with {left:?} left on the lease: {error}");
        assert!(matches!(error, Error::Transport(_) | Error::LeaseLost(_)), "{call}: {error}");
        world.clock.set(started);
    }
}

#[test]
fn an_acquire_whose_answers_were_all_lost_is_released() {
    let world = prepared();
    let hooked = Hooked::new(world.service.clone()).after(|_, request, response| {
        if step(request) == "acquire" {
            lost()
        } else {
            Ok(response)
        }
    });
    let mut a = world.client_over(hooked);
    let error = a.acquire(&lock(), LeaseDuration::Fixed(60), None).unwrap_err();
    assert!(matches!(error, Error::Transport(_)), "{error}");
    assert_eq!(a.transport().log.last().map(|(_, s, _)| s.as_str()), Some("release"));
    // Nobody is blocked for the 60 s lease that was granted unheard.
    world.client().acquire(&lock(), LeaseDuration::Fixed(15), None).unwrap();
}

#[test]
fn complete_closes_the_stored_run_conditionally_and_refuses_a_doctored_ticket() {
    let world = prepared();
    let granted = ticket(guard::guarded_invoke(&mut world.client(), &lock(), &options("alpha")));
    assert_eq!(granted.fencing_token, 2);
    let doctored = Ticket { fencing_token: 1, ..granted.clone() };
    let error = guard::complete(&mut world.client(), &doctored, &Outcome::Success).unwrap_err();
    assert!(
        matches!(&error, Error::InvalidArgument(m) if m.contains("nothing was written")),
        "{error}"
    );
    assert_eq!(
        (record(&world).fence, record(&world).running),
        (2, true),
        "the record is untouched"
    );

    let hooked = Hooked::new(world.service.clone()).before(|_, request, _| {
        if step(request) == "comp=metadata" {
            assert!(request.headers().contains_key("if-match"), "the write is conditional");
        }
        None
    });
    guard::complete(&mut world.client_over(hooked), &granted, &Outcome::Success).unwrap();
    assert_eq!((record(&world).fence, record(&world).running), (2, false));
}

#[test]
fn endless_churn_ends_in_an_error_that_does_not_claim_nothing_was_sent() {
    let world = prepared();
    let (clock, service) = (world.clock.clone(), world.service.clone());
    // Before each of A's acquires, someone else rewrites the record, so every look is stale.
    let hooked = Hooked::new(world.service.clone()).before(move |_, request, _| {
        if step(request) == "acquire" {
            let mut other =
                LeaseClient::new(service.clone(), VirtualRuntime::on_clock(clock.clone(), 5));
            let bump = traffic_cop::ops::SetMetadata::new(
                vec![("tc_fence".into(), "1".into())],
                None,
                None,
            );
            other.execute(&lock(), &bump.unwrap()).unwrap();
        }
        None
    });
    match guard::guarded_invoke(&mut world.client_over(hooked), &lock(), &options("alpha")) {
        Decision::Skip(SkipReason::Error(Error::Contended(c))) => {
            assert_eq!(c.attempts, 4);
            assert!(c.message.contains("changed under each of 4 attempts"), "{}", c.message);
        }
        other => panic!("expected contention, got {other:?}"),
    }
}

#[test]
fn a_service_that_sends_no_date_is_refused_rather_than_judged_by_the_local_clock() {
    let world = prepared();
    let hooked = Hooked::new(world.service.clone()).after(|_, _, mut response| {
        response.headers_mut().remove("date");
        Ok(response)
    });
    let mut client = world.client_over(hooked);
    match guard::guarded_invoke(&mut client, &lock(), &options("alpha")) {
        Decision::Skip(SkipReason::Error(Error::UnexpectedAnswer(what))) => {
            assert!(what.contains("no usable Date header"), "{what}")
        }
        other => panic!("a look without Date was judged anyway: {other:?}"),
    }
    // Nothing was taken: one look, then the refusal.
    assert_eq!(client.round_trips(), 1);
    assert!(!record(&world).running);
}

#[test]
fn a_look_without_an_etag_is_refused_rather_than_acquired_unconditionally() {
    let world = prepared();
    let hooked = Hooked::new(world.service.clone()).after(|_, _, mut response| {
        response.headers_mut().remove("etag");
        Ok(response)
    });
    let mut client = world.client_over(hooked);
    match guard::guarded_invoke(&mut client, &lock(), &options("alpha")) {
        Decision::Skip(SkipReason::Error(Error::UnexpectedAnswer(what))) => {
            assert!(what.contains("no ETag"), "{what}")
        }
        other => panic!("a look without an ETag led to: {other:?}"),
    }
    let steps: Vec<&str> = client.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(steps, ["look"], "no acquire may follow");
}

/// A lock whose record a newer build wrote in another format (`tc_format`) is refused by name
/// rather than read with the wrong meanings: the tick skips with an error after its one look,
/// the operator's verbs refuse it, and the record is left as it is.
#[test]
fn a_record_in_a_newer_format_is_refused_by_name_and_left_as_it_is() {
    let world = prepared();
    let mut newer = record(&world).to_metadata();
    newer.retain(|(k, _)| k != "tc_format");
    newer.push(("tc_format".into(), "2".into()));
    let write = traffic_cop::ops::SetMetadata::new(newer.clone(), None, None).unwrap();
    world.client().execute(&lock(), &write).unwrap();
    let mut client = world.client();
    match guard::guarded_invoke(&mut client, &lock(), &options("alpha")) {
        Decision::Skip(SkipReason::Error(Error::UnexpectedAnswer(what))) => {
            assert!(what.contains("format \"2\""), "{what}");
            assert!(what.contains("reads format 1 only"), "{what}");
        }
        other => panic!("a record in format 2 was judged anyway: {other:?}"),
    }
    assert_eq!(client.round_trips(), 1, "no acquire may follow the look");
    let paused = guard::pause(&mut world.client(), &lock(), "ops", "deploy", Duration::ZERO);
    assert!(matches!(paused, Err(Error::UnexpectedAnswer(_))), "{paused:?}");
    let left = world.client().inspect(&lock()).unwrap().metadata;
    let format = left.iter().find(|(k, _)| k == "tc_format").map(|(_, v)| v.as_str());
    assert_eq!(format, Some("2"));
    assert_eq!(RunRecord::from_metadata(&left), RunRecord::from_metadata(&newer));
}

//! Waiting for a held lock (`wait`): two waiters and one release grant exactly one of them, a
//! waiter gives up at its limit, and one is granted at its first look after the release.

use crate::support::fake_service::FakeService;
use crate::support::fake_world::FakeWorld as World;
use crate::support::hooked::{step, Hooked};
use crate::support::threaded::{xorshift, Answer, Channel, Clock};
use crate::support::{epoch, VirtualRuntime, EMULATOR};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, SkipReason};
use traffic_cop::schedule::Schedule;
use traffic_cop::transport::{Request, Timeouts, Transport};
use traffic_cop::{LeaseClient, Lock};

fn lock() -> Lock {
    Lock::parse(EMULATOR, "waiting", "mutex").unwrap()
}

/// No schedule (a request-triggered function that needs mutual exclusion), waiting `wait`.
fn waiting(holder: &str, wait: Duration) -> GuardOptions {
    GuardOptions::scheduled(holder, 15, None, Schedule::None).unwrap().waiting(wait).unwrap()
}

// One message at a time through a channel: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Msg {
    Send(Request, Sender<Answer>),
    Done(Decision),
}

/// Two waiters on threads, their requests answered one at a time in an order drawn from `seed`;
/// the holder completes after the waiters' `release_after`-th request. Their decisions.
fn two_waiters_one_release(seed: u64, release_after: usize) -> Vec<Decision> {
    let start = epoch();
    let ms = Arc::new(AtomicU64::new(guard::unix_ms(start)));
    let clock = std::rc::Rc::new(std::cell::Cell::new(start));
    let mut service = FakeService::new(clock.clone());
    let runtime = VirtualRuntime::on_clock(clock.clone(), seed);
    let mut holder = LeaseClient::new(service.clone(), runtime);
    let Decision::Run(held) =
        guard::guarded_invoke(&mut holder, &lock(), &waiting("alpha", Duration::ZERO))
    else {
        panic!("the holder was not granted")
    };
    let (tx, rx) = channel();
    for (i, name) in ["bravo", "charlie"].into_iter().enumerate() {
        let (tx, ms) = (tx.clone(), ms.clone());
        std::thread::spawn(move || {
            let transport = Channel { to_scheduler: tx.clone(), wrap: Msg::Send };
            let runtime = Clock(ms, std::cell::Cell::new(seed * 7 + i as u64 + 1));
            let options = waiting(name, Duration::from_secs(10));
            let decision =
                guard::guarded_invoke(&mut LeaseClient::new(transport, runtime), &lock(), &options);
            tx.send(Msg::Done(decision)).unwrap();
        });
    }
    drop(tx);
    let (mut rng, mut answered, mut live) = (seed | 1, 0, 2);
    let (mut pending, mut decisions) = (Vec::<(Request, Sender<Answer>)>::new(), Vec::new());
    while live > 0 {
        while pending.len() < live {
            match rx.recv().unwrap() {
                Msg::Send(request, reply) => pending.push((request, reply)),
                Msg::Done(decision) => {
                    decisions.push(decision);
                    live -= 1;
                }
            }
        }
        if pending.is_empty() {
            break;
        }
        clock.set(UNIX_EPOCH + Duration::from_millis(ms.load(Ordering::SeqCst)));
        if answered == release_after {
            guard::complete(&mut holder, &held, &Outcome::Success).unwrap();
        }
        let (request, reply) = pending.remove((xorshift(&mut rng) % pending.len() as u64) as usize);
        reply.send(service.send(request, Timeouts::default())).unwrap();
        answered += 1;
    }
    decisions
}

#[test]
fn two_waiters_and_one_release_grant_exactly_one() {
    for seed in 1..=40 {
        let decisions = two_waiters_one_release(seed, (seed % 6) as usize);
        let runs = decisions.iter().filter(|d| matches!(d, Decision::Run(_))).count();
        assert_eq!(runs, 1, "seed {seed}: {decisions:?}");
        let gave_up = decisions.iter().find_map(|d| match d {
            Decision::Skip(SkipReason::HeldByOther { waited_ms, .. }) => Some(*waited_ms),
            _ => None,
        });
        // The other waited out its 10 s (on a clock both waiters' sleeps move).
        assert!(gave_up.is_some_and(|ms| ms >= 5_000), "seed {seed}: {decisions:?}");
    }
}

#[test]
fn a_waiter_gives_up_at_its_limit_with_backoff() {
    let world = World::new();
    let _held =
        guard::guarded_invoke(&mut world.client(), &lock(), &waiting("alpha", Duration::ZERO));
    let started = world.clock.get();
    let mut client = world.client();
    let decision =
        guard::guarded_invoke(&mut client, &lock(), &waiting("bravo", Duration::from_secs(5)));
    let spent = world.clock.get().duration_since(started).unwrap();
    match decision {
        Decision::Skip(SkipReason::HeldByOther { holder, waited_ms, .. }) => {
            assert_eq!(holder.as_deref(), Some("alpha"));
            assert_eq!(waited_ms, spent.as_millis() as u64);
        }
        other => panic!("expected held-by-other, got {other:?}"),
    }
    assert!(spent <= Duration::from_secs(5), "waited {spent:?}, past the 5 s limit");
    assert!(spent >= Duration::from_millis(4_500), "gave up early, after {spent:?}");
    // Backoff (100 ms doubling to 2 s, jittered): a handful of looks, not one every 100 ms.
    let looks = client.round_trips();
    assert!((4..=12).contains(&looks), "{looks} looks in 5 s");
}

#[test]
fn a_waiter_is_granted_at_its_first_look_after_the_release() {
    let world = World::new();
    let held = match guard::guarded_invoke(
        &mut world.client(),
        &lock(),
        &waiting("alpha", Duration::ZERO),
    ) {
        Decision::Run(ticket) => ticket,
        other => panic!("{other:?}"),
    };
    let mut releaser = Some(world.client());
    let mut looks = 0;
    // The holder completes just before the waiter's third look.
    let hooked = Hooked::new(world.service.clone()).before(move |_, request, _| {
        if step(request) == "look" {
            looks += 1;
            if looks == 3 {
                guard::complete(&mut releaser.take()?, &held, &Outcome::Success).unwrap();
            }
        }
        None
    });
    let mut client = world.client_over(hooked);
    let decision =
        guard::guarded_invoke(&mut client, &lock(), &waiting("bravo", Duration::from_secs(30)));
    assert!(matches!(&decision, Decision::Run(t) if t.fencing_token == 2), "{decision:?}");
    let steps: Vec<&str> = client.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(steps, ["look", "look", "look", "acquire", "comp=metadata"]);
}

/// A follower that does not wait reports no waiting, however long its own look took (here two
/// seconds of virtual time spent on a lost answer and the retry): `waited-ms` is the time spent
/// waiting for the holder, not the call's.
#[test]
fn a_follower_that_does_not_wait_reports_no_waiting_after_a_slow_look() {
    let world = World::new();
    let _held =
        guard::guarded_invoke(&mut world.client(), &lock(), &waiting("alpha", Duration::ZERO));
    let (clock, mut first) = (world.clock.clone(), true);
    let hooked = Hooked::new(world.service.clone()).before(move |_, _, _| {
        clock.set(clock.get() + Duration::from_secs(2));
        std::mem::take(&mut first).then(crate::support::hooked::lost)
    });
    let started = world.clock.get();
    let mut client = world.client_over(hooked);
    let decision = guard::guarded_invoke(&mut client, &lock(), &waiting("bravo", Duration::ZERO));
    assert!(world.clock.get().duration_since(started).unwrap() >= Duration::from_secs(2));
    match decision {
        Decision::Skip(SkipReason::HeldByOther { holder, waited_ms, .. }) => {
            assert_eq!((holder.as_deref(), waited_ms), (Some("alpha"), 0));
        }
        other => panic!("expected held-by-other, got {other:?}"),
    }
}

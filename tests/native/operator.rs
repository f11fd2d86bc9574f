//! The operator's verbs and overlap policies on virtual time, over the fake service: a pause
//! between a follower's look and its acquire, a pause written under a running run's lease and
//! kept by its `complete`, run-now (twice makes one run, paused stays paused, never overlapping),
//! racing calls, a run held by an older build, and `replace` against a run that keeps renewing.

use crate::support::fake_world::FakeWorld as World;
use crate::support::hooked::{step, Hooked};
use crate::support::EMULATOR;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{
    self, Decision, FencedError, GuardOptions, OfGrant, Outcome, Overlap, RunRecord, SkipReason,
    Ticket,
};
use traffic_cop::ops::{Acquire, LeaseDuration, LeaseId};
use traffic_cop::schedule::{Every, Schedule};
use traffic_cop::{Error, Lock, StdRuntime};

fn lock() -> Lock {
    Lock::parse(EMULATOR, "operator", "nightly").unwrap()
}

/// Every minute, on the minute.
fn minutely(holder: &str) -> GuardOptions {
    let schedule = Schedule::Every(Every::new(60, 0).unwrap());
    GuardOptions::scheduled(holder, 15, None, schedule).unwrap()
}

/// Moves to `seconds` past minute `k` (minutes since the epoch).
fn at_minute(world: &World, k: u64, seconds: u64) {
    world.clock.set(UNIX_EPOCH + Duration::from_secs(k * 60 + seconds));
}

const K: u64 = 29_000_000;

fn record(world: &World) -> RunRecord {
    RunRecord::from_metadata(&world.client().inspect(&lock()).unwrap().metadata)
}

fn invoke(world: &World, holder: &str) -> Decision {
    guard::guarded_invoke(&mut world.client(), &lock(), &minutely(holder))
}

fn run(decision: Decision) -> Ticket {
    match decision {
        Decision::Run(ticket) => ticket,
        other => panic!("expected a run, got {other:?}"),
    }
}

fn is_paused(decision: &Decision) -> bool {
    matches!(decision, Decision::Skip(SkipReason::Paused(_)))
}

/// One tick of three replicas at `seconds` past minute `k`; the winner completes. The runs.
fn tick(world: &World, k: u64, seconds: u64) -> Vec<Ticket> {
    let mut runs = Vec::new();
    for holder in ["r0", "r1", "r2"] {
        at_minute(world, k, seconds);
        if let Decision::Run(ticket) = invoke(world, holder) {
            guard::complete(&mut world.client(), &ticket, &Outcome::Success).unwrap();
            runs.push(ticket);
        }
    }
    runs
}

#[test]
fn a_pause_between_a_followers_look_and_its_acquire_stops_that_run() {
    let world = World::new();
    assert_eq!(tick(&world, K - 1, 1).len(), 1);
    at_minute(&world, K, 1);
    let mut operator = Some(world.client());
    // The pause lands after the follower's look, before its acquire.
    let hooked = Hooked::new(world.service.clone()).before(move |_, request, _| {
        if step(request) == "acquire" {
            guard::pause(&mut operator.take()?, &lock(), "ops", "deploy", Duration::ZERO).unwrap();
        }
        None
    });
    let mut client = world.client_over(hooked);
    let decision = guard::guarded_invoke(&mut client, &lock(), &minutely("r0"));
    assert!(is_paused(&decision), "{decision:?}");
    let steps: Vec<&str> = client.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    // The acquire, conditional on the look, fails; the next look sees the pause.
    assert_eq!(steps, ["look", "acquire", "look"]);
    assert!(!world.client().inspect(&lock()).unwrap().locked, "nothing held");
}

#[test]
fn a_pause_during_a_run_is_written_under_its_lease_and_kept_when_it_completes() {
    let world = World::new();
    at_minute(&world, K, 1);
    let alpha = run(invoke(&world, "alpha"));
    let answer = guard::pause(&mut world.client(), &lock(), "ops", "deploy", Duration::ZERO)
        .expect("written while the run holds the lease");
    let running = answer.running.expect("the run in progress is reported");
    assert_eq!(running.fencing_token, alpha.fencing_token);
    assert_eq!(answer.paused.as_ref().map(|p| p.by.as_str()), Some("ops"));
    // A follower sees the pause at once, in its one look.
    let mut follower = world.client();
    let decision = guard::guarded_invoke(&mut follower, &lock(), &minutely("bravo"));
    assert!(is_paused(&decision), "{decision:?}");
    assert_eq!(follower.round_trips(), 1);
    // The run is not disturbed: it renews, then completes on top of the pause.
    at_minute(&world, K, 6);
    guard::keep_alive(&mut world.client(), &alpha).unwrap();
    let mut completing = world.client();
    guard::complete(&mut completing, &alpha, &Outcome::Success).unwrap();
    assert_eq!(completing.round_trips(), 4, "write (412), look under the lease, write, release");
    let stored = record(&world);
    assert_eq!((stored.running, stored.outcome), (false, Some(Outcome::Success)));
    assert_eq!(stored.paused.as_ref().map(|p| p.reason.as_str()), Some("deploy"));
    // Three due times pass: no replica runs.
    for k in K + 1..=K + 3 {
        assert!(tick(&world, k, 1).is_empty(), "a paused job ran at minute {k}");
    }
    // Resumed: the next tick runs once, for the latest due time, and counts the rest as missed.
    at_minute(&world, K + 3, 30);
    let resumed = guard::resume(&mut world.client(), &lock(), "ops").unwrap();
    assert_eq!((resumed.paused, resumed.running), (None, None));
    let runs = tick(&world, K + 3, 40);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].past_due.due_at_ms, (K + 3) * 60_000);
    assert_eq!(runs[0].past_due.missed, 2);
    assert_eq!(tick(&world, K + 4, 1).len(), 1, "back on schedule");
}

#[test]
fn run_now_twice_before_a_tick_makes_one_manual_run_and_keeps_the_schedule() {
    let world = World::new();
    assert_eq!(tick(&world, K, 1).len(), 1);
    at_minute(&world, K, 10);
    guard::run_now(&mut world.client(), &lock(), "ana").unwrap();
    let second = guard::run_now(&mut world.client(), &lock(), "bob").unwrap();
    assert_eq!(second.run_now.map(|r| r.by).as_deref(), Some("bob"));
    let runs = tick(&world, K, 20);
    assert_eq!(runs.len(), 1, "one manual run for two calls: {runs:?}");
    assert_eq!(runs[0].manual_by.as_deref(), Some("bob"));
    assert_eq!(record(&world).manual_by(), Some("bob"), "the record says who asked");
    assert!(tick(&world, K, 30).is_empty(), "the due time already ran");
    let next = tick(&world, K + 1, 1);
    assert_eq!((next.len(), next[0].manual_by.clone()), (1, None));
    assert_eq!(next[0].past_due.missed, 0, "a manual run is not a missed due time");
}

#[test]
fn run_now_on_a_paused_job_waits_for_resume() {
    let world = World::new();
    assert_eq!(tick(&world, K, 1).len(), 1);
    let mut ops = world.client();
    guard::pause(&mut ops, &lock(), "ops", "", Duration::ZERO).unwrap();
    guard::run_now(&mut ops, &lock(), "ana").unwrap();
    assert!(tick(&world, K, 20).is_empty(), "a paused job stays paused");
    guard::resume(&mut world.client(), &lock(), "ops").unwrap();
    let runs = tick(&world, K, 30);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].manual_by.as_deref(), Some("ana"));
}

#[test]
fn run_now_during_a_run_does_not_overlap_it() {
    let world = World::new();
    at_minute(&world, K, 1);
    let alpha = run(invoke(&world, "alpha"));
    guard::run_now(&mut world.client(), &lock(), "ana").unwrap();
    at_minute(&world, K, 5);
    let held = invoke(&world, "bravo");
    assert!(matches!(held, Decision::Skip(SkipReason::HeldByOther { .. })), "{held:?}");
    guard::complete(&mut world.client(), &alpha, &Outcome::Success).unwrap();
    let manual = run(invoke(&world, "bravo"));
    assert_eq!(manual.manual_by.as_deref(), Some("ana"));
    assert_eq!(manual.fencing_token, alpha.fencing_token + 1);
}

#[test]
fn racing_calls_end_as_if_made_one_after_the_other() {
    let world = World::new();
    assert_eq!(tick(&world, K, 1).len(), 1);
    let mut resumer = Some(world.client());
    // A resume lands between the pause's look and its write: the write's condition fails, and
    // the pause, looked at again, is written after it.
    let hooked = Hooked::new(world.service.clone()).before(move |_, request, _| {
        if step(request) == "comp=metadata" {
            let answer = guard::resume(&mut resumer.take()?, &lock(), "other").unwrap();
            assert_eq!(answer.paused, None);
        }
        None
    });
    let mut pauser = world.client_over(hooked);
    let answer = guard::pause(&mut pauser, &lock(), "ops", "", Duration::ZERO).unwrap();
    let steps: Vec<&str> = pauser.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(steps, ["look", "comp=metadata", "look", "comp=metadata"]);
    assert_eq!(record(&world).paused, answer.paused, "the last call's answer is the record");
}

#[test]
fn a_call_waits_out_a_run_of_an_older_build_and_says_when_it_cannot() {
    let world = World::new();
    at_minute(&world, K, 1);
    // A run of a build before guard@0.3.0: a lease, and no lease id in the record.
    let alpha = run(invoke(&world, "alpha"));
    let mut metadata = world.client().inspect(&lock()).unwrap().metadata;
    metadata.retain(|(key, _)| key != "tc_lease");
    let write = traffic_cop::ops::SetMetadata::new(metadata, Some(alpha.lease_id.clone()), None);
    world.client().execute(&lock(), &write.unwrap()).unwrap();
    // Its lease expires after 15 s; the call, looking every 250 ms, then writes.
    let answer = guard::pause(&mut world.client(), &lock(), "ops", "", Duration::ZERO).unwrap();
    assert!(answer.paused.is_some());
    assert!(record(&world).paused.is_some());
    // Held all along (an infinite lease), the call gives up after its 30 s, with nothing written.
    let other = Lock::parse(EMULATOR, "operator", "forever").unwrap();
    let id = LeaseId::random(&StdRuntime);
    let mut client = world.client();
    client.inspect(&other).ok();
    let created = guard::guarded_invoke(&mut client, &other, &minutely("setup"));
    guard::complete(&mut world.client(), &run(created), &Outcome::Success).unwrap();
    let forever = Acquire::new(LeaseDuration::Infinite, id).unwrap();
    world.client().execute(&other, &forever).unwrap();
    match guard::resume(&mut world.client(), &other, "ops") {
        Err(Error::Contended(c)) => assert!(c.message.contains("raw lease verbs"), "{}", c.message),
        other => panic!("expected contention, got {other:?}"),
    }
}

#[test]
fn replace_breaks_a_stuck_run_that_keeps_renewing_and_spares_a_healthy_one() {
    let world = World::new();
    let replacing = |holder: &str, after_seconds: u32| {
        minutely(holder).overlapping(Overlap::Replace { after_seconds }).unwrap()
    };
    at_minute(&world, K, 1);
    let stuck = run(guard::guarded_invoke(&mut world.client(), &lock(), &replacing("alpha", 90)));
    // It renews every 5 s, for ever.
    let renew_until = |world: &World, k: u64, seconds: u64| {
        let mut at = world.clock.get();
        let end = UNIX_EPOCH + Duration::from_secs(k * 60 + seconds);
        while at < end {
            at += Duration::from_secs(5);
            world.clock.set(at);
            guard::keep_alive(&mut world.client(), &stuck).unwrap();
        }
    };
    // At the next due time it has held 59 s, under the 90 s limit: a healthy long run is spared.
    renew_until(&world, K + 1, 0);
    let spared = guard::guarded_invoke(&mut world.client(), &lock(), &replacing("bravo", 90));
    assert!(matches!(spared, Decision::Skip(SkipReason::HeldByOther { .. })), "{spared:?}");
    // At the one after, 119 s: replaced.
    renew_until(&world, K + 2, 0);
    let new = run(guard::guarded_invoke(&mut world.client(), &lock(), &replacing("bravo", 90)));
    assert_eq!(new.replaced, Some(stuck.fencing_token));
    assert_eq!(new.fencing_token, stuck.fencing_token + 1);
    assert!(new.previous_abandoned);
    // The replaced run learns it at its next keep-alive, and its fenced writes are refused.
    match guard::keep_alive(&mut world.client(), &stuck) {
        Err(Error::LeaseLost(_)) => {}
        other => panic!("the replaced run's keep-alive answered {other:?}"),
    }
    match guard::write_fenced(&mut world.client(), &stuck, "out.json", b"late") {
        Err(FencedError::Stale { presented, stored }) => {
            assert_eq!((presented, stored), (stuck.fencing_token, new.fencing_token))
        }
        other => panic!("the replaced run's fenced write answered {other:?}"),
    }
    let replaced = OfGrant { fence: new.fencing_token, value: stuck.fencing_token };
    assert_eq!(record(&world).replaced, Some(replaced));
}

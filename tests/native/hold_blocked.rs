//! Blocked runs and the lease's timeline, on the same virtual time as `hold`: an instance that
//! did not run when a renewal was due is stopped or closed as a blocked failure, counted on the
//! lock, and every stop says when the lease was last renewed, when it could expire and when the
//! job was told to stop.

use super::*;

/// `2025-01-01T00:00:SS.000Z`: the virtual epoch plus `seconds`, as the timeline writes it.
fn at(seconds: u64) -> String {
    format!("2025-01-01T00:{:02}:{:02}.000Z", seconds / 60, seconds % 60)
}

/// The lock's record, read straight from the fake service.
fn record(run: &Run) -> traffic_cop::guard::RunRecord {
    let status = client(&run.service, &run.clock, 8).inspect(&run.lock).unwrap();
    traffic_cop::guard::RunRecord::from_metadata(&status.metadata)
}

#[test]
fn an_instance_that_did_not_run_past_the_stop_line_is_stopped_as_blocked_with_its_timeline() {
    let run = granted();
    let clock = run.clock.clone();
    let blocked = Rc::new(Cell::new(false));
    let blocked_in_hook = blocked.clone();
    // The first renewal is due at 5 s; the job holds the instance from then until 40 s.
    let (mut link, sent) = run.link(Hooked::new(run.service.clone()), move |at| {
        if at >= 5.0 && !blocked_in_hook.replace(true) {
            clock.set(clock.get() + Duration::from_secs(35));
        }
    });
    let answer = run.hold(&mut link);
    let Err(Error::LeaseLost(LeaseLoss::RanOut(ran_out))) = &answer else {
        panic!("a blocked instance ends hold with lease-ran-out: {answer:?}");
    };
    assert_eq!(ran_out.when, RanOutWhen::Blocked);
    assert_eq!(
        ran_out.message,
        format!(
            "renewals blocked: this instance did not run from {} (a renewal was due) to {} \
             (35 s): a blocking call in the job, or a host that froze it, kept it from renewing; \
             the lease (15 s) was granted by a request sent at {}, so it could expire at {}; the \
             job was told to stop at {}, 25 s after it could expire; treat the lease as lost \
             (another replica may have run the job meanwhile)",
            at(5),
            at(40),
            at(0),
            at(15),
            at(40)
        )
    );
    assert!(renewals(&sent).is_empty(), "nothing sent once the stop line had passed");
}

#[test]
fn renewals_that_keep_failing_say_the_leases_timeline_before_it_could_expire() {
    let run = granted();
    let clock = run.clock.clone();
    let granted_at = run.clock.get();
    let transport = Hooked::new(run.service.clone()).before(move |_, request, _| {
        let seconds = clock.get().duration_since(granted_at).unwrap().as_secs_f64();
        (step(request) == "renew" && seconds >= 12.0)
            .then(|| Ok(http::Response::builder().status(503).body(b"busy".to_vec()).unwrap()))
    });
    let (mut link, _) = run.link(transport, |_| {});
    let Err(Error::LeaseLost(LeaseLoss::RanOut(ran_out))) = run.hold(&mut link) else {
        panic!("renewals failing past the margin end hold with lease-ran-out");
    };
    let stopped = run.seconds(granted_at) as u64;
    let expected = format!(
        "the lease (15 s) was last renewed by a request sent at {}, so it could expire at {}; \
         the job was told to stop at {}, {} s before it could expire",
        at(10),
        at(25),
        at(stopped),
        25 - stopped
    );
    assert!(ran_out.message.contains(&expected), "{}\nwanted: {expected}", ran_out.message);
}

/// `hold` polled until it waits for its first renewal (due at 5 s; the link's sleep moves the
/// clock there at once), then given up, as the wrapper's `select` drops it when the work ends
/// first.
fn hold_waiting(run: &Run) {
    let (mut link, _) = run.link(Hooked::new(run.service.clone()), |_| {});
    link.stall = true;
    let mut hold_client = client(&run.service, &run.clock, 4);
    let mut hold = pin!(guard::hold(&mut hold_client, &mut link, &run.ticket, &run.held));
    assert!(hold.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
}

#[test]
fn a_job_that_ends_after_a_block_is_closed_as_a_blocked_failure_whatever_it_said() {
    let run = granted();
    hold_waiting(&run);
    // The job held the instance from 5 s (hold's sleep had moved the clock there) to 12 s,
    // past the stop line (10 s), and then said it succeeded; the lease (to 15 s) is still the
    // run's.
    run.clock.set(run.clock.get() + Duration::from_secs(7));
    let mut closer = client(&run.service, &run.clock, 6);
    let success = traffic_cop::guard::Outcome::Success;
    let answer = guard::complete_held(&mut closer, &run.ticket, &run.held, &success);
    let Err(Error::LeaseLost(LeaseLoss::RanOut(ran_out))) = &answer else {
        panic!("the caller is told the run failed: {answer:?}");
    };
    assert_eq!(ran_out.when, RanOutWhen::Blocked);
    assert!(ran_out.message.contains(&format!("did not run from {} ", at(5))), "{ran_out:?}");
    let record = record(&run);
    assert!(!record.running);
    let outcome = record.outcome.unwrap().as_record_text();
    assert!(
        outcome.starts_with("failure: renewals blocked: this instance did not run"),
        "{outcome}"
    );
    assert_eq!((record.totals.blocked, record.totals.failures, record.totals.successes), (1, 1, 0));
}

#[test]
fn a_blocked_run_whose_lease_was_taken_is_counted_and_its_abandoned_entry_says_why() {
    let run = granted();
    hold_waiting(&run);
    // Blocked until 45 s; at 25 s another replica found the lease expired and ran the job.
    run.clock.set(run.clock.get() + Duration::from_secs(20));
    let other = GuardOptions::every_interval("replica-b", 15, 0, None).unwrap();
    let mut other_client = client(&run.service, &run.clock, 9);
    let Decision::Run(next) = guard::guarded_invoke(&mut other_client, &run.lock, &other) else {
        panic!("the lease expired: another replica runs");
    };
    guard::complete(&mut other_client, &next, &traffic_cop::guard::Outcome::Success).unwrap();
    run.clock.set(run.clock.get() + Duration::from_secs(20));
    let mut closer = client(&run.service, &run.clock, 6);
    let success = traffic_cop::guard::Outcome::Success;
    let answer = guard::complete_held(&mut closer, &run.ticket, &run.held, &success);
    assert!(matches!(answer, Err(Error::LeaseLost(LeaseLoss::RanOut(_)))), "{answer:?}");
    let record = record(&run);
    assert_eq!(record.fence, next.fencing_token, "the later run's record stands");
    assert_eq!(record.totals.blocked, 1);
    assert_eq!((record.totals.abandoned, record.totals.failures), (0, 1), "{:?}", record.totals);
    let ours = record.history.iter().find(|r| r.fence == run.ticket.fencing_token).unwrap();
    assert!(
        matches!(&ours.outcome, traffic_cop::guard::PastOutcome::Failure(why) if why.starts_with("renewals blocked")),
        "{ours:?}"
    );
}

#[test]
fn a_job_that_awaits_is_not_blocked() {
    let run = granted();
    hold_waiting(&run);
    // The work ends at 9 s, before the stop line (10 s): no renewal could have been missed.
    run.clock.set(run.clock.get() + Duration::from_secs(4));
    let mut closer = client(&run.service, &run.clock, 6);
    let success = traffic_cop::guard::Outcome::Success;
    assert_eq!(guard::complete_held(&mut closer, &run.ticket, &run.held, &success), Ok(()));
    assert_eq!(record(&run).totals.blocked, 0);
}

use super::*;
use crate::schedule::Schedule;

fn daily_at_two() -> GuardOptions {
    GuardOptions::every_interval("me", 15, 86_400, None)
        .unwrap()
        .with_phase_and_deadline(7_200, None)
        .unwrap()
}

const DAY: u64 = 86_400;

#[test]
fn after_downtime_one_run_catches_up_and_counts_the_missed_due_times() {
    // Last ran on day 100 at 02:00:03; nobody ran on days 101-103; a tick on day 104 at 02:00:01.
    let record = ran_at(100 * DAY + 7_203, false);
    let verdict =
        decide(&record, LeaseState::Available, at(104 * DAY + 7_201), None, &daily_at_two());
    let Verdict::Contend(Contend { past_due, .. }) = verdict else { panic!("{verdict:?}") };
    assert_eq!(past_due.missed, 3);
    assert_eq!(past_due.due_at_ms, (104 * DAY + 7_200) * 1000);
    assert_eq!(past_due.late_by_ms, 1_000);
    assert_eq!(past_due.previous_start_ms, Some((100 * DAY + 7_203) * 1000));
    // On schedule the next day: nothing missed.
    let verdict =
        decide(&record, LeaseState::Available, at(101 * DAY + 7_200), None, &daily_at_two());
    assert!(matches!(
        verdict,
        Verdict::Contend(Contend { past_due: PastDue { missed: 0, .. }, .. })
    ));
}

#[test]
fn the_phase_moves_the_boundary_and_tolerates_a_replica_ahead_of_it() {
    // Due at 02:00 daily. A replica five seconds ahead fires at 01:59:55 by the service's clock:
    // that is today's run, and an on-time replica at 02:00:00.2 then skips.
    let yesterday = ran_at(99 * DAY + 7_200, false);
    let early =
        decide(&yesterday, LeaseState::Available, at(100 * DAY + 7_195), None, &daily_at_two());
    assert!(matches!(
        early,
        Verdict::Contend(Contend { past_due: PastDue { missed: 0, late_by_ms: 0, .. }, .. })
    ));
    let today = ran_at(100 * DAY + 7_195, false);
    let on_time =
        decide(&today, LeaseState::Available, at(100 * DAY + 7_200), None, &daily_at_two());
    assert!(matches!(on_time, Verdict::Skip(SkipReason::AlreadyRan { .. })), "{on_time:?}");
    // Midnight is no boundary for this job: a run at 01:00 still counts for yesterday's 02:00.
    let late_yesterday =
        decide(&yesterday, LeaseState::Available, at(100 * DAY + 3_600), None, &daily_at_two());
    assert!(matches!(late_yesterday, Verdict::Skip(SkipReason::AlreadyRan { .. })));
}

#[test]
fn a_starting_deadline_skips_a_late_tick_with_its_own_reason() {
    let options = GuardOptions::every_interval("me", 15, 3_600, None)
        .unwrap()
        .with_phase_and_deadline(900, Some(120))
        .unwrap();
    let record = ran_at(10 * 3_600 + 900, false);
    // Due at 12:15 (index 12); a tick at 12:17:01 is 121 s late.
    let verdict =
        decide(&record, LeaseState::Available, at(12 * 3_600 + 900 + 121), None, &options);
    assert_eq!(
        verdict,
        Verdict::Skip(SkipReason::TooLate {
            due_at_ms: (12 * 3_600 + 900) * 1000,
            late_by_ms: 121_000,
            next_due_ms: (13 * 3_600 + 900) * 1000,
        })
    );
    // Within the deadline it runs, and says it caught up one missed due time.
    let verdict =
        decide(&record, LeaseState::Available, at(12 * 3_600 + 900 + 119), None, &options);
    assert!(matches!(
        verdict,
        Verdict::Contend(Contend { past_due: PastDue { missed: 1, late_by_ms: 119_000, .. }, .. })
    ));
}

#[test]
fn schedule_options_are_validated() {
    let base = || GuardOptions::every_interval("me", 15, 3_600, None).unwrap();
    // "field: message": every refusal names its field first.
    let message = |r: Result<GuardOptions, crate::Error>| match r {
        Err(crate::Error::BadOption(e)) => e.to_string(),
        other => panic!("expected BadOption, got {other:?}"),
    };
    assert!(message(base().with_phase_and_deadline(3_600, None))
        .starts_with("offset-seconds: must be below"));
    assert!(message(base().with_phase_and_deadline(0, Some(0)))
        .starts_with("starting-deadline-seconds: must satisfy 1 <= starting-deadline-seconds"));
    assert!(message(base().with_phase_and_deadline(0, Some(3_601))).contains("<= interval-seconds"));
    let unscheduled = GuardOptions::every_interval("me", 15, 0, None).unwrap();
    assert!(message(unscheduled.clone().with_phase_and_deadline(5, None)).contains("offset"));
    assert!(message(unscheduled.with_phase_and_deadline(0, Some(5))).contains("starting-deadline"));
    let phased = base().with_phase_and_deadline(900, Some(60)).unwrap();
    assert_eq!(phased.schedule.after(900_000), Some(4_500_000));
}

#[test]
fn the_record_carries_its_schedule_and_due_time() {
    let options = GuardOptions::every_interval("me", 15, 3_600, None)
        .unwrap()
        .with_phase_and_deadline(900, None)
        .unwrap();
    let record = ran_at(10 * 3_600 + 900, false).scheduled_for(
        &options.schedule,
        (10 * 3_600 + 900) * 1000,
        0,
    );
    let record = RunRecord::from_metadata(&record.to_metadata());
    assert_eq!(
        record.every,
        Some(crate::guard::Grid { interval_seconds: 3_600, offset_seconds: 900 })
    );
    assert_eq!(record.recorded_schedule(), Some(options.schedule.clone()));
    assert_eq!(record.last_due_ms(&options.schedule, 0), Some((10 * 3_600 + 900) * 1000));
}

#[test]
fn a_paused_job_skips_even_when_a_manual_run_was_asked_for() {
    let paused = crate::guard::Paused { by: "ops".into(), since_ms: 1, reason: "deploy".into() };
    let asked = crate::guard::RunNow { by: "ops".into(), at_ms: 2 };
    let record =
        RunRecord { paused: Some(paused.clone()), run_now: Some(asked), ..ran_at(60, false) };
    assert_eq!(
        decide(&record, LeaseState::Available, at(200), None, &options(60)),
        Verdict::Skip(SkipReason::Paused(paused))
    );
}

#[test]
fn a_manual_run_is_granted_within_a_due_time_that_already_ran() {
    let asked = crate::guard::RunNow { by: "ops".into(), at_ms: 70_000 };
    let record = RunRecord { run_now: Some(asked), ..ran_at(60, false) };
    match decide(&record, LeaseState::Available, at(80), None, &options(60)) {
        Verdict::Contend(Contend { manual_by, .. }) => {
            assert_eq!(manual_by.as_deref(), Some("ops"))
        }
        other => panic!("{other:?}"),
    }
}

/// A schedule whose period is shorter than the early tolerance: a tick counts for the due time
/// just come, not for one seconds ahead (which passed over the one just come and ran early).
#[test]
fn a_tolerance_longer_than_a_short_period_never_reaches_past_the_next_due_time() {
    use crate::schedule::{cron::Dialect, ZonedCron};
    let every_2s = ZonedCron::new("*/2 * * * * *", None, Dialect::Spin).unwrap();
    let options = GuardOptions::scheduled("me", 15, None, Schedule::Cron(every_2s)).unwrap();
    assert_eq!(options.early_ms, 5_000);
    let tick = |ms: u64| match decide(
        &RunRecord::default(),
        LeaseState::Available,
        SystemTime::UNIX_EPOCH + Duration::from_millis(ms),
        None,
        &options,
    ) {
        Verdict::Contend(contend) => contend.past_due.due_at_ms,
        skip => panic!("expected a run at {ms}, got {skip:?}"),
    };
    // 200 ms after a due time: that due time. 400 ms before one (within a quarter of the
    // 2 s gap): the coming one, early. 600 ms before: the one just come.
    assert_eq!(tick(1_000_200), 1_000_000);
    assert_eq!(tick(1_001_600), 1_002_000);
    assert_eq!(tick(1_001_400), 1_000_000);
    // The record of a run started early is read as that due time, so the next tick skips.
    let record = RunRecord::default().granted(1, 1_001_600, "me", &lease());
    assert_eq!(record.last_due_ms(&options.schedule, options.early_ms), Some(1_002_000));
}

use super::*;
use crate::guard::{Outcome, PastDue};
use std::time::Duration;

// Schedules, catch-up, the starting deadline, pause and manual runs.
#[path = "decide_schedule_tests.rs"]
mod schedules;

fn lease() -> crate::ops::LeaseId {
    crate::ops::LeaseId::parse("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap()
}

fn at(seconds: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
}

fn options(interval_seconds: u64) -> GuardOptions {
    GuardOptions::every_interval("me", 15, interval_seconds, None).unwrap()
}

/// The fence and abandoned flag of a verdict to contend (panics on a skip).
fn contend(verdict: Verdict) -> (u64, bool) {
    match verdict {
        Verdict::Contend(Contend { fence, previous_abandoned, .. }) => (fence, previous_abandoned),
        skip => panic!("expected to contend, got {skip:?}"),
    }
}

fn ran_at(seconds: u64, running: bool) -> RunRecord {
    let record = RunRecord::default().granted(4, seconds * 1000, "them", &lease());
    if running {
        record
    } else {
        record.completed(seconds * 1000 + 500, &Outcome::Success)
    }
}

#[test]
fn a_held_lease_is_skipped_with_the_running_holder_named() {
    for state in [LeaseState::Leased, LeaseState::Breaking] {
        let verdict = decide(&ran_at(100, true), state, at(130), None, &options(60));
        assert_eq!(
            verdict,
            Verdict::Skip(SkipReason::HeldByOther {
                holder: Some("them".into()),
                since_ms: Some(100_000),
                waited_ms: 0,
                due_at_ms: Some(120_000),
            })
        );
    }
    // Held, but the record is of a finished run: the current holder is not known.
    let verdict = decide(&ran_at(100, false), LeaseState::Leased, at(200), None, &options(60));
    assert_eq!(
        verdict,
        Verdict::Skip(SkipReason::HeldByOther {
            holder: None,
            since_ms: None,
            waited_ms: 0,
            due_at_ms: Some(180_000)
        })
    );
}

#[test]
fn a_run_for_the_same_due_time_is_not_repeated_and_the_next_due_time_runs() {
    // Due at 120; with a 15 s tolerance, arrivals in [105, 165) count for it.
    let record = ran_at(120, false);
    assert!(matches!(
        decide(&record, LeaseState::Available, at(164), None, &options(60)),
        Verdict::Skip(SkipReason::AlreadyRan { started_ms: 120_000, .. })
    ));
    assert_eq!(
        contend(decide(&record, LeaseState::Available, at(165), None, &options(60))),
        (5, false)
    );
}

#[test]
fn a_replica_whose_clock_runs_ahead_counts_for_the_coming_tick_not_the_last_one() {
    // Nobody ran at 120 (a missed tick). A replica 2 s ahead fires for the 180 tick at 178 by
    // the service's clock: it must run for 180, so that an on-time replica at 180.1 skips.
    let record = ran_at(60, false);
    assert_eq!(
        contend(decide(&record, LeaseState::Available, at(178), None, &options(60))),
        (5, false)
    );
    let ahead_ran = ran_at(178, false);
    assert!(matches!(
        decide(&ahead_ran, LeaseState::Available, at(180), None, &options(60)),
        Verdict::Skip(SkipReason::AlreadyRan { started_ms: 178_000, .. })
    ));
}

#[test]
fn interval_zero_turns_deduplication_off() {
    assert_eq!(
        contend(decide(&ran_at(100, false), LeaseState::Available, at(100), None, &options(0))),
        (5, false)
    );
}

#[test]
fn an_expired_or_broken_lease_with_a_running_record_was_abandoned() {
    for state in [LeaseState::Expired, LeaseState::Broken, LeaseState::Available] {
        let verdict = decide(&ran_at(100, true), state, at(200), None, &options(60));
        assert_eq!(contend(verdict), (5, true), "{state:?}");
    }
    // ... but an abandoned run still counts for its own due time (60: arrivals in [45, 105)).
    assert!(matches!(
        decide(&ran_at(100, true), LeaseState::Expired, at(104), None, &options(60)),
        Verdict::Skip(SkipReason::AlreadyRan { running: true, .. })
    ));
}

#[test]
fn a_start_recorded_for_a_later_due_time_does_not_block_until_then() {
    // Within the current due time's slot it is this tick's run ...
    assert!(matches!(
        decide(&ran_at(125, false), LeaseState::Available, at(121), None, &options(60)),
        Verdict::Skip(SkipReason::AlreadyRan { .. })
    ));
    // ... but a start hours ahead (a clock that stepped back, a hand edit) is not a run of now.
    assert_eq!(
        contend(decide(&ran_at(50_000, false), LeaseState::Available, at(100), None, &options(60))),
        (5, false)
    );
}

#[test]
fn a_fresh_lock_grants_token_one() {
    assert_eq!(
        contend(decide(&RunRecord::default(), LeaseState::Available, at(1), None, &options(60))),
        (1, false)
    );
}

#[test]
fn options_are_validated_with_the_failed_relation_named() {
    // "field: message": every refusal names its field first.
    let error = |r: Result<GuardOptions, crate::Error>| match r {
        Err(crate::Error::BadOption(e)) => e.to_string(),
        other => panic!("expected BadOption, got {other:?}"),
    };
    assert!(error(GuardOptions::every_interval("me", 20, 60, Some(11)))
        .starts_with("keep-alive-seconds: must satisfy"));
    assert!(error(GuardOptions::every_interval("me", 20, 60, Some(11)))
        .contains("keep-alive-seconds * 2 <= lease-seconds; got 11 and 20"));
    assert!(error(GuardOptions::every_interval("me", 20, 60, Some(0)))
        .starts_with("keep-alive-seconds: must satisfy 1 <= keep-alive-seconds"));
    assert!(error(GuardOptions::every_interval("me", 14, 60, None))
        .starts_with("lease-seconds: must be 15..=60"));
    assert!(error(GuardOptions::every_interval("me", 61, 60, None)).contains("15..=60"));
    assert!(error(GuardOptions::every_interval("", 15, 60, None)).starts_with("holder: "));
    assert!(error(GuardOptions::every_interval("a\nb", 15, 60, None)).starts_with("holder: "));
    assert!(
        error(GuardOptions::every_interval(&"x".repeat(65), 15, 60, None)).starts_with("holder: ")
    );
    assert!(matches!(
        GuardOptions::every_interval("me", 15, 400 * 86400, None),
        Err(crate::Error::BadOption(e)) if e.field == "interval-seconds"
    ));
    assert_eq!(GuardOptions::every_interval("me", 30, 60, None).unwrap().keep_alive_seconds, 10);
    assert_eq!(GuardOptions::every_interval("me", 15, 0, Some(7)).unwrap().keep_alive_seconds, 7);
}

use super::*;
use crate::guard::record_text::{fit, NAME_BYTES, TEXT_BYTES};
use crate::guard::{OfGrant, Outcome, Paused, RunNow, RunRecord};
use crate::ops::LeaseId;
use crate::schedule::{Every, Schedule};

fn lease() -> LeaseId {
    LeaseId::parse("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap()
}

fn every_minute() -> Schedule {
    Schedule::Every(Every::new(60, 0).unwrap())
}

/// A record after `n` scheduled runs, the `k`-th failing when `fails(k)`.
fn after_runs(n: u64, fails: impl Fn(u64) -> bool) -> RunRecord {
    (1..=n).fold(RunRecord::default(), |record, k| {
        let granted = record.granted(k, k * 60_000 + 500, "r", &lease());
        let granted = granted.scheduled_for(&every_minute(), k * 60_000, 0);
        let outcome =
            if fails(k) { Outcome::Failure("disk full".into()) } else { Outcome::Success };
        granted.completed(k * 60_000 + 1_500, &outcome)
    })
}

#[test]
fn runs_go_in_newest_first_and_the_history_keeps_sixteen() {
    let record = after_runs(40, |k| k % 10 == 0);
    assert_eq!(record.history.len(), HISTORY_LEN);
    assert_eq!(record.history[0].fence, 40);
    assert_eq!(record.history[0].outcome, PastOutcome::Failure("disk full".into()));
    assert_eq!(record.history[0].due_ms, Some(40 * 60_000));
    assert_eq!(record.history[0].late_by_ms(), Some(500));
    assert_eq!(record.consecutive_failures(), 1);
    assert_eq!((record.totals.successes, record.totals.failures), (36, 4));
    assert_eq!(record.totals.last_failure_ms, Some(40 * 60_000 + 1_500));
    assert_eq!(record.totals.last_success_ms, Some(39 * 60_000 + 1_500));
    assert_eq!(RunRecord::from_metadata(&record.to_metadata()), record);
}

#[test]
fn a_run_never_completed_is_abandoned_and_a_broken_one_replaced() {
    let ran = after_runs(1, |_| false);
    let crashed = ran.granted(2, 120_500, "c", &lease()).scheduled_for(&every_minute(), 120_000, 0);
    let next =
        crashed.granted(3, 180_500, "d", &lease()).scheduled_for(&every_minute(), 180_000, 0);
    assert_eq!(next.history[0].outcome, PastOutcome::Abandoned);
    assert_eq!((next.history[0].fence, next.history[0].stopped_ms), (2, None));
    assert_eq!(next.totals.abandoned, 1);
    assert_eq!(next.consecutive_failures(), 1);
    let replaced = crashed.granted(3, 180_500, "d", &lease()).replacing(2);
    assert_eq!(replaced.history[0].outcome, PastOutcome::Replaced);
    assert_eq!(replaced.replaced, Some(OfGrant { fence: 3, value: 2 }));
}

#[test]
fn missed_due_times_are_counted_with_their_run() {
    let caught_up = after_runs(1, |_| false)
        .granted(2, 600_200, "r", &lease())
        .scheduled_for(&every_minute(), 600_000, 8)
        .completed(601_000, &Outcome::Success);
    assert_eq!((caught_up.history[0].missed, caught_up.totals.missed), (8, 8));
    let manual = caught_up.granted(3, 610_000, "r", &lease()).manual_for("ana");
    let manual = manual.completed(611_000, &Outcome::Success);
    assert!(manual.history[0].manual);
    assert_eq!((manual.history[0].due_ms, manual.history[0].missed), (None, 0));
}

#[test]
fn the_history_never_takes_more_than_its_bytes_and_reads_back() {
    let huge = "ü\u{10FFFF}%,;:".repeat(80);
    let record = (1..=20).fold(RunRecord::default(), |record, k| {
        record
            .granted(k, k * 1000, &huge, &lease())
            .completed(k * 1000 + 1, &Outcome::Failure(huge.to_string()))
    });
    assert!(encode(&record.history).len() <= HISTORY_BYTES);
    assert!(!record.history.is_empty());
    assert_eq!(RunRecord::from_metadata(&record.to_metadata()), record);
    let run = &record.history[0];
    assert!(run.holder.as_ref().unwrap().chars().count() <= HOLDER_CHARS);
}

#[test]
fn the_whole_record_stays_well_under_azures_eight_kib_however_its_text_is_written() {
    let huge = "\u{10FFFF}".repeat(300);
    let name: String = huge.chars().take(64).collect();
    let record = (1..=20).fold(RunRecord::default(), |record, k| {
        let granted = record.granted(k, k * 1000, &name, &lease()).manual_for(&name);
        granted.completed(k * 1000 + 1, &Outcome::Failure(huge.to_string()))
    });
    let schedule = crate::schedule::ZonedCron::new(
        format!("0 0 9 * * {}", "MON,".repeat(45)).trim_end_matches(','),
        Some("America/Argentina/ComodRivadavia"),
        crate::schedule::cron::Dialect::Spin,
    );
    let schedule_text = schedule.map(|s| Schedule::Cron(s).recorded()).unwrap_or_default();
    let record = RunRecord {
        paused: Some(Paused { by: name.clone(), since_ms: u64::MAX, reason: huge.clone() }),
        run_now: Some(RunNow { by: name.clone(), at_ms: u64::MAX }),
        // The most schedules the record keeps, each as long as it is kept.
        schedules: (0..crate::guard::schedules::MAX_SEEN as u64)
            .map(|i| crate::guard::SeenSchedule {
                schedule: fit(&format!("{schedule_text}{i}"), NAME_BYTES),
                first_seen_ms: u64::MAX - i,
                last_seen_ms: u64::MAX,
            })
            .collect(),
        schedule: Some(schedule_text),
        ..record
    };
    // As the operator's calls and the grant store them.
    let record = RunRecord {
        paused: record.paused.map(|p| Paused {
            by: fit(&p.by, NAME_BYTES),
            reason: fit(&p.reason, TEXT_BYTES),
            ..p
        }),
        run_now: record.run_now.map(|r| RunNow { by: fit(&r.by, NAME_BYTES), ..r }),
        ..record
    };
    let bytes: usize = record.to_metadata().iter().map(|(k, v)| k.len() + v.len()).sum();
    println!("{bytes} bytes of metadata");
    assert!(bytes <= 6 * 1024, "{bytes} bytes of metadata");
}

#[test]
fn blocked_runs_are_counted_in_a_seventh_field_only_once_there_is_one() {
    let totals = Totals { successes: 2, failures: 1, blocked: 0, ..Totals::default() };
    assert_eq!(super::encode_totals(&totals), "2:1:0:0::");
    let blocked = Totals { blocked: 3, ..totals };
    assert_eq!(super::encode_totals(&blocked), "2:1:0:0:::3");
    assert_eq!(super::decode_totals(&super::encode_totals(&blocked)), blocked);
    // An earlier build's six fields read as none blocked.
    assert_eq!(super::decode_totals("2:1:0:0::").blocked, 0);
}

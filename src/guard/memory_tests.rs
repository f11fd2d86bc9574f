use super::*;
use crate::guard::{GuardOptions, Paused, SkipReason};
use crate::schedule::{Every, Schedule};

const MINUTE: u64 = 60_000;
/// A due time on the minute grid (service clock).
const DUE: u64 = 1_735_689_600_000;

fn lock() -> Lock {
    Lock::parse("UseDevelopmentStorage=true", "memory", "job").unwrap()
}

fn options(every_seconds: u64) -> GuardOptions {
    let every = Schedule::Every(Every::new(every_seconds, 0).unwrap());
    GuardOptions::scheduled("r1", 15, None, every).unwrap()
}

/// A look at `service_ms` by a host whose clock reads `local_ms` then.
fn looked(service_ms: u64, local_ms: u64) -> Looked {
    let sent_ms = local_ms;
    Looked { service_ms, sent_ms, local_ms, other_schedules: false, running_for_ms: None }
}

fn not_due(next: u64) -> Decision {
    Decision::Skip(SkipReason::NotDue { next_due_ms: Some(next) })
}

#[test]
fn a_tick_before_the_next_due_time_skips_and_the_first_near_it_asks() {
    let (lock, options) = (lock(), options(60));
    let kept = learned(&not_due(DUE + MINUTE), &looked(DUE + 1_000, DUE + 1_000), &lock, &options);
    let kept = kept.as_deref();
    let recall = |now| recall(kept, &lock, &options, now, 600_000);
    let skipped = recall(DUE + 30_000).expect("half a minute before the due time skips");
    // Early tolerance 5 s, the Date's truncated second, and drift: asks from about 6 s before
    // the due time.
    let asks_from = skipped.asks_from_ms;
    assert!(asks_from <= DUE + MINUTE - 6_000 && asks_from > DUE + MINUTE - 6_100, "{asks_from}");
    assert_eq!(skipped.next_due_ms, Some(DUE + MINUTE));
    assert!(recall(asks_from).is_none());
    assert!(recall(DUE + MINUTE).is_none(), "the first tick at the due time asks");
}

#[test]
fn a_host_clock_behind_the_service_asks_earlier_by_as_much() {
    let (lock, options) = (lock(), options(60));
    // This host's clock is 20 s behind the service's.
    let kept = learned(&not_due(DUE + MINUTE), &looked(DUE + 1_000, DUE - 19_000), &lock, &options);
    let skipped = recall(kept.as_deref(), &lock, &options, DUE, 600_000).unwrap();
    assert!(skipped.asks_from_ms <= DUE + MINUTE - 26_000, "{skipped:?}");
}

#[test]
fn nothing_is_trusted_past_the_refresh_period_or_before_the_look() {
    let (lock, options) = (lock(), options(86_400));
    let next = DUE + 86_400_000;
    let kept = learned(&not_due(next), &looked(DUE, DUE), &lock, &options);
    let recall = |now, refresh| recall(kept.as_deref(), &lock, &options, now, refresh);
    assert_eq!(recall(DUE + 599_999, 600_000).unwrap().asks_from_ms, DUE + 600_000);
    assert!(recall(DUE + 600_000, 600_000).is_none());
    assert!(recall(DUE + 1, 0).is_none(), "refresh 0 trusts nothing");
    assert!(recall(DUE - 1, 600_000).is_none(), "a clock stepped back asks");
}

#[test]
fn a_pause_is_remembered_until_the_next_due_time_or_the_refresh_period() {
    let (lock, options, hourly) = (lock(), options(86_400), options(3600));
    let paused = Paused { by: "alice".into(), since_ms: DUE, reason: "deploy".into() };
    let decision = Decision::Skip(SkipReason::Paused(paused));
    let kept = learned(&decision, &looked(DUE, DUE), &lock, &options);
    let skipped = recall(kept.as_deref(), &lock, &options, DUE + 5 * MINUTE, 600_000).unwrap();
    assert!(skipped.paused && skipped.asks_from_ms == DUE + 600_000, "{skipped:?}");
    // A resume runs the due time that came meanwhile at once, so the next one is asked at.
    let kept = learned(&decision, &looked(DUE, DUE), &lock, &hourly);
    let skipped = recall(kept.as_deref(), &lock, &hourly, DUE + 5 * MINUTE, 3_600_000).unwrap();
    assert!(skipped.asks_from_ms < DUE + 60 * MINUTE, "{skipped:?}");
}

#[test]
fn what_must_be_looked_at_again_is_not_remembered() {
    let (lock, options) = (lock(), options(60));
    let at = looked(DUE, DUE);
    let held = Decision::Skip(SkipReason::HeldByOther {
        holder: None,
        since_ms: None,
        waited_ms: 0,
        due_at_ms: Some(DUE),
    });
    assert_eq!(learned(&held, &at, &lock, &options), None);
    let deploying = Looked { other_schedules: true, ..at };
    assert_eq!(learned(&not_due(DUE + MINUTE), &deploying, &lock, &options), None);
    let unscheduled = GuardOptions::scheduled("r1", 15, None, Schedule::None).unwrap();
    assert_eq!(learned(&not_due(DUE + MINUTE), &at, &lock, &unscheduled), None);
}

#[test]
fn a_memory_of_other_settings_or_unreadable_is_ignored() {
    let (lock, other_schedule, options) = (lock(), options(120), options(60));
    let kept = learned(&not_due(DUE + MINUTE), &looked(DUE, DUE), &lock, &options).unwrap();
    assert!(recall(Some(&kept), &lock, &options, DUE + 1_000, 600_000).is_some());
    assert!(recall(Some(&kept), &lock, &other_schedule, DUE + 1_000, 600_000).is_none());
    let other_lock = Lock { blob: "other".into(), ..lock.clone() };
    assert!(recall(Some(&kept), &other_lock, &options, DUE + 1_000, 600_000).is_none());
    let other_format = kept.replacen('1', "2", 1);
    for bad in ["", "1", "null", &other_format, &kept.replace(' ', "  "), &format!("{kept} 0")] {
        assert!(recall(Some(bad), &lock, &options, DUE + 1_000, 600_000).is_none(), "{bad}");
    }
    assert_ne!(key(&lock, &options), key(&other_lock, &options));
    assert_ne!(key(&lock, &options), key(&lock, &other_schedule));
}

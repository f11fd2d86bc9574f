//! Cron schedules across daylight-saving changes, on the schedule and through the guard on
//! virtual time over the fake service: a job at a time that falls in a spring-forward gap runs
//! once, at the gap's end; a job at a time a fall-back repeats runs once, at the first reading;
//! and a tick during the repeated hour, before the job's wall-clock time comes round again, is
//! judged against today's run, not last week's (croniter, tests/oracles, found that case).

use crate::support::fake_world::FakeWorld;
use crate::support::EMULATOR;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, SkipReason};
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::schedule::{Schedule, ZonedCron};
use traffic_cop::Lock;

fn cron(expression: &str, zone: &str, dialect: Dialect) -> Schedule {
    Schedule::Cron(ZonedCron::new(expression, Some(zone), dialect).unwrap())
}

fn ms(unix_seconds: u64) -> u64 {
    unix_seconds * 1000
}

/// Europe/London, Sunday 2024-10-27: 02:00 BST becomes 01:00 GMT at 01:00 UTC.
const LONDON_FALL_BACK: u64 = 1_729_990_800;
/// 01:45 BST that day, the first reading of 01:45 (00:45 UTC).
const LONDON_0145_BST: u64 = 1_729_989_900;

#[test]
fn in_the_repeated_hour_the_latest_due_time_is_the_first_reading_of_today() {
    let weekly = cron("45 1 * * SUN", "Europe/London", Dialect::Classic);
    // 01:40:04 GMT, the second time the clock reads 01:40 that night.
    let now = LONDON_FALL_BACK + 2_404;
    assert_eq!(weekly.at_or_before(ms(now)), Some(ms(LONDON_0145_BST)));
    // And 01:45 GMT (the second reading) is not a due time: the next is 01:45 GMT a week on.
    assert_eq!(weekly.after(ms(now)), Some(ms(LONDON_0145_BST + 7 * 86_400 + 3_600)));
    assert_eq!(weekly.count_between(ms(LONDON_0145_BST), ms(now + 3_600)), 0);
}

#[test]
fn berlin_at_half_past_two_runs_once_on_both_change_days() {
    let daily = cron("0 30 2 * * *", "Europe/Berlin", Dialect::Spin);
    // Spring forward, 2025-03-30: 02:00 CET becomes 03:00 CEST at 01:00 UTC; 02:30 does not
    // exist, so the run is at 03:00 CEST, once.
    let spring = 1_743_296_400;
    assert_eq!(daily.after(ms(spring - 3_600)), Some(ms(spring)));
    assert_eq!(daily.after(ms(spring)), Some(ms(spring + 86_400 - 1_800)));
    // Fall back, 2025-10-26: 03:00 CEST becomes 02:00 CET at 01:00 UTC; 02:30 happens twice
    // (00:30 and 01:30 UTC): the run is at the first, once.
    let fall = 1_761_440_400;
    assert_eq!(daily.after(ms(fall - 3_600)), Some(ms(fall - 1_800)));
    assert_eq!(daily.after(ms(fall - 1_800)), Some(ms(fall + 86_400 + 1_800)));
    assert_eq!(daily.at_or_before(ms(fall + 1_800)), Some(ms(fall - 1_800)));
}

#[test]
fn a_tick_in_the_repeated_hour_does_not_run_the_weekly_job_again() {
    let world = FakeWorld::new();
    let at = |unix: u64| world.clock.set(UNIX_EPOCH + Duration::from_secs(unix));
    let lock = Lock::parse(EMULATOR, "dst", "weekly-report").unwrap();
    let weekly = cron("45 1 * * SUN", "Europe/London", Dialect::Classic);
    let options = GuardOptions::scheduled("r0", 15, None, weekly).unwrap();
    let tick = |holder: &str| {
        let options = options.clone().for_holder(holder).unwrap();
        guard::guarded_invoke(&mut world.client(), &lock, &options)
    };
    // The lock exists before the due time, so that due time is owed.
    at(LONDON_0145_BST - 600);
    assert!(matches!(tick("r0"), Decision::Skip(SkipReason::NotDue { .. })));
    at(LONDON_0145_BST + 2);
    let Decision::Run(ticket) = tick("r0") else { panic!("01:45 BST runs") };
    guard::complete(&mut world.client(), &ticket, &Outcome::Success).unwrap();
    // Every minute of the repeated hour (01:00..02:00 GMT), a replica's trigger fires.
    for minute in 0..60 {
        at(LONDON_FALL_BACK + minute * 60 + 4);
        match tick("r1") {
            Decision::Skip(SkipReason::AlreadyRan { due_at_ms, .. }) => {
                assert_eq!(due_at_ms, ms(LONDON_0145_BST), "minute {minute}")
            }
            other => panic!("minute {minute} of the repeated hour: {other:?}"),
        }
    }
}

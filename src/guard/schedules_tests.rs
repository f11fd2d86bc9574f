use super::*;
use crate::schedule::cron::Dialect;
use crate::schedule::{Every, ZonedCron};

const T: u64 = 1_795_737_600_000; // 2026-11-27 00:00 UTC, ms

fn cron(expression: &str) -> Schedule {
    Schedule::Cron(ZonedCron::new(expression, Some("UTC"), Dialect::Spin).unwrap())
}

fn daily() -> Schedule {
    cron("0 0 2 * * *")
}

fn five_min() -> Schedule {
    cron("0 */5 * * * *")
}

/// A lock whose last scheduled run ran under `schedule` at `started_ms`, with `seen` recorded.
fn record(schedule: &Schedule, started_ms: u64, seen: Vec<SeenSchedule>) -> RunRecord {
    RunRecord {
        schedule: Some(schedule.recorded()),
        started_ms: Some(started_ms),
        schedules: seen,
        ..RunRecord::default()
    }
}

fn entry(schedule: &Schedule, first: u64, last: u64) -> SeenSchedule {
    SeenSchedule { schedule: schedule.recorded(), first_seen_ms: first, last_seen_ms: last }
}

#[test]
fn a_lone_schedule_costs_no_write_and_defers_to_nobody() {
    // A lock from a build that kept no list, and one that keeps it.
    for seen in [vec![], vec![entry(&daily(), T, T)]] {
        let lock = record(&daily(), T, seen);
        let tick = super::seen(&lock, &daily(), T + 86_400_000, false);
        assert!(!tick.stamp && tick.defer.is_none(), "{tick:?}");
        assert_eq!(tick.schedules.len(), 1);
    }
    // A new lock: its first schedule is written by the grant, not by a stamp.
    let tick = super::seen(&RunRecord::default(), &daily(), T, false);
    assert!(!tick.stamp && tick.defer.is_none());
    assert_eq!(tick.schedules, vec![entry(&daily(), T, T)]);
}

#[test]
fn a_new_schedule_wins_at_once_and_the_older_one_defers_to_it_while_it_ticks() {
    let lock = record(&daily(), T + 2 * 3_600_000, vec![]);
    let ten = T + 10 * 3_600_000;
    // The first replica with the new schedule: it appears, says so, and defers to nobody.
    let new = super::seen(&lock, &five_min(), ten, false);
    assert!(new.stamp && new.defer.is_none(), "{new:?}");
    assert_eq!(new.schedules[0], entry(&five_min(), ten, ten));
    assert_eq!(new.ours_since_ms, ten);
    let lock = RunRecord { schedules: new.schedules, ..lock };
    // A replica still on the daily schedule, a minute later: it defers, and says until when.
    let old = super::seen(&lock, &daily(), ten + 60_000, false);
    let deferral = old.defer.clone().expect("the older schedule defers");
    assert_eq!(deferral.newer, five_min().to_string());
    assert_eq!(deferral.since_ms, ten);
    assert_eq!(deferral.until_ms, ten + ALIVE_MS);
    // Its stamp was stale while the newer one is alive: it writes one.
    assert!(old.stamp);
    let lock = RunRecord { schedules: old.schedules, ..lock };
    // Neither stamps again within 30 s of its last stamp.
    assert!(!super::seen(&lock, &daily(), ten + 70_000, false).stamp);
    assert!(!super::seen(&lock, &five_min(), ten + STAMP_MS - 1, false).stamp);
    // Thirty seconds after its last stamp, the newer one stamps again (the older is alive).
    let newer = super::seen(&lock, &five_min(), ten + STAMP_MS, false);
    assert!(newer.stamp && newer.defer.is_none());
}

#[test]
fn when_the_newer_schedules_replicas_are_gone_the_older_one_decides_again() {
    let ten = T + 10 * 3_600_000;
    let lock = record(
        &five_min(),
        ten + 300_000,
        vec![entry(&five_min(), ten, ten + 300_000), entry(&daily(), T, ten + 300_000)],
    );
    // Within three minutes of the newer one's last tick: defer.
    let at = ten + 300_000 + ALIVE_MS;
    assert!(super::seen(&lock, &daily(), at, false).defer.is_some());
    // After: the rollback is done, or a replica with a newer configuration died.
    let after = super::seen(&lock, &daily(), at + 1, false);
    assert!(after.defer.is_none(), "{after:?}");
    // The newer schedule keeps its place: when one of its replicas ticks again, it wins again.
    assert_eq!(after.schedules[0].schedule, five_min().recorded());
    let lock = RunRecord { schedules: after.schedules, ..lock };
    assert!(super::seen(&lock, &five_min(), at + 2, false).defer.is_none());
}

#[test]
fn a_run_of_the_newer_schedule_holding_the_lease_keeps_it_alive() {
    let ten = T + 10 * 3_600_000;
    let late = ten + 10 * ALIVE_MS;
    // The daily replicas stamped a minute ago (under the run's lease); the five-minute ones
    // last when the run started.
    let lock = RunRecord {
        running: true,
        ..record(
            &five_min(),
            ten,
            vec![entry(&five_min(), ten, ten), entry(&daily(), T, late - 60_000)],
        )
    };
    let held = super::seen(&lock, &daily(), late, true);
    assert_eq!(held.defer.map(|d| d.until_ms), Some(late + ALIVE_MS));
    assert!(super::seen(&lock, &daily(), late, false).defer.is_none());
}

#[test]
fn a_schedule_back_after_it_was_forgotten_is_a_change_like_any_other() {
    // The deploy to every five minutes finished long ago; the daily schedule comes back (a
    // rollback): it is the newest now, and the five-minute replicas still up defer to it.
    let ten = T + 10 * 3_600_000;
    let lock = record(
        &five_min(),
        ten + FORGET_MS,
        vec![entry(&five_min(), ten, ten + FORGET_MS), entry(&daily(), T, ten)],
    );
    let back = ten + FORGET_MS + 1;
    let daily_tick = super::seen(&lock, &daily(), back, false);
    assert!(daily_tick.stamp && daily_tick.defer.is_none(), "{daily_tick:?}");
    assert_eq!(daily_tick.schedules[0], entry(&daily(), back, back));
    let lock = RunRecord { schedules: daily_tick.schedules, ..lock };
    assert!(super::seen(&lock, &five_min(), back + 1_000, false).defer.is_some());
    // Not so for the schedule the last run ran under: after downtime it is no change at all.
    let lock = record(&daily(), T, vec![entry(&five_min(), ten, ten), entry(&daily(), T, T)]);
    let after_downtime = super::seen(&lock, &daily(), ten + 2 * FORGET_MS, false);
    assert!(!after_downtime.stamp && after_downtime.defer.is_none(), "{after_downtime:?}");
    // The five-minute schedule, gone as long, is forgotten: it would come back as new.
    assert_eq!(after_downtime.schedules, vec![entry(&daily(), T, ten + 2 * FORGET_MS)]);
}

#[test]
fn a_lone_schedules_stale_stamp_is_kept_so_a_newer_one_cannot_make_it_look_new() {
    // Daily alone for weeks: nobody stamped it since its last run. A new schedule appears; the
    // daily replicas, ticking again, are the older ones, not a new appearance.
    let lock = record(&daily(), T, vec![entry(&daily(), T - 30 * 86_400_000, T)]);
    let ten = T + 20 * 86_400_000;
    let new = super::seen(&lock, &five_min(), ten, false);
    assert_eq!(new.schedules.len(), 2, "{new:?}");
    let lock = RunRecord { schedules: new.schedules, ..lock };
    assert!(super::seen(&lock, &daily(), ten + 60_000, false).defer.is_some());
}

#[test]
fn due_times_before_a_change_are_not_owed_but_a_lone_schedule_owes_all_it_missed() {
    let ten = T + 10 * 3_600_000;
    let change = super::seen(&record(&daily(), T, vec![]), &five_min(), ten, false);
    assert_eq!(change.ours_since_ms, ten);
    let lone = super::seen(&record(&daily(), T, vec![]), &daily(), ten, false);
    assert!(lone.ours_since_ms <= T);
    let first = super::seen(&RunRecord::default(), &daily(), ten, false);
    assert_eq!(first.ours_since_ms, 0);
}

#[test]
fn a_grid_and_the_cron_expression_with_its_due_times_are_one_schedule() {
    let grid = Schedule::Every(Every::new(60, 0).unwrap());
    let lock = record(&grid, T, vec![entry(&grid, T, T)]);
    let tick = super::seen(&lock, &cron("0 * * * * *"), T + 60_000, false);
    assert!(!tick.stamp && tick.defer.is_none() && tick.schedules.len() == 1, "{tick:?}");
}

#[test]
fn the_list_is_bounded_and_keeps_the_ticking_replicas_schedule() {
    let others: Vec<SeenSchedule> = (0..MAX_SEEN as u64)
        .map(|i| entry(&cron(&format!("{i} * * * * *")), T + 10 - i, T + 10))
        .collect();
    let lock = record(&daily(), T, others.clone());
    // An older schedule than all of them: the oldest others go, not it.
    let oldest = RunRecord {
        schedules: [others, vec![entry(&daily(), T - 10, T)]].concat(),
        ..lock.clone()
    };
    let tick = super::seen(&oldest, &daily(), T + 11, false);
    assert_eq!(tick.schedules.len(), MAX_SEEN);
    assert!(tick.schedules.iter().any(|seen| seen.schedule == daily().recorded()));
    assert!(tick.defer.is_some());
    // A new one: first, and the oldest other goes.
    let tick = super::seen(&lock, &five_min(), T + 11, false);
    assert_eq!(tick.schedules.len(), MAX_SEEN);
    assert_eq!(tick.schedules[0].schedule, five_min().recorded());
}

#[test]
fn agreement_counts_the_alive_schedules_and_since_when_they_disagree() {
    let ten = T + 10 * 3_600_000;
    let lock = record(
        &daily(),
        T,
        vec![entry(&five_min(), ten, ten + 60_000), entry(&daily(), T, ten + 30_000)],
    );
    let now = ten + 90_000;
    assert_eq!(
        agreement(&lock, now),
        Agreement { alive: 2, disagreeing_since_ms: Some(ten), newest_period_ms: Some(300_000) }
    );
    let later = ten + 30_000 + ALIVE_MS + 1;
    assert_eq!(
        agreement(&lock, later),
        Agreement { alive: 1, disagreeing_since_ms: None, newest_period_ms: Some(300_000) }
    );
}

//! Which schedule is in force when replicas disagree. A schedule change reaches a fleet one
//! replica at a time (a rolling deploy, a rollback), so for a while replicas with different
//! schedules tick on one lock. The lock keeps the schedules they ticked with, newest first, and
//! the newest one still alive wins: replicas with an older schedule defer to it (they are the
//! ones being replaced). A schedule counts as alive while a replica with it has ticked within
//! [`ALIVE_MS`]; when the newer schedule's replicas are gone, the newest one still ticking is in
//! force again, and a schedule that comes back after [`FORGET_MS`] counts as new (a rollback
//! after the deploy finished is a change like any other).
//!
//! Pure: [`seen`] says what one tick makes of the lock's list, and whether that is worth a
//! write. A lone schedule costs nothing; while two are alive each writes its stamp at most once
//! per [`STAMP_MS`].

use super::record::RunRecord;
use super::record_text::{fit, NAME_BYTES};
pub use super::seen::{SeenSchedule, ALIVE_MS};
use crate::schedule::Schedule;

/// A schedule not seen for this long is forgotten: when it comes back it counts as new.
pub const FORGET_MS: u64 = 2 * ALIVE_MS;
/// While another schedule is alive, a tick refreshes its own schedule's stamp once it is this old.
pub const STAMP_MS: u64 = 30_000;
/// The most schedules a lock's record keeps.
pub const MAX_SEEN: usize = 4;
/// Two schedules alive on one lock for longer than this is no longer a deploy but a replica with
/// a stale configuration: the board's metrics and alert rules say so.
pub const DEPLOY_LIMIT_MS: u64 = 15 * 60_000;

/// A replica whose schedule is older than one still alive defers to that one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deferral {
    /// The schedule in force, for people.
    pub newer: String,
    /// Service time a replica with it first ticked on the lock.
    pub since_ms: u64,
    /// The latest the deferral lasts: unless a replica with the newer schedule ticks again by
    /// then, its replicas count as gone and this one decides.
    pub until_ms: u64,
}

/// What one tick makes of the lock's schedules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The list after this tick, newest first: what a write (a stamp or a grant) records.
    pub schedules: Vec<SeenSchedule>,
    /// Other replicas must learn of this tick (its schedule appeared, or its stamp is stale
    /// while another schedule is alive): worth a write even when the tick skips.
    pub stamp: bool,
    /// This replica defers.
    pub defer: Option<Deferral>,
    /// When this replica's schedule first ticked on the lock: its due times before that were
    /// not owed by it, so a run after a change does not count them as missed.
    pub ours_since_ms: u64,
}

/// What a tick of a replica with `ours` at service time `now_ms` makes of `record`'s schedules.
/// `held` says a run holds the lock's lease: the schedule it was granted under is alive.
pub fn seen(record: &RunRecord, ours: &Schedule, now_ms: u64, held: bool) -> Seen {
    let mut schedules = known(record);
    let last_run = last_run_schedule(record);
    let last_run = last_run.as_deref();
    let position = schedules.iter().position(|seen| same(&seen.schedule, ours, now_ms));
    // Back after being gone, and not what the last run ran under: a change like any other.
    let returned = |i: usize| {
        let seen = &schedules[i];
        i > 0
            && now_ms.saturating_sub(seen.last_seen_ms) > FORGET_MS
            && last_run.is_none_or(|last| !same(last, ours, now_ms))
    };
    let first_on_lock = schedules.is_empty();
    let (ours_at, appeared) = match position {
        Some(i) if !returned(i) => (i, false),
        other => {
            if let Some(i) = other {
                schedules.remove(i);
            }
            let text = fit(&ours.recorded(), NAME_BYTES);
            schedules.insert(
                0,
                SeenSchedule { schedule: text, first_seen_ms: now_ms, last_seen_ms: now_ms },
            );
            (0, true)
        }
    };
    let alive = |seen: &SeenSchedule| {
        seen.alive(now_ms) || (held && last_run.is_some_and(|last| last == seen.schedule))
    };
    let defer = schedules[..ours_at].iter().find(|seen| alive(seen)).map(|newer| Deferral {
        newer: newer.shown(),
        since_ms: newer.first_seen_ms,
        until_ms: newer.last_seen_ms.max(if held { now_ms } else { 0 }) + ALIVE_MS,
    });
    let others_alive = schedules.iter().enumerate().any(|(i, seen)| i != ours_at && alive(seen));
    let stale = now_ms.saturating_sub(schedules[ours_at].last_seen_ms) >= STAMP_MS;
    let stamp = (appeared && schedules.len() > 1) || (others_alive && stale);
    // What a write records (a grant writes anyway, so it always refreshes the stamp).
    schedules[ours_at].last_seen_ms = now_ms;
    // The first schedule a lock knows of owes what it always owed: only a change starts anew.
    let ours_since_ms = if first_on_lock { 0 } else { schedules[ours_at].first_seen_ms };
    let ours_text = schedules[ours_at].schedule.clone();
    // The last run's schedule stays however long it went without a stamp: while it is the only
    // one, nobody stamps it.
    let kept = |seen: &SeenSchedule| {
        seen.schedule == ours_text
            || last_run == Some(seen.schedule.as_str())
            || !forgotten(seen, now_ms)
    };
    schedules.retain(kept);
    // Too many: the oldest others go first.
    while schedules.len() > MAX_SEEN {
        let Some(oldest) = schedules.iter().rposition(|seen| seen.schedule != ours_text) else {
            break;
        };
        schedules.remove(oldest);
    }
    Seen { schedules, stamp, defer, ours_since_ms }
}

/// How the schedules on a lock agree, for the board: how many are alive, and how long two or
/// more have been.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agreement {
    /// Schedules whose replicas ticked within [`ALIVE_MS`].
    pub alive: u32,
    /// The newest alive schedule's first tick on the lock, while an older one is alive too.
    pub disagreeing_since_ms: Option<u64>,
    /// The newest alive schedule's period around now.
    pub newest_period_ms: Option<u64>,
}

/// Agreement at service time `now_ms` from the record alone (a listing holds no lease state
/// the board trusts more).
pub fn agreement(record: &RunRecord, now_ms: u64) -> Agreement {
    let alive: Vec<&SeenSchedule> =
        record.schedules.iter().filter(|seen| seen.alive(now_ms)).collect();
    let newest = alive.first();
    Agreement {
        alive: alive.len() as u32,
        disagreeing_since_ms: newest.filter(|_| alive.len() > 1).map(|n| n.first_seen_ms),
        newest_period_ms: newest.and_then(|n| n.period_ms(now_ms)),
    }
}

/// The record's list, or (a lock last written by a build that kept none) the last scheduled
/// run's schedule, last seen at that run's start.
fn known(record: &RunRecord) -> Vec<SeenSchedule> {
    if !record.schedules.is_empty() {
        return record.schedules.clone();
    }
    let Some(schedule) = last_run_schedule(record) else { return Vec::new() };
    let at = record.started_ms.unwrap_or(0);
    vec![SeenSchedule { schedule, first_seen_ms: at, last_seen_ms: at }]
}

/// The schedule the last scheduled run was granted under, as the list keeps schedules (a grid
/// recorded by a build that speaks only intervals included).
fn last_run_schedule(record: &RunRecord) -> Option<String> {
    let recorded = record.schedule.clone().or_else(|| Some(record.recorded_schedule()?.recorded()));
    recorded.map(|text| fit(&text, NAME_BYTES))
}

fn forgotten(seen: &SeenSchedule, now_ms: u64) -> bool {
    now_ms.saturating_sub(seen.last_seen_ms) > FORGET_MS
}

/// The same schedule: the same recorded text, or (texts that differ only in how a build wrote
/// them, a grid and its cron form) the same next two due times.
fn same(recorded: &str, ours: &Schedule, now_ms: u64) -> bool {
    let text = ours.recorded();
    if recorded == text || recorded == fit(&text, NAME_BYTES) {
        return true;
    }
    let Some(theirs) = Schedule::from_recorded(recorded) else { return false };
    let from = now_ms.saturating_sub(1);
    let next = |s: &Schedule| {
        let first = s.after(from);
        (first, first.and_then(|f| s.after(f)))
    };
    theirs.is_scheduled() && ours.is_scheduled() && next(&theirs) == next(ours)
}

#[cfg(test)]
#[path = "schedules_tests.rs"]
mod tests;

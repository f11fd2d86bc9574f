//! The status board as the app serves it: one row per lock, with its run history, and the
//! snapshot (rows, time-zone data, when it was listed) that the JSON board, the HTML board and
//! /metrics are all rendered from, and that `cache` keeps in Spin key-value.

use crate::guard::{self, BoardEntry, PastOutcome};
use crate::lease::LeaseState;
use crate::Settings;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BoardRow {
    pub name: String,
    pub state: String,
    pub holder: Option<String>,
    pub fencing_token: u64,
    pub last_start_ms: Option<u64>,
    pub last_stop_ms: Option<u64>,
    pub running: bool,
    pub last_outcome: Option<String>,
    pub schedule: Option<String>,
    /// The schedule's IANA zone (none: UTC), to show the row's times on the job's wall clock.
    pub time_zone: Option<String>,
    pub last_due_ms: Option<u64>,
    pub next_due_ms: Option<u64>,
    pub overdue: bool,
    pub paused_by: Option<String>,
    pub paused_since_ms: Option<u64>,
    pub paused_reason: Option<String>,
    pub run_now_by: Option<String>,
    /// While replicas with more than one schedule tick on the lock: which wins, which defer.
    pub conflict: Option<String>,
    /// The schedules replicas ticked with on the lock, newest first.
    #[serde(default)]
    pub schedules_seen: Vec<SeenScheduleRow>,
    /// How many of them ticked within the last three minutes.
    #[serde(default)]
    pub schedules_alive: u32,
    /// Since when more than one has been alive (the newest one's first tick).
    #[serde(default)]
    pub disagreeing_since_ms: Option<u64>,
    /// The newest alive schedule's period.
    #[serde(default)]
    pub newest_period_ms: Option<u64>,
    pub consecutive_failures: u32,
    pub successes: u64,
    pub failures: u64,
    pub abandoned: u64,
    pub missed: u64,
    /// Runs whose instance could not renew the lease when due.
    #[serde(default)]
    pub blocked: u64,
    pub last_success_ms: Option<u64>,
    pub last_failure_ms: Option<u64>,
    /// Newest first.
    pub history: Vec<PastRunRow>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeenScheduleRow {
    pub schedule: String,
    pub first_seen_ms: u64,
    pub last_seen_ms: u64,
    pub alive: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PastRunRow {
    pub fencing_token: u64,
    pub due_at_ms: Option<u64>,
    pub started_at_ms: u64,
    pub stopped_at_ms: Option<u64>,
    pub late_by_ms: Option<u64>,
    pub missed: u64,
    pub manual: bool,
    pub holder: Option<String>,
    /// `success`, `failure`, `abandoned` or `replaced`.
    pub outcome: String,
    /// A failure's text.
    pub failure: Option<String>,
}

/// One listing of the lock container, as every rendering uses it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Snapshot {
    /// What the board's title calls the app (`app_name`, else the app's lock).
    #[serde(default)]
    pub app: String,
    /// When storage was listed (this host's clock, ms since the Unix epoch).
    pub listed_at_ms: u64,
    /// The tz database release the lease component carries.
    pub tzdata: String,
    pub container: String,
    pub locks: Vec<BoardRow>,
}

impl From<BoardEntry> for BoardRow {
    fn from(e: BoardEntry) -> BoardRow {
        let history = e
            .history
            .into_iter()
            .map(|run| {
                let (outcome, failure) = match run.outcome {
                    PastOutcome::Success => ("success", None),
                    PastOutcome::Failure(text) => ("failure", Some(text)),
                    PastOutcome::Abandoned => ("abandoned", None),
                    PastOutcome::Replaced => ("replaced", None),
                };
                PastRunRow {
                    fencing_token: run.fencing_token,
                    due_at_ms: run.due_at_ms,
                    started_at_ms: run.started_at_ms,
                    stopped_at_ms: run.stopped_at_ms,
                    late_by_ms: run.late_by_ms,
                    missed: run.missed,
                    manual: run.manual,
                    holder: run.holder,
                    outcome: outcome.to_string(),
                    failure,
                }
            })
            .collect();
        BoardRow {
            name: e.name,
            state: state_name(e.state).to_string(),
            holder: e.holder,
            fencing_token: e.fencing_token,
            last_start_ms: e.last_start_ms,
            last_stop_ms: e.last_stop_ms,
            running: e.running,
            last_outcome: e.last_outcome,
            schedule: e.schedule,
            time_zone: e.time_zone,
            last_due_ms: e.last_due_ms,
            next_due_ms: e.next_due_ms,
            overdue: e.overdue,
            paused_by: e.paused.as_ref().map(|p| p.by.clone()),
            paused_since_ms: e.paused.as_ref().map(|p| p.since_ms),
            paused_reason: e.paused.map(|p| p.reason),
            run_now_by: e.run_now_by,
            conflict: conflict(&e.schedules_seen),
            schedules_alive: e.schedules_seen.iter().filter(|s| s.alive).count() as u32,
            schedules_seen: e
                .schedules_seen
                .into_iter()
                .map(|s| SeenScheduleRow {
                    schedule: s.schedule,
                    first_seen_ms: s.first_seen_ms,
                    last_seen_ms: s.last_seen_ms,
                    alive: s.alive,
                })
                .collect(),
            disagreeing_since_ms: e.disagreeing_since_ms,
            newest_period_ms: e.newest_period_ms,
            consecutive_failures: e.consecutive_failures,
            successes: e.totals.successes,
            failures: e.totals.failures,
            abandoned: e.totals.abandoned,
            missed: e.totals.missed,
            blocked: e.totals.blocked,
            last_success_ms: e.totals.last_success_ms,
            last_failure_ms: e.totals.last_failure_ms,
            history,
        }
    }
}

/// `<newest> wins; <older> defers`, while more than one schedule is alive.
fn conflict(seen: &[guard::SeenSchedule]) -> Option<String> {
    let alive: Vec<&str> = seen.iter().filter(|s| s.alive).map(|s| s.schedule.as_str()).collect();
    match alive.as_slice() {
        [newest, older @ ..] if !older.is_empty() => {
            Some(format!("{newest} wins; {} defer", older.join(", ")))
        }
        _ => None,
    }
}

impl BoardRow {
    /// The lease is held now.
    pub fn held(&self) -> bool {
        self.state == "leased" || self.state == "breaking"
    }
}

pub fn state_name(state: LeaseState) -> &'static str {
    match state {
        LeaseState::Available => "available",
        LeaseState::Leased => "leased",
        LeaseState::Expired => "expired",
        LeaseState::Breaking => "breaking",
        LeaseState::Broken => "broken",
    }
}

/// Lists the container now (one List Blobs per 200 locks).
pub fn list(settings: &Settings) -> Result<Snapshot, String> {
    let board = guard::board(&settings.guard).map_err(|e| guard::error_text(&e))?;
    Ok(Snapshot {
        app: if settings.app_name.is_empty() {
            settings.lock.clone()
        } else {
            settings.app_name.clone()
        },
        listed_at_ms: now_ms(),
        tzdata: board.tzdata,
        container: settings.container.clone(),
        locks: board.locks.into_iter().map(BoardRow::from).collect(),
    })
}

pub fn board_json(snapshot: &Snapshot) -> String {
    serde_json::to_string_pretty(snapshot).unwrap_or_default()
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

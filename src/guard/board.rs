//! The status board: every lock in a container, from List Blobs (one round trip per page), with
//! its lease state, run record, schedule, next due time, whether it is overdue, and the
//! operator's calls.

use super::pages::Pages;
use super::schedules::{agreement, Agreement};
use super::{Paused, RunNow, RunRecord, DEFAULT_EARLY_MS};
use crate::client::LeaseClient;
use crate::config::{validate_blob, Account};
use crate::error::Error;
use crate::ops::LeaseState;
use crate::schedule::Schedule;
use crate::transport::{Runtime, Transport};

/// One lock as the board shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardEntry {
    pub name: String,
    pub state: LeaseState,
    pub record: RunRecord,
    /// The schedule the last scheduled run was granted under, when this build can read it.
    pub schedule: Option<Schedule>,
    /// The due time the last scheduled run was for.
    pub last_due_ms: Option<u64>,
    /// The first due time after that one.
    pub next_due_ms: Option<u64>,
    /// That due time passed (by the listing's service time) beyond the schedule's grace with no
    /// run for it, and the job is not paused.
    pub overdue: bool,
    /// The pause in force.
    pub paused: Option<Paused>,
    /// A manual run asked for and not yet run.
    pub run_now: Option<RunNow>,
    /// The listing's service time, which the entry was judged at.
    pub listed_ms: u64,
    /// How the schedules replicas ticked with agree.
    pub agreement: Agreement,
}

/// Every lock in `container` with its lease state and run record. Blobs whose names are not
/// valid lock names are left out, and so are data blobs written by `write_fenced` (they carry a
/// fencing token and no run record): results are not locks. A missing container is an empty
/// board.
pub fn board<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    account: &Account,
    container: &str,
) -> Result<Vec<BoardEntry>, Error> {
    let mut pages = Pages::new(account, container, false)?;
    let mut entries = Vec::new();
    loop {
        let (blobs, listed_at) = match pages.next(client) {
            Err(Error::NotFound(_)) => return Ok(Vec::new()),
            other => match other? {
                Some(page) => page,
                None => break,
            },
        };
        let now_ms = super::unix_ms(listed_at);
        for blob in blobs {
            if validate_blob(&blob.name).is_ok() && !is_fenced_data(&blob.metadata) {
                let record = RunRecord::from_metadata(&blob.metadata);
                entries.push(entry(blob.name, blob.state, record, now_ms));
            }
        }
    }
    Ok(entries)
}

fn entry(name: String, state: LeaseState, record: RunRecord, now_ms: u64) -> BoardEntry {
    let schedule = record.recorded_schedule().filter(Schedule::is_scheduled);
    let (last_due_ms, next_due_ms) = match &schedule {
        Some(schedule) => {
            // The early tolerance the grant was judged with, as far as the board can know it.
            let early = match schedule {
                Schedule::Every(_) => schedule.overdue_grace_ms(),
                _ => DEFAULT_EARLY_MS,
            };
            let last = record.last_due_ms(schedule, early);
            (last, last.and_then(|last| schedule.after(last)))
        }
        None => (None, None),
    };
    let grace = schedule.as_ref().map_or(0, Schedule::overdue_grace_ms);
    let overdue = record.paused.is_none()
        && next_due_ms.is_some_and(|next| now_ms > next.saturating_add(grace));
    BoardEntry {
        name,
        state,
        paused: record.paused.clone(),
        run_now: record.run_now.clone(),
        schedule,
        last_due_ms,
        next_due_ms,
        overdue,
        listed_ms: now_ms,
        agreement: agreement(&record, now_ms),
        record,
    }
}

/// A blob `write_fenced` wrote: its fencing token, and no run record of its own.
fn is_fenced_data(metadata: &[(String, String)]) -> bool {
    let has = |key: &str| metadata.iter().any(|(k, _)| k.eq_ignore_ascii_case(key));
    has(super::FENCING_TOKEN_METADATA) && !has("tc_fence")
}

//! Many workers × many work items: `claim` hands out tickets for due items, `board` shows every
//! lock in a container. Both start from List Blobs (one round trip per 200 blobs).

use super::invoke::{attempt, guarded_invoke, Attempt};
use super::{Decision, GuardOptions, RunRecord, SkipReason, Ticket};
use crate::client::LeaseClient;
use crate::config::{validate_blob, Account, Lock};
use crate::error::Error;
use crate::ops::{CreateContainer, LeaseState, ListBlobs, ListedBlob};
use crate::transport::{Runtime, Transport};
use std::time::SystemTime;

/// One lock as the board shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardEntry {
    pub name: String,
    pub state: LeaseState,
    pub record: RunRecord,
    /// The first due time after the last run's, when the record has a schedule.
    pub next_due_ms: Option<u64>,
    /// That due time passed (by the listing's service time) beyond the skew tolerance with no
    /// run for it.
    pub overdue: bool,
}

/// Claims up to `max` due items of `items` (blob names in `container`), each with its own
/// lease, record and fencing token. Items held by others or run in this interval are skipped.
/// Workers start at a random item, so several claiming at once spread out instead of queueing
/// on the same locks. If some tickets were granted before a failure, they are returned (their
/// work should go ahead); the error is returned only when none were.
pub fn claim<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    account: &Account,
    container: &str,
    items: &[String],
    options: &GuardOptions,
    max: u32,
) -> Result<Vec<Ticket>, Error> {
    let locks: Vec<Lock> = items
        .iter()
        .map(|item| Lock::new(account.clone(), container, item))
        .collect::<Result<_, _>>()?;
    let (listed, listed_at) = list_all(client, account, container, true)?;
    let offset = match locks.len() {
        0 => 0,
        n => (client.runtime().random_u64() % n as u64) as usize,
    };
    let mut tickets = Vec::new();
    for lock in locks.iter().cycle().skip(offset).take(locks.len()) {
        if tickets.len() >= max as usize {
            break;
        }
        let outcome = match listed.iter().find(|b| b.name == lock.blob) {
            Some(blob) => claim_listed(client, lock, options, blob, listed_at),
            // Not listed, so never used: the single-lock path creates the blob and decides.
            None => match guarded_invoke(client, lock, options) {
                Decision::Run(ticket) => Ok(Some(ticket)),
                Decision::Skip(SkipReason::Error(error)) => Err(error),
                Decision::Skip(_) => Ok(None),
            },
        };
        match outcome {
            Ok(Some(ticket)) => tickets.push(ticket),
            Ok(None) => {}
            Err(error) if tickets.is_empty() => return Err(error),
            Err(_) => break,
        }
    }
    Ok(tickets)
}

fn claim_listed<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    lock: &Lock,
    options: &GuardOptions,
    blob: &ListedBlob,
    listed_at: SystemTime,
) -> Result<Option<Ticket>, Error> {
    let record = RunRecord::from_metadata(&blob.metadata);
    match attempt(client, lock, options, &record, blob.state, blob.etag.clone(), listed_at)? {
        Attempt::Run(ticket) => Ok(Some(ticket)),
        Attempt::Skip(_) => Ok(None),
        // Changed since the listing: someone else is working this item; leave it to them.
        Attempt::Changed => Ok(None),
    }
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
    let (listed, listed_at) = match list_all(client, account, container, false) {
        Err(Error::NotFound(_)) => return Ok(Vec::new()),
        other => other?,
    };
    let now_ms = super::unix_ms(listed_at);
    Ok(listed
        .into_iter()
        .filter(|blob| validate_blob(&blob.name).is_ok() && !is_fenced_data(&blob.metadata))
        .map(|blob| {
            let record = RunRecord::from_metadata(&blob.metadata);
            BoardEntry {
                next_due_ms: record.next_due_ms(),
                overdue: record.overdue(now_ms),
                record,
                name: blob.name,
                state: blob.state,
            }
        })
        .collect())
}

/// All pages of the listing, and the service time of the first page. With `create`, a missing
/// container is created and reads as empty. Paging stops with an error (never silently) when a
/// marker comes back a second time, which would loop, or after `MAX_PAGES` pages.
fn list_all<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    account: &Account,
    container: &str,
    create: bool,
) -> Result<(Vec<ListedBlob>, SystemTime), Error> {
    // 50 000 blobs: far more locks than a timer tick can visit, and a bound on the time a
    // misbehaving or enormous listing can take.
    const MAX_PAGES: usize = 250;
    use crate::error::ServiceError;
    use crate::ops::LIST_PAGE_SIZE;
    let stop = |message: String| {
        Error::Service(ServiceError { status: 200, code: None, request_id: None, message })
    };
    // The blob name is a placeholder: listing addresses the container only.
    let lock = Lock::new(account.clone(), container, "-")?;
    let mut blobs = Vec::new();
    let mut marker = None;
    let mut seen: Vec<String> = Vec::new();
    let mut listed_at = None;
    for _ in 0..MAX_PAGES {
        let page = match client.execute(&lock, &ListBlobs { marker: marker.take() }) {
            Err(Error::NotFound(_)) if create => {
                client.execute(&lock, &CreateContainer)?;
                return Ok((Vec::new(), client.runtime().now()));
            }
            other => other?,
        };
        listed_at = listed_at.or(page.server_time);
        blobs.extend(page.blobs);
        match page.next_marker {
            None => return Ok((blobs, listed_at.unwrap_or_else(|| client.runtime().now()))),
            Some(next) if seen.contains(&next) => {
                return Err(stop(format!(
                    "unexpected response: the listing of {container} returned marker {next:?} \
                     twice; stopped instead of looping"
                )))
            }
            Some(next) => {
                seen.push(next.clone());
                marker = Some(next);
            }
        }
    }
    Err(stop(format!(
        "the listing of {container} has more than {MAX_PAGES} pages of {LIST_PAGE_SIZE} blobs; \
         keep the locks in a container of their own"
    )))
}

/// A blob `write_fenced` wrote: its fencing token, and no run record of its own.
fn is_fenced_data(metadata: &[(String, String)]) -> bool {
    let has = |key: &str| metadata.iter().any(|(k, _)| k.eq_ignore_ascii_case(key));
    has(super::FENCING_TOKEN_METADATA) && !has(super::record::FENCE)
}

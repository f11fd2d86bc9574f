//! Many workers × many work items: `claim` hands out tickets for due items, starting from List
//! Blobs (one round trip per page of blobs).

use super::claim_state::{Claimed, Wanted};
use super::grant::{attempt, Attempt, Look};
use super::pages::Pages;
use super::{
    decide, guarded_invoke, Decision, GuardOptions, RunRecord, SkipReason, Ticket, Verdict,
};
use crate::client::LeaseClient;
use crate::config::Account;
use crate::error::Error;
use crate::ops::{ListedBlob, LIST_PAGE_SIZE};
use crate::transport::{Runtime, Transport};
use std::time::{Duration, SystemTime};

/// What a claim granted, and why it stopped early if it did.
#[derive(Debug)]
pub struct Claim {
    pub tickets: Vec<Ticket>,
    /// The failure that ended the claim after some tickets were granted (their work should go
    /// ahead). It says what it did: an item whose grant landed unheard is named as used up.
    pub stopped: Option<Error>,
}

/// Claims up to `max` due items of `items` (blob names in `container`), each with its own
/// lease, record and fencing token. Items held by others or run in this interval are skipped.
/// If some tickets were granted before a failure, they are returned (their work should go
/// ahead) with the failure in [`Claim::stopped`]; the error is returned only when none were.
///
/// The listing is worked one page at a time, as it arrives, so memory holds one page (plus a
/// flag per item; a widened page is up to 5000 blobs and 4 MiB) and each listed blob is found
/// by binary search. Within each page a worker starts at its own random place among the due
/// items and walks on from there. When an attempt
/// finds its item taken since the listing (409/412), the worker has run into another worker's
/// stretch: instead of trailing it item by item, it lists the page again (one round trip) and
/// goes on from a new random place among what is still free. So workers claiming at once split
/// each page at the cost of about one wasted request and one listing per meeting, and one call
/// still offers every due item: a group of workers whose `max` add up to the items covers them.
/// Items never used before cost a second pass (see `claim_unlisted`). Pages with nothing due
/// (worked by earlier calls) widen the next one, so they cost a few round trips, not one each.
pub fn claim<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    account: &Account,
    container: &str,
    items: &[String],
    options: &GuardOptions,
    max: u32,
) -> Result<Claim, Error> {
    // Items are skipped, never waited for: a held one is another worker's.
    let options = &GuardOptions { wait: Duration::ZERO, ..options.clone() };
    let mut wanted = Wanted::new(account, container, items)?;
    let mut claimed = Claimed { tickets: Vec::new(), max: max as usize };
    let outcome = (|| {
        claim_listed(client, &mut wanted, account, container, options, &mut claimed)?;
        // Never listed, so never used: the single-lock path creates the blob and decides,
        // in page-sized stretches like the listing. Meeting another worker there ends the
        // stretch; a second pass then works the blobs created meanwhile like any listing,
        // and tries every item still never created, so one call still covers its share.
        if wanted.unlisted().next().is_none() || claimed.full(client.runtime()) {
            return Ok(());
        }
        claim_unlisted(client, &mut wanted, options, &mut claimed, Meeting::EndsStretch)?;
        claim_listed(client, &mut wanted, account, container, options, &mut claimed)?;
        claim_unlisted(client, &mut wanted, options, &mut claimed, Meeting::Jumps)
    })();
    let ran_down = claimed.drop_ran_down(client);
    let stopped = match (outcome.err(), ran_down) {
        (None, None) => None,
        (Some(error), None) => Some(error),
        (None, Some(ran_down)) => Some(ran_down),
        (Some(error), Some(ran_down)) => Some(error.context(&ran_down.to_string())),
    };
    match stopped {
        None => Ok(Claim { tickets: claimed.tickets, stopped: None }),
        Some(error) => claimed.failed(error),
    }
}

/// One pass over the listing, page by page, each page listed again after meeting another
/// worker (at most `MAX_RELISTS` times).
fn claim_listed<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    wanted: &mut Wanted,
    account: &Account,
    container: &str,
    options: &GuardOptions,
    claimed: &mut Claimed,
) -> Result<(), Error> {
    let mut pages = Pages::new(account, container, true)?;
    while let Some(mut page) = pages.next(client)? {
        let mut relists = 0;
        loop {
            match work_page(client, wanted, &page, options, claimed)? {
                PageEnd::NothingDue => {
                    pages.widen();
                    break;
                }
                PageEnd::Worked => {
                    pages.narrow();
                    break;
                }
                PageEnd::Full => return Ok(()),
                PageEnd::Met if relists == MAX_RELISTS => break,
                PageEnd::Met => relists += 1,
            }
            page = pages.again(client)?;
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Meeting {
    EndsStretch,
    /// To a random item of the stretch not tried yet: every item gets tried.
    Jumps,
}

fn claim_unlisted<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    wanted: &mut Wanted,
    options: &GuardOptions,
    claimed: &mut Claimed,
    meeting: Meeting,
) -> Result<(), Error> {
    let unlisted: Vec<usize> = wanted.unlisted().collect();
    for stretch in unlisted.chunks(LIST_PAGE_SIZE as usize) {
        let mut tried = vec![false; stretch.len()];
        let mut at = random_place(client, stretch.len());
        for _ in 0..stretch.len() {
            if claimed.full(client.runtime()) {
                return Ok(());
            }
            while tried[at] {
                at = (at + 1) % stretch.len();
            }
            tried[at] = true;
            match guarded_invoke(client, &wanted.locks[stretch[at]], options) {
                Decision::Run(ticket) => claimed.tickets.push(ticket),
                Decision::Skip(SkipReason::Error(error)) => return Err(error),
                Decision::Skip(_) if meeting == Meeting::EndsStretch => break,
                Decision::Skip(_) => at = random_place(client, stretch.len()),
            }
            at = (at + 1) % stretch.len();
        }
    }
    Ok(())
}

/// How often one page is listed again after meeting other workers before moving on; the items
/// left then are found by the next `claim`.
const MAX_RELISTS: usize = 8;

enum PageEnd {
    /// No item on the page was due: earlier calls worked it (the next page is widened).
    NothingDue,
    /// Every due item on the page was tried.
    Worked,
    /// `max` tickets are held.
    Full,
    /// Another worker took an item since the listing.
    Met,
}

/// One pass over a page's due items from a random place, until it meets another worker.
fn work_page<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    wanted: &mut Wanted,
    (blobs, listed_at): &(Vec<ListedBlob>, SystemTime),
    options: &GuardOptions,
    claimed: &mut Claimed,
) -> Result<PageEnd, Error> {
    let due: Vec<(usize, &ListedBlob, RunRecord)> = blobs
        .iter()
        .filter_map(|blob| Some((wanted.mark_listed(&blob.name)?, blob)))
        // An item whose record is in another format is left to the builds that read it.
        .filter_map(|(index, blob)| Some((index, blob, RunRecord::readable(&blob.metadata).ok()?)))
        .filter(|(_, blob, record)| {
            let verdict = decide(record, blob.state, *listed_at, blob.created, options);
            matches!(verdict, Verdict::Contend(_))
        })
        .collect();
    if due.is_empty() {
        return Ok(PageEnd::NothingDue);
    }
    let start = random_place(client, due.len());
    for (index, blob, record) in due[start..].iter().chain(&due[..start]) {
        if claimed.full(client.runtime()) {
            return Ok(PageEnd::Full);
        }
        let lock = &wanted.locks[*index];
        let look = Look {
            record: record.clone(),
            state: blob.state,
            etag: blob.etag.clone(),
            now: *listed_at,
            created: blob.created,
        };
        match attempt(client, lock, options, &look)? {
            Attempt::Run(ticket) => claimed.tickets.push(ticket),
            Attempt::Changed
            | Attempt::Outraced
            | Attempt::Skip(SkipReason::HeldByOther { .. }) => return Ok(PageEnd::Met),
            Attempt::Skip(_) => {}
        }
    }
    Ok(PageEnd::Worked)
}

/// A random index below `len` (0 when empty).
fn random_place<T: Transport, R: Runtime>(client: &LeaseClient<T, R>, len: usize) -> usize {
    ((u128::from(client.runtime().random_u64()) * len as u128) >> 64) as usize
}

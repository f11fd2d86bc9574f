//! A container's listing, one page at a time: `claim` works each page as it arrives and keeps
//! none of them, `board` keeps them all (they are its answer).
//!
//! Pages are [`LIST_PAGE_SIZE`] blobs unless the caller widens them: `claim` does after a page
//! with nothing left for it, because each call lists from the start again and the items worked
//! by earlier calls lie in the pages before the ones still due. Widening is bounded by the bytes
//! a blob took in the pages so far (`LIST_PAGE_BYTES_BUDGET`), and a widened page that fails is
//! listed again at the normal size, so unusually large blobs cost a round trip, never the call.

use crate::client::LeaseClient;
use crate::config::{Account, Lock};
use crate::error::Error;
use crate::ops::{
    BlobPage, CreateContainer, ListBlobs, ListedBlob, LIST_PAGE_BYTES_BUDGET, LIST_PAGE_SIZE,
    LIST_PAGE_SIZE_MAX,
};
use crate::transport::{Runtime, Transport};
use std::time::SystemTime;

/// 50 000 blobs at the normal size: far more locks than a timer tick can visit, and a bound on
/// the time a misbehaving or enormous listing can take.
const MAX_PAGES: usize = 250;

/// How much a page widens after one with nothing left for the caller.
const WIDENING: u32 = 4;

/// A listing in progress. Paging stops with an error (never silently) when a marker comes back a
/// second time, which would loop, or after `MAX_PAGES` pages.
pub(crate) struct Pages {
    // The blob name is a placeholder: listing addresses the container only.
    lock: Lock,
    create: bool,
    marker: Option<String>,
    /// The marker the last page was listed with, to list it again.
    current: Option<String>,
    markers_seen: Vec<String>,
    pages: usize,
    done: bool,
    /// Blobs asked for in the next page, and in the last (to list it again).
    size: u32,
    current_size: u32,
    /// The most bytes a blob took on average in any page so far, to bound widening by.
    widest_blob: usize,
    /// `LIST_PAGE_SIZE_MAX`, or `LIST_PAGE_SIZE` for good once a widened page failed.
    most: u32,
}

impl Pages {
    /// With `create`, a missing container is created and lists as empty.
    pub(crate) fn new(account: &Account, container: &str, create: bool) -> Result<Pages, Error> {
        Ok(Pages {
            lock: Lock::new(account.clone(), container, "-")?,
            create,
            marker: None,
            current: None,
            markers_seen: Vec::new(),
            pages: 0,
            done: false,
            size: LIST_PAGE_SIZE,
            current_size: LIST_PAGE_SIZE,
            widest_blob: 0,
            most: LIST_PAGE_SIZE_MAX,
        })
    }

    /// The next page and the service time it was listed at; `None` after the last.
    pub(crate) fn next<T: Transport, R: Runtime>(
        &mut self,
        client: &mut LeaseClient<T, R>,
    ) -> Result<Option<(Vec<ListedBlob>, SystemTime)>, Error> {
        if self.done {
            return Ok(None);
        }
        if self.pages == MAX_PAGES {
            let message = format!(
                "the listing of {} has more than {MAX_PAGES} pages of {LIST_PAGE_SIZE} blobs; \
                 keep the locks in a container of their own",
                self.lock.container
            );
            return Err(self.stop(Error::LimitReached(message)));
        }
        self.pages += 1;
        self.current = self.marker.take();
        self.current_size = self.size;
        let page = match self.list(client) {
            Err(Error::NotFound(_)) if self.create && self.pages == 1 => {
                client.execute(&self.lock, &CreateContainer)?;
                self.done = true;
                return Ok(Some((Vec::new(), client.runtime().now())));
            }
            other => other?,
        };
        let listed_at = super::service_clock(page.server_time, "the container listing")?;
        match page.next_marker {
            None => self.done = true,
            Some(next) if self.markers_seen.contains(&next) => {
                return Err(self.stop(Error::UnexpectedAnswer(format!(
                    "the listing of {} returned marker {next:?} twice; stopped instead of looping",
                    self.lock.container
                ))))
            }
            Some(next) => {
                self.markers_seen.push(next.clone());
                self.marker = Some(next);
            }
        }
        Ok(Some((page.blobs, listed_at)))
    }

    /// The last page again, as it is now (one round trip); paging goes on where it was.
    pub(crate) fn again<T: Transport, R: Runtime>(
        &mut self,
        client: &mut LeaseClient<T, R>,
    ) -> Result<(Vec<ListedBlob>, SystemTime), Error> {
        let page = self.list(client)?;
        let listed_at = super::service_clock(page.server_time, "the container listing")?;
        Ok((page.blobs, listed_at))
    }

    /// The next page asks for `WIDENING` times as many blobs as the last, as far as the
    /// service's maximum and the byte budget allow.
    pub(crate) fn widen(&mut self) {
        let by_bytes = LIST_PAGE_BYTES_BUDGET / self.widest_blob.max(1);
        let most = (by_bytes.min(self.most as usize) as u32).max(LIST_PAGE_SIZE);
        self.size = self.current_size.saturating_mul(WIDENING).min(most);
    }

    /// The next page is of the normal size again.
    pub(crate) fn narrow(&mut self) {
        self.size = LIST_PAGE_SIZE;
    }

    /// The page at `current` of `current_size` blobs. A widened page that fails (too large an
    /// answer, most likely) is listed again at the normal size, and pages stay that size.
    fn list<T: Transport, R: Runtime>(
        &mut self,
        client: &mut LeaseClient<T, R>,
    ) -> Result<BlobPage, Error> {
        let mut list = ListBlobs { marker: self.current.clone(), max_results: None };
        if self.current_size > LIST_PAGE_SIZE {
            list.max_results = Some(self.current_size);
            match client.execute(&self.lock, &list) {
                // A missing container is the caller's to handle, at any size.
                Err(error) if !matches!(error, Error::NotFound(_)) => {
                    (self.most, self.size, self.current_size) =
                        (LIST_PAGE_SIZE, LIST_PAGE_SIZE, LIST_PAGE_SIZE);
                    list.max_results = None;
                }
                answer => return answer.map(|page| self.measured(page)),
            }
        }
        client.execute(&self.lock, &list).map(|page| self.measured(page))
    }

    fn measured(&mut self, page: BlobPage) -> BlobPage {
        if let Some(per_blob) = page.bytes.checked_div(page.blobs.len()) {
            self.widest_blob = self.widest_blob.max(per_blob);
        }
        page
    }

    fn stop(&mut self, error: Error) -> Error {
        self.done = true;
        error
    }
}

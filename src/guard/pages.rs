//! A container's listing, one page at a time: `claim` works each page as it arrives and keeps
//! none of them, `board` keeps them all (they are its answer).

use crate::client::LeaseClient;
use crate::config::{Account, Lock};
use crate::error::{Error, ServiceError};
use crate::ops::{CreateContainer, ListBlobs, ListedBlob, LIST_PAGE_SIZE};
use crate::transport::{Runtime, Transport};
use std::time::SystemTime;

/// 50 000 blobs: far more locks than a timer tick can visit, and a bound on the time a
/// misbehaving or enormous listing can take.
const MAX_PAGES: usize = 250;

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
            return Err(self.stop(format!(
                "the listing of {} has more than {MAX_PAGES} pages of {LIST_PAGE_SIZE} blobs; \
                 keep the locks in a container of their own",
                self.lock.container
            )));
        }
        self.pages += 1;
        self.current = self.marker.take();
        let page = match client.execute(&self.lock, &ListBlobs { marker: self.current.clone() }) {
            Err(Error::NotFound(_)) if self.create && self.pages == 1 => {
                client.execute(&self.lock, &CreateContainer)?;
                self.done = true;
                return Ok(Some((Vec::new(), client.runtime().now())));
            }
            other => other?,
        };
        let listed_at = page.server_time.unwrap_or_else(|| client.runtime().now());
        match page.next_marker {
            None => self.done = true,
            Some(next) if self.markers_seen.contains(&next) => {
                return Err(self.stop(format!(
                    "unexpected response: the listing of {} returned marker {next:?} twice; \
                     stopped instead of looping",
                    self.lock.container
                )))
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
        let page = client.execute(&self.lock, &ListBlobs { marker: self.current.clone() })?;
        let listed_at = page.server_time.unwrap_or_else(|| client.runtime().now());
        Ok((page.blobs, listed_at))
    }

    fn stop(&mut self, message: String) -> Error {
        self.done = true;
        Error::Service(ServiceError { status: 200, code: None, request_id: None, message })
    }
}

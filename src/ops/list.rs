//! List Blobs with metadata: `GET ?restype=container&comp=list&marker=…&maxresults=200&
//! include=metadata` → 200 XML. One page per call; the caller follows `next_marker`. Lease
//! state, ETag and metadata of every blob in one round trip is what makes the status board and
//! `claim` cheap.

use super::xml::{self, Node};
use super::{check_status, new_request, server_time, unexpected, LeaseState, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::percent;
use crate::transport::{Request, Response};
use std::time::SystemTime;

/// Blobs asked for per page. The service's default (5000) makes a page of several megabytes;
/// 200 keeps a full page of lock blobs far below the transport's body limit: about 1 KiB per
/// typical lock (Azurite 3.35 lists 950 bytes for one with a full run record), about 17 KiB
/// for the largest a lock can be (a 1024-character name sent `Encoded`, a 200-character outcome
/// and a 64-character holder, all four-byte UTF-8 percent-encoded), so 3.4 MiB for a page of
/// the largest against the 8 MiB limit.
pub const LIST_PAGE_SIZE: u32 = 200;

/// The most blobs the service lists in one page.
pub const LIST_PAGE_SIZE_MAX: u32 = 5000;

/// The body size a page may be widened to (see `claim`): half the wasi transport's 8 MiB
/// limit, so a page whose blobs are up to twice as large as the widest seen still fits.
pub const LIST_PAGE_BYTES_BUDGET: usize = 4 * 1024 * 1024;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListBlobs {
    pub marker: Option<String>,
    /// Blobs asked for; `None` is [`LIST_PAGE_SIZE`]. Held to 1..=[`LIST_PAGE_SIZE_MAX`], which
    /// the service refuses to pass.
    pub max_results: Option<u32>,
}

/// One blob as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedBlob {
    pub name: String,
    /// Quoted like the `ETag` header, so it can go straight into `If-Match`.
    pub etag: Option<String>,
    pub state: LeaseState,
    pub metadata: Vec<(String, String)>,
    /// `Creation-Time`, if listed.
    pub created: Option<SystemTime>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobPage {
    pub blobs: Vec<ListedBlob>,
    pub next_marker: Option<String>,
    pub server_time: Option<SystemTime>,
    /// The answer's body length, to size the next page by.
    pub bytes: usize,
}

impl Op for ListBlobs {
    type Output = BlobPage;

    /// Lists the lock's container; the lock's blob name is not used. The parameters are in the
    /// order the Azure SDK for Python sends them, so the signing vector pins the whole URL.
    fn request(&self, lock: &Lock) -> Request {
        let mut query = String::from("restype=container&comp=list");
        if let Some(marker) = &self.marker {
            query.push_str("&marker=");
            query.push_str(&percent::encode(marker, percent::unreserved));
        }
        let max_results = self.max_results.unwrap_or(LIST_PAGE_SIZE).clamp(1, LIST_PAGE_SIZE_MAX);
        query.push_str(&format!("&maxresults={max_results}&include=metadata"));
        new_request(lock, http::Method::GET, &lock.container_path(), &query)
    }

    fn interpret(&self, response: &Response) -> Result<BlobPage, Error> {
        check_status(response)?;
        let body = std::str::from_utf8(response.body())
            .map_err(|_| unexpected(response, "list answer is not UTF-8"))?;
        let (blobs, next_marker) = parse_page(body).ok_or_else(|| {
            unexpected(response, "list answer is not a well-formed EnumerationResults document")
        })?;
        let (server_time, bytes) = (server_time(response), body.len());
        Ok(BlobPage { blobs, next_marker, server_time, bytes })
    }
}

/// A blob whose elements are still being read.
#[derive(Default)]
struct Partial {
    name: Option<String>,
    encoded: bool,
    etag: Option<String>,
    state: Option<LeaseState>,
    metadata: Vec<(String, String)>,
    created: Option<SystemTime>,
}

impl Partial {
    /// A blob without a name is not one we can address, so it is left out.
    fn finish(mut self) -> Option<ListedBlob> {
        self.metadata.sort();
        Some(ListedBlob {
            name: self.name?,
            etag: self.etag,
            state: self.state.unwrap_or(LeaseState::Available),
            metadata: self.metadata,
            created: self.created,
        })
    }
}

/// The blobs and the next marker, read only where the schema puts them:
/// `EnumerationResults > Blobs > Blob > (Name | Properties > (Etag | LeaseState) | Metadata > *)`
/// and `EnumerationResults > NextMarker`. `None` if the body is not such a document.
fn parse_page(body: &str) -> Option<(Vec<ListedBlob>, Option<String>)> {
    let mut blobs = Vec::new();
    let mut blob: Option<Partial> = None;
    let mut next_marker = None;
    let mut is_listing = false;
    let walked = xml::walk(body, &mut |path, node| {
        let [root, rest @ ..] = path else { return };
        is_listing = *root == "EnumerationResults";
        let Some(current) = blob.as_mut() else {
            match (rest, node) {
                (["Blobs", "Blob"], Node::Open { .. }) if is_listing => {
                    blob = Some(Partial::default())
                }
                (["NextMarker"], Node::Close { text }) => {
                    next_marker = Some(text.trim().to_string()).filter(|m| !m.is_empty())
                }
                _ => {}
            }
            return;
        };
        match (rest, node) {
            (["Blobs", "Blob"], Node::Close { .. }) => {
                blobs.extend(blob.take().and_then(Partial::finish))
            }
            (["Blobs", "Blob", "Name"], Node::Open { attributes }) => {
                current.encoded = xml::attribute(attributes, "Encoded").as_deref() == Some("true")
            }
            // Azure percent-encodes names holding characters XML cannot carry.
            (["Blobs", "Blob", "Name"], Node::Close { text }) => {
                current.name = Some(if current.encoded {
                    percent::decode(text, false)
                } else {
                    text.to_string()
                })
            }
            (["Blobs", "Blob", "Properties", "Etag"], Node::Close { text }) => {
                let etag = text.trim();
                current.etag = Some(if etag.starts_with('"') {
                    etag.to_string()
                } else {
                    format!("\"{etag}\"")
                })
            }
            (["Blobs", "Blob", "Properties", "Creation-Time"], Node::Close { text }) => {
                current.created = crate::http_date::parse(text.trim())
            }
            (["Blobs", "Blob", "Properties", "LeaseState"], Node::Close { text }) => {
                current.state = LeaseState::parse(text.trim())
            }
            (["Blobs", "Blob", "Metadata", key], Node::Close { text }) => {
                current.metadata.push((key.to_string(), text.to_string()))
            }
            _ => {}
        }
    });
    (walked.is_ok() && is_listing).then_some((blobs, next_marker))
}

#[cfg(test)]
#[path = "list_tests.rs"]
mod tests;

//! List Blobs with metadata: `GET ?restype=container&comp=list&include=metadata` → 200 XML.
//! One page per call; the caller follows `next_marker`. Lease state, ETag and metadata of every
//! blob in one round trip is what makes the status board and `claim` cheap.

use super::{
    check_status, new_request, server_time, unexpected, xml_element, xml_elements, LeaseState, Op,
};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};
use std::time::SystemTime;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListBlobs {
    pub marker: Option<String>,
}

/// One blob as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedBlob {
    pub name: String,
    /// Quoted like the `ETag` header, so it can go straight into `If-Match`.
    pub etag: Option<String>,
    pub state: LeaseState,
    pub metadata: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobPage {
    pub blobs: Vec<ListedBlob>,
    pub next_marker: Option<String>,
    pub server_time: Option<SystemTime>,
}

impl Op for ListBlobs {
    type Output = BlobPage;

    /// Lists the lock's container; the lock's blob name is not used.
    fn request(&self, lock: &Lock) -> Request {
        let mut query = String::from("restype=container&comp=list&include=metadata");
        if let Some(marker) = &self.marker {
            query.push_str("&marker=");
            query.push_str(&encode_query_value(marker));
        }
        new_request(lock, http::Method::GET, &lock.container_path(), &query)
    }

    fn interpret(&self, response: &Response) -> Result<BlobPage, Error> {
        check_status(response)?;
        let body = String::from_utf8_lossy(response.body());
        if !body.contains("<EnumerationResults") {
            return Err(unexpected(response, "list answer is not an EnumerationResults document"));
        }
        let blobs = xml_elements(&body, "Blob")
            .into_iter()
            .filter_map(|blob| {
                let state = xml_element(blob, "LeaseState")
                    .and_then(|s| LeaseState::parse(&s))
                    .unwrap_or(LeaseState::Available);
                Some(ListedBlob {
                    name: xml_element(blob, "Name")?,
                    etag: xml_element(blob, "Etag").map(|e| {
                        if e.starts_with('"') {
                            e
                        } else {
                            format!("\"{e}\"")
                        }
                    }),
                    state,
                    metadata: xml_elements(blob, "Metadata")
                        .first()
                        .map(|m| metadata_pairs(m))
                        .unwrap_or_default(),
                })
            })
            .collect();
        let next_marker = xml_element(&body, "NextMarker").filter(|m| !m.is_empty());
        Ok(BlobPage { blobs, next_marker, server_time: server_time(response) })
    }
}

/// `<name>value</name>` children, in document order; `<name />` is an empty value.
fn metadata_pairs(inner: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = inner;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>').map(|c| open + c) else { break };
        let tag = rest[open + 1..close].trim();
        if let Some(name) = tag.strip_suffix('/') {
            pairs.push((name.trim().to_string(), String::new()));
            rest = &rest[close + 1..];
            continue;
        }
        let end_tag = format!("</{tag}>");
        let Some(end) = rest[close + 1..].find(&end_tag).map(|e| close + 1 + e) else { break };
        pairs.push((tag.to_string(), super::decode_entities(&rest[close + 1..end])));
        rest = &rest[end + end_tag.len()..];
    }
    pairs.sort();
    pairs
}

fn encode_query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

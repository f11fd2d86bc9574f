//! Put Blob: `PUT` a whole block blob with its metadata in one request → 201 with the new
//! `ETag`. Conditional, so that it is a compare-and-swap: `If-Match: <etag read>` to replace
//! the version that was read, or `If-None-Match: *` to create a blob that was absent. A failed
//! condition is an answer (`ChangedSince`), not an error: the caller looks again and decides.

use super::{header, new_request, response_header, service_error, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

/// What the write must find for it to go ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteCondition {
    /// The blob still has this ETag.
    IfMatch(String),
    /// There is no blob yet.
    IfAbsent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PutBlob<'a> {
    pub contents: &'a [u8],
    /// Identifier names and visible-ASCII values (the caller builds both).
    pub metadata: Vec<(String, String)>,
    pub condition: WriteCondition,
}

/// How a conditional Put Blob ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PutOutcome {
    /// Written; the blob's new ETag.
    Written(Option<String>),
    /// The condition failed: someone wrote (or created the blob) since it was read.
    ChangedSince,
}

impl Op for PutBlob<'_> {
    type Output = PutOutcome;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = new_request(lock, http::Method::PUT, &lock.blob_path(), "");
        *request.body_mut() = self.contents.to_vec();
        let headers = request.headers_mut();
        headers.insert("x-ms-blob-type", header("BlockBlob"));
        // Explicit, so no host fills in a type of its own after the request was signed.
        headers.insert(http::header::CONTENT_TYPE, header("application/octet-stream"));
        for (name, value) in &self.metadata {
            if let Ok(name) = http::HeaderName::from_bytes(format!("x-ms-meta-{name}").as_bytes()) {
                headers.insert(name, header(value));
            }
        }
        match &self.condition {
            WriteCondition::IfMatch(etag) => headers.insert(http::header::IF_MATCH, header(etag)),
            WriteCondition::IfAbsent => headers.insert(http::header::IF_NONE_MATCH, header("*")),
        };
        request
    }

    fn interpret(&self, response: &Response) -> Result<PutOutcome, Error> {
        if response.status().is_success() {
            return Ok(PutOutcome::Written(response_header(response, "etag")));
        }
        let error = service_error(response);
        match (error.status, error.code.as_deref()) {
            // If-Match failed; or If-None-Match: * found a blob (409 BlobAlreadyExists on
            // Azurite and in the REST docs, 412 ConditionNotMet as the service is reported to
            // answer conditional writes).
            (412, Some("ConditionNotMet")) | (409, Some("BlobAlreadyExists")) => {
                Ok(PutOutcome::ChangedSince)
            }
            // Someone else's lease on the blob, not ours: from_service would call it lease-lost.
            (412, Some("LeaseIdMissing")) => Err(Error::Service(error)),
            _ => Err(Error::from_service(error)),
        }
    }
}

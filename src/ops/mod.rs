//! The lease verbs. Each file has the same shape: a struct that is validated when it is made,
//! `request` (pure: lock in, unsigned request out) and `interpret` (pure: response in, typed
//! outcome or [`Error`] out). [`prepare`] stamps and signs; the [`crate::client`] sends.

mod acquire;
mod break_lease;
mod change;
mod create;
mod get_blob;
mod inspect;
mod list;
mod put_blob;
mod release;
mod renew;
mod set_metadata;
mod types;
mod xml;

pub use acquire::Acquire;
pub use break_lease::Break;
pub use change::Change;
pub use create::{CreateBlob, CreateContainer};
pub use get_blob::{BlobContents, GetBlob};
pub use inspect::{Inspect, InspectHeld};
pub use list::{
    BlobPage, ListBlobs, ListedBlob, LIST_PAGE_BYTES_BUDGET, LIST_PAGE_SIZE, LIST_PAGE_SIZE_MAX,
};
pub use put_blob::{PutBlob, PutOutcome, WriteCondition};
pub use release::Release;
pub use renew::Renew;
pub use set_metadata::SetMetadata;
pub use types::{BreakPeriod, LeaseDuration, LeaseGrant, LeaseId, LeaseState, LockStatus};

use crate::config::Lock;
use crate::error::{Error, ServiceError};
use crate::transport::{Request, Response};
use std::time::SystemTime;

/// One REST call against a lock.
pub trait Op {
    type Output;
    /// The verb's request: method, URL and verb headers, not yet dated or signed.
    fn request(&self, lock: &Lock) -> Request;
    /// The verb's reading of any response, 2xx or not.
    fn interpret(&self, response: &Response) -> Result<Self::Output, Error>;
    /// The reading of a response to a retry whose earlier attempt may have been carried out
    /// without us hearing of it. Most verbs are idempotent on the service, so this is
    /// `interpret`; release overrides it.
    fn interpret_after_ambiguous(&self, response: &Response) -> Result<Self::Output, Error> {
        self.interpret(response)
    }
}

/// Stamps `x-ms-date`, `x-ms-version` and `Content-Length` and authorizes the request. Pure:
/// the time is an argument. Returns the signature (if any) so it can be scrubbed from errors.
pub fn prepare(mut request: Request, lock: &Lock, now: SystemTime) -> (Request, Option<String>) {
    let headers = request.headers_mut();
    headers.insert("x-ms-date", header(&crate::http_date::format(now)));
    headers.insert("x-ms-version", header(crate::STORAGE_VERSION));
    let length = request.body().len().to_string();
    // Always explicit: without it wasi:http hosts send a chunked body, which SharedKey and
    // the service do not expect for an empty PUT.
    if request.method() != http::Method::HEAD {
        request.headers_mut().insert(http::header::CONTENT_LENGTH, header(&length));
    }
    let signature = crate::signing::authorize(&mut request, &lock.account);
    (request, signature)
}

/// An empty request for `path?query` on the lock's account.
pub(crate) fn new_request(lock: &Lock, method: http::Method, path: &str, query: &str) -> Request {
    let account = &lock.account;
    let separator = if query.is_empty() { "" } else { "?" };
    let uri = format!("{}://{}{path}{separator}{query}", account.scheme, account.authority);
    let mut request = Request::new(Vec::new());
    *request.method_mut() = method;
    // Names and endpoint were validated and percent-encoded when the lock was made.
    *request.uri_mut() = uri.parse().unwrap_or_default();
    request
}

/// A lease-action PUT on the lock blob.
pub(crate) fn lease_request(lock: &Lock, action: &str) -> Request {
    let mut request = new_request(lock, http::Method::PUT, &lock.blob_path(), "comp=lease");
    request.headers_mut().insert("x-ms-lease-action", header(action));
    request
}

/// Header values we build are ASCII by construction (ids, numbers, dates).
pub(crate) fn header(value: &str) -> http::HeaderValue {
    http::HeaderValue::from_str(value).unwrap_or_else(|_| http::HeaderValue::from_static(""))
}

pub(crate) fn response_header(response: &Response, name: &str) -> Option<String> {
    response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// Reads a granted lease from a 2xx response that must carry `x-ms-lease-id`.
pub(crate) fn lease_grant(response: &Response) -> Result<LeaseGrant, Error> {
    let id = response_header(response, "x-ms-lease-id")
        .ok_or_else(|| unexpected(response, "response has no x-ms-lease-id"))?;
    Ok(LeaseGrant {
        lease_id: LeaseId::parse(&id)
            .map_err(|_| unexpected(response, "x-ms-lease-id is not a GUID"))?,
        etag: response_header(response, "etag"),
        last_modified: response_header(response, "last-modified"),
        server_time: server_time(response),
    })
}

/// The blob's metadata from its `x-ms-meta-*` headers, prefix removed, sorted by name.
pub(crate) fn metadata_headers(response: &Response) -> Vec<(String, String)> {
    let mut metadata: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            let key = name.as_str().strip_prefix("x-ms-meta-")?;
            Some((key.to_string(), value.to_str().ok()?.to_string()))
        })
        .collect();
    metadata.sort();
    metadata
}

/// The service's clock, from the `Date` header.
pub fn server_time(response: &Response) -> Option<SystemTime> {
    response_header(response, "date").and_then(|d| crate::http_date::parse(&d))
}

/// Turns a non-2xx response into an error; `Ok(())` for 2xx.
pub(crate) fn check_status(response: &Response) -> Result<(), Error> {
    if response.status().is_success() {
        Ok(())
    } else {
        Err(Error::from_service(service_error(response)))
    }
}

/// Status, error code and request id of a refusal. The code comes from `x-ms-error-code`
/// (the only place on a HEAD) or else the body's `Error > Code`; only the first line of
/// `Error > Message` is kept. `AuthenticationErrorDetail` is added only when it is about a
/// bearer token ("Lifetime validation failed. The token is expired.", "Invalid token
/// audience."): for Shared Key it echoes our signature.
/// Lenient: a body that is not the service's XML (a proxy's HTML page) still gives the status.
pub fn service_error(response: &Response) -> ServiceError {
    let body = String::from_utf8_lossy(response.body());
    let (mut code, mut message, mut detail) = (None, None, None);
    // What was read before a malformed part is still the service's word.
    let _ = xml::walk(&body, &mut |path, node| match (path, node) {
        (["Error", "Code"], xml::Node::Close { text }) => {
            code = Some(text.trim().to_string()).filter(|c| !c.is_empty())
        }
        (["Error", "Message"], xml::Node::Close { text }) => {
            message = text.trim().lines().next().map(str::to_string)
        }
        (["Error", "AuthenticationErrorDetail"], xml::Node::Close { text }) => {
            let first = text.trim().lines().next().unwrap_or_default();
            let lower = first.to_ascii_lowercase();
            if lower.contains("token") && !lower.contains("signature") {
                detail = Some(first.to_string());
            }
        }
        _ => {}
    });
    let message = message.unwrap_or_else(|| reason(response.status().as_u16()).to_string());
    let message = match detail {
        Some(detail) => format!("{message}: {detail}"),
        None => message,
    };
    ServiceError {
        status: response.status().as_u16(),
        code: response_header(response, "x-ms-error-code").or(code),
        request_id: response_header(response, "x-ms-request-id"),
        message,
    }
}

/// A 2xx that does not say what the protocol promises: the service did not refuse, so this is
/// not a service error; its status and request id are named for the storage logs.
pub(crate) fn unexpected(response: &Response, what: &str) -> Error {
    let request = response_header(response, "x-ms-request-id")
        .map_or_else(|| "no x-ms-request-id".to_string(), |id| format!("x-ms-request-id {id}"));
    Error::UnexpectedAnswer(format!("{what} (HTTP {}, {request})", response.status().as_u16()))
}

/// The reason phrase for a status that no error body explains (a HEAD's answer, a proxy's
/// page). Only these: http's full table costs the component about 3 KiB.
fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        412 => "Precondition Failed",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        // From a proxy or gateway between us and the service.
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

//! Inspect: `HEAD` the lock blob (Get Blob Properties) → lease state, status, duration and
//! metadata in one round trip. HEAD answers have no body, so errors come from headers alone.

use super::{
    check_status, header, new_request, response_header, server_time, unexpected, LeaseId,
    LeaseState, LockStatus, Op,
};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inspect;

impl Op for Inspect {
    type Output = LockStatus;

    fn request(&self, lock: &Lock) -> Request {
        new_request(lock, http::Method::HEAD, &lock.blob_path(), "")
    }

    fn interpret(&self, response: &Response) -> Result<LockStatus, Error> {
        check_status(response)?;
        let state = response_header(response, "x-ms-lease-state")
            .and_then(|s| LeaseState::parse(&s))
            .ok_or_else(|| unexpected(response, "x-ms-lease-state missing or unknown"))?;
        let metadata = super::metadata_headers(response);
        Ok(LockStatus {
            state,
            locked: response_header(response, "x-ms-lease-status").as_deref() == Some("locked"),
            infinite: response_header(response, "x-ms-lease-duration").map(|d| d == "infinite"),
            metadata,
            etag: response_header(response, "etag"),
            last_modified: response_header(response, "last-modified"),
            server_time: server_time(response),
            created: response_header(response, "x-ms-creation-time")
                .and_then(|d| crate::http_date::parse(&d)),
        })
    }
}

/// Inspect carrying our lease id: the service answers only while that lease is active and
/// ours (otherwise 412 `LeaseIdMismatchWithBlobOperation`, `LeaseNotPresentWithBlobOperation`
/// or `LeaseLost`, all read as `LeaseLost`), so one look also proves we still hold the lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InspectHeld {
    pub lease_id: LeaseId,
}

impl Op for InspectHeld {
    type Output = LockStatus;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = Inspect.request(lock);
        request.headers_mut().insert("x-ms-lease-id", header(self.lease_id.as_str()));
        request
    }

    fn interpret(&self, response: &Response) -> Result<LockStatus, Error> {
        Inspect.interpret(response)
    }
}

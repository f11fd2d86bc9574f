//! Acquire: `PUT ?comp=lease`, `x-ms-lease-action: acquire` → 201 with `x-ms-lease-id`.

use super::{
    check_status, header, lease_grant, lease_request, LeaseDuration, LeaseGrant, LeaseId, Op,
};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

/// Takes the lease, or re-takes it when `proposed_id` is the id already held (which is what
/// makes a retried acquire safe: the proposed id is always sent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acquire {
    pub duration: LeaseDuration,
    pub proposed_id: LeaseId,
    /// Acquire only if the blob is still at this ETag: the guard's "nothing was written since
    /// I looked" condition. A mismatch is 412 `ConditionNotMet`.
    pub if_match: Option<String>,
}

impl Acquire {
    pub fn new(duration: LeaseDuration, proposed_id: LeaseId) -> Result<Acquire, Error> {
        Ok(Acquire { duration: duration.validate()?, proposed_id, if_match: None })
    }

    pub fn if_match(self, etag: Option<String>) -> Acquire {
        Acquire { if_match: etag, ..self }
    }
}

impl Op for Acquire {
    type Output = LeaseGrant;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = lease_request(lock, "acquire");
        let headers = request.headers_mut();
        headers.insert("x-ms-lease-duration", header(&self.duration.header_value()));
        headers.insert("x-ms-proposed-lease-id", header(self.proposed_id.as_str()));
        if let Some(etag) = &self.if_match {
            headers.insert(http::header::IF_MATCH, header(etag));
        }
        request
    }

    fn interpret(&self, response: &Response) -> Result<LeaseGrant, Error> {
        check_status(response)?;
        lease_grant(response)
    }
}

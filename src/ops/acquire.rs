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
}

impl Acquire {
    pub fn new(duration: LeaseDuration, proposed_id: LeaseId) -> Result<Acquire, Error> {
        Ok(Acquire {
            duration: duration.validate()?,
            proposed_id,
        })
    }
}

impl Op for Acquire {
    type Output = LeaseGrant;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = lease_request(lock, "acquire");
        let headers = request.headers_mut();
        headers.insert("x-ms-lease-duration", header(&self.duration.header_value()));
        headers.insert("x-ms-proposed-lease-id", header(self.proposed_id.as_str()));
        request
    }

    fn interpret(&self, response: &Response) -> Result<LeaseGrant, Error> {
        check_status(response)?;
        lease_grant(response)
    }
}

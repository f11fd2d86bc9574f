//! Change: `PUT ?comp=lease`, `x-ms-lease-action: change` → 200 with the new `x-ms-lease-id`.
//! Idempotent on the service: repeating a change whose proposed id is already current is 200.

use super::{check_status, header, lease_grant, lease_request, LeaseGrant, LeaseId, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub lease_id: LeaseId,
    pub proposed_id: LeaseId,
}

impl Op for Change {
    type Output = LeaseGrant;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = lease_request(lock, "change");
        let headers = request.headers_mut();
        headers.insert("x-ms-lease-id", header(self.lease_id.as_str()));
        headers.insert("x-ms-proposed-lease-id", header(self.proposed_id.as_str()));
        request
    }

    fn interpret(&self, response: &Response) -> Result<LeaseGrant, Error> {
        check_status(response)?;
        lease_grant(response)
    }
}

//! Renew: `PUT ?comp=lease`, `x-ms-lease-action: renew` → 200; restarts a fixed lease's clock.

use super::{check_status, header, lease_grant, lease_request, LeaseGrant, LeaseId, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renew {
    pub lease_id: LeaseId,
}

impl Op for Renew {
    type Output = LeaseGrant;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = lease_request(lock, "renew");
        request.headers_mut().insert("x-ms-lease-id", header(self.lease_id.as_str()));
        request
    }

    fn interpret(&self, response: &Response) -> Result<LeaseGrant, Error> {
        check_status(response)?;
        lease_grant(response)
    }
}

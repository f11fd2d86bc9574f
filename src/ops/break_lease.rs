//! Break: `PUT ?comp=lease`, `x-ms-lease-action: break` → 202 with `x-ms-lease-time`, the
//! seconds until the lease is broken (0: broken now). Needs no lease id: it is the way to free
//! a lock whose holder is gone.

use super::{check_status, header, lease_request, response_header, unexpected, BreakPeriod, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Break {
    pub period: BreakPeriod,
}

impl Break {
    pub fn new(period: BreakPeriod) -> Result<Break, Error> {
        Ok(Break { period: period.validate()? })
    }
}

impl Op for Break {
    type Output = u32;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = lease_request(lock, "break");
        if let Some(seconds) = self.period.0 {
            request.headers_mut().insert("x-ms-lease-break-period", header(&seconds.to_string()));
        }
        request
    }

    fn interpret(&self, response: &Response) -> Result<u32, Error> {
        check_status(response)?;
        response_header(response, "x-ms-lease-time")
            .and_then(|t| t.trim().parse().ok())
            .ok_or_else(|| unexpected(response, "x-ms-lease-time missing or not a number"))
    }
}

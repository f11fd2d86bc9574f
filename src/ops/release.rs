//! Release: `PUT ?comp=lease`, `x-ms-lease-action: release` → 200; the lock is free at once.

use super::{check_status, header, lease_request, LeaseId, Op};
use crate::config::Lock;
use crate::error::{Error, LeaseLoss};
use crate::transport::{Request, Response};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub lease_id: LeaseId,
}

impl Op for Release {
    type Output = ();

    fn request(&self, lock: &Lock) -> Request {
        let mut request = lease_request(lock, "release");
        request.headers_mut().insert("x-ms-lease-id", header(self.lease_id.as_str()));
        request
    }

    fn interpret(&self, response: &Response) -> Result<(), Error> {
        check_status(response)
    }

    /// Release is not idempotent: repeating one that went through is refused, with
    /// `LeaseIdMismatchWithLeaseOperation` by Azurite (and the .NET cloud tests) or
    /// `LeaseNotPresentWithLeaseOperation` by Azure (no lease left on the blob). After an
    /// attempt that may have landed, either refusal means what the caller wanted: we no longer
    /// hold the lease. Other lease-lost codes (a breaking or broken lease) are not "released".
    fn interpret_after_ambiguous(&self, response: &Response) -> Result<(), Error> {
        match self.interpret(response) {
            Err(Error::LeaseLost(LeaseLoss::Service(e)))
                if matches!(
                    e.code.as_deref(),
                    Some("LeaseIdMismatchWithLeaseOperation" | "LeaseNotPresentWithLeaseOperation")
                ) =>
            {
                Ok(())
            }
            other => other,
        }
    }
}

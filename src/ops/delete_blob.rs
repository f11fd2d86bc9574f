//! Delete Blob: `DELETE` a blob → 202. Conditional on the ETag read, so a marker written again
//! since it was read survives. A blob already gone is what the caller wanted.

use super::{header, new_request, service_error, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeleteBlob {
    /// Delete only the version that was read (`If-Match`); `None`: whatever is there.
    pub if_match: Option<String>,
}

/// How a conditional delete ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deleted {
    /// Deleted, or not there to begin with.
    Gone,
    /// Written again since it was read: kept.
    ChangedSince,
}

impl Op for DeleteBlob {
    type Output = Deleted;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = new_request(lock, http::Method::DELETE, &lock.blob_path(), "");
        if let Some(etag) = &self.if_match {
            request.headers_mut().insert(http::header::IF_MATCH, header(etag));
        }
        request
    }

    fn interpret(&self, response: &Response) -> Result<Deleted, Error> {
        if response.status().is_success() {
            return Ok(Deleted::Gone);
        }
        let error = service_error(response);
        match (error.status, error.code.as_deref()) {
            (404, _) => Ok(Deleted::Gone),
            (412, Some("ConditionNotMet")) => Ok(Deleted::ChangedSince),
            _ => Err(Error::from_service(error)),
        }
    }
}

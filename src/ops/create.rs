//! First-use setup: Create Container and a zero-length lock blob. Both tolerate losing a race
//! with another instance doing the same: "already exists" counts as done.

use super::{header, new_request, service_error, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateContainer;

impl Op for CreateContainer {
    type Output = ();

    fn request(&self, lock: &Lock) -> Request {
        new_request(lock, http::Method::PUT, &lock.container_path(), "restype=container")
    }

    fn interpret(&self, response: &Response) -> Result<(), Error> {
        if response.status().is_success() {
            return Ok(());
        }
        let error = service_error(response);
        // 409 is ContainerAlreadyExists, except while a deleted container is being removed.
        match (error.status, error.code.as_deref()) {
            (409, Some("ContainerBeingDeleted")) => Err(Error::from_service(error)),
            (409, _) => Ok(()),
            _ => Err(Error::from_service(error)),
        }
    }
}

/// `If-None-Match: *` so an existing lock blob (possibly leased, possibly carrying a record)
/// is never overwritten.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateBlob;

impl Op for CreateBlob {
    type Output = ();

    fn request(&self, lock: &Lock) -> Request {
        let mut request = new_request(lock, http::Method::PUT, &lock.blob_path(), "");
        let headers = request.headers_mut();
        headers.insert("x-ms-blob-type", header("BlockBlob"));
        headers.insert(http::header::IF_NONE_MATCH, header("*"));
        request
    }

    fn interpret(&self, response: &Response) -> Result<(), Error> {
        // 409 BlobAlreadyExists (Azurite, documented) or 412 (reported for the service, and
        // LeaseIdMissing when the existing blob is leased): all mean "it is there".
        match response.status().as_u16() {
            200..=299 | 409 | 412 => Ok(()),
            _ => Err(Error::from_service(service_error(response))),
        }
    }
}

//! Set Blob Metadata: `PUT ?comp=metadata` with `x-ms-meta-*` → 200 with the new `ETag`.
//! Replaces all metadata at once; under a lease it must carry the lease id, and `If-Match`
//! makes it a compare-and-swap on the version that was read.

use super::{check_status, header, new_request, response_header, LeaseId, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetMetadata {
    pub metadata: Vec<(String, String)>,
    pub lease_id: Option<LeaseId>,
    pub if_match: Option<String>,
}

impl SetMetadata {
    /// Names must be identifiers (`[A-Za-z_][A-Za-z0-9_]*`, what Azure and Azurite both
    /// accept); values must be visible ASCII (callers encode anything else).
    pub fn new(
        metadata: Vec<(String, String)>,
        lease_id: Option<LeaseId>,
        if_match: Option<String>,
    ) -> Result<SetMetadata, Error> {
        for (name, value) in &metadata {
            let mut chars = name.chars();
            let identifier = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !identifier {
                return Err(Error::InvalidArgument(format!(
                    "metadata name {name:?} is not an identifier"
                )));
            }
            if !value.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                return Err(Error::InvalidArgument(format!(
                    "metadata value for {name} is not printable ASCII"
                )));
            }
        }
        Ok(SetMetadata { metadata, lease_id, if_match })
    }
}

impl Op for SetMetadata {
    /// The blob's new ETag.
    type Output = Option<String>;

    fn request(&self, lock: &Lock) -> Request {
        let mut request = new_request(lock, http::Method::PUT, &lock.blob_path(), "comp=metadata");
        let headers = request.headers_mut();
        for (name, value) in &self.metadata {
            if let Ok(name) = http::HeaderName::from_bytes(format!("x-ms-meta-{name}").as_bytes()) {
                headers.insert(name, header(value));
            }
        }
        if let Some(id) = &self.lease_id {
            headers.insert("x-ms-lease-id", header(id.as_str()));
        }
        if let Some(etag) = &self.if_match {
            headers.insert(http::header::IF_MATCH, header(etag));
        }
        request
    }

    fn interpret(&self, response: &Response) -> Result<Option<String>, Error> {
        check_status(response)?;
        Ok(response_header(response, "etag"))
    }
}

//! Get Blob: `GET` a whole blob → 200 with its contents, metadata (`x-ms-meta-*`) and `ETag`.
//! The transport buffers at most 8 MiB of answer (see `wasi_http`), which is why writes are
//! kept to 4 MiB.

use super::{check_status, new_request, response_header, Op};
use crate::config::Lock;
use crate::error::Error;
use crate::transport::{Request, Response};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetBlob;

/// A blob as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobContents {
    pub contents: Vec<u8>,
    /// `x-ms-meta-*` pairs with the prefix removed (names lowercase), sorted by name.
    pub metadata: Vec<(String, String)>,
    pub etag: Option<String>,
}

impl Op for GetBlob {
    type Output = BlobContents;

    fn request(&self, lock: &Lock) -> Request {
        new_request(lock, http::Method::GET, &lock.blob_path(), "")
    }

    fn interpret(&self, response: &Response) -> Result<BlobContents, Error> {
        check_status(response)?;
        Ok(BlobContents {
            contents: response.body().clone(),
            metadata: super::metadata_headers(response),
            etag: response_header(response, "etag"),
        })
    }
}

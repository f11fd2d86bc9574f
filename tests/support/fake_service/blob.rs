//! The fake's whole-blob calls: Put Blob (a block blob's body and metadata in one request,
//! conditional on `If-Match` or `If-None-Match: *`) and Get Blob. Checked against the Put Blob
//! and Get Blob REST docs and shared/protocol.md §1.6, §3.2: `x-ms-blob-type` and
//! `Content-Length` are required, `If-None-Match: *` on an existing blob is `409
//! BlobAlreadyExists` (Azurite, checked before the lease), a failed `If-Match` (also on a
//! missing blob) is `412 ConditionNotMet`, and a write to a leased blob must carry its lease id.

use super::{
    error, request_metadata, settle, write_lease, Answer, Blob, FakeService, Lease, State,
};
use std::time::SystemTime;
use traffic_cop::transport::Request;

impl State {
    pub(super) fn put_blob(
        &mut self,
        key: (String, String),
        request: &Request,
        header: &dyn Fn(&str) -> Option<String>,
        now: SystemTime,
    ) -> Answer {
        match header("x-ms-blob-type").as_deref() {
            Some("BlockBlob") => {}
            Some(_) => return error(400, "InvalidHeaderValue"),
            None => return error(400, "MissingRequiredHeader"),
        }
        match header("content-length").map(|length| length.parse::<usize>()) {
            Some(Ok(length)) if length == request.body().len() => {}
            Some(_) => return error(400, "InvalidHeaderValue"),
            None => return error(411, "MissingContentLengthHeader"),
        }
        let lease_id = header("x-ms-lease-id");
        let created = self.blobs.get(&key).map_or(now, |blob| blob.created);
        let lease = match self.blobs.get(&key) {
            None if header("if-match").is_some() => return error(412, "ConditionNotMet"),
            None => Lease::Available,
            Some(_) if header("if-none-match").as_deref() == Some("*") => {
                return error(409, "BlobAlreadyExists")
            }
            Some(blob) => {
                if header("if-match").is_some_and(|m| m != format!("\"{}\"", blob.etag)) {
                    return error(412, "ConditionNotMet");
                }
                match write_lease(settle(blob.lease.clone(), now), lease_id) {
                    Ok(lease) => lease,
                    Err(refusal) => return refusal,
                }
            }
        };
        let metadata = request_metadata(request);
        self.next_etag += 1;
        let etag = self.next_etag;
        let body = request.body().clone();
        self.blobs.insert(key, Blob { created, etag, lease, metadata, body });
        (201, vec![("etag".into(), format!("\"{etag}\""))], Vec::new())
    }
}

impl Blob {
    pub(super) fn get(&self) -> Answer {
        let mut headers = vec![
            ("etag".to_string(), format!("\"{}\"", self.etag)),
            ("x-ms-blob-type".into(), "BlockBlob".into()),
            ("content-length".into(), self.body.len().to_string()),
        ];
        headers.extend(self.metadata.iter().map(|(k, v)| (format!("x-ms-meta-{k}"), v.clone())));
        (200, headers, self.body.clone())
    }
}

impl FakeService {
    /// A blob's body and one metadata value as stored, read without a request.
    pub fn peek(
        &self,
        container: &str,
        name: &str,
        key: &str,
    ) -> Option<(Vec<u8>, Option<String>)> {
        let state = self.state.borrow();
        let blob = state.blobs.get(&(container.to_string(), name.to_string()))?;
        Some((blob.body.clone(), blob.metadata.get(key).cloned()))
    }
}

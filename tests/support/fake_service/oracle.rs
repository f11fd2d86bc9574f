//! What the fake service holds right now, read without a request: the oracle the sweep and the
//! interleaving tests judge the client by.

use super::{settle, FakeService, Lease};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// A lock's active lease: its id and when it ends (`None`: infinite, or breaking).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub id: String,
    pub until: Option<SystemTime>,
}

impl FakeService {
    /// The lease that holds `container/blob` right now (leased or breaking), if one does.
    pub fn held(&self, container: &str, blob: &str) -> Option<Held> {
        let state = self.state.borrow();
        let blob = state.blobs.get(&(container.to_string(), blob.to_string()))?;
        match settle(blob.lease.clone(), self.now.get()) {
            Lease::Leased { id, expires, .. } => Some(Held { id, until: expires }),
            Lease::Breaking { id, until } => Some(Held { id, until: Some(until) }),
            _ => None,
        }
    }

    /// A blob's metadata as stored, if the blob exists.
    pub fn metadata(&self, container: &str, blob: &str) -> Option<BTreeMap<String, String>> {
        let state = self.state.borrow();
        state.blobs.get(&(container.to_string(), blob.to_string())).map(|b| b.metadata.clone())
    }

    /// Whether the container exists.
    pub fn has_container(&self, container: &str) -> bool {
        self.state.borrow().containers.contains(container)
    }
}

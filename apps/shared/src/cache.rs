//! The board's listing kept briefly in Spin key-value: a scrape storm (every Prometheus, every
//! replica, every refresh of the HTML board) costs one List Blobs per replica per
//! `board_cache_seconds`, not one per request. Each replica has its own store (Spin's default
//! key-value store is local to the `spin up` process), so answers are at most that stale.

use crate::board::{list, now_ms, Snapshot};
use crate::Settings;
use spin_sdk::key_value::Store;

fn key(settings: &Settings) -> String {
    format!("traffic-cop/board/{}", settings.container)
}

/// The container's listing, from the store while it is younger than `board_cache_seconds`,
/// else listed now (and kept). Whether it came from the store.
pub fn snapshot(settings: &Settings) -> Result<(Snapshot, bool), String> {
    let window_ms = settings.board_cache_seconds.saturating_mul(1000);
    // No store (a manifest without `key_value_stores`): every answer lists storage.
    let store = (window_ms > 0).then(Store::open_default).and_then(Result::ok);
    if let Some(store) = &store {
        let kept = store.get(&key(settings)).ok().flatten();
        let kept: Option<Snapshot> = kept.and_then(|bytes| serde_json::from_slice(&bytes).ok());
        if let Some(kept) = kept.filter(|k| now_ms().saturating_sub(k.listed_at_ms) < window_ms) {
            return Ok((kept, true));
        }
    }
    let fresh = list(settings)?;
    if let (Some(store), Ok(bytes)) = (&store, serde_json::to_vec(&fresh)) {
        // Best effort: a failed write only means the next request lists again.
        let _ = store.set(&key(settings), &bytes);
    }
    Ok((fresh, false))
}

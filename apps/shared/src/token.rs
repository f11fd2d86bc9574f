//! An Entra ID token kept in Spin key-value between events, so that a follower decides in one
//! storage round trip and no token round trip. The lease component hands the token out
//! (`lease.get-token`) and takes it back in the connection string (`AccessToken=…;
//! AccessTokenExpiresOn=…`). It rests in the default key-value store's file (`.spin/
//! sqlite_key_value.db`, or under `--state-dir`), readable by whoever can read that file, until
//! it expires (about an hour): set `keep_token = "false"` to fetch one per event instead.

use crate::lease;
use crate::Settings;
use serde::{Deserialize, Serialize};
use spin_sdk::key_value::Store;

#[derive(Serialize, Deserialize)]
struct Kept {
    token: String,
    expires_on: u64,
}

/// A token with less than this left is fetched anew (the component does the same).
const MARGIN_SECONDS: u64 = 300;

/// The connection string with a kept (or freshly fetched and kept) token, for Entra ID
/// connection strings when `keep_token` is on; unchanged otherwise. Never fails: without a
/// token here the component fetches its own.
pub fn with_kept_token(settings: &Settings) -> Option<String> {
    let connection = settings.guard.connection_string.as_ref()?;
    if !settings.keep_token || !connection.to_ascii_lowercase().contains("authentication=") {
        return Some(connection.clone());
    }
    let Ok(store) = Store::open_default() else { return Some(connection.clone()) };
    let key = format!("traffic-cop/token/{:016x}", fingerprint(connection));
    let now = crate::board::now_ms() / 1000;
    let kept = store.get(&key).ok().flatten();
    let kept: Option<Kept> = kept.and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let kept = match kept.filter(|k| k.expires_on > now + MARGIN_SECONDS) {
        Some(kept) => kept,
        None => match lease::get_token(connection) {
            Ok(fresh) => {
                let fresh = Kept { token: fresh.token, expires_on: fresh.expires_on };
                if let Ok(bytes) = serde_json::to_vec(&fresh) {
                    let _ = store.set(&key, &bytes);
                }
                fresh
            }
            Err(_) => return Some(connection.clone()),
        },
    };
    Some(format!(
        "{};AccessToken={};AccessTokenExpiresOn={}",
        connection.trim_end_matches(';'),
        kept.token,
        kept.expires_on
    ))
}

/// The key names the connection string without containing it (it may hold a client secret).
fn fingerprint(connection: &str) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    connection.hash(&mut hasher);
    hasher.finish()
}

//! Tokens kept between calls.

use super::{AccessToken, TokenSource};
use std::fmt;

/// Tokens fetched so far, by source. Clones share one store, so a host that keeps an instance
/// (or a composed component whose calls share the lease component's instance) fetches once.
#[derive(Clone, Default)]
pub struct TokenCache(std::sync::Arc<std::sync::Mutex<Vec<(TokenSource, AccessToken)>>>);

impl TokenCache {
    /// The kept token for `source`, if it has the refresh margin left at `now_secs`.
    pub fn get(&self, source: &TokenSource, now_secs: u64) -> Option<AccessToken> {
        let tokens = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tokens.iter().find(|(s, t)| s == source && t.fresh_at(now_secs)).map(|(_, t)| t.clone())
    }

    pub fn put(&self, source: TokenSource, token: AccessToken) {
        let mut tokens = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tokens.retain(|(s, _)| *s != source);
        tokens.push((source, token));
    }
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCache(<redacted>)")
    }
}

//! The native side of traffic-cop's proofs: a wasmtime host for the built component
//! ([`component`]), a pinned Azurite on loopback ([`azurite`]) and a request-counting proxy
//! ([`proxy`]), and the real Spin CLI ([`spin`]). Used by the integration tests, the demo and the
//! benchmark.

pub mod apps;
pub mod azurite;
pub mod azurite_oauth;
pub mod chaos;
pub mod component;
pub mod fake_idp;
mod fake_idp_routes;
pub mod faults;
pub mod guests;
pub mod outbound;
pub mod proxy;
pub mod soak;
pub mod spin;
pub mod tls;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The repository root (this crate lives in `host/`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ has a parent").to_path_buf()
}

/// The well-known, public Azurite account key (not a secret).
pub const EMULATOR_KEY_B64: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
pub use wasmtime;

/// Whole seconds since the Unix epoch.
pub fn unix_secs() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Sleeps until `offset_ms` after the Unix second `at`, as a cron schedule fires on a boundary
/// (returns at once if that moment has passed).
pub fn sleep_until_unix(at: u64, offset_ms: u64) {
    let target =
        SystemTime::UNIX_EPOCH + Duration::from_secs(at) + Duration::from_millis(offset_ms);
    if let Ok(wait) = target.duration_since(SystemTime::now()) {
        std::thread::sleep(wait);
    }
}

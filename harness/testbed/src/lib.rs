//! What traffic-cop's integration tests start and stop, and how they find what they need:
//! Azurite on loopback ([`azurite`], [`azurite_oauth`]), loopback proxies that count requests
//! ([`proxy`]), inject faults ([`faults`]) or move the service's clock ([`clock_proxy`]), the real Spin CLI's replicas ([`spin`]), a
//! throwaway TLS CA ([`tls`]), a fake Entra ID endpoint ([`fake_idp`]) and an OCI registry
//! ([`oci_registry`]); the built artifacts
//! ([`built`]), the tools a test needs ([`needs`]) and the user docs' examples ([`docs`]). Nothing here links wasmtime: the
//! component host is `traffic-cop-wasm-host`.

pub mod azurite;
pub mod azurite_oauth;
pub mod built;
pub mod clock_proxy;
pub mod docs;
pub mod fake_idp;
mod fake_idp_request;
mod fake_idp_routes;
mod fake_idp_state;
pub mod faults;
pub mod needs;
pub mod oci_registry;
pub mod oracle;
pub mod proxy;
pub mod runner;
pub mod spin;
pub mod tls;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The repository root (this crate lives in `harness/testbed/`).
pub fn repo_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().nth(2).expect("harness/testbed/ has a grandparent").to_path_buf()
}

/// The well-known, public Azurite account key (not a secret).
pub const EMULATOR_KEY_B64: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Whole seconds since the Unix epoch.
/// A cron component's line, `woken by the cron tick of 2026-11-26T12:47:00Z: <report>`: the
/// tick's Unix second and the report (which names the due time it is about).
pub fn tick_line(line: &str) -> Option<(u64, &str)> {
    let (at, report) = line.strip_prefix("woken by the cron tick of ")?.split_once(": ")?;
    Some((unix_of_iso(at)?, report))
}

/// An ISO 8601 time with its offset (`2026-11-26T12:47:00Z`, `…T13:47:00+01:00`) as a Unix
/// second.
pub fn unix_of_iso(iso: &str) -> Option<u64> {
    u64::try_from(chrono::DateTime::parse_from_rfc3339(iso).ok()?.timestamp()).ok()
}

/// [`unix_of_iso`] in milliseconds.
pub fn unix_ms_of_iso(iso: &str) -> Option<u64> {
    u64::try_from(chrono::DateTime::parse_from_rfc3339(iso).ok()?.timestamp_millis()).ok()
}

pub fn unix_secs() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Returns once at least `room` seconds are left in the current minute (waiting for the next
/// one if needed), so ticks of an every-minute schedule that are meant to share a due time do.
pub fn room_in_minute(room: u64) {
    let now = unix_secs();
    if 60 - now % 60 < room {
        sleep_until_unix(now - now % 60 + 60, 200);
    }
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

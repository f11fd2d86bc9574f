//! Settings from Spin variables (`[component.X.variables]` in spin.toml), validated here so a
//! misconfigured app says which variable is wrong.

use crate::guard::{GuardOptions, Location};
use crate::lease::Lock;

/// Everything a tick needs.
#[derive(Clone)]
pub struct Settings {
    pub connection_string: String,
    pub container: String,
    pub lock: String,
    pub holder: String,
    pub lease_seconds: u32,
    pub interval_seconds: u64,
    /// The schedule's phase: due at `offset_seconds + k * interval_seconds` (optional, 0).
    pub offset_seconds: u64,
    /// Opt-in: skip a tick that comes later than this after its due time (optional, empty).
    pub starting_deadline_seconds: Option<u64>,
    /// How long the job works (ms), keeping its lease alive meanwhile. Optional, default 0:
    /// it exists to show a long run, a crash in the middle of one, and keep-alive.
    pub work_ms: u64,
}

impl Settings {
    /// Reads the component's variables. `holder` may be empty: a random label is made per
    /// instance, since a Spin replica has no name of its own.
    pub fn from_spin_variables() -> Result<Settings, String> {
        Settings::from_lookup(|name| spin_sdk::variables::get(name).map_err(|e| format!("{e}")))
    }

    pub fn from_lookup(get: impl Fn(&str) -> Result<String, String>) -> Result<Settings, String> {
        let read = |name: &str| get(name).map_err(|e| format!("variable {name}: {e}"));
        let number = |name: &str| -> Result<u64, String> {
            let text = read(name)?;
            text.trim()
                .parse()
                .map_err(|_| format!("variable {name} must be a whole number, got {text:?}"))
        };
        let holder = read("holder")?;
        let holder = if holder.trim().is_empty() { random_holder() } else { holder };
        Ok(Settings {
            connection_string: read("connection_string")?,
            container: read("container")?,
            lock: read("lock")?,
            holder,
            lease_seconds: u32::try_from(number("lease_seconds")?)
                .map_err(|_| "variable lease_seconds is too large".to_string())?,
            interval_seconds: number("interval_seconds")?,
            offset_seconds: optional(&get, "offset_seconds")?.unwrap_or(0),
            starting_deadline_seconds: optional(&get, "starting_deadline_seconds")?,
            work_ms: optional(&get, "work_ms")?.unwrap_or(0),
        })
    }

    pub fn lock(&self) -> Lock {
        Lock {
            connection_string: self.connection_string.clone(),
            container: self.container.clone(),
            blob: self.lock.clone(),
        }
    }

    pub fn location(&self) -> Location {
        Location {
            connection_string: self.connection_string.clone(),
            container: self.container.clone(),
        }
    }

    pub fn options(&self) -> GuardOptions {
        GuardOptions {
            holder: self.holder.clone(),
            lease_seconds: self.lease_seconds,
            interval_seconds: self.interval_seconds,
            offset_seconds: self.offset_seconds,
            starting_deadline_seconds: self.starting_deadline_seconds,
            keep_alive_seconds: None,
        }
    }
}

/// A variable that may be absent (apps built before it existed) or empty: `None`.
fn optional(
    get: &impl Fn(&str) -> Result<String, String>,
    name: &str,
) -> Result<Option<u64>, String> {
    match get(name) {
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("variable {name} must be a whole number, got {text:?}")),
        Err(_) => Ok(None),
    }
}

fn random_holder() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    format!("instance-{:06x}", hasher.finish() & 0xff_ffff)
}

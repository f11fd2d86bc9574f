//! Settings from Spin variables (`[component.X.variables]` in spin.toml), or through
//! `wasi:config/store` for the wrappers, validated here so a misconfigured app says which
//! variable is wrong.

use crate::guard::{Cron, GuardOptions, Location, Overlap, Schedule};
use crate::lease::Lock;

/// A Spin variable whose value cannot be used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadVariable {
    /// The variable's name in spin.toml (`time_zone`), which is what a user sets.
    pub variable: &'static str,
    pub message: String,
}

impl std::fmt::Display for BadVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "set the `{}` variable: {}", self.variable, self.message)
    }
}

/// Everything a request or tick needs.
#[derive(Clone)]
pub struct Settings {
    pub connection_string: String,
    pub container: String,
    pub lock: String,
    pub holder: String,
    pub lease_seconds: u32,
    /// The guard's schedule: a cron expression in Spin's dialect (seconds first), read on
    /// `time_zone`'s wall clock; empty for none (any tick may run).
    pub schedule: String,
    /// An IANA zone name; empty is UTC.
    pub time_zone: String,
    /// Opt-in: skip a tick that comes later than this after its due time.
    pub starting_deadline_seconds: Option<u64>,
    /// Opt-in: break a run that has held the lock this long once a later due time comes.
    pub replace_after_seconds: Option<u32>,
    /// How long the job works (ms), keeping its lease alive meanwhile: it exists to show a
    /// long run, a crash in the middle of one, and keep-alive.
    pub work_ms: u64,
    /// When set, every route needs `Authorization: Bearer <it>`, and the operator's routes
    /// exist. Empty: the board, /metrics and /run are open and the operator's routes absent.
    pub board_token: String,
    /// How long a board or metrics answer is served from Spin key-value before storage is
    /// listed again (0: never cached).
    pub board_cache_seconds: u64,
    /// Keep an Entra ID token in Spin key-value between events (on by default).
    pub keep_token: bool,
    /// What the board's title calls the app; empty: the lock's name.
    pub app_name: String,
    /// The sync wrapper's stated longest job: a lease shorter than it is refused, since
    /// nothing renews the lease while a sync handler runs.
    pub max_job_seconds: Option<u64>,
}

impl Settings {
    /// Reads the component's variables. `holder` may be empty: a random label is made per
    /// instance, since a Spin replica has no name of its own.
    pub fn from_spin_variables() -> Result<Settings, BadVariable> {
        Settings::from_lookup(|name| spin_sdk::variables::get(name).map_err(|e| format!("{e}")))
    }

    /// Reads the settings through `wasi:config/store` (the wrappers: a standard interface that
    /// Spin fills from the component's variables).
    pub fn from_wasi_config() -> Result<Settings, BadVariable> {
        use crate::wasi::config::store;
        Settings::from_lookup(|name| match store::get(name) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err("not set".into()),
            Err(store::Error::Upstream(why) | store::Error::Io(why)) => Err(why),
        })
    }

    pub fn from_lookup(
        get: impl Fn(&str) -> Result<String, String>,
    ) -> Result<Settings, BadVariable> {
        let bad = |variable: &'static str, message: String| BadVariable { variable, message };
        let read = |name: &'static str| get(name).map_err(|e| bad(name, e));
        // Variables an older spin.toml may not declare read as empty.
        let optional = |name: &str| get(name).map(|v| v.trim().to_string()).unwrap_or_default();
        let number = |name: &'static str, text: String| -> Result<Option<u64>, BadVariable> {
            if text.is_empty() {
                return Ok(None);
            }
            text.parse()
                .map(Some)
                .map_err(|_| bad(name, format!("must be a whole number, got {text:?}")))
        };
        let small = |name: &'static str, value: Option<u64>| {
            value
                .map(u32::try_from)
                .transpose()
                .map_err(|_| bad(name, format!("{} is too large", value.unwrap_or(0))))
        };
        let holder = read("holder")?;
        let holder = if holder.trim().is_empty() { random_holder() } else { holder };
        let lease_seconds = number("lease_seconds", read("lease_seconds")?.trim().to_string())?
            .ok_or_else(|| bad("lease_seconds", "is empty".into()))?;
        let replace = number("replace_after_seconds", optional("replace_after_seconds"))?;
        let settings = Settings {
            connection_string: read("connection_string")?,
            container: read("container")?,
            lock: read("lock")?,
            holder,
            lease_seconds: small("lease_seconds", Some(lease_seconds))?.unwrap_or(0),
            schedule: optional("schedule"),
            time_zone: optional("time_zone"),
            starting_deadline_seconds: number(
                "starting_deadline_seconds",
                optional("starting_deadline_seconds"),
            )?,
            replace_after_seconds: small("replace_after_seconds", replace)?,
            work_ms: number("work_ms", optional("work_ms"))?.unwrap_or(0),
            board_token: optional("board_token"),
            board_cache_seconds: number("board_cache_seconds", optional("board_cache_seconds"))?
                .unwrap_or(5),
            keep_token: !matches!(optional("keep_token").as_str(), "false" | "0" | "off"),
            app_name: optional("app_name"),
            max_job_seconds: number("max_job_seconds", optional("max_job_seconds"))?,
        };
        Ok(settings)
    }

    /// The job's zone for showing times: none for UTC.
    pub fn zone(&self) -> Option<&str> {
        Some(self.time_zone.as_str()).filter(|z| !z.is_empty() && *z != "UTC")
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

    pub fn schedule(&self) -> Schedule {
        if self.schedule.is_empty() {
            return Schedule::None;
        }
        Schedule::Cron(Cron {
            expression: self.schedule.clone(),
            time_zone: Some(self.time_zone.clone()).filter(|z| !z.is_empty()),
            dialect: None,
        })
    }

    /// The guard's options; the component checks them (a bad schedule or zone is a typed error
    /// naming the field, before any request).
    pub fn options(&self) -> GuardOptions {
        GuardOptions {
            holder: self.holder.clone(),
            lease_seconds: self.lease_seconds,
            keep_alive_seconds: None,
            schedule: self.schedule(),
            early_tolerance_ms: None,
            starting_deadline_seconds: self.starting_deadline_seconds,
            overlap: self.replace_after_seconds.map(Overlap::Replace),
            wait_ms: None,
        }
    }
}

fn random_holder() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    format!("instance-{:06x}", hasher.finish() & 0xff_ffff)
}

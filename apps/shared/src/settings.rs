//! Settings from Spin variables (`[component.X.variables]` in spin.toml), or through
//! `wasi:config/store` for the wrappers. The guard's variables are copied as they are into
//! the lease component's `settings` record, which parses, judges and explains them; only the
//! app's own variables (the board's, the demo job's) are read here.

use crate::guard;

/// One of the app's own variables whose value cannot be used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadVariable {
    /// The variable's name in spin.toml (`board_cache_seconds`), which is what a user sets.
    pub variable: String,
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
    /// The guard's variables, raw.
    pub guard: guard::Settings,
    /// The lock's name, container, schedule and zone as the variables say them (for showing).
    pub lock: String,
    pub container: String,
    pub schedule: String,
    pub time_zone: String,
    /// How long the demo job works (ms), keeping its lease alive meanwhile: it exists to show a
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
}

impl Settings {
    /// Reads the component's variables.
    pub fn from_spin_variables() -> Result<Settings, BadVariable> {
        Settings::from_lookup(|name| spin_sdk::variables::get(name).ok())
    }

    /// The guard's settings through `wasi:config/store` (the wrappers and `#[guarded]`: a
    /// standard interface that Spin fills from the component's variables). They have none of
    /// the app's own variables, so nothing here can be refused: the lease component judges the
    /// guard's.
    pub fn from_wasi_config() -> Settings {
        Settings::of_guard(&|name| crate::wasi::config::store::get(name).ok().flatten())
    }

    /// `get` answers a variable's value, none when the manifest does not declare it.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Settings, BadVariable> {
        let text = |name: &str| get(name).map(|v| v.trim().to_string()).unwrap_or_default();
        let number = |name: &str| -> Result<Option<u64>, BadVariable> {
            let value = text(name);
            if value.is_empty() {
                return Ok(None);
            }
            value.parse().map(Some).map_err(|_| BadVariable {
                variable: name.to_string(),
                message: format!("must be a whole number, got {value:?}"),
            })
        };
        Ok(Settings {
            work_ms: number("work_ms")?.unwrap_or(0),
            board_token: text("board_token"),
            board_cache_seconds: number("board_cache_seconds")?.unwrap_or(5),
            keep_token: !matches!(text("keep_token").as_str(), "false" | "0" | "off"),
            app_name: text("app_name"),
            ..Settings::of_guard(&get)
        })
    }

    /// The guard's variables alone, the app's own at their defaults.
    fn of_guard(get: &impl Fn(&str) -> Option<String>) -> Settings {
        let text = |name: &str| get(name).map(|v| v.trim().to_string()).unwrap_or_default();
        let guard = guard::Settings {
            connection_string: get("connection_string"),
            container: get("container"),
            lock: get("lock"),
            holder: get("holder"),
            lease_seconds: get("lease_seconds"),
            keep_alive_seconds: get("keep_alive_seconds"),
            schedule: get("schedule"),
            time_zone: get("time_zone"),
            cron_dialect: get("cron_dialect"),
            early_tolerance_ms: get("early_tolerance_ms"),
            starting_deadline_seconds: get("starting_deadline_seconds"),
            replace_after_seconds: get("replace_after_seconds"),
            wait_ms: get("wait_ms"),
            max_job_seconds: get("max_job_seconds"),
            refresh_seconds: get("refresh_seconds"),
        };
        Settings {
            guard,
            lock: text("lock"),
            container: text("container"),
            schedule: text("schedule"),
            time_zone: text("time_zone"),
            work_ms: 0,
            board_token: String::new(),
            board_cache_seconds: 5,
            keep_token: true,
            app_name: String::new(),
        }
    }

    /// The job's zone for showing times: none for UTC.
    pub fn zone(&self) -> Option<&str> {
        Some(self.time_zone.as_str()).filter(|z| !z.is_empty() && *z != "UTC")
    }

    /// The holder the variables name, if any (the lease component labels an instance itself
    /// otherwise).
    pub fn holder(&self) -> Option<&str> {
        self.guard.holder.as_deref().map(str::trim).filter(|h| !h.is_empty())
    }
}

//! What the Spin app's components share: settings from Spin variables, one guarded run (the
//! sequence every Rust consumer uses), the demo's job, the board (JSON, HTML, Prometheus
//! metrics, kept briefly in key-value), the operator's routes, and an Entra ID token kept
//! between events. The guard itself is the lease component's, through the
//! `traffic-cop:lease@1.0.0` imports; nothing here talks to storage directly.

mod board;
mod board_html;
mod cache;
mod check;
mod janitor;
mod metrics;
mod operator;
mod report;
pub mod result;
pub mod routes;
mod run;
mod settings;
mod token;
mod words;
mod wrapped;

pub use board::{list, now_ms, BoardRow, Snapshot};
pub use janitor::tick;
pub use report::TickReport;
pub use run::{run_holding, run_once, run_unrenewed};
pub use settings::{BadVariable, Settings};
pub use wrapped::{answered, cron_wrapped, handler_outcome, run_header_values, RUN_HEADERS};

wit_bindgen::generate!({ world: "guard-client", path: "wit", generate_all });

pub use traffic_cop::lease0_5_0::hold;
pub use traffic_cop::lease1_0_0::guard;
pub use traffic_cop::lease1_0_0::lease;

/// What a cron component's lines start with: the trigger's tick (Unix seconds, in ISO 8601
/// UTC) as what woke the replica, never as what ran. The line after it names the due time.
pub fn woken_by_cron(unix_seconds: u64) -> String {
    format!("woken by the cron tick of {}: ", words::utc(Some(unix_seconds.saturating_mul(1000))))
}

impl Settings {
    /// The settings of this event: Spin variables, with a kept Entra ID token when there is one.
    pub fn for_event() -> Result<Settings, BadVariable> {
        let mut settings = Settings::from_spin_variables()?;
        settings.guard.connection_string = token::with_kept_token(&settings);
        Ok(settings)
    }
}

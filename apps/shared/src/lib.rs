//! What the Spin app's components share: settings from Spin variables, one guarded tick of the
//! singleton job, the board (JSON, HTML, Prometheus metrics, kept briefly in key-value), the
//! operator's routes, and an Entra ID token kept between events. The guard itself comes from
//! the lease component through the `traffic-cop:lease/guard@0.3.0` import; nothing here talks
//! to storage directly.

mod board;
mod board_html;
mod cache;
mod check;
mod grant;
mod holding;
mod metrics;
mod operator;
pub mod result;
pub mod routes;
mod settings;
mod tick;
mod token;
pub mod unrenewed;
mod words;
mod wrapped;

pub use board::{list, now_ms, BoardRow, Snapshot};
pub use grant::Grant;
pub use holding::{completed, run_holding, Holding};
pub use settings::{BadVariable, Settings};
pub use tick::{janitor, tick, TickReport};
pub use words::{describe, duration};
pub use wrapped::{answered, cron_wrapped, run_header_values, RUN_HEADERS};

wit_bindgen::generate!({ world: "guard-client", path: "../wit", generate_all });

pub use traffic_cop::lease0_1_0::lease;
pub use traffic_cop::lease0_2_0::identity;
pub use traffic_cop::lease0_3_0::guard;
pub use traffic_cop::lease0_4_0::guard as guard_v4;

/// What a cron component's lines start with: the trigger's tick (Unix seconds, in ISO 8601
/// UTC) as what woke the replica, never as what ran. The line after it names the due time.
pub fn woken_by_cron(unix_seconds: u64) -> String {
    format!("woken by the cron tick of {}: ", words::utc(Some(unix_seconds.saturating_mul(1000))))
}

impl Settings {
    /// The settings of this event: Spin variables, with a kept Entra ID token when there is one.
    pub fn for_event() -> Result<Settings, BadVariable> {
        let mut settings = Settings::from_spin_variables()?;
        settings.connection_string = token::with_kept_token(&settings);
        Ok(settings)
    }
}

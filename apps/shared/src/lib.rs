//! What the Spin app's components share: settings from Spin variables, one guarded tick of the
//! singleton job, and the status board rendered as JSON and HTML. The guard itself comes from
//! the lease component through the `traffic-cop:lease/guard` import; nothing here talks to
//! storage directly.

mod board;
mod result;
mod settings;
mod tick;

pub use board::{board_html, board_json};
pub use settings::Settings;
pub use tick::{tick, TickReport};

wit_bindgen::generate!({ world: "guard-client", path: "../wit", generate_all });

pub use traffic_cop::lease0_1_0::lease;
pub use traffic_cop::lease0_2_0::guard;

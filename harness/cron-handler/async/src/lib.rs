//! The wrapped job of the async cron wrapper's stories: a plain async cron handler, as
//! trigger-cron's docs show one, that knows nothing of traffic-cop. Prints `handler called for
//! <timestamp>` on every call (the test counts them), then works (awaiting, so the wrapper's
//! `hold` renews meanwhile) and answers as `behaviour.rs` says.

wit_bindgen::generate!({ world: "cron-handler", path: "../wit", generate_all });

#[path = "../../behaviour.rs"]
mod behaviour;

use wasi::clocks::monotonic_clock;

struct Handler;

export!(Handler);

impl Guest for Handler {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        println!("handler called for {}", metadata.timestamp);
        monotonic_clock::wait_for(behaviour::work_ms() * 1_000_000).await;
        behaviour::answer(metadata.timestamp).map_err(Error::Other)
    }
}

//! The wrapped job of the async cron wrapper's stories: a plain async cron handler, as
//! trigger-cron's docs show one, that knows nothing of traffic-cop. Prints `handler called for
//! <timestamp>` on every call (the test counts them), then works (awaiting, so the wrapper's
//! `hold` renews meanwhile, unless `HANDLER_BLOCK` says to block) and answers as
//! `behaviour.rs` says.

wit_bindgen::generate!({ world: "cron-handler", path: "../wit", generate_all });

#[path = "../../behaviour.rs"]
mod behaviour;

use crate::wasi::clocks::monotonic_clock;

struct Handler;

export!(Handler);

impl Guest for Handler {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        println!("handler called for {}", metadata.timestamp);
        let ns = behaviour::work_ms() * 1_000_000;
        // `HANDLER_BLOCK`: work as a job ported from a sync one does, holding the instance (and
        // so the wrapper's renewals) instead of awaiting.
        match std::env::var("HANDLER_BLOCK").unwrap_or_default().as_str() {
            "sleep" => std::thread::sleep(std::time::Duration::from_nanos(ns)),
            "pollable" => ::wasi::clocks::monotonic_clock::subscribe_duration(ns).block(),
            _ => monotonic_clock::wait_for(ns).await,
        }
        behaviour::answer(metadata.timestamp).map_err(Error::Other)
    }
}

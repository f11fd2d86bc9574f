//! The sync twin of the async handler (`fermyon:spin-cron@2.0.0`): prints `handler called for
//! <timestamp>` on every call, then works and answers as `behaviour.rs` says.

wit_bindgen::generate!({ world: "cron-handler-sync", path: "../wit", generate_all });

#[path = "../../behaviour.rs"]
mod behaviour;

struct Handler;

export!(Handler);

impl Guest for Handler {
    fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        println!("handler called for {}", metadata.timestamp);
        std::thread::sleep(std::time::Duration::from_millis(behaviour::work_ms()));
        behaviour::answer(metadata.timestamp).map_err(Error::Other)
    }
}

//! The sync twin of the async handler (`fermyon:spin-cron@2.0.0`): prints `handler called for
//! <timestamp>` on every call, waits `HANDLER_MS` and answers by `HANDLER_MODE` (`ok`, `fail`,
//! `trap`, `cycle`), as the async one does.

wit_bindgen::generate!({ world: "cron-handler-sync", path: "../wit", generate_all });

struct Handler;

export!(Handler);

impl Guest for Handler {
    fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        println!("handler called for {}", metadata.timestamp);
        let wait_ms: u64 =
            std::env::var("HANDLER_MS").ok().and_then(|ms| ms.parse().ok()).unwrap_or(0);
        std::thread::sleep(std::time::Duration::from_millis(wait_ms));
        let mode = std::env::var("HANDLER_MODE").unwrap_or_default();
        let mode = match mode.as_str() {
            "cycle" => ["ok", "fail", "trap"][(metadata.timestamp / 3 % 3) as usize],
            other => other,
        };
        match mode {
            "fail" => Err(Error::Other(format!("the job failed for {}", metadata.timestamp))),
            "trap" => panic!("the job trapped for {}", metadata.timestamp),
            _ => Ok(()),
        }
    }
}

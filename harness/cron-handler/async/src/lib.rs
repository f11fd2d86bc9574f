//! Prints `handler called for <timestamp>` on every call (the test counts them), then, by its
//! environment: waits `HANDLER_MS`, and answers by `HANDLER_MODE`: `ok`, `fail` (an error),
//! `trap` (a panic, which traps and takes the instance with it), or `cycle` (ok, fail, trap in
//! turn by the due time: `timestamp / 3 % 3`).

wit_bindgen::generate!({ world: "cron-handler", path: "../wit", generate_all });

use wasi::clocks::monotonic_clock;

struct Handler;

export!(Handler);

impl Guest for Handler {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        println!("handler called for {}", metadata.timestamp);
        let wait_ms: u64 =
            std::env::var("HANDLER_MS").ok().and_then(|ms| ms.parse().ok()).unwrap_or(0);
        if wait_ms > 0 {
            monotonic_clock::wait_for(wait_ms * 1_000_000).await;
        }
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

//! The wrapped job of the job-interface wrapper's stories: exports `traffic-cop:job` and so is
//! given the run. Prints `handler called for <due time, Unix seconds>` and the run it was given
//! on every call, then works and answers as `behaviour.rs` says.

wit_bindgen::generate!({ world: "job-handler", path: "../wit", generate_all });

#[path = "../../behaviour.rs"]
mod behaviour;

use exports::traffic_cop::job::job::{Grant, Guest};
use wasi::clocks::monotonic_clock;

struct Handler;

export!(Handler);

impl Guest for Handler {
    async fn run(grant: Grant) -> Result<(), String> {
        let due = grant.due_at_ms / 1000;
        println!("handler called for {due}");
        println!(
            "handler given fencing token {} for the due time {} ({} missed) of {}",
            grant.fencing_token, grant.due_at_ms, grant.missed, grant.lock
        );
        monotonic_clock::wait_for(behaviour::work_ms() * 1_000_000).await;
        behaviour::answer(due)
    }
}

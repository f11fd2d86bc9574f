//! The async cron wrapper for jobs that export `traffic-cop:job` (trigger-cron 0.5.0 and
//! later): as `cron-wrapper-async`, but the job is given the run, so that it can fence its
//! writes with the token and knows which due time it runs for and how many were missed.

wit_bindgen::generate!({ world: "cron-wrapper-job", path: "../wit", generate_all });

use traffic_cop::job::job::{run, Grant};

struct Wrapper;

export!(Wrapper);

impl Guest for Wrapper {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let call = |_: &_, granted: &traffic_cop_app::guard::RunDetails| {
            run(Grant {
                lock: granted.lock.clone(),
                fencing_token: granted.fencing_token,
                due_at_ms: granted.past_due.due_at_ms,
                missed: granted.past_due.missed,
                previous_abandoned: granted.previous_abandoned,
            })
        };
        let reason = |why: &String| why.clone();
        traffic_cop_app::cron_wrapped(metadata.timestamp, call, reason).await.map_err(Error::Other)
    }
}

//! The async cron wrapper (`spin:cron@3.0.0`, trigger-cron 0.5.0 and later): a guarded
//! singleton made of any cron component, unchanged. The trigger calls this component; it asks
//! the guard, and only on the replica whose turn it is calls the wrapped component's own
//! `handle-cron-event`, with the lease component's `hold` renewing the lease beside it. The handler's
//! answer is the run's outcome. Settings come through `wasi:config/store` (Spin fills it from
//! the component's variables), so nothing here is Spin's own.

wit_bindgen::generate!({ world: "cron-wrapper-async", path: "../wit", generate_all });

struct Wrapper;

export!(Wrapper);

impl Guest for Wrapper {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        // The due time the run is for, not the tick's time: a tick that catches up runs the
        // latest missed due time, and the handler is told which.
        let call = |_: &_, run: &traffic_cop_app::guard::RunDetails| {
            handle_cron_event(Metadata { timestamp: run.past_due.due_at_ms / 1000 })
        };
        let reason = |Error::Other(why): &Error| why.clone();
        traffic_cop_app::cron_wrapped(metadata.timestamp, call, reason).await.map_err(Error::Other)
    }
}

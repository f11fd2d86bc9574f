//! The async cron wrapper (`spin:cron@3.0.0`, trigger-cron 0.5.0 and later): a guarded
//! singleton made of any cron component, unchanged. The trigger calls this component; it asks
//! the guard, and only on the replica whose turn it is calls the wrapped component's own
//! `handle-cron-event`, with guard@0.4.0's `hold` renewing the lease beside it. The handler's
//! answer is the run's outcome. Settings come through `wasi:config/store` (Spin fills it from
//! the component's variables), so nothing here is Spin's own.

wit_bindgen::generate!({ world: "cron-wrapper-async", path: "../wit", generate_all });

use traffic_cop_app::guard::Outcome;
use traffic_cop_app::{describe, run_holding, Holding, Settings, TickReport};

struct Wrapper;

export!(Wrapper);

impl Guest for Wrapper {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let prefix = format!("cron tick {}: ", traffic_cop_app::tick_time(metadata.timestamp));
        let settings = Settings::from_wasi_config().map_err(|bad| {
            eprintln!("{prefix}error: {bad}");
            Error::Other(bad.to_string())
        })?;
        let (report, answer) = tick(&settings).await;
        report.print(&prefix);
        if report.is_misconfigured() {
            return Err(Error::Other(report.detail));
        }
        answer
    }
}

/// The decision, and on a run the wrapped handler's answer, which the event returns too (so
/// the trigger logs a failed run as it would the handler's own failure).
async fn tick(settings: &Settings) -> (TickReport, Result<(), Error>) {
    // The due time the run is for, not the tick's time: a tick that catches up runs the
    // latest missed due time, and the handler is told which.
    let call = |grant: &traffic_cop_app::Grant| {
        handle_cron_event(Metadata { timestamp: grant.past_due.due_at_ms / 1000 })
    };
    let (ticket, grant, answer) = match run_holding(settings, call).await {
        Holding::Skipped(report) => return (report, Ok(())),
        Holding::Stopped(report) => {
            let stopped = Error::Other(report.detail.clone());
            return (report, Err(stopped));
        }
        Holding::Worked { ticket, grant, output } => (ticket, grant, output),
    };
    let (outcome, detail) = match &answer {
        Ok(()) => (Outcome::Success, "the handler succeeded".to_string()),
        Err(Error::Other(why)) => {
            (Outcome::Failure(why.clone()), format!("the handler failed: {why}"))
        }
    };
    let detail = match ticket.complete(&outcome) {
        Ok(()) => detail,
        Err(error) => format!("{detail}; complete failed: {}", describe(&error)),
    };
    (TickReport::ran(settings, &grant, detail), answer)
}

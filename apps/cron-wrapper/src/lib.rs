//! The sync cron wrapper (`fermyon:spin-cron@2.0.0`: trigger-cron 0.3.x/0.4.x on Spin 3 and 4;
//! 0.5.0 calls it too): a guarded singleton made of any sync cron component, unchanged. As the
//! async wrapper, with guard@0.3.0, and one difference that matters: a sync call blocks the
//! instance, so nothing renews the lease while the wrapped handler runs. A job must end within
//! its lease. `max_job_seconds` states how long it may take, and the lease component refuses a
//! lease shorter than that; a run that outlived its lease anyway says so (another run may
//! have started).

wit_bindgen::generate!({ world: "cron-wrapper", path: "../wit", generate_all });

use traffic_cop_app::{handler_outcome, run_once, Settings, TickReport};

struct Wrapper;

export!(Wrapper);

impl Guest for Wrapper {
    fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let prefix = traffic_cop_app::woken_by_cron(metadata.timestamp);
        let (report, answer) = tick(&Settings::from_wasi_config());
        report.print(&prefix);
        if report.is_misconfigured() {
            return Err(Error::Other(report.detail));
        }
        answer
    }
}

/// The decision, and on a run the wrapped handler's answer, which the event returns too.
fn tick(settings: &Settings) -> (TickReport, Result<(), Error>) {
    let mut answer = Ok(());
    let report = run_once(settings, |_, run| {
        // The due time the run is for, not the tick's time (see the async wrapper).
        answer = handle_cron_event(Metadata { timestamp: run.past_due.due_at_ms / 1000 });
        handler_outcome(answer.clone().map_err(|Error::Other(why)| why))
    });
    (report, answer)
}

//! Cron-triggered Spin component for trigger-cron 0.5.0 and later (`spin:cron@3.0.0`, an async
//! export, Spin 4). The same decisions and reports as `cron-job`, but the job never renews its
//! lease itself: the lease component's `hold` renews it beside the work, and says when the work
//! must stop, a third of the lease before the lease could pass to another replica.

wit_bindgen::generate!({ world: "cron-job-async", path: "../wit", generate_all });

use traffic_cop_app::guard::Outcome;
use traffic_cop_app::{decide, report_and_write, Settings, TickReport, Turn};
use wasi::clocks::monotonic_clock;

struct CronJob;

export!(CronJob);

impl Guest for CronJob {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let prefix = traffic_cop_app::woken_by_cron(metadata.timestamp);
        // As `cron-job`: misconfiguration fails the event, naming the variable to fix.
        let settings = Settings::for_event().map_err(|bad| {
            eprintln!("{prefix}error: {bad}");
            Error::Other(bad.to_string())
        })?;
        let report = tick(&settings).await;
        report.print(&prefix);
        if report.is_misconfigured() {
            return Err(Error::Other(report.detail));
        }
        Ok(())
    }
}

async fn tick(settings: &Settings) -> TickReport {
    let granted = match decide(settings) {
        Turn::Skipped(report) => return report,
        Turn::Granted(granted) => granted,
    };
    if granted.beside_hold(work(settings.work_ms)).await.is_none() {
        return granted.finish(&Outcome::Failure(String::new()));
    }
    let outcome = report_and_write(settings, &granted.run, &granted.details);
    granted.finish(&outcome)
}

/// The long part of the job: `work_ms` of waiting that yields, so `hold` renews meanwhile.
async fn work(work_ms: u64) {
    if work_ms > 0 {
        monotonic_clock::wait_for(work_ms.saturating_mul(1_000_000)).await;
    }
}

//! Cron-triggered Spin component for trigger-cron 0.5.0 and later (`spin:cron@3.0.0`, an async
//! export, Spin 4). The same decisions and reports as `cron-job`, but the job never renews its
//! lease itself: guard@0.4.0's `hold` renews it beside the work, and says when the work must
//! stop, a third of the lease before the lease could pass to another replica.

wit_bindgen::generate!({ world: "cron-job-async", path: "../wit", generate_all });

use traffic_cop_app::{run_holding, Holding, Settings, TickReport};
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
    let (ticket, grant) = match run_holding(settings, |_| work(settings.work_ms)).await {
        Holding::Skipped(report) | Holding::Stopped(report) => return report,
        Holding::Worked { ticket, grant, output: () } => (ticket, grant),
    };
    let (outcome, detail) = traffic_cop_app::janitor(settings);
    let written = traffic_cop_app::result::write_result(settings, &grant, |name, contents| {
        ticket.write_fenced(name, contents)
    });
    traffic_cop_app::completed(settings, &ticket, &grant, &outcome, format!("{detail}; {written}"))
}

/// The long part of the job: `work_ms` of waiting that yields, so `hold` renews meanwhile.
async fn work(work_ms: u64) {
    if work_ms > 0 {
        monotonic_clock::wait_for(work_ms.saturating_mul(1_000_000)).await;
    }
}

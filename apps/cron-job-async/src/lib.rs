//! Cron-triggered Spin component for trigger-cron 0.5.0 and later (`spin:cron@3.0.0`, an async
//! export, Spin 4). The same decisions and reports as `cron-job`, but the job never renews its
//! lease itself: guard@0.4.0's `hold` renews it beside the work, and says when the work must
//! stop, a third of the lease before the lease could pass to another replica.

wit_bindgen::generate!({
    world: "cron-job-async",
    path: "../wit",
    with: {
        "traffic-cop:lease/lease@0.1.0": traffic_cop_app::lease,
        "traffic-cop:lease/guard@0.3.0": traffic_cop_app::guard,
    },
    generate_all,
});

use futures::future::{select, Either};
use std::pin::pin;
use traffic_cop::lease0_4_0::guard::{self, Decision};
use traffic_cop_app::{Grant, Settings, TickReport};
use wasi::clocks::monotonic_clock;

struct CronJob;

export!(CronJob);

impl Guest for CronJob {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let prefix = format!("cron tick {}: ", traffic_cop_app::tick_time(metadata.timestamp));
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
    let ticket = match guard::guarded_invoke(&settings.lock(), &settings.options()) {
        Decision::Run(ticket) => ticket,
        Decision::Skip(skipped) => return TickReport::skipped(settings, skipped.reason),
    };
    let details = ticket.details();
    let grant = Grant {
        fencing_token: details.fencing_token,
        past_due: details.past_due,
        manual_by: details.manual_by,
        previous_abandoned: details.previous_abandoned,
    };
    // The work and `hold` side by side: whichever ends first wins and the other is dropped.
    // A lost lease drops the work before it writes anything, and the run is left for the
    // next one to report abandoned, as `cron-job` leaves it.
    if let Either::Left((ended, _)) =
        select(pin!(ticket.hold()), pin!(work(settings.work_ms))).await
    {
        let why = match ended {
            Err(lost) => traffic_cop_app::describe(&lost),
            Ok(()) => "the run was closed under it".into(),
        };
        return TickReport::ran(
            settings,
            &grant,
            format!("stopped: lease lost during the work ({why})"),
        );
    }
    let (outcome, detail) = traffic_cop_app::janitor(settings);
    let written = traffic_cop_app::result::write_result(settings, &grant, |name, contents| {
        ticket.write_fenced(name, contents)
    });
    let detail = format!("{detail}; {written}");
    let detail = match ticket.complete(&outcome) {
        Ok(()) => detail,
        Err(error) => format!("{detail}; complete failed: {}", traffic_cop_app::describe(&error)),
    };
    TickReport::ran(settings, &grant, detail)
}

/// The long part of the job: `work_ms` of waiting that yields, so `hold` renews meanwhile.
async fn work(work_ms: u64) {
    if work_ms > 0 {
        monotonic_clock::wait_for(work_ms.saturating_mul(1_000_000)).await;
    }
}

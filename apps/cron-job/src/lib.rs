//! Cron-triggered Spin component (spin-trigger-cron 0.3.x/0.4.x, `fermyon:spin-cron@2.0.0`).
//! Every replica's timer fires; the guard lets at most one of them run the job per due time of
//! the guard's own schedule (the `schedule` and `time_zone` variables).

wit_bindgen::generate!({ world: "cron-job", path: "../wit", generate_all });

struct CronJob;

export!(CronJob);

impl Guest for CronJob {
    fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let prefix = traffic_cop_app::woken_by_cron(metadata.timestamp);
        // Misconfiguration fails the event (trigger-cron logs it) and is said on stderr,
        // naming the variable to fix; a skip is a normal outcome.
        let settings = traffic_cop_app::Settings::for_event().map_err(|bad| {
            eprintln!("{prefix}error: {bad}");
            Error::Other(bad.to_string())
        })?;
        let report = traffic_cop_app::tick(&settings);
        report.print(&prefix);
        if report.is_misconfigured() {
            return Err(Error::Other(report.detail));
        }
        Ok(())
    }
}

//! Cron-triggered Spin component (spin-trigger-cron 0.3.x/0.4.x, `fermyon:spin-cron@2.0.0`).
//! Every replica's timer fires; the guard lets at most one of them run the job per due time of
//! the guard's own schedule (the `schedule` and `time_zone` variables).

wit_bindgen::generate!({ world: "cron-job", path: "../wit", generate_all });

struct CronJob;

export!(CronJob);

impl Guest for CronJob {
    fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let settings = traffic_cop_app::Settings::for_event().map_err(Error::Other)?;
        let report = traffic_cop_app::tick(&settings);
        report.print(&format!("cron tick {}: ", metadata.timestamp));
        Ok(())
    }
}

//! A cron job that runs on every replica's timer, but does its work on one replica per due
//! time of its schedule: traffic-cop's guard decides whose turn it is with an Azure Blob lease.
//! Export: `fermyon:spin-cron@2.0.0` (trigger-cron 0.3.x/0.4.x; 0.5.0 also runs it). Every line
//! it prints is the guard's own.

wit_bindgen::generate!({ world: "guarded-job", path: "wit", generate_all });

use traffic_cop::lease1_0_0::guard::{self, Decision, Outcome, Run, RunDetails, Settings};
use traffic_cop::lease1_0_0::lease::Error as GuardError;

struct Job;

export!(Job);

impl Guest for Job {
    fn handle_cron_event(_: Metadata) -> Result<(), Error> {
        match guard::guarded_invoke(&settings()) {
            // A setting the guard cannot use fails the event (trigger-cron reports it), naming
            // the variable to fix.
            Decision::Skip(skipped)
                if matches!(
                    skipped.reason,
                    guard::SkipReason::Error(GuardError::BadSetting(_))
                ) =>
            {
                eprintln!("{}", skipped.text);
                Err(Error::Other(skipped.text))
            }
            Decision::Skip(skipped) => {
                println!("{}", skipped.text);
                Ok(())
            }
            Decision::Run(run) => {
                let outcome = work(&run, &run.details());
                println!("{}", run.complete(&outcome).text);
                Ok(())
            }
        }
    }
}

/// The singleton work. Pass `details.fencing_token` to every store it writes to (or write with
/// `run.write_fenced`), and call `run.keep_alive()` before `details.keep_alive_by_ms` if it
/// runs long; stop when that says the lease is lost.
fn work(_run: &Run, details: &RunDetails) -> Outcome {
    Outcome::Success(format!("caught up {} missed due times", details.past_due.missed))
}

/// The guard's settings: this component's Spin variables as they are (the guard reads them).
fn settings() -> Settings {
    let get = |name: &str| spin_sdk::variables::get(name).ok();
    Settings {
        connection_string: get("connection_string"),
        container: get("container"),
        lock: get("lock"),
        holder: get("holder"),
        lease_seconds: get("lease_seconds"),
        keep_alive_seconds: get("keep_alive_seconds"),
        schedule: get("schedule"),
        time_zone: get("time_zone"),
        cron_dialect: get("cron_dialect"),
        early_tolerance_ms: get("early_tolerance_ms"),
        starting_deadline_seconds: get("starting_deadline_seconds"),
        replace_after_seconds: get("replace_after_seconds"),
        wait_ms: get("wait_ms"),
        max_job_seconds: get("max_job_seconds"),
        refresh_seconds: get("refresh_seconds"),
    }
}

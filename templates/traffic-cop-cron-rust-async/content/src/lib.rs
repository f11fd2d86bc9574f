//! A cron job that runs on every replica's timer, but does its work on one replica per due
//! time of its schedule: traffic-cop's guard decides whose turn it is with an Azure Blob lease,
//! and keeps the lease while the work runs (`hold`). Every line it prints is the guard's own.
//! Export: `spin:cron@3.0.0`, async (trigger-cron 0.5.0 and later on Spin 4; 0.3.x/0.4.x cannot
//! load it: use the traffic-cop-cron-rust template there).

wit_bindgen::generate!({ world: "guarded-job", path: "wit", generate_all });

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use traffic_cop::lease0_5_0::hold::hold;
use traffic_cop::lease1_0_0::guard::{self, Decision, Outcome, Run, RunDetails, Settings};
use traffic_cop::lease1_0_0::lease::Error as GuardError;

struct Job;

export!(Job);

impl Guest for Job {
    async fn handle_cron_event(_: Metadata) -> Result<(), Error> {
        let run = match guard::guarded_invoke(&settings()) {
            Decision::Run(run) => run,
            // A setting the guard cannot use fails the event (trigger-cron reports it), naming
            // the variable to fix.
            Decision::Skip(s)
                if matches!(s.reason, guard::SkipReason::Error(GuardError::BadSetting(_))) =>
            {
                eprintln!("{}", s.text);
                return Err(Error::Other(s.text));
            }
            Decision::Skip(skipped) => {
                println!("{}", skipped.text);
                return Ok(());
            }
        };
        // `hold` renews the lease while the work runs and returns only if the lease is lost;
        // the work is then dropped at its next await, and `complete` reports it stopped.
        let outcome = first(hold(&run), work(&run, &run.details())).await;
        println!("{}", run.complete(&outcome).text);
        Ok(())
    }
}

/// The singleton work. Pass `details.fencing_token` to every store it writes to (or write with
/// `run.write_fenced`); await as it goes, so the lease is renewed beside it.
async fn work(_run: &Run, details: &RunDetails) -> Outcome {
    Outcome::Success(format!("caught up {} missed due times", details.past_due.missed))
}

/// The work's outcome, unless `hold` ends first (the lease is lost): the other is dropped.
async fn first<H: Future, W: Future<Output = Outcome>>(hold: H, work: W) -> Outcome {
    let (mut hold, mut work) = (pin!(hold), pin!(work));
    poll_fn(|cx| match hold.as_mut().poll(cx) {
        Poll::Ready(_) => Poll::Ready(Outcome::Failure(String::new())),
        Poll::Pending => work.as_mut().poll(cx),
    })
    .await
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

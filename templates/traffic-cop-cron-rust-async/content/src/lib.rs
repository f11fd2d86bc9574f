//! A cron job that runs on every replica's timer, but does its work on one replica per due
//! time of its schedule: traffic-cop's guard decides whose turn it is with an Azure Blob lease,
//! and keeps the lease while the work runs (guard@0.4.0's `hold`).
//! Export: `spin:cron@3.0.0`, async (trigger-cron 0.5.0 and later on Spin 4; 0.3.x/0.4.x cannot
//! load it: use the traffic-cop-cron-rust template there).

wit_bindgen::generate!({ world: "guarded-job", path: "wit", generate_all });

use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use traffic_cop::lease0_1_0::lease::{LeaseError, Lock};
use traffic_cop::lease0_3_0::guard::{
    self as guard_v3, Cron, GuardError, GuardOptions, Outcome, Schedule, SkipReason,
};
use traffic_cop::lease0_4_0::guard::{self, Decision, RunDetails};

struct Job;

export!(Job);

impl Guest for Job {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let tick = shown(metadata.timestamp.saturating_mul(1000), None);
        let (lock, options) = settings().map_err(|error| {
            eprintln!("tick {tick}: error: {error}");
            Error::Other(error)
        })?;
        let ticket = match guard::guarded_invoke(&lock, &options) {
            Decision::Run(ticket) => ticket,
            // Misconfiguration is an error, not a skip: on stderr, naming the variable to fix,
            // and the event fails (trigger-cron reports it).
            Decision::Skip(skipped) => {
                if let SkipReason::Error(error) = &skipped.reason {
                    let said = misconfigured(&lock, &options, error);
                    eprintln!("[{}] tick {tick}: error: {said}", options.holder);
                    return Err(Error::Other(said));
                }
                println!("[{}] tick {tick}: skipped: {}", options.holder, skipped.text);
                return Ok(());
            }
        };
        let details = ticket.details();
        // The guard keeps the lease while the work runs: `hold` renews it in the background
        // and returns only if the lease is lost (a third of the lease before it could pass to
        // another replica). Whichever ends first wins; the other is dropped, so lost-lease
        // work stops at its next await.
        let outcome = match first(ticket.hold(), work(&details)).await {
            First::Hold(lost) => Outcome::Failure(format!("stopped, the lease was lost: {lost:?}")),
            First::Work(Ok(())) => Outcome::Success,
            First::Work(Err(error)) => Outcome::Failure(error),
        };
        let said = match &outcome {
            Outcome::Success => "success".to_string(),
            Outcome::Failure(why) => format!("failure: {why}"),
        };
        let completed = match ticket.complete(&outcome) {
            Ok(()) => "completed".to_string(),
            Err(error) => format!("complete failed: {error:?}"),
        };
        println!(
            "[{}] tick {tick}: ran with fencing token {} for the due time {}{}: {said}, {completed}",
            options.holder,
            details.fencing_token,
            shown(details.past_due.due_at_ms, zone_of(&options).as_deref()),
            if details.previous_abandoned {
                " (took over an abandoned run)"
            } else {
                ""
            },
        );
        Ok(())
    }
}

/// The singleton work. Pass `details.fencing_token` to every store it writes to (or write with
/// `ticket.write_fenced`); await as it goes, so the lease is renewed beside it.
async fn work(details: &RunDetails) -> Result<(), String> {
    if details.past_due.missed > 0 {
        println!("catching up {} missed due times", details.past_due.missed);
    }
    Ok(())
}

enum First<A, B> {
    Hold(A),
    Work(B),
}

/// Whichever of `hold` and the work ends first; the other is dropped.
async fn first<A: Future, B: Future>(hold: A, work: B) -> First<A::Output, B::Output> {
    let (mut hold, mut work) = (pin!(hold), pin!(work));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(lost) = hold.as_mut().poll(cx) {
            return Poll::Ready(First::Hold(lost));
        }
        work.as_mut().poll(cx).map(First::Work)
    })
    .await
}

/// An instant as people read it: ISO 8601 on the job's wall clock, UTC beside it (the lease
/// component renders it from its own zone table).
fn shown(at_ms: u64, zone: Option<&str>) -> String {
    match guard_v3::show_time(at_ms, zone) {
        Ok(time) if time.local != time.utc => format!("{} ({})", time.local, time.utc),
        Ok(time) => time.utc,
        Err(_) => format!("{at_ms} ms since the Unix epoch"),
    }
}

fn zone_of(options: &GuardOptions) -> Option<String> {
    match &options.schedule {
        Schedule::Cron(cron) => cron.time_zone.clone(),
        _ => None,
    }
}

/// A guard error in a sentence that names the Spin variable to fix, when a setting is at fault
/// (the guard's settings check names the field; nothing is sent for it).
fn misconfigured(lock: &Lock, options: &GuardOptions, error: &GuardError) -> String {
    let check = guard_v3::check_settings(lock, options, 0, false);
    match check.problems.first() {
        Some(bad) => {
            let variable = match bad.field.as_str() {
                "holder" => "holder",
                "lease-seconds" | "keep-alive-seconds" => "lease_seconds",
                "time-zone" => "time_zone",
                "connection-string" => "connection_string",
                "container" => "container",
                "blob" => "lock",
                _ => "schedule",
            };
            format!("set the `{variable}` variable: {}: {}", bad.field, bad.message)
        }
        None => match error {
            GuardError::Lease(LeaseError::InvalidConfig(why)) => {
                format!("set the `connection_string` variable: {why}")
            }
            other => format!("could not decide: {other:?}"),
        },
    }
}

fn settings() -> Result<(Lock, GuardOptions), String> {
    let get =
        |name: &str| spin_sdk::variables::get(name).map_err(|e| format!("variable {name}: {e}"));
    let number = |name: &str| -> Result<u64, String> {
        let text = get(name)?;
        text.trim()
            .parse()
            .map_err(|_| format!("variable {name} must be a whole number, got {text:?}"))
    };
    let holder = get("holder")?;
    // Spin replicas have no name of their own; a random label still makes skips readable.
    let holder = if holder.trim().is_empty() {
        random_holder()
    } else {
        holder
    };
    let lock = Lock {
        connection_string: get("connection_string")?,
        container: get("container")?,
        blob: get("lock")?,
    };
    // The guard judges `schedule` in `time_zone`, so a daily 02:00 job stays at 02:00 local
    // time; the trigger only polls (spin.toml says how often).
    let zone = get("time_zone")?;
    let options = GuardOptions {
        holder,
        lease_seconds: u32::try_from(number("lease_seconds")?)
            .map_err(|_| "lease_seconds is too large")?,
        keep_alive_seconds: None,
        schedule: Schedule::Cron(Cron {
            expression: get("schedule")?,
            time_zone: (!zone.trim().is_empty()).then_some(zone),
            dialect: None,
        }),
        early_tolerance_ms: None,
        starting_deadline_seconds: None,
        overlap: None,
        wait_ms: None,
    };
    Ok((lock, options))
}

fn random_holder() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    format!("instance-{:06x}", hasher.finish() & 0xff_ffff)
}

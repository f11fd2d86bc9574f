//! A cron job that runs on every replica's timer, but does its work on one replica per due
//! time of its schedule: traffic-cop's guard decides whose turn it is with an Azure Blob lease.
//! Export: `fermyon:spin-cron@2.0.0` (trigger-cron 0.3.x/0.4.x; 0.5.0 also runs it).

wit_bindgen::generate!({ world: "guarded-job", path: "wit", generate_all });

use traffic_cop::lease0_1_0::lease::{LeaseError, Lock};
use traffic_cop::lease0_3_0::guard::{
    self, Cron, Decision, GuardError, GuardOptions, Outcome, Schedule, SkipReason, Ticket,
};

struct Job;

export!(Job);

impl Guest for Job {
    fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let (lock, options) = settings().map_err(Error::Other)?;
        let ticket = match guard::guarded_invoke(&lock, &options) {
            Decision::Run(ticket) => ticket,
            // Misconfiguration is an error, not a skip: on stderr, naming the variable to fix,
            // and the event fails (trigger-cron reports it).
            Decision::Skip(SkipReason::Error(error)) => {
                let said = misconfigured(&error);
                eprintln!("[{}] error: {said}", options.holder);
                return Err(Error::Other(said));
            }
            Decision::Skip(reason) => {
                println!(
                    "[{}] tick {}: skipped: {}",
                    options.holder,
                    metadata.timestamp,
                    why(reason)
                );
                return Ok(());
            }
        };
        let outcome = match work(&ticket) {
            Ok(()) => Outcome::Success,
            Err(error) => Outcome::Failure(error),
        };
        let said = match &outcome {
            Outcome::Success => "success".to_string(),
            Outcome::Failure(why) => format!("failure: {why}"),
        };
        let completed = match guard::complete(&ticket, &outcome) {
            Ok(()) => "completed".to_string(),
            Err(error) => format!("complete failed: {error:?}"),
        };
        println!(
            "[{}] tick {}: ran with fencing token {}{}: {said}, {completed}",
            options.holder,
            metadata.timestamp,
            ticket.fencing_token,
            if ticket.previous_abandoned {
                " (took over an abandoned run)"
            } else {
                ""
            },
        );
        Ok(())
    }
}

/// The singleton work. Pass `ticket.fencing_token` to every store it writes to, and call
/// `guard::keep_alive(ticket)` before `ticket.keep_alive_by_ms` if it runs long; stop when
/// that says the lease is lost.
fn work(ticket: &Ticket) -> Result<(), String> {
    if ticket.past_due.missed > 0 {
        println!("catching up {} missed due times", ticket.past_due.missed);
    }
    Ok(())
}

fn why(reason: SkipReason) -> String {
    match reason {
        SkipReason::HeldByOther(held) => {
            format!(
                "held by {}",
                held.holder.unwrap_or_else(|| "another instance".into())
            )
        }
        SkipReason::AlreadyRan(ran) => format!(
            "already ran for this due time ({})",
            ran.holder.unwrap_or_else(|| "another instance".into())
        ),
        SkipReason::TooLate(late) => format!("too late by {} ms", late.late_by_ms),
        SkipReason::NotDue(not) => format!("not due until {} ms", not.next_due_ms),
        SkipReason::Paused(paused) => format!("paused by {}: {}", paused.by, paused.reason),
        SkipReason::ScheduleConflict(conflict) => format!(
            "the lock runs on {:?}, this replica's schedule is {:?}",
            conflict.recorded, conflict.ours
        ),
        SkipReason::Error(error) => misconfigured(&error),
    }
}

/// A guard error in a sentence that names the Spin variable to fix, where one is at fault.
fn misconfigured(error: &GuardError) -> String {
    match error {
        GuardError::BadSchedule(bad) => {
            let variable = match bad.field.as_str() {
                "time-zone" => "time_zone",
                "lease-seconds" => "lease_seconds",
                "holder" => "holder",
                _ => "schedule",
            };
            format!("set the `{variable}` variable: {}: {}", bad.field, bad.message)
        }
        GuardError::Lease(LeaseError::InvalidConfig(why)) => {
            format!("set the `connection_string` variable: {why}")
        }
        GuardError::Lease(LeaseError::InvalidArgument(why)) => {
            let variable = ["lease-seconds", "holder", "container", "blob"]
                .into_iter()
                .find(|field| why.contains(field))
                .map_or("lease_seconds", |field| match field {
                    "lease-seconds" => "lease_seconds",
                    "blob" => "lock",
                    other => other,
                });
            format!("set the `{variable}` variable: {why}")
        }
        GuardError::Lease(other) => format!("could not decide: {other:?}"),
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
    // The trigger's `cron_expression` and the guard's `schedule` are the same text (Spin does
    // not expand variables in `cron_expression`, so spin.toml writes it twice: change both).
    // The guard judges it in `time_zone`, so a daily 02:00 job stays at 02:00 local time.
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

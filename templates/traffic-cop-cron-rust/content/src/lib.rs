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
        let tick = shown(metadata.timestamp.saturating_mul(1000), None);
        let (lock, options) = settings().map_err(|error| {
            eprintln!("tick {tick}: error: {error}");
            Error::Other(error)
        })?;
        let ticket = match guard::guarded_invoke(&lock, &options) {
            Decision::Run(ticket) => ticket,
            // Misconfiguration is an error, not a skip: on stderr, naming the variable to fix,
            // and the event fails (trigger-cron reports it).
            Decision::Skip(SkipReason::Error(error)) => {
                let said = misconfigured(&lock, &options, &error);
                eprintln!("[{}] tick {tick}: error: {said}", options.holder);
                return Err(Error::Other(said));
            }
            Decision::Skip(reason) => {
                let zone = zone_of(&options);
                println!(
                    "[{}] tick {tick}: skipped: {}",
                    options.holder,
                    why(reason, zone.as_deref())
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
            "[{}] tick {tick}: ran with fencing token {} for the due time {}{}: {said}, {completed}",
            options.holder,
            ticket.fencing_token,
            shown(ticket.past_due.due_at_ms, zone_of(&options).as_deref()),
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

fn why(reason: SkipReason, zone: Option<&str>) -> String {
    match reason {
        SkipReason::HeldByOther(held) => match (held.holder, held.since_ms) {
            (Some(by), Some(since)) => format!("held by {by}, running since {}", shown(since, zone)),
            (Some(by), None) => format!("held by {by}"),
            // The lease is taken and no run is recorded under it yet: nobody can be named.
            (None, _) => "held by another replica whose run is not recorded yet".into(),
        },
        SkipReason::AlreadyRan(ran) => format!(
            "already ran for the due time {}: the run {} started at {}",
            shown(ran.due_at_ms, zone),
            ran.holder.as_deref().unwrap_or("a holder the record does not name"),
            shown(ran.started_at_ms, zone)
        ),
        SkipReason::TooLate(late) => format!(
            "too late: {} s after the due time {}",
            late.late_by_ms / 1000,
            shown(late.due_at_ms, zone)
        ),
        SkipReason::NotDue(not) => format!("not due until {}", shown(not.next_due_ms, zone)),
        SkipReason::Paused(paused) => format!("paused by {}: {}", paused.by, paused.reason),
        SkipReason::ScheduleConflict(conflict) => format!(
            "deferring to the newer schedule {} (on this lock since {}): this replica's {} is \
             being replaced; if no replica with the newer schedule ticks again, this one takes \
             over at {}",
            conflict.newer,
            shown(conflict.since_ms, zone),
            conflict.ours,
            shown(conflict.until_ms, zone)
        ),
        SkipReason::Error(error) => format!("could not decide: {error:?}"),
    }
}

/// An instant as people read it: ISO 8601 on the job's wall clock, UTC beside it (the lease
/// component renders it from its own zone table).
fn shown(at_ms: u64, zone: Option<&str>) -> String {
    match guard::show_time(at_ms, zone) {
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
    let check = guard::check_settings(lock, options, 0, false);
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

//! Skip reasons and granted runs in one line each, for every consumer to print (the guard
//! hands them out as `text`, so no adapter rewrites them).
//! Times are shown on the wall clock of the job's schedule zone (UTC for grids and unscheduled
//! jobs).

use super::{GuardOptions, Outcome, SkipReason, Ticket};
use crate::civil;
use crate::error::Error;
use crate::schedule::Schedule;

/// Why a tick skipped; without options (they could not be read), times in UTC.
pub fn describe_skip(reason: &SkipReason, options: Option<&GuardOptions>) -> String {
    let at = |ms: u64| shown(ms, options);
    match reason {
        SkipReason::HeldByOther { holder, since_ms, waited_ms, .. } => {
            let by = match (holder, since_ms) {
                (Some(by), Some(since)) => format!("held by {by}, running since {}", at(*since)),
                (Some(by), None) => format!("held by {by}"),
                // The lease is taken and no run is recorded under it yet (a grant in flight,
                // or a run closing): nobody can be named.
                (None, _) => "held by another replica whose run is not recorded yet".into(),
            };
            // A look takes milliseconds; only a `wait-ms` wait is worth saying.
            match waited_ms {
                0..1000 => by,
                waited => format!("{by} (waited {})", duration(*waited)),
            }
        }
        SkipReason::AlreadyRan { due_at_ms, started_ms, holder, running, outcome, next_due_ms } => {
            let by = holder.as_deref().unwrap_or("a holder the record does not name");
            let state = match (running, outcome) {
                (true, _) => "still running".to_string(),
                (false, Some(Outcome::Success)) => "succeeded".to_string(),
                (false, Some(Outcome::Failure(why))) => format!("failed: {why}"),
                (false, None) => "ended".to_string(),
            };
            let next =
                next_due_ms.map(|next| format!("; next due {}", at(next))).unwrap_or_default();
            format!(
                "already ran for the due time {}: the run {by} started at {} ({state}){next}",
                at(*due_at_ms),
                at(*started_ms)
            )
        }
        SkipReason::TooLate { late_by_ms, next_due_ms, .. } => format!(
            "too late: {} after the due time, past the starting deadline; next due {}",
            duration(*late_by_ms),
            at(*next_due_ms)
        ),
        SkipReason::NotDue { next_due_ms: Some(next) } => {
            format!("not due yet: next due {}", at(*next))
        }
        SkipReason::NotDue { next_due_ms: None } => "not due yet: no due time ahead".into(),
        SkipReason::Paused(paused) => {
            format!("paused by {} since {}: {}", paused.by, at(paused.since_ms), paused.reason)
        }
        SkipReason::ScheduleConflict { newer, ours, since_ms, until_ms } => {
            deferral(newer, ours, at(*since_ms), at(*until_ms))
        }
        SkipReason::Remembered(remembered) => {
            let learned = match remembered.next_due_ms {
                _ if remembered.paused => "the job was paused".to_string(),
                Some(next) => format!("nothing is due before {}", at(next)),
                None => "nothing is due".to_string(),
            };
            format!(
                "not asking storage: at this replica's look at {} {learned}; it asks again from {}",
                at(remembered.looked_at_ms),
                at(remembered.asks_from_ms)
            )
        }
        SkipReason::Error(error) => format!("could not decide: {error}"),
    }
}

/// A replica with an older schedule deferring to a newer one: to which, since when, and until
/// when at the latest.
pub fn deferral(newer: &str, ours: &str, since: String, until: String) -> String {
    format!(
        "deferring to the newer schedule {newer} (on this lock since {since}): this replica's \
         {ours} is being replaced; if no replica with the newer schedule ticks again, this one \
         takes over at {until}"
    )
}

/// A granted run: its due time, how late, what it catches up for, its token.
pub fn describe_run(ticket: &Ticket) -> String {
    let options = &ticket.options;
    let due = &ticket.past_due;
    let mut line = match &ticket.manual_by {
        Some(by) => format!("manual run asked by {by}"),
        None => format!("run for the due time {}", shown(due.due_at_ms, Some(options))),
    };
    if due.late_by_ms > 0 {
        line += &format!(", {} late", duration(due.late_by_ms));
    }
    if due.missed > 0 {
        line += &format!(", catching up for {} missed due times", due.missed);
    }
    if ticket.previous_abandoned {
        line += ", the previous run was abandoned";
    }
    if let Some(replaced) = ticket.replaced {
        line += &format!(", replacing the stuck run with token {replaced}");
    }
    line + &format!(", fencing token {}", ticket.fencing_token)
}

pub(super) fn shown(at_ms: u64, options: Option<&GuardOptions>) -> String {
    match options.map(GuardOptions::schedule) {
        Some(Schedule::Cron(cron)) => {
            civil::iso8601(at_ms, cron.zone().offset_at((at_ms / 1000) as i64))
        }
        _ => civil::iso8601(at_ms, 0),
    }
}

/// A length of time as people say it: `4.2 s`, `90 s`, `12 min`, `3 h 5 min`, `2 d 4 h`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        // Tenths in integers: formatting an f64 would bring core's float printing, about
        // 19 KiB of the component, for this one case.
        0 => {
            let tenths = (ms + 50) / 100;
            format!("{}.{} s", tenths / 10, tenths % 10)
        }
        1..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => match s / 60 % 60 {
            0 => format!("{} h", s / 3600),
            m => format!("{} h {m} min", s / 3600),
        },
        _ => match s / 3600 % 24 {
            0 => format!("{} d", s / 86_400),
            h => format!("{} d {h} h", s / 86_400),
        },
    }
}

/// A skip's line for the log, which names the due time it is about (never the tick that woke
/// the replica: a frozen replica's late tick can be about a later due time than its own):
/// `[replica-1] skipped the due time 2026-11-27T02:00:00+01:00: held by replica-2, running
/// since …`. A setting to fix is an error, not a skip: `[replica-1] error: set the
/// `time_zone` variable: …`.
pub fn skip_line(holder: &str, reason: &SkipReason, options: Option<&GuardOptions>) -> String {
    let detail = match reason {
        SkipReason::Error(error @ Error::BadOption(_)) => {
            return format!("[{holder}] error: {}", error_text(error));
        }
        // Spin makes an instance per event, so a replica's earlier tick may still be working
        // when its next one fires: naming itself as another holder would mislead.
        SkipReason::HeldByOther { holder: Some(by), .. } if by == holder => format!(
            "the previous tick of this replica is still working (lease held by {holder} until it \
             completes or expires)"
        ),
        SkipReason::Error(error) => format!("could not decide: {}", error_text(error)),
        other => describe_skip(other, options),
    };
    let due = match reason {
        SkipReason::HeldByOther { due_at_ms, .. } => *due_at_ms,
        SkipReason::AlreadyRan { due_at_ms, .. } | SkipReason::TooLate { due_at_ms, .. } => {
            Some(*due_at_ms)
        }
        _ => None,
    };
    match due {
        Some(due) => format!("[{holder}] skipped the due time {}: {detail}", shown(due, options)),
        None => format!("[{holder}] skipped: {detail}"),
    }
}

/// A granted run's line as it starts: `[replica-1] run for the due time …, fencing token 4`.
pub fn run_line(ticket: &Ticket) -> String {
    format!("[{}] {}", ticket.options.holder, describe_run(ticket))
}

/// A finished run's line: the run, its token, what it took over and caught up, the job's own
/// words (`summary`, or the failure's reason), and how it ended if not as the job said.
pub fn finished_line(ticket: &Ticket, outcome: &Outcome, summary: &str, end: &RunEnd) -> String {
    let options = &ticket.options;
    let what = match &ticket.manual_by {
        Some(by) => format!("ran the manual run asked by {by}"),
        None if options.schedule.is_scheduled() => {
            format!("ran for the due time {}", shown(ticket.past_due.due_at_ms, Some(options)))
        }
        None => "ran".to_string(),
    };
    let mut line =
        format!("[{}] {what} with fencing token {}", options.holder, ticket.fencing_token);
    if ticket.previous_abandoned {
        line += " (took over an abandoned run)";
    }
    if let Some(replaced) = ticket.replaced {
        line += &format!(" (replaced the stuck run with token {replaced})");
    }
    if ticket.past_due.missed > 0 {
        line += &format!(" (caught up {} missed due times)", ticket.past_due.missed);
    }
    if let RunEnd::Stopped(lost) = end {
        return line + &format!(": stopped: lease lost during the work ({})", error_text(lost));
    }
    line += &match (outcome, summary.trim()) {
        (Outcome::Success, "") => ": succeeded".to_string(),
        (Outcome::Success, said) => format!(": {said}"),
        (Outcome::Failure(why), _) => format!(": failed: {why}"),
    };
    if let RunEnd::Closed { outlived_ms: Some(over), .. } = end {
        line += &format!(
            "; it outlived its lease by {}: another run may have started meanwhile",
            duration(*over)
        );
    }
    if let RunEnd::Closed { failed: Some(error), .. } = end {
        line += &format!("; complete failed: {}", error_text(error));
    }
    line
}

/// How a run ended, as its line says.
pub enum RunEnd {
    /// `complete` was sent: whether it failed, and how long after the lease's deadline the job
    /// ended (a job nothing renewed, which outlived its lease).
    Closed { failed: Option<Error>, outlived_ms: Option<u64> },
    /// The lease was lost while the job worked (a renewal said so): nothing was sent to close
    /// the run, which the next grant reports abandoned.
    Stopped(Error),
}

/// An error in words. A setting names the variable to set.
pub fn error_text(error: &Error) -> String {
    match error {
        Error::BadOption(bad) => format!("set the `{}` variable: {}", bad.field, bad.message),
        // Said as what it means for the job, as the service's `lease-lost` is.
        Error::LeaseLost(crate::error::LeaseLoss::RanOut(ran_out)) => {
            format!("lease lost: its time ran out here: {}", ran_out.message)
        }
        other => other.to_string(),
    }
}

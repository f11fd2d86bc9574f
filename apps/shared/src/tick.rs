//! One timer tick: ask the guard, do the singleton job if it is our turn, record the outcome.
//!
//! The job is a janitor's report over the lock container: how many locks there are, which are
//! held, and which runs were abandoned (granted, never completed, lease gone). Small, but it
//! reads real state, and it must not run on every replica at once.

use crate::board::BoardRow;
use crate::guard::{self, Decision, Outcome, SkipReason};
use crate::Settings;
use serde::Serialize;

/// What a tick did, for logs and the HTTP response.
#[derive(Clone, Debug, Serialize)]
pub struct TickReport {
    pub holder: String,
    /// `run` or `skip`.
    pub decision: &'static str,
    pub fencing_token: Option<u64>,
    pub previous_abandoned: bool,
    /// Due times missed before this run, which it catches up for (runs only).
    pub missed: Option<u64>,
    /// How long after its due time the run started, in ms (runs only).
    pub late_by_ms: Option<u64>,
    /// Why it skipped, or what the job found.
    pub detail: String,
}

impl TickReport {
    pub fn line(&self) -> String {
        match self.fencing_token {
            Some(token) => {
                let took_over =
                    if self.previous_abandoned { " (took over an abandoned run)" } else { "" };
                let caught_up = match self.missed {
                    Some(missed) if missed > 0 => {
                        format!(" (caught up {missed} missed due times)")
                    }
                    _ => String::new(),
                };
                format!(
                    "[{}] ran with fencing token {token}{took_over}{caught_up}: {}",
                    self.holder, self.detail
                )
            }
            None => format!("[{}] skipped: {}", self.holder, self.detail),
        }
    }
}

pub fn tick(settings: &Settings) -> TickReport {
    let report = |decision, fencing_token, previous_abandoned, detail| TickReport {
        holder: settings.holder.clone(),
        decision,
        fencing_token,
        previous_abandoned,
        missed: None,
        late_by_ms: None,
        detail,
    };
    let ticket = match guard::guarded_invoke(&settings.lock(), &settings.options()) {
        Decision::Run(ticket) => ticket,
        // Spin makes an instance per event, so a replica's earlier tick may still be working
        // when its next one fires; naming ourselves as "another" holder would mislead.
        Decision::Skip(SkipReason::HeldByOther(held))
            if held.holder.as_ref() == Some(&settings.holder) =>
        {
            let detail = format!(
                "the previous tick of this replica is still working (lease held by {} until it completes or expires)",
                settings.holder
            );
            return report("skip", None, false, detail);
        }
        Decision::Skip(SkipReason::HeldByOther(held)) => {
            let by = held.holder.unwrap_or_else(|| "another instance".into());
            return report("skip", None, false, format!("held by {by}"));
        }
        Decision::Skip(SkipReason::AlreadyRan(ran)) => {
            let by = ran.holder.unwrap_or_else(|| "another instance".into());
            return report("skip", None, false, format!("already ran this interval ({by})"));
        }
        Decision::Skip(SkipReason::TooLate(late)) => {
            let detail = format!(
                "too late: {} s after the due time, past the starting deadline; next due at {}",
                late.late_by_ms / 1000,
                crate::board::time(Some(late.next_due_ms))
            );
            return report("skip", None, false, detail);
        }
        Decision::Skip(SkipReason::Error(error)) => {
            return report("skip", None, false, format!("could not decide: {error:?}"))
        }
    };
    let report = |decision, fencing_token, previous_abandoned, detail| TickReport {
        missed: Some(ticket.past_due.missed),
        late_by_ms: Some(ticket.past_due.late_by_ms),
        ..report(decision, fencing_token, previous_abandoned, detail)
    };
    if let Err(lost) = work(settings, &ticket) {
        return report("run", Some(ticket.fencing_token), ticket.previous_abandoned, lost);
    }
    let (outcome, detail) = match janitor(settings) {
        Ok(summary) => (Outcome::Success, summary),
        Err(error) => (Outcome::Failure(error.clone()), format!("job failed: {error}")),
    };
    // After the work, before `complete`: the write is fenced by the run's token, so a run
    // that overshot its lease is refused here rather than overwriting a newer result.
    let detail = format!("{detail}; {}", crate::result::write_result(settings, &ticket));
    let detail = match guard::complete(&ticket, &outcome) {
        Ok(()) => detail,
        Err(error) => format!("{detail}; complete failed: {error:?}"),
    };
    report("run", Some(ticket.fencing_token), ticket.previous_abandoned, detail)
}

/// The long part of the job: works in small steps and keeps the lease alive when due; stops
/// at once if the lease is lost (another run may already have started).
fn work(settings: &Settings, ticket: &guard::Ticket) -> Result<(), String> {
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    };
    // A grant that reached us only after its deadline (a paused host) is no grant.
    if now_ms() >= ticket.deadline_ms {
        return Err("stopped before starting: the lease's deadline had passed".into());
    }
    let (until, mut keep_alive_by) = (now_ms() + settings.work_ms, ticket.keep_alive_by_ms);
    while now_ms() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Work that is done goes straight to writing its result, even when a pause (a frozen
        // VM, SIGSTOP) made it overshoot the lease: the fenced write is what protects the
        // store then, and `complete` reports the lost lease. Renewing first would only hide
        // the case the fencing token exists for.
        if now_ms() >= until {
            break;
        }
        if now_ms() >= keep_alive_by {
            guard::keep_alive(ticket)
                .map_err(|e| format!("stopped: lease lost during the work ({e:?})"))?;
            keep_alive_by =
                now_ms() + u64::from(ticket.options.keep_alive_seconds.unwrap_or(5)) * 1000;
        }
    }
    Ok(())
}

fn janitor(settings: &Settings) -> Result<String, String> {
    let rows: Vec<BoardRow> = guard::board(&settings.location())
        .map_err(|e| format!("{e:?}"))?
        .into_iter()
        .map(BoardRow::from)
        .collect();
    let held = rows.iter().filter(|r| r.state == "leased" || r.state == "breaking").count();
    let abandoned: Vec<&str> = rows
        .iter()
        .filter(|r| r.running && !(r.state == "leased" || r.state == "breaking"))
        .map(|r| r.name.as_str())
        .collect();
    Ok(format!(
        "janitor report: {} locks, {held} held, {} abandoned{}",
        rows.len(),
        abandoned.len(),
        if abandoned.is_empty() { String::new() } else { format!(" ({})", abandoned.join(", ")) }
    ))
}

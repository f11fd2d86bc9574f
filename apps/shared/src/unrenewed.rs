//! A run under guard@0.3.0 that nothing renews while the job runs: a sync job blocks its
//! instance (the sync cron wrapper), and a guarded WASI 0.2 HTTP handler has nothing beside it
//! either (`traffic-cop-guarded`). So the job must end within its lease: a `max_job_seconds`
//! longer than the lease is refused before storage is asked, a grant that reaches us after its
//! deadline calls nothing, and a run that outlived its lease says another may have started.

use crate::guard::{self, Decision, Outcome, Ticket};
use crate::{describe, duration, now_ms, BadVariable, Grant, Settings, TickReport};

pub enum Unrenewed {
    /// Not this replica's turn, or the settings cannot be used: the report says which.
    Skipped(TickReport),
    /// Granted only after the lease's deadline (a paused host): the job must not be called.
    Late(TickReport),
    /// The job may run: the ticket, to `complete` with [`finished`], and its grant. (guard@0.3.0's
    /// ticket is a record of its own options and more, boxed to keep the variants alike.)
    Granted { ticket: Box<Ticket>, grant: Grant },
}

/// Asks the guard, once `max_job_seconds` is known to fit in the lease.
pub fn decide(settings: &Settings) -> Unrenewed {
    let lease = u64::from(settings.lease_seconds);
    if let Some(max) = settings.max_job_seconds.filter(|&max| max > lease) {
        let message = format!(
            "{max} s is longer than the lease ({lease} s), and nothing renews the lease while a \
             sync handler runs: raise `lease_seconds` (at most 60) or use the async wrapper"
        );
        let bad = BadVariable { variable: "max_job_seconds", message };
        return Unrenewed::Skipped(TickReport::misconfigured(settings, &bad));
    }
    let ticket = match guard::guarded_invoke(&settings.lock(), &settings.options()) {
        Decision::Run(ticket) => ticket,
        Decision::Skip(reason) => return Unrenewed::Skipped(TickReport::skipped(settings, reason)),
    };
    let grant = Grant::of(&ticket);
    if now_ms() >= ticket.deadline_ms {
        let detail = "stopped before starting: the lease's deadline had passed".to_string();
        return Unrenewed::Late(TickReport::ran(settings, &grant, detail));
    }
    Unrenewed::Granted { ticket: Box::new(ticket), grant }
}

/// Closes a granted run with the job's `outcome`: its report, which also says when the job
/// outlived its lease and when `complete` failed.
pub fn finished(
    settings: &Settings,
    ticket: &Ticket,
    grant: &Grant,
    outcome: &Outcome,
    mut detail: String,
) -> TickReport {
    let over = now_ms().saturating_sub(ticket.deadline_ms);
    if over > 0 {
        detail.push_str(&format!(
            "; it outlived its lease by {}: another run may have started meanwhile",
            duration(over)
        ));
    }
    let detail = match guard::complete(ticket, outcome) {
        Ok(()) => detail,
        Err(error) => format!("{detail}; complete failed: {}", describe(&error)),
    };
    TickReport::ran(settings, grant, detail)
}

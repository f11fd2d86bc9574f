//! A run under guard@0.4.0, for the async components: decide, then the work beside the
//! ticket's `hold`, whichever ends first. `hold` renews the lease meanwhile and ends first only
//! when the job must stop; the work's future is then dropped at its current await.

use crate::guard::{GuardError, Outcome, RanOutWhen};
use crate::guard_v4::{self, Decision, Ticket};
use crate::{describe, Grant, Settings, TickReport};
use futures::future::{select, Either};
use std::future::Future;
use std::pin::pin;

pub enum Holding<T> {
    /// Not this replica's turn, or the settings cannot be used: the report says which.
    Skipped(TickReport),
    /// The lease was lost while the work ran, and the work was dropped. The run is left open
    /// for the next one to report abandoned, as the sync components leave a lost run.
    Stopped(TickReport),
    /// The work ended with the lease held: the ticket, to `complete`, and the work's answer.
    Worked { ticket: Ticket, grant: Grant, output: T },
}

/// `work` gets the run's grant (its due time, token, what it catches up for).
pub async fn run_holding<F: Future>(
    settings: &Settings,
    work: impl FnOnce(&Grant) -> F,
) -> Holding<F::Output> {
    let ticket = match guard_v4::guarded_invoke(&settings.lock(), &settings.options()) {
        Decision::Run(ticket) => ticket,
        Decision::Skip(skipped) => {
            return Holding::Skipped(TickReport::skipped(settings, skipped.reason))
        }
    };
    let grant = Grant::of_v4(&ticket);
    let output = match select(pin!(ticket.hold()), pin!(work(&grant))).await {
        Either::Left((ended, _)) => {
            let (why, blocked) = match ended {
                Err(lost) => (describe(&lost), is_blocked(&lost)),
                Ok(()) => ("the run was closed under it".into(), false),
            };
            let detail = format!("stopped: lease lost during the work ({why})");
            let report = TickReport { blocked, ..TickReport::ran(settings, &grant, detail) };
            return Holding::Stopped(report);
        }
        Either::Right((output, _)) => output,
    };
    Holding::Worked { ticket, grant, output }
}

/// Closes a worked run with `outcome`: its report, which says so when `complete` failed.
pub fn completed(
    settings: &Settings,
    ticket: &Ticket,
    grant: &Grant,
    outcome: &Outcome,
    detail: String,
) -> TickReport {
    let (detail, blocked) = match ticket.complete(outcome) {
        Ok(()) => (detail, false),
        Err(error) => {
            (format!("{detail}; complete failed: {}", describe(&error)), is_blocked(&error))
        }
    };
    TickReport { blocked, ..TickReport::ran(settings, grant, detail) }
}

/// The component stopped the run, or refused its success, because its instance could not
/// renew the lease when due.
fn is_blocked(error: &GuardError) -> bool {
    matches!(error, GuardError::LeaseRanOut(ran_out) if ran_out.when == RanOutWhen::Blocked)
}

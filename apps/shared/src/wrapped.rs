//! The async cron wrappers' tick, whichever handler they wrap (`handle-cron-event` or the
//! `traffic-cop:job` interface): settings, the decision, the wrapped call beside `hold`, its
//! answer as the run's outcome, the decision printed.

use crate::guard::Outcome;
use crate::holding::{completed, run_holding, Holding};
use crate::{woken_by_cron, Grant, Settings};
use std::future::Future;

/// `call` gets the settings and the run's grant; `reason` reads a failure's text from the
/// handler's error. `Err` is the event's failure text: the handler's own, a stop, or settings
/// that cannot be used. The handler is called only on the replica whose turn it is.
pub async fn cron_wrapped<F, E>(
    timestamp: u64,
    call: impl FnOnce(&Settings, &Grant) -> F,
    reason: impl Fn(&E) -> String,
) -> Result<(), String>
where
    F: Future<Output = Result<(), E>>,
{
    let prefix = woken_by_cron(timestamp);
    let settings = Settings::from_wasi_config().map_err(|bad| {
        eprintln!("{prefix}error: {bad}");
        bad.to_string()
    })?;
    let (ticket, grant, answer) = match run_holding(&settings, |g| call(&settings, g)).await {
        Holding::Skipped(report) => {
            report.print(&prefix);
            return if report.is_misconfigured() { Err(report.detail) } else { Ok(()) };
        }
        Holding::Stopped(report) => {
            report.print(&prefix);
            return Err(report.detail);
        }
        Holding::Worked { ticket, grant, output } => (ticket, grant, output),
    };
    let (outcome, detail) = match &answer {
        Ok(()) => (Outcome::Success, "the handler succeeded".to_string()),
        Err(error) => {
            let why = reason(error);
            let detail = format!("the handler failed: {why}");
            (Outcome::Failure(why), detail)
        }
    };
    let report = completed(&settings, &ticket, &grant, &outcome, detail);
    report.print(&prefix);
    // A run whose renewals were blocked failed whatever the handler said: the trigger logs it.
    if report.blocked {
        return Err(report.detail);
    }
    // The event returns the handler's answer, so the trigger logs a failed run as it would
    // the handler's own failure.
    answer.map_err(|error| reason(&error))
}

/// The headers that carry the run to a wrapped HTTP job, which replace any the caller sent:
/// a job must not be told a token it was not granted.
pub const RUN_HEADERS: [&str; 3] =
    ["traffic-cop-fencing-token", "traffic-cop-due-at-ms", "traffic-cop-missed"];

/// The values of [`RUN_HEADERS`] for a run, in order.
pub fn run_header_values(grant: &Grant) -> [String; 3] {
    [grant.fencing_token, grant.past_due.due_at_ms, grant.past_due.missed].map(|v| v.to_string())
}

/// A wrapped HTTP job's answer as the run's outcome: a status of 400 or more is its failure.
pub fn answered(status: u16) -> (Outcome, String) {
    let detail = format!("the handler answered {status}");
    if status >= 400 {
        (Outcome::Failure(detail.clone()), detail)
    } else {
        (Outcome::Success, detail)
    }
}

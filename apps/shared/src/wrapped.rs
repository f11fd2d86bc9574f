//! What the wrappers share: the async cron wrappers' tick, whichever handler they wrap
//! (`handle-cron-event` or the `traffic-cop:job` interface), and how a wrapped handler's
//! answer becomes the run's outcome.

use crate::guard::{Outcome, RunDetails};
use crate::run::run_holding;
use crate::{woken_by_cron, Settings};
use std::future::Future;

/// `call` gets the settings and the run; `reason` reads a failure's text from the handler's
/// error. `Err` is the event's failure text: the handler's own, a stop, or settings that
/// cannot be used. The handler is called only on the replica whose turn it is.
pub async fn cron_wrapped<F, E>(
    timestamp: u64,
    call: impl FnOnce(&Settings, &RunDetails) -> F,
    reason: impl Fn(&E) -> String,
) -> Result<(), String>
where
    F: Future<Output = Result<(), E>>,
{
    let prefix = woken_by_cron(timestamp);
    let settings = Settings::from_wasi_config();
    let (report, answer) = run_holding(&settings, |run| {
        let called = call(&settings, run);
        async {
            let said = called.await.map_err(|error| reason(&error));
            (handler_outcome(said.clone()), said)
        }
    })
    .await;
    report.print(&prefix);
    // A run whose renewals were blocked, or whose lease was lost while the handler worked,
    // failed whatever the handler said: the trigger logs it. Otherwise the event returns the
    // handler's answer, so the trigger logs a failed run as it would the handler's own failure.
    match answer {
        Some(answer) if !report.blocked => answer,
        _ if report.is_misconfigured() || report.blocked || report.fencing_token.is_some() => {
            Err(report.detail)
        }
        _ => Ok(()),
    }
}

/// A wrapped handler's answer as the run's outcome: its own error is the failure's reason.
pub fn handler_outcome(answer: Result<(), String>) -> Outcome {
    match answer {
        Ok(()) => Outcome::Success("the handler succeeded".into()),
        Err(why) => Outcome::Failure(why),
    }
}

/// The headers that carry the run to a wrapped HTTP job, which replace any the caller sent:
/// a job must not be told a token it was not granted.
pub const RUN_HEADERS: [&str; 3] =
    ["traffic-cop-fencing-token", "traffic-cop-due-at-ms", "traffic-cop-missed"];

/// The values of [`RUN_HEADERS`] for a run, in order.
pub fn run_header_values(run: &RunDetails) -> [String; 3] {
    [run.fencing_token, run.past_due.due_at_ms, run.past_due.missed].map(|v| v.to_string())
}

/// A wrapped HTTP job's answer as the run's outcome: a status of 400 or more, or an error it
/// returned instead of a response, is its failure.
pub fn answered(status: Result<u16, String>) -> Outcome {
    match status {
        Ok(status @ 400..) => Outcome::Failure(format!("the handler answered {status}")),
        Ok(status) => Outcome::Success(format!("the handler answered {status}")),
        Err(error) => Outcome::Failure(format!("the handler returned an error: {error}")),
    }
}

//! The job's result, kept in a fenced blob next to the lock (`results/<lock>`): the store
//! refuses a write whose fencing token is older than the one it holds, so a run that was
//! paused past its lease cannot overwrite the result of the run that took over.
//!
//! The blob is a short history, one `token holder due-second` line per accepted write (the
//! last 50), so anyone reading it can see the order the store accepted results in.

use crate::guard::{self, FencedError, FencedWrite, RunDetails};
use crate::Settings;

const KEEP: usize = 50;

/// Appends this run's line to the stored history under the run's fencing token; says what
/// happened, for the tick's log line.
/// `write` is the run's fenced write.
pub fn write_result(
    settings: &Settings,
    run: &RunDetails,
    write: impl FnOnce(&str, &[u8]) -> Result<FencedWrite, FencedError>,
) -> String {
    let name = format!("results/{}", settings.lock);
    let previous = match guard::read_fenced(&settings.guard, &name) {
        Ok(found) => found.map(|data| String::from_utf8_lossy(&data.contents).into_owned()),
        Err(error) => {
            return format!("result write failed: could not read it: {}", guard::error_text(&error))
        }
    };
    let mut lines: Vec<String> = previous.unwrap_or_default().lines().map(str::to_string).collect();
    lines.push(format!("{} {} {}", run.fencing_token, run.holder, run.past_due.due_at_ms / 1000));
    let from = lines.len().saturating_sub(KEEP);
    let contents = lines[from..].join("\n") + "\n";
    match write(&name, contents.as_bytes()) {
        Ok(written) => format!("result written with token {}", written.fencing_token),
        Err(FencedError::StaleFencingToken(stale)) => format!(
            "result write refused: stale fencing token {} < {}",
            stale.presented, stale.stored
        ),
        Err(FencedError::Failed(error)) => {
            format!("result write failed: {}", guard::error_text(&error))
        }
    }
}

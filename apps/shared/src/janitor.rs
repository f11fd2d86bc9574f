//! The demo's singleton job, one guarded tick of it: a janitor's report over the lock
//! container (how many locks, which are held, which runs were abandoned). Small, but it reads
//! real state, keeps its lease with `keep-alive` while it works (`work_ms`), writes its result
//! fenced by its token, and must not run on every replica at once.

use crate::board::{now_ms, BoardRow};
use crate::guard::{self, Outcome, Run, RunDetails};
use crate::run::run_once;
use crate::{Settings, TickReport};

/// One tick: the decision, and on this replica's turn the job.
pub fn tick(settings: &Settings) -> TickReport {
    run_once(settings, |run, details| {
        if let Err(stopped) = work(settings, run, details) {
            return Outcome::Failure(stopped);
        }
        report_and_write(settings, run, details)
    })
}

/// The job's end: the janitor's report, and its result written fenced by the run's token,
/// after the work and before `complete`, so a run that overshot its lease is refused here
/// rather than overwriting a newer result.
fn report_and_write(settings: &Settings, run: &Run, details: &RunDetails) -> Outcome {
    let report = janitor_report(settings);
    let written = crate::result::write_result(settings, details, |name, contents| {
        run.write_fenced(name, contents)
    });
    match report {
        Ok(summary) => Outcome::Success(format!("{summary}; {written}")),
        Err(error) => Outcome::Failure(format!("job failed: {error}; {written}")),
    }
}

/// The long part of the job: works in small steps and keeps the lease alive when due; stops
/// at once if the lease is lost (another run may already have started).
fn work(settings: &Settings, run: &Run, details: &RunDetails) -> Result<(), String> {
    let until = now_ms() + settings.work_ms;
    let (mut keep_alive_by, mut deadline) = (details.keep_alive_by_ms, details.deadline_ms);
    let period_ms = keep_alive_by.saturating_sub(now_ms()).max(1000);
    while now_ms() < until {
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Work that is done goes straight to writing its result, even when a pause (a frozen
        // VM, SIGSTOP) made it overshoot the lease: the fenced write is what protects the
        // store then, and `complete` reports the lost lease. Renewing first would only hide
        // the case the fencing token exists for.
        if now_ms() >= until {
            break;
        }
        // Work not done past the lease's deadline stops: another run may have started.
        if now_ms() >= deadline {
            return Err("stopped: the lease's deadline passed before a keep-alive".into());
        }
        if now_ms() >= keep_alive_by {
            // A lost lease: `complete` says so, and sends nothing.
            deadline = run.keep_alive().map_err(|e| guard::error_text(&e))?;
            keep_alive_by = now_ms() + period_ms;
        }
    }
    Ok(())
}

fn janitor_report(settings: &Settings) -> Result<String, String> {
    let rows: Vec<BoardRow> = guard::board(&settings.guard)
        .map_err(|e| guard::error_text(&e))?
        .locks
        .into_iter()
        .map(BoardRow::from)
        .collect();
    let held = rows.iter().filter(|r| r.held()).count();
    let abandoned: Vec<&str> =
        rows.iter().filter(|r| r.running && !r.held()).map(|r| r.name.as_str()).collect();
    Ok(format!(
        "janitor report: {} locks, {held} held, {} abandoned{}",
        rows.len(),
        abandoned.len(),
        if abandoned.is_empty() { String::new() } else { format!(" ({})", abandoned.join(", ")) }
    ))
}

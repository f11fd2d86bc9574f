//! One guarded run, the sequence every Rust consumer shares: ask the lease component, run the
//! job only on the replica whose turn it is, close the run, report. The component decides,
//! keeps the run and says every line; this orders the calls: [`run_once`], [`run_unrenewed`]
//! and [`run_holding`], one per way a run is kept.

use crate::guard::{self, Decision, Outcome, Run, RunDetails};
use crate::{Settings, TickReport};
use futures::future::{select, Either};
use spin_sdk::wit::wasi::keyvalue::store;
use std::future::Future;
use std::pin::pin;

/// Whose turn it is.
enum Turn {
    /// Not this replica's, or the settings cannot be used: the report says which.
    Skipped(TickReport),
    Granted(Granted),
}

/// A run granted to this replica, open until [`Granted::finish`].
struct Granted {
    run: Run,
    details: RunDetails,
}

/// Asks the guard with what the last tick's look taught, kept in the host's `default`
/// key-value store through the standard `wasi:keyvalue/store` (Spin's store; each replica's own
/// unless the runtime config shares one), so that a tick that cannot be due sends no request.
/// Without a store (a manifest without `key_value_stores`), or one that refuses, every tick
/// asks storage.
fn decide(settings: &Settings) -> Turn {
    let bucket = store::open("default").ok();
    let key = guard::memory_key(&settings.guard).ok();
    let kept = match (&bucket, &key) {
        (Some(bucket), Some(key)) => bucket.get(key).ok().flatten(),
        _ => None,
    };
    let kept = kept.and_then(|bytes| String::from_utf8(bytes).ok());
    let tick = guard::guarded_tick(&settings.guard, kept.as_deref());
    if let (Some(bucket), Some(key)) = (&bucket, &key) {
        // Best effort: a memory not kept only means the next tick asks.
        let _ = match &tick.memory {
            Some(memory) if kept.as_ref() != Some(memory) => bucket.set(key, memory.as_bytes()),
            Some(_) => Ok(()),
            None if kept.is_some() => bucket.delete(key),
            None => Ok(()),
        };
    }
    match tick.decision {
        Decision::Run(run) => Turn::Granted(Granted { details: run.details(), run }),
        Decision::Skip(skipped) => Turn::Skipped(TickReport::skipped(skipped)),
    }
}

impl Granted {
    /// `work` beside the lease component's `hold` (WASI 0.3), which renews the lease meanwhile
    /// and ends first only when the job must stop: the work's future is then dropped at its
    /// current await, and `None` says so (`finish` then reports the run stopped, sending
    /// nothing).
    async fn beside_hold<F: Future>(&self, work: F) -> Option<F::Output> {
        match select(pin!(crate::hold::hold(&self.run)), pin!(work)).await {
            Either::Left(_) => None,
            Either::Right((output, _)) => Some(output),
        }
    }

    /// Closes the run with the job's outcome: the report, in the component's words.
    fn finish(self, outcome: &Outcome) -> TickReport {
        TickReport::ran(self.run.complete(outcome))
    }
}

/// A run the job keeps itself (`keep-alive` on the run it is given), or that nothing renews (a
/// sync handler blocks its instance: it must end within its lease, and its line says when it
/// did not).
pub fn run_once(settings: &Settings, job: impl FnOnce(&Run, &RunDetails) -> Outcome) -> TickReport {
    match decide(settings) {
        Turn::Skipped(report) => report,
        Turn::Granted(granted) => {
            let outcome = job(&granted.run, &granted.details);
            granted.finish(&outcome)
        }
    }
}

/// As [`run_once`], for an async job that nothing renews (a WASI 0.2 HTTP handler): its answer
/// beside the report, none when it did not run.
pub async fn run_unrenewed<F, T>(
    settings: &Settings,
    job: impl FnOnce(&RunDetails) -> F,
) -> (TickReport, Option<T>)
where
    F: Future<Output = (Outcome, T)>,
{
    match decide(settings) {
        Turn::Skipped(report) => (report, None),
        Turn::Granted(granted) => {
            let (outcome, answer) = job(&granted.details).await;
            (granted.finish(&outcome), Some(answer))
        }
    }
}

/// A run the lease component renews in the background while the job works
/// ([`Granted::beside_hold`]): the job's answer beside the report, none when it did not run or
/// was stopped.
pub async fn run_holding<F, T>(
    settings: &Settings,
    job: impl FnOnce(&RunDetails) -> F,
) -> (TickReport, Option<T>)
where
    F: Future<Output = (Outcome, T)>,
{
    match decide(settings) {
        Turn::Skipped(report) => (report, None),
        Turn::Granted(granted) => match granted.beside_hold(job(&granted.details)).await {
            Some((outcome, answer)) => (granted.finish(&outcome), Some(answer)),
            None => (granted.finish(&Outcome::Failure(String::new())), None),
        },
    }
}

//! guard@0.3.0's paths for the sweep: a cron schedule in a time zone, the operator's verbs (on a
//! free lock and under a running run's lease), a manual run, `complete` on top of an operator's
//! change, overlap `replace` and waiting for a held lock.

use super::call::{Call, Done, Setup};
use super::stage::{lock, seed_newer, Stage};
use std::time::Duration;
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, Overlap, Ticket};
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::schedule::{Schedule, ZonedCron};

/// Every two minutes on Berlin's wall clock (the stage starts on one of them).
pub const CRON_PERIOD_MS: u64 = 120_000;

pub fn cron(holder: &str) -> GuardOptions {
    let cron = ZonedCron::new("0 */2 * * * *", Some("Europe/Berlin"), Dialect::Spin).unwrap();
    GuardOptions::scheduled(holder, 15, Some(5), Schedule::Cron(cron)).unwrap()
}

fn replacing(holder: &str) -> GuardOptions {
    cron(holder).overlapping(Overlap::Replace { after_seconds: 60 }).unwrap()
}

fn waiting(holder: &str) -> GuardOptions {
    GuardOptions::scheduled(holder, 15, Some(5), Schedule::None)
        .unwrap()
        .waiting(Duration::from_secs(30))
        .unwrap()
}

fn run(stage: &Stage, options: &GuardOptions) -> Ticket {
    match guard::guarded_invoke(&mut stage.client(), &lock("job"), options) {
        Decision::Run(ticket) => ticket,
        other => panic!("setup: expected a run, got {other:?}"),
    }
}

/// A lock whose cron due time ran and completed; the next one comes after a period.
fn cron_ran(stage: &Stage) {
    let first = run(stage, &cron("earlier"));
    guard::complete(&mut stage.client(), &first, &Outcome::Success).unwrap();
    seed_newer(stage, "job");
}

fn pause(stage: &Stage) {
    guard::pause(&mut stage.client(), &lock("job"), "ops", "deploy", Duration::ZERO).unwrap();
}

pub fn setup(stage: &Stage, call: Call, setup: &mut Setup) {
    match call {
        Call::CronLeader => {
            cron_ran(stage);
            stage.advance(Duration::from_millis(CRON_PERIOD_MS));
        }
        Call::Pause | Call::CompletePaused => {
            let ticket = run(stage, &cron("runner"));
            seed_newer(stage, "job");
            if call == Call::CompletePaused {
                pause(stage);
            }
            stage.advance(Duration::from_secs(2));
            setup.ticket = Some(ticket);
        }
        Call::Resume | Call::RunNow => {
            cron_ran(stage);
            if call == Call::Resume {
                pause(stage);
            }
            stage.advance(Duration::from_secs(10));
        }
        Call::ManualLeader => {
            cron_ran(stage);
            guard::run_now(&mut stage.client(), &lock("job"), "ana").unwrap();
            stage.advance(Duration::from_secs(10));
        }
        Call::Replace => {
            // A run that hangs while it keeps renewing, past the limit and into the next due.
            let stuck = run(stage, &replacing("stuck"));
            seed_newer(stage, "job");
            for _ in 0..24 {
                stage.advance(Duration::from_secs(5));
                guard::keep_alive(&mut stage.client(), &stuck).unwrap();
            }
            setup.replaced = Some(stuck);
        }
        Call::WaitLeader => {
            let holding = run(stage, &waiting("other"));
            seed_newer(stage, "job");
            stage.advance(Duration::from_secs(10));
            setup.held_by_other = Some(holding.lease_id.to_string());
        }
        _ => unreachable!("{call:?} is set up in calls.rs"),
    }
}

pub fn perform<T: traffic_cop::transport::Transport, R: traffic_cop::transport::Runtime>(
    client: &mut traffic_cop::LeaseClient<T, R>,
    call: Call,
    setup: &Setup,
) -> Done {
    let job = lock("job");
    match call {
        Call::CronLeader | Call::ManualLeader => {
            Done::Decision(guard::guarded_invoke(client, &job, &cron("caller")))
        }
        Call::Replace => Done::Decision(guard::guarded_invoke(client, &job, &replacing("caller"))),
        Call::WaitLeader => Done::Decision(guard::guarded_invoke(client, &job, &waiting("caller"))),
        Call::Pause => Done::Operated(guard::pause(client, &job, "ops", "sweep", Duration::ZERO)),
        Call::Resume => Done::Operated(guard::resume(client, &job, "ops")),
        Call::RunNow => Done::Operated(guard::run_now(client, &job, "ops")),
        Call::CompletePaused => {
            let ticket = setup.ticket.as_ref().expect("the setup granted a run");
            Done::Completed(guard::complete(client, ticket, &Outcome::Success))
        }
        _ => unreachable!("{call:?} is performed in calls.rs"),
    }
}

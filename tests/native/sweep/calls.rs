//! The calls the sweep fails, each from the state its path needs: a stage (fake service,
//! virtual clock, the faulty transport) set up without faults, then the call through the
//! faulty transport. Every lock starts with `tc_` keys from a newer build, which every write
//! must keep.

pub use super::call::{Call, Done, Setup, CALLS};
pub use super::stage::{account, lock, seed_newer, Stage, CONTAINER, NEWER};
use std::time::Duration;
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, Ticket};
use traffic_cop::{BreakPeriod, LeaseDuration, LeaseId, Lock};

pub const DATA: &str = "results/job";
/// Scheduled calls: due every minute, the lease 15 s, keep-alive every 5 s.
pub const INTERVAL_S: u64 = 60;

fn bearer_lock(name: &str) -> Lock {
    let connection = "BlobEndpoint=https://127.0.0.1:10000/devstoreaccount1;\
        Authentication=ClientSecret;TenantId=t;ClientId=c;ClientSecret=SENTINEL-secret;\
        AuthorityHost=https://127.0.0.1:9";
    Lock::parse(connection, CONTAINER, name).unwrap()
}

pub fn scheduled(holder: &str) -> GuardOptions {
    GuardOptions::every_interval(holder, 15, INTERVAL_S, Some(5)).unwrap()
}

fn unscheduled(holder: &str) -> GuardOptions {
    GuardOptions::every_interval(holder, 15, 0, Some(5)).unwrap()
}

fn run(stage: &Stage, name: &str, options: &GuardOptions) -> Ticket {
    match guard::guarded_invoke(&mut stage.client(), &lock(name), options) {
        Decision::Run(ticket) => ticket,
        other => panic!("setup: expected a run on {name}, got {other:?}"),
    }
}

/// A lock with one completed run, due again a minute later (virtual time moved on).
fn completed_earlier(stage: &Stage, name: &str) {
    let first = run(stage, name, &scheduled("earlier"));
    guard::complete(&mut stage.client(), &first, &Outcome::Success).unwrap();
    seed_newer(stage, name);
}

pub fn setup(stage: &Stage, call: Call) -> Setup {
    let mut setup = Setup { locks: vec!["job".into()], ..Setup::default() };
    match call {
        Call::Follower => {
            let holding = run(stage, "job", &scheduled("other"));
            seed_newer(stage, "job");
            setup.held_by_other = Some(holding.lease_id.to_string());
        }
        Call::AlreadyRan => {
            completed_earlier(stage, "job");
            stage.advance(Duration::from_secs(10));
        }
        Call::Leader | Call::Board | Call::Inspect | Call::ReadFenced => {
            completed_earlier(stage, "job");
            stage.advance(Duration::from_secs(INTERVAL_S));
        }
        Call::TokenLeader => {
            completed_earlier(stage, "job");
            stage.advance(Duration::from_secs(INTERVAL_S));
        }
        Call::FirstUse => {}
        Call::Takeover => {
            run(stage, "job", &scheduled("crashed"));
            seed_newer(stage, "job");
            stage.advance(Duration::from_secs(INTERVAL_S));
        }
        Call::Claim => {
            completed_earlier(stage, "a");
            completed_earlier(stage, "b");
            stage.advance(Duration::from_secs(INTERVAL_S));
            let ran = run(stage, "a", &scheduled("earlier"));
            guard::complete(&mut stage.client(), &ran, &Outcome::Success).unwrap();
            setup.locks = vec!["a".into(), "b".into(), "c".into()];
        }
        Call::KeepAlive | Call::Complete | Call::WriteFenced => {
            let ticket = run(stage, "job", &unscheduled("runner"));
            seed_newer(stage, "job");
            if call == Call::WriteFenced {
                guard::write_fenced(&mut stage.client(), &ticket, DATA, b"before").unwrap();
            }
            stage.advance(Duration::from_secs(2));
            setup.ticket = Some(ticket);
        }
        Call::Acquire | Call::Break => {
            stage.client().acquire(&lock("job"), LeaseDuration::Fixed(15), None).map(drop).ok();
            if call == Call::Acquire {
                let id = stage.service.held(CONTAINER, "job").unwrap().id;
                stage.client().release(&lock("job"), &LeaseId::parse(&id).unwrap()).unwrap();
            }
            setup.lease_id = Some(LeaseId::parse("8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e").unwrap());
        }
        Call::Renew | Call::Change | Call::Release => {
            let id = LeaseId::parse("8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e").unwrap();
            stage
                .client()
                .acquire(&lock("job"), LeaseDuration::Fixed(15), Some(id.clone()))
                .unwrap();
            setup.lease_id = Some(id);
        }
        v3 => super::calls_v3::setup(stage, v3, &mut setup),
    }
    if call == Call::ReadFenced {
        let ticket = run(stage, "job", &scheduled("writer"));
        guard::write_fenced(&mut stage.client(), &ticket, DATA, b"stored").unwrap();
        guard::complete(&mut stage.client(), &ticket, &Outcome::Success).unwrap();
    }
    setup
}

/// The proposed id a raw `change` moves to.
pub const CHANGED_TO: &str = "1f2a3b4c-5d6e-4c2a-9d0e-8b8a5d3e2f4b";

pub fn perform(stage: &Stage, call: Call, setup: &Setup) -> Done {
    let mut client = stage.faulty_client();
    let job = lock("job");
    let ticket = || setup.ticket.clone().expect("the setup granted a run");
    let id = || setup.lease_id.clone().expect("the setup chose a lease id");
    match call {
        Call::Follower | Call::AlreadyRan | Call::Leader | Call::FirstUse | Call::Takeover => {
            Done::Decision(guard::guarded_invoke(&mut client, &job, &scheduled("caller")))
        }
        Call::TokenLeader => {
            let options = scheduled("caller");
            let decision = guard::guarded_invoke(&mut client, &bearer_lock("job"), &options);
            // The bearer lock names the same blob on the same fake: judged as `job`.
            Done::Decision(match decision {
                Decision::Run(ticket) => Decision::Run(Ticket { lock: job, ..ticket }),
                other => other,
            })
        }
        Call::Claim => {
            let items: Vec<String> = setup.locks.clone();
            let options = scheduled("caller");
            Done::Tickets(guard::claim(&mut client, &account(), CONTAINER, &items, &options, 3))
        }
        Call::Board => Done::Board(guard::board(&mut client, &account(), CONTAINER)),
        Call::KeepAlive => Done::KeptAlive(guard::keep_alive(&mut client, &ticket())),
        Call::Complete => {
            Done::Completed(guard::complete(&mut client, &ticket(), &Outcome::Success))
        }
        Call::WriteFenced => {
            Done::Wrote(guard::write_fenced(&mut client, &ticket(), DATA, b"after"))
        }
        Call::ReadFenced => {
            Done::Read(guard::read_fenced(&mut client, &account(), CONTAINER, DATA))
        }
        Call::Acquire => Done::Granted(client.acquire(&job, LeaseDuration::Fixed(15), Some(id()))),
        Call::Renew => Done::Granted(client.renew(&job, &id())),
        Call::Change => {
            Done::Granted(client.change(&job, &id(), &LeaseId::parse(CHANGED_TO).unwrap()))
        }
        Call::Release => Done::Released(client.release(&job, &id())),
        Call::Break => Done::Broke(client.break_lease(&job, BreakPeriod(Some(0)))),
        Call::Inspect => Done::Looked(client.inspect(&job)),
        v3 => super::calls_v3::perform(&mut client, v3, setup),
    }
}

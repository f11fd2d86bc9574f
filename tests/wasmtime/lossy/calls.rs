//! The calls of the lossy pass through the built component (guard 0.2.0 and the raw verbs),
//! each set up directly against Azurite and made through a fault proxy. The request each call
//! meets its fault at is the one that changes state (or its only one).

use std::time::Duration;
use traffic_cop_wasm_host::component::v2::{
    Decision, FencedError, FencedWrite, GuardOptions, Location, Outcome, Ticket,
};
use traffic_cop_wasm_host::component::{
    fresh, Instance, LeaseDuration, LeaseError, LeaseGrant, Lock, LockStatus,
};

pub const ID: &str = "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e";
pub const CHANGED: &str = "1f2a3b4c-5d6e-4c2a-9d0e-8b8a5d3e2f4b";
pub const DATA: &str = "results/job";
pub const NEWER: (&str, &str) = ("tc_newer_build", "kept");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Follower,
    Leader,
    FirstUse,
    Takeover,
    Claim,
    Board,
    KeepAlive,
    Complete,
    WriteFenced,
    ReadFenced,
    Acquire,
    Renew,
    Change,
    Release,
    Break,
    Inspect,
}

pub const CALLS: [Call; 16] = [
    Call::Follower,
    Call::Leader,
    Call::FirstUse,
    Call::Takeover,
    Call::Claim,
    Call::Board,
    Call::KeepAlive,
    Call::Complete,
    Call::WriteFenced,
    Call::ReadFenced,
    Call::Acquire,
    Call::Renew,
    Call::Change,
    Call::Release,
    Call::Break,
    Call::Inspect,
];

impl Call {
    /// The index (among the call's requests through the proxy) of the one to fail.
    pub fn faulted_request(self) -> u64 {
        match self {
            // look, acquire, record write
            Call::Leader | Call::Takeover | Call::Claim | Call::WriteFenced => 2,
            // look (404), create container, create blob, look, acquire
            Call::FirstUse => 4,
            // look under the lease, record write
            Call::Complete => 1,
            _ => 0,
        }
    }
}

#[derive(Debug)]
pub enum Done {
    Decision(Decision),
    Tickets(Result<Vec<Ticket>, LeaseError>),
    Other(Result<(), LeaseError>),
    KeptAlive(Result<u64, LeaseError>),
    Completed(Result<(), LeaseError>),
    Wrote(Result<FencedWrite, FencedError>),
    Granted(Result<LeaseGrant, LeaseError>),
    Looked(Result<LockStatus, LeaseError>),
}

/// One case's lock, reached directly (`direct`) and through the proxy (`lossy`).
pub struct Case {
    pub direct: Lock,
    pub lossy: Lock,
    /// The run the setup granted (keep-alive, complete, write-fenced), or the lease another
    /// holder has (follower).
    pub ticket: Option<Ticket>,
}

pub fn options(holder: &str, interval_seconds: u64) -> GuardOptions {
    GuardOptions {
        holder: holder.into(),
        lease_seconds: 15,
        interval_seconds,
        offset_seconds: 0,
        starting_deadline_seconds: None,
        keep_alive_seconds: Some(5),
    }
}

pub fn location(lock: &Lock) -> Location {
    Location {
        connection_string: lock.connection_string.clone(),
        container: lock.container.clone(),
    }
}

fn run(lock: &Lock, holder: &str, interval: u64) -> Ticket {
    match fresh().guarded_invoke_v2(lock, &options(holder, interval)) {
        Decision::Run(ticket) => ticket,
        other => panic!("setup: expected a run, got {other:?}"),
    }
}

/// The newer build's key, written beside the record (under the lease if one is held).
fn seed_newer(lock: &Lock, held: Option<&str>) {
    let mut metadata = fresh().inspect(lock).unwrap().metadata;
    metadata.push((NEWER.0.into(), NEWER.1.into()));
    match held {
        Some(held) => crate::wasmtime::lossy::set_metadata(lock, &metadata, held),
        // Nothing holds the lock: take the lease for the write, then let it go.
        None => {
            let grant = fresh().acquire(lock, LeaseDuration::Fixed(15), None).unwrap();
            crate::wasmtime::lossy::set_metadata(lock, &metadata, &grant.lease_id);
            fresh().release(lock, &grant.lease_id).unwrap();
        }
    }
}

pub fn setup(case: &mut Case, call: Call) {
    let lock = case.direct.clone();
    match call {
        Call::Follower => {
            let holding = run(&lock, "other", 0);
            seed_newer(&lock, Some(&holding.lease_id));
            case.ticket = Some(holding);
        }
        Call::Leader | Call::Board | Call::Inspect | Call::Claim => {
            let first = run(&lock, "earlier", 0);
            fresh().complete_v2(&first, &Outcome::Success).unwrap();
            seed_newer(&lock, None);
        }
        Call::Takeover => {
            let crashed = run(&lock, "crashed", 0);
            seed_newer(&lock, Some(&crashed.lease_id));
            // Its lease broken, as if it had run out, without waiting 15 s.
            fresh().break_lease(&lock, Some(0)).unwrap();
        }
        Call::FirstUse => {}
        Call::KeepAlive | Call::Complete | Call::WriteFenced => {
            let ticket = run(&lock, "runner", 0);
            seed_newer(&lock, Some(&ticket.lease_id));
            if call == Call::WriteFenced {
                fresh().write_fenced_v2(&ticket, DATA, b"before").unwrap();
            }
            case.ticket = Some(ticket);
        }
        Call::ReadFenced => {
            let ticket = run(&lock, "writer", 0);
            fresh().write_fenced_v2(&ticket, DATA, b"stored").unwrap();
            fresh().complete_v2(&ticket, &Outcome::Success).unwrap();
        }
        Call::Acquire => {
            fresh().acquire(&lock, LeaseDuration::Fixed(15), None).ok();
            let status = fresh().inspect(&lock).unwrap();
            assert!(status.locked);
            fresh().break_lease(&lock, Some(0)).unwrap();
        }
        Call::Renew | Call::Change | Call::Release => {
            fresh().acquire(&lock, LeaseDuration::Fixed(15), Some(ID)).unwrap();
        }
        Call::Break => {
            fresh().acquire(&lock, LeaseDuration::Fixed(15), None).unwrap();
        }
    }
}

/// Moves a ticket onto the proxy's connection string (same container and blob).
fn through(ticket: &Ticket, lossy: &Lock) -> Ticket {
    Ticket { lock: lossy.clone(), ..ticket.clone() }
}

pub fn perform(instance: &mut Instance, case: &Case, call: Call) -> Done {
    let lock = &case.lossy;
    let ticket = || through(case.ticket.as_ref().expect("the setup granted a run"), lock);
    match call {
        Call::Follower | Call::Leader | Call::FirstUse | Call::Takeover => {
            Done::Decision(instance.guarded_invoke_v2(lock, &options("caller", 0)))
        }
        Call::Claim => Done::Tickets(instance.claim_v2(
            &location(lock),
            std::slice::from_ref(&lock.blob),
            &options("caller", 0),
            1,
        )),
        Call::Board => Done::Other(instance.board_v2(&location(lock)).map(drop)),
        Call::KeepAlive => Done::KeptAlive(instance.keep_alive_v2(&ticket())),
        Call::Complete => Done::Completed(instance.complete_v2(&ticket(), &Outcome::Success)),
        Call::WriteFenced => Done::Wrote(instance.write_fenced_v2(&ticket(), DATA, b"after")),
        Call::ReadFenced => Done::Other(match instance.read_fenced_v2(&location(lock), DATA) {
            Ok(Some(data)) => {
                assert_eq!(data.contents, b"stored", "read-fenced read what was stored");
                Ok(())
            }
            Ok(None) => panic!("read-fenced found nothing"),
            Err(error) => Err(error),
        }),
        Call::Acquire => Done::Granted(instance.acquire(lock, LeaseDuration::Fixed(15), Some(ID))),
        Call::Renew => Done::Granted(instance.renew(lock, ID)),
        Call::Change => Done::Granted(instance.change(lock, ID, CHANGED)),
        Call::Release => Done::Other(instance.release(lock, ID)),
        Call::Break => Done::Other(instance.break_lease(lock, Some(0)).map(drop)),
        Call::Inspect => Done::Looked(instance.inspect(lock)),
    }
}

/// How long a case may take at most (a late answer waits out the short limit twice at most).
#[allow(dead_code)]
pub const CASE_BUDGET: Duration = Duration::from_secs(30);

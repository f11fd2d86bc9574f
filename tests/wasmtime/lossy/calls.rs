//! The calls of the lossy pass through the built component (traffic-cop:lease@1.0.0: the guard
//! and the raw verbs), each set up directly against Azurite and made through a fault proxy. The
//! request each call meets its fault at is the one that changes state (or its only one).
//!
//! A run is a resource of the instance that granted it and keeps the connection string it was
//! granted under, so a call on a run (keep-alive, complete, write-fenced) is set up on the
//! instance that makes it, under the relay's connection string: the relay reaches Azurite
//! directly for the setup and the fault proxy for the call.

use std::time::Duration;
use traffic_cop_wasm_host::component::v1::lease::{LeaseDuration, LeaseGrant, Lock, LockStatus};
use traffic_cop_wasm_host::component::v1::{
    self, Claimed, Decision, FencedError, FencedWrite, Finished, Outcome,
};
use traffic_cop_wasm_host::component::{fresh, Instance, ResourceAny};

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
            Call::Leader | Call::Takeover | Call::WriteFenced => 2,
            // listing, acquire, record write
            Call::Claim => 2,
            // look (404), create container, create blob, look, acquire
            Call::FirstUse => 4,
            // record write, release: a run on the instance that granted it carries its grant's
            // record, so nothing is looked at first
            Call::Complete => 0,
            _ => 0,
        }
    }

    /// The setup wrote the newer build's key beside the record, for the call to keep.
    pub fn seeded(self) -> bool {
        matches!(
            self,
            Call::Follower
                | Call::Leader
                | Call::Board
                | Call::Inspect
                | Call::Claim
                | Call::Takeover
                | Call::KeepAlive
                | Call::Complete
                | Call::WriteFenced
        )
    }
}

#[derive(Debug)]
pub enum Done {
    Decision(Decision),
    Claimed(Result<Claimed, v1::Error>),
    Other(Result<(), v1::Error>),
    KeptAlive(Result<u64, v1::Error>),
    Completed(Finished),
    Wrote(Result<FencedWrite, FencedError>),
    Granted(Result<LeaseGrant, v1::Error>),
    Looked(Result<LockStatus, v1::Error>),
}

/// One case's lock, reached directly (`direct`) and through the relay (`lossy`), and the
/// instance the call is made on.
pub struct Case {
    pub direct: Lock,
    pub lossy: Lock,
    /// Its requests give up after 2 s without an answer (`staged::short_limits`).
    pub instance: Instance,
    /// The run the setup granted on `instance`, under `lossy` (keep-alive, complete,
    /// write-fenced).
    pub run: Option<ResourceAny>,
    /// Another holder's run, on an instance of its own (follower).
    pub other: Option<(Instance, ResourceAny)>,
}

/// A 15 s lease renewed every 5 s, no schedule: a run whenever the lock is free.
pub fn settings(lock: &Lock, holder: &str) -> v1::Settings {
    v1::Settings {
        lease_seconds: Some("15".into()),
        keep_alive_seconds: Some("5".into()),
        ..v1::settings(&lock.connection_string, &lock.container, &lock.blob, holder)
    }
}

fn run(instance: &mut Instance, lock: &Lock, holder: &str) -> ResourceAny {
    match instance.guarded_invoke(&settings(lock, holder)) {
        Decision::Run(run) => run,
        Decision::Skip(skipped) => panic!("setup: expected a run, got {skipped:?}"),
    }
}

fn completed(instance: &mut Instance, run: ResourceAny) {
    let finished = instance.run_complete(run, &Outcome::Success(String::new()));
    assert!(finished.error.is_none(), "setup: {finished:?}");
}

/// The newer build's key, written beside the record while nothing holds the lock: under a raw
/// lease taken for the write (creating the lock if missing), then released. The lease id of a
/// run stays in the component, so a lock a run holds is seeded before its grant, whose record
/// write must keep the key.
fn seed_newer(lock: &Lock) {
    let grant = fresh().acquire(lock, LeaseDuration::Fixed(15), None).unwrap();
    let mut metadata = fresh().inspect(lock).unwrap().metadata;
    metadata.push((NEWER.0.into(), NEWER.1.into()));
    crate::wasmtime::lossy::set_metadata(lock, &metadata, &grant.lease_id);
    fresh().release(lock, &grant.lease_id).unwrap();
}

pub fn setup(case: &mut Case, call: Call) {
    let lock = case.direct.clone();
    match call {
        Call::Follower => {
            seed_newer(&lock);
            let mut other = fresh();
            let holding = run(&mut other, &lock, "other");
            case.other = Some((other, holding));
        }
        Call::Leader | Call::Board | Call::Inspect | Call::Claim => {
            let mut earlier = fresh();
            let first = run(&mut earlier, &lock, "earlier");
            completed(&mut earlier, first);
            seed_newer(&lock);
        }
        Call::Takeover => {
            seed_newer(&lock);
            let mut crashed = fresh();
            let open = run(&mut crashed, &lock, "crashed");
            // Dropped without complete: the run stays open.
            crashed.drop_run(open);
            // Its lease broken, as if it had run out, without waiting 15 s.
            fresh().break_lease(&lock, Some(0)).unwrap();
        }
        Call::FirstUse => {}
        Call::KeepAlive | Call::Complete | Call::WriteFenced => {
            seed_newer(&lock);
            let lossy = case.lossy.clone();
            let granted = run(&mut case.instance, &lossy, "runner");
            if call == Call::WriteFenced {
                case.instance.run_write_fenced(granted, DATA, b"before").unwrap();
            }
            case.run = Some(granted);
        }
        Call::ReadFenced => {
            let mut writer = fresh();
            let granted = run(&mut writer, &lock, "writer");
            writer.run_write_fenced(granted, DATA, b"stored").unwrap();
            completed(&mut writer, granted);
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

pub fn perform(case: &mut Case, call: Call) -> Done {
    let lock = &case.lossy;
    let instance = &mut case.instance;
    let run = || case.run.expect("the setup granted a run");
    match call {
        Call::Follower | Call::Leader | Call::FirstUse | Call::Takeover => {
            Done::Decision(instance.guarded_invoke(&settings(lock, "caller")))
        }
        Call::Claim => Done::Claimed(instance.claim(
            &settings(lock, "caller"),
            std::slice::from_ref(&lock.blob),
            1,
        )),
        Call::Board => Done::Other(instance.board(&settings(lock, "caller")).map(drop)),
        Call::KeepAlive => Done::KeptAlive(instance.run_keep_alive(run())),
        Call::Complete => {
            Done::Completed(instance.run_complete(run(), &Outcome::Success(String::new())))
        }
        Call::WriteFenced => Done::Wrote(instance.run_write_fenced(run(), DATA, b"after")),
        Call::ReadFenced => {
            Done::Other(match instance.read_fenced(&settings(lock, "caller"), DATA) {
                Ok(Some(data)) => {
                    assert_eq!(data.contents, b"stored", "read-fenced read what was stored");
                    Ok(())
                }
                Ok(None) => panic!("read-fenced found nothing"),
                Err(error) => Err(error),
            })
        }
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

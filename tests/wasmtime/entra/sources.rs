//! Every token source through the built component: acquire and release a lease, then a leader
//! run (guarded-invoke + complete, on the instance that was granted the run) and a follower
//! tick on a fresh instance, as a serverless host makes them. Round trips per follower tick and per leader run are counted
//! per source (storage on the client side, token requests at the fake IdP) and printed.

use traffic_cop_testbed::runner::Test;

use super::env::*;
use std::time::Duration;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::lease::{LeaseDuration, Lock};
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome, SkipReason, Skipped};
use traffic_cop_wasm_host::outbound;

pub const INTERVAL: u64 = 60;

/// The guard's settings for `holder` on `lock`: a 15 s lease, due every [`INTERVAL`].
pub fn settings(lock: &Lock, holder: &str) -> v1::Settings {
    v1::Settings {
        lease_seconds: Some("15".into()),
        schedule: Some(format!("@every {INTERVAL}s")),
        ..v1::settings(&lock.connection_string, &lock.container, &lock.blob, holder)
    }
}

/// A leader run on one instance: granted, then completed there. Its `finished`.
pub fn leader_run(lock: &Lock) -> v1::Finished {
    let mut instance = fresh();
    match instance.guarded_invoke(&settings(lock, "leader")) {
        Decision::Run(run) => instance.run_complete(run, &Outcome::Success(String::new())),
        Decision::Skip(skipped) => panic!("no leader run: {}", skipped.text),
    }
}

/// A follower's skip because the due time already ran.
pub fn already_ran(decision: &Decision) -> bool {
    matches!(decision, Decision::Skip(Skipped { reason: SkipReason::AlreadyRan(_), .. }))
}

pub fn lock(env: &Env, connection_string: String, blob: &str) -> Lock {
    Lock { connection_string, container: env.container.clone(), blob: blob.into() }
}

/// Waits while the next due time (a quarter interval of tolerance ahead of the clock) is less
/// than 25 s away, so a leader run and the follower ticks after it share one due time. (10 s
/// was too little on a loaded machine: a follower's tick fell in the next due time and ran.)
pub fn align() {
    let tolerance = INTERVAL / 4;
    let into = (traffic_cop_testbed::unix_secs() + tolerance) % INTERVAL;
    if into > INTERVAL - 25 {
        std::thread::sleep(Duration::from_secs(INTERVAL - into + 1));
    }
}

/// (storage, token) round trips a step takes.
pub fn trips<R>(env: &Env, step: impl FnOnce() -> R) -> (R, (usize, u32)) {
    let (s, t) = (env.storage_trips(), env.token_trips());
    let result = step();
    (result, (env.storage_trips() - s, env.token_trips() - t))
}

#[derive(Debug)]
struct Row {
    source: Source,
    leader: (usize, u32),
    follower: (usize, u32),
}

fn exercise(source: Source) -> Row {
    let env = Env::new();
    let conn = env.connection_string(source);
    // acquire creates the container and the lock blob, so the leader run below is measured
    // on an existing lock, as on every tick but the first.
    let job = lock(&env, conn, "job");
    let grant = fresh()
        .acquire(&job, LeaseDuration::Fixed(15), None)
        .unwrap_or_else(|e| panic!("{source:?} acquire: {e:?}"));
    fresh().release(&job, &grant.lease_id).unwrap_or_else(|e| panic!("{source:?} release: {e:?}"));
    align();
    let (done, leader) = trips(&env, || leader_run(&job));
    assert!(done.error.is_none(), "{source:?} complete: {}", done.text);
    let (skip, follower) = trips(&env, || fresh().guarded_invoke(&settings(&job, "follower")));
    assert!(already_ran(&skip), "{source:?} follower: {skip:?}");
    let sent = outbound::sent(&format!("/devstoreaccount1/{}", env.container));
    assert!(!sent.is_empty());
    for request in &sent {
        assert_eq!(request.auth_scheme.as_deref(), Some("Bearer"), "{source:?}: {request:?}");
        assert!(request.url.starts_with("https://"), "{source:?}: {request:?}");
    }
    // A token per instance that touched storage (the leader's run is one instance), none for
    // a supplied token.
    let per_instance = u32::from(source != Source::AccessToken);
    assert_eq!(leader.1, per_instance, "{source:?} leader token requests");
    assert_eq!(follower.1, per_instance, "{source:?} follower token requests");
    if let Some(path) = env.token_path(source) {
        assert_eq!(env.idp.count(&path), env.idp.total(), "{source:?}: {:?}", env.idp.log());
    }
    assert_no_secret(&format!("{:?}", env.idp.log()));
    Row { source, leader, follower }
}

fn every_source_leases_and_guards_and_its_round_trips_are_counted() {
    let rows: Vec<Row> = std::thread::scope(|s| {
        let handles: Vec<_> = SOURCES.iter().map(|&src| s.spawn(move || exercise(src))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    eprintln!("round trips per call (storage + token), fresh instance per call, no kept token:");
    eprintln!("{:<18} {:>16} {:>16}", "source", "leader run", "follower tick");
    for row in &rows {
        eprintln!(
            "{:<18} {:>9} + {:<5} {:>9} + {:<5}",
            format!("{:?}", row.source),
            row.leader.0,
            row.leader.1,
            row.follower.0,
            row.follower.1
        );
    }
    // Storage traffic does not depend on where the token came from.
    for row in &rows {
        assert_eq!(row.leader.0, rows[0].leader.0, "{row:?} vs {:?}", rows[0]);
        assert_eq!(row.follower.0, 1, "a follower decides in one storage round trip: {row:?}");
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![every_source_leases_and_guards_and_its_round_trips_are_counted,]
}

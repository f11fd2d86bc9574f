//! Faults between the component and Azurite: a seeded fault-injecting proxy, contenders
//! judged by the mutual-exclusion checker, and the individual hard cases (a lost answer, a
//! stall past the timeouts). The long version is `scripts/soak`.

use traffic_cop_testbed::runner::Test;

use std::time::Instant;
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::faults::{Fault, FaultPlan, FaultProxy};
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::lease::{LeaseDuration, Lock};
use traffic_cop_wasm_host::component::v1::{self, Error};
use traffic_cop_wasm_host::soak::{check, run, SoakConfig};

fn lock_via(proxy: &FaultProxy, key: &str, container: &str) -> Lock {
    Lock {
        connection_string: connection_string_for_port(proxy.port, key),
        container: container.into(),
        blob: "x".into(),
    }
}

fn eight_contenders_under_thirty_percent_faults_never_overlap() {
    let seed = 20_261_122;
    let config = SoakConfig {
        contenders: 8,
        locks: 3,
        ticks: 12,
        crash_per_mille: 30,
        // The first two runs work past their lease, so the checker sees takeovers under paused
        // holders and those holders' refused completes.
        overrun_per_mille: 0,
        first_overruns: 2,
        faults: FaultPlan::quick(seed, 300),
        azurite_port: Azurite::shared().port,
        container: "faults-short".into(),
    };
    let report = run(&config);
    let violations = check(&report.grants);
    report.print(&violations);
    assert!(violations.is_empty(), "{violations:?}");
    let overran: Vec<_> = report.grants.iter().filter(|g| g.overran).collect();
    assert_eq!(overran.len(), 2);
    assert!(overran.iter().all(|g| !g.completed), "a holder past its lease completed: {overran:?}");
    assert_eq!(report.decisions, 8 * 3 * 12);
    assert!(
        report.faults.values().sum::<u64>() * 5 > report.requests,
        "about 30% of requests were faulted"
    );
    assert!(report.grants.len() >= 12, "runs happened despite the faults: {}", report.grants.len());
}

fn lost_answers_to_acquire_and_release_are_resolved_by_their_retries() {
    let port = Azurite::shared().port;
    let passthrough = FaultProxy::start(port, FaultPlan::first(Fault::Reset, 0));
    let lock = lock_via(&passthrough, EMULATOR_KEY_B64, "lost-answer");
    let first = fresh().acquire(&lock, LeaseDuration::Fixed(15), None).unwrap(); // creates the lock
    fresh().release(&lock, &first.lease_id).unwrap();

    // The acquire lands but its answer is lost; the retry carries the same proposed id and
    // re-acquires the lease it already holds instead of failing with held-by-other.
    let id = "12345678-1234-4234-8234-123456789abc";
    let lossy = FaultProxy::start(port, FaultPlan::first(Fault::DropResponse, 1));
    let grant = fresh()
        .acquire(
            &lock_via(&lossy, EMULATOR_KEY_B64, "lost-answer"),
            LeaseDuration::Fixed(15),
            Some(id),
        )
        .unwrap();
    assert_eq!(grant.lease_id, id);
    assert_eq!((lossy.injected(), lossy.requests()), (vec![Fault::DropResponse], 2));

    // The release lands but its answer is lost; the retry's 409 means "released".
    let lossy = FaultProxy::start(port, FaultPlan::first(Fault::DropResponse, 1));
    fresh().release(&lock_via(&lossy, EMULATOR_KEY_B64, "lost-answer"), id).unwrap();
    assert_eq!((lossy.injected(), lossy.requests()), (vec![Fault::DropResponse], 2));
    assert!(!fresh().inspect(&lock).unwrap().locked);
}

fn a_stalled_response_times_out_and_the_retry_succeeds() {
    let proxy = FaultProxy::start(Azurite::shared().port, FaultPlan::first(Fault::Stall, 1));
    let lock = lock_via(&proxy, EMULATOR_KEY_B64, "stalled");
    let started = Instant::now();
    fresh().inspect(&lock).ok();
    let elapsed = started.elapsed();
    assert_eq!(proxy.injected(), [Fault::Stall]);
    assert!(proxy.requests() >= 2, "the stalled attempt was retried");
    // The proxy holds a stalled connection for 20 s: an answer before that means the
    // component's own deadline (5 s connect + 10 s response) cut the attempt off.
    assert!(elapsed.as_secs_f64() < 19.5, "took {elapsed:?}");
    println!("stalled attempt abandoned and retried in {elapsed:.1?}");
}

fn no_key_or_signature_leaks_through_faults_retries_or_the_board() {
    // base64("SENTINEL-ACCOUNT-KEY-0123456789abcdef")
    let sentinel = "U0VOVElORUwtQUNDT1VOVC1LRVktMDEyMzQ1Njc4OWFiY2RlZg==";
    for plan in [
        FaultPlan::first(Fault::Reset, 100),
        FaultPlan::first(Fault::Status(503), 100),
        FaultPlan::first(Fault::Reset, 0),
    ] {
        let proxy = FaultProxy::start(Azurite::shared().port, plan);
        let lock = lock_via(&proxy, sentinel, "sentinel");
        let settings = v1::settings(&lock.connection_string, "sentinel", "x", "replica-a");
        let outputs = [
            format!("{:?}", fresh().acquire(&lock, LeaseDuration::Fixed(15), None)),
            format!("{:?}", fresh().renew(&lock, "12345678-1234-4234-8234-123456789abc")),
            format!("{:?}", fresh().board(&settings)),
        ];
        for output in outputs {
            assert!(!output.contains(sentinel) && !output.contains("SharedKey"), "{output}");
            assert!(output.contains("Err("), "{output}");
        }
        // A decision that could not be made skips with the error and its line.
        match fresh().guarded_invoke(&settings) {
            v1::Decision::Skip(skipped) => {
                let output = format!("{skipped:?} {}", skipped.text);
                assert!(!output.contains(sentinel) && !output.contains("SharedKey"), "{output}");
                assert!(matches!(skipped.reason, v1::SkipReason::Error(_)), "{output}");
            }
            v1::Decision::Run(_) => panic!("ran with a wrong key"),
        }
    }
    let error = fresh().inspect(&Lock {
        connection_string: "AccountName=abc;AccountKey=SENTINEL!".into(),
        container: "abc".into(),
        blob: "x".into(),
    });
    assert!(matches!(&error, Err(Error::InvalidConfig(m)) if !m.contains("SENTINEL")), "{error:?}");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        eight_contenders_under_thirty_percent_faults_never_overlap,
        lost_answers_to_acquire_and_release_are_resolved_by_their_retries,
        a_stalled_response_times_out_and_the_retry_succeeds,
        no_key_or_signature_leaks_through_faults_retries_or_the_board,
    ]
}

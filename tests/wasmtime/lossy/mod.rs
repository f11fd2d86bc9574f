//! The fault sweep's classes against the real emulator: one case per call and fault class,
//! through the built component, with a fault proxy in front of Azurite, so the fake service's
//! answers (tests/native/sweep) are checked against Azurite's. Judged by what Azurite holds
//! afterwards: no run without its lease, a grant that landed is never behind a plain error, the
//! record is not rewound and keeps a newer build's key, a success did what it says and a
//! failure says what it did, and no lease is left held that nobody owns up to. Leases are
//! broken rather than waited out, and late answers are late after 2 s (the test host's sender
//! gives up then), so the pass takes seconds, not lease periods. Through traffic-cop:lease@1.0.0:
//! a run's lease id stays in the component, so a run is judged by its own keep-alive on the
//! instance that granted it.

mod calls;
mod relay;

use calls::{perform, setup, Call, Case, Done, CALLS, CHANGED, DATA, ID, NEWER};
use relay::Relay;
use std::sync::atomic::{AtomicU32, Ordering};
use traffic_cop::guard::{Outcome, RunRecord};
use traffic_cop::ops::SetMetadata;
use traffic_cop::{LeaseClient, LeaseId, StdRuntime};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::faults::{Fault, FaultPlan, FaultProxy};
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::v1::lease::Lock;
use traffic_cop_wasm_host::component::v1::{self, Decision, FencedError, SkipReason, Skipped};
use traffic_cop_wasm_host::component::{fresh, Instance, ResourceAny};
use traffic_cop_wasm_host::staged;

/// The classes of the native sweep, as the proxy plays them.
const FAULTS: [Fault; 8] = [
    Fault::Reset,
    Fault::DropResponse,
    Fault::Late,
    Fault::Status(500),
    Fault::Status(503),
    Fault::StatusAfterLanding(503),
    Fault::Status(429),
    Fault::CutAnswer,
];

/// Writes `metadata` on `lock` under `lease_id`, natively (no exported call writes metadata).
pub fn set_metadata(lock: &Lock, metadata: &[(String, String)], lease_id: &str) {
    let native = traffic_cop::Lock::parse(&lock.connection_string, &lock.container, &lock.blob);
    let write = SetMetadata::new(metadata.to_vec(), Some(LeaseId::parse(lease_id).unwrap()), None);
    let mut client = LeaseClient::new(crate::loopback::Loopback, StdRuntime);
    client.execute(&native.unwrap(), &write.unwrap()).unwrap();
}

fn record(lock: &Lock) -> Option<RunRecord> {
    fresh().inspect(lock).ok().map(|s| RunRecord::from_metadata(&s.metadata))
}

/// Whether `id` holds the lock now (a renew with it succeeds; it renews, which is harmless).
fn holds(lock: &Lock, id: &str) -> bool {
    fresh().renew(lock, id).is_ok()
}

/// Whether `run` (on `instance`, which granted it) holds its lease now: its keep-alive
/// succeeds (it renews, which is harmless). The lease id of a run stays in the component.
fn run_holds(instance: &mut Instance, run: ResourceAny) -> bool {
    instance.run_keep_alive(run).is_ok()
}

fn says(error: &impl std::fmt::Debug, words: &[&str]) -> bool {
    let text = format!("{error:?}");
    words.iter().any(|w| text.contains(w))
}

fn one_case(call: Call, fault: Fault) -> Vec<String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let container = format!("lossy{}x{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
    let azurite = Azurite::shared().port;
    let direct = Lock {
        connection_string: connection_string_for_port(azurite, EMULATOR_KEY_B64),
        container,
        blob: "job".into(),
    };
    let proxy = FaultProxy::start(azurite, FaultPlan::at(call.faulted_request(), fault));
    // Azurite directly while the case is set up and judged; the fault proxy for the call.
    let relay = Relay::start(azurite);
    let lossy = Lock {
        connection_string: connection_string_for_port(relay.port, EMULATOR_KEY_B64),
        ..direct.clone()
    };
    let mut case = Case {
        direct: direct.clone(),
        lossy,
        instance: staged::short_limits(),
        run: None,
        other: None,
    };
    setup(&mut case, call);
    let was = record(&direct).unwrap_or_default();
    relay.point_at(proxy.port);
    let done = perform(&mut case, call);
    relay.point_at(azurite);
    let mut wrong = Vec::new();
    if proxy.injected() != [fault] {
        wrong.push(format!("the call did not meet its fault: {:?}", proxy.injected()));
    }
    let has_newer = |r: &RunRecord| r.unknown.iter().any(|(k, v)| k == NEWER.0 && v == NEWER.1);
    if call.seeded() && !has_newer(&was) {
        wrong.push("the setup's grant lost the newer build's key".into());
    }
    let now = record(&direct).unwrap_or_default();
    if now.fence < was.fence {
        wrong.push(format!("fencing token rewound {} -> {}", was.fence, now.fence));
    }
    if was.unknown.iter().any(|(k, _)| k == NEWER.0) && !has_newer(&now) {
        wrong.push("the newer build's key was lost".into());
    }
    let grew = now.fence > was.fence;
    // Who may hold the lease afterwards: raw lease ids, and runs on the call's instance.
    let mut allowed: Vec<String> = Vec::new();
    let mut runs: Vec<ResourceAny> = case.run.into_iter().collect();
    let mut owned_up = false;
    match &done {
        Done::Decision(Decision::Run(run)) => {
            if !run_holds(&mut case.instance, *run) {
                wrong.push("a run without its lease".into());
            }
            runs.push(*run);
        }
        Done::Decision(Decision::Skip(Skipped { reason: SkipReason::Error(error), .. })) => {
            owned_up = says(error, &["used up", "may have been granted"]);
            if grew && !says(error, &["used up"]) {
                wrong.push(format!("a grant landed behind a plain error: {error:?}"));
            }
        }
        Done::Decision(Decision::Skip(skipped)) if grew => {
            wrong.push(format!("a grant landed, yet the call skipped: {:?}", skipped.reason))
        }
        Done::Claimed(Ok(claimed)) => {
            for run in &claimed.runs {
                if !run_holds(&mut case.instance, *run) {
                    wrong.push("a claimed run without its lease".into());
                }
                runs.push(*run);
            }
            if let Some(error) = &claimed.stopped {
                owned_up = says(error, &["used up", "may have been granted"]);
            }
            if grew && claimed.runs.is_empty() {
                wrong.push("a grant landed, yet claim returned nothing".into());
            }
        }
        Done::Claimed(Err(error)) => {
            owned_up = says(error, &["used up", "may have been granted"]);
            if grew && !says(error, &["used up"]) {
                wrong.push(format!("a grant landed behind a plain error: {error:?}"));
            }
        }
        Done::KeptAlive(Ok(_)) if !run_holds(&mut case.instance, case.run.expect("a run")) => {
            wrong.push("keep-alive said ok without the lease".into())
        }
        Done::Completed(finished) => match &finished.error {
            None if now.running || now.outcome != Some(Outcome::Success) => {
                wrong.push(format!("complete said ok over {now:?}"))
            }
            None => {}
            Some(error) => {
                let told = says(error, &["was closed", "may or may not"]);
                if !now.running && !told {
                    wrong.push(format!("the record was closed, yet complete failed: {error:?}"));
                }
                // The run is closed on this side whatever the answer: a lease it left held is
                // owned up to by the words only.
                owned_up = says(error, &["expire"]);
            }
        },
        Done::Wrote(result) => {
            let stored = fresh().read_fenced(&calls::settings(&direct, "judge"), DATA).unwrap();
            let wrote = stored.is_some_and(|d| d.contents == b"after");
            match result {
                Ok(_) if !wrote => wrong.push("write-fenced said ok, the data is not there".into()),
                Err(FencedError::Failed(e)) if wrote && !says(e, &["may have been written"]) => {
                    wrong.push(format!("the data was written, yet: {e:?}"))
                }
                _ => {}
            }
        }
        Done::Granted(Ok(grant)) => {
            if !holds(&direct, &grant.lease_id) {
                wrong.push(format!("{call:?} said ok without the lease"));
            }
            allowed.push(grant.lease_id.clone());
        }
        Done::Granted(Err(error)) => {
            owned_up = says(error, &["may have been granted"]);
            allowed.extend([ID.to_string(), CHANGED.to_string()]);
        }
        Done::Other(Err(v1::Error::Transport(_))) if call == Call::Break => owned_up = true,
        Done::Other(Err(_)) if call == Call::Release => allowed.push(ID.into()),
        Done::Looked(Ok(status)) if status.locked != fresh().inspect(&direct).unwrap().locked => {
            wrong.push("inspect disagrees with Azurite".into())
        }
        _ => {}
    }
    if call == Call::Renew || call == Call::Change {
        allowed.extend([ID.to_string(), CHANGED.to_string()]);
    }
    let locked = fresh().inspect(&direct).is_ok_and(|s| s.locked);
    if locked && !owned_up {
        let owner = allowed.iter().any(|id| holds(&direct, id))
            || runs.iter().any(|run| run_holds(&mut case.instance, *run))
            || case.other.as_mut().is_some_and(|(other, run)| run_holds(other, *run));
        if !owner {
            wrong.push("a lease left held that nobody owns up to".into());
        }
    }
    wrong
        .into_iter()
        .map(|w| format!("{call:?} with {fault:?}: {w}\n  answered {done:?}"))
        .collect()
}

fn one_case_per_call_and_fault_class_holds_against_azurite() {
    let cases: Vec<(Call, Fault)> =
        CALLS.iter().flat_map(|call| FAULTS.iter().map(move |fault| (*call, *fault))).collect();
    // Cases are independent (a container and a proxy each): four at a time.
    let chunks: Vec<Vec<(Call, Fault)>> =
        cases.chunks(cases.len().div_ceil(4)).map(|c| c.to_vec()).collect();
    let wrong: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk.into_iter().flat_map(|(c, f)| one_case(c, f)).collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a case panicked")).collect()
    });
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "lossy pass against Azurite: {} cases, {} violations",
        cases.len(),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![one_case_per_call_and_fault_class_holds_against_azurite]
}

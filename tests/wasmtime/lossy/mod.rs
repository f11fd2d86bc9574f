//! The fault sweep's classes against the real emulator: one case per call and fault class,
//! through the built component, with a fault proxy in front of Azurite, so the fake service's
//! answers (tests/native/sweep) are checked against Azurite's. Judged by what Azurite holds
//! afterwards: no run without its lease, a grant that landed is never behind a plain error, the
//! record is not rewound and keeps a newer build's key, a success did what it says and a
//! failure says what it did, and no lease is left held that nobody owns up to. Leases are
//! broken rather than waited out, and late answers are late after 2 s (the test host's sender
//! gives up then), so the pass takes seconds, not lease periods.

mod calls;

use calls::{perform, setup, Call, Case, Done, CALLS, CHANGED, DATA, ID, NEWER};
use std::sync::atomic::{AtomicU32, Ordering};
use traffic_cop::guard::{Outcome, RunRecord};
use traffic_cop::ops::SetMetadata;
use traffic_cop::{LeaseClient, LeaseId, StdRuntime};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::faults::{Fault, FaultPlan, FaultProxy};
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::v2::{Decision, FencedError, SkipReason};
use traffic_cop_wasm_host::component::{fresh, LeaseError, Lock};
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
    let lossy = Lock {
        connection_string: connection_string_for_port(proxy.port, EMULATOR_KEY_B64),
        ..direct.clone()
    };
    let mut case = Case { direct: direct.clone(), lossy, ticket: None };
    setup(&mut case, call);
    let was = record(&direct).unwrap_or_default();
    let done = perform(&mut staged::short_limits(), &case, call);
    let mut wrong = Vec::new();
    let now = record(&direct).unwrap_or_default();
    if now.fence < was.fence {
        wrong.push(format!("fencing token rewound {} -> {}", was.fence, now.fence));
    }
    if was.unknown.iter().any(|(k, _)| k == NEWER.0)
        && !now.unknown.iter().any(|(k, v)| k == NEWER.0 && v == NEWER.1)
    {
        wrong.push("the newer build's key was lost".into());
    }
    let grew = now.fence > was.fence;
    let mut allowed: Vec<String> = case.ticket.iter().map(|t| t.lease_id.clone()).collect();
    let mut owned_up = false;
    match &done {
        Done::Decision(Decision::Run(ticket)) => {
            if !holds(&direct, &ticket.lease_id) {
                wrong.push("a run without its lease".into());
            }
            allowed.push(ticket.lease_id.clone());
        }
        Done::Decision(Decision::Skip(SkipReason::Error(error))) => {
            owned_up = says(error, &["used up", "may have been granted"]);
            if grew && !says(error, &["used up"]) {
                wrong.push(format!("a grant landed behind a plain error: {error:?}"));
            }
        }
        Done::Decision(Decision::Skip(reason)) if grew => {
            wrong.push(format!("a grant landed, yet the call skipped: {reason:?}"))
        }
        Done::Tickets(Ok(tickets)) => {
            for ticket in tickets {
                if !holds(&direct, &ticket.lease_id) {
                    wrong.push("a claimed run without its lease".into());
                }
                allowed.push(ticket.lease_id.clone());
            }
            if grew && tickets.is_empty() {
                wrong.push("a grant landed, yet claim returned nothing".into());
            }
        }
        Done::Tickets(Err(error)) => {
            owned_up = says(error, &["used up", "may have been granted"]);
            if grew && !says(error, &["used up"]) {
                wrong.push(format!("a grant landed behind a plain error: {error:?}"));
            }
        }
        Done::KeptAlive(Ok(_)) if !holds(&direct, &allowed[0]) => {
            wrong.push("keep-alive said ok without the lease".into())
        }
        Done::Completed(Ok(())) if now.running || now.outcome != Some(Outcome::Success) => {
            wrong.push(format!("complete said ok over {now:?}"))
        }
        Done::Completed(Err(error)) => {
            let told = says(error, &["was closed", "may or may not"]);
            if !now.running && !told {
                wrong.push(format!("the record was closed, yet complete failed: {error:?}"));
            }
        }
        Done::Wrote(result) => {
            let stored = fresh().read_fenced_v2(&calls::location(&direct), DATA).unwrap();
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
        Done::Other(Err(LeaseError::Transport(_))) if call == Call::Break => owned_up = true,
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
    if locked && !owned_up && !allowed.iter().any(|id| holds(&direct, id)) {
        wrong.push("a lease left held that nobody owns up to".into());
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

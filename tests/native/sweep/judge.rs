//! What every case must keep, judged from the fake service's state (the oracle) and the log of
//! what landed, never from what the client says it did:
//! - no run is granted without the lease, and no run's deadline is past its lease;
//! - at most one scheduled grant per due time;
//! - the record is never rewound or lost (the fencing token only grows, a newer build's keys
//!   stay);
//! - a call that reports success did what it says; one that reports failure did not, or its
//!   error says what did happen;
//! - after a call returns, no lease is held except a granted run's (or one the error owns up
//!   to).

use super::calls::{Call, Done, Setup, Stage, CHANGED_TO, CONTAINER, DATA, INTERVAL_S, NEWER};
use super::calls_v3::CRON_PERIOD_MS;
use super::faulty::Sent;
use std::collections::BTreeMap;
use traffic_cop::guard::{Decision, FencedError, Outcome, RunRecord, SkipReason, Ticket};

/// The lock's record as stored, before the call.
pub struct Before {
    pub records: BTreeMap<String, RunRecord>,
}

pub fn before(stage: &Stage, setup: &Setup) -> Before {
    let records = setup.locks.iter().map(|name| (name.clone(), record(stage, name))).collect();
    Before { records }
}

fn record(stage: &Stage, name: &str) -> RunRecord {
    let metadata = stage.service.metadata(CONTAINER, name).unwrap_or_default();
    RunRecord::from_metadata(&metadata.into_iter().collect::<Vec<_>>())
}

/// A grant the service stored during the call: a record write with `tc_running: true` that
/// landed and was answered 2xx.
struct Grant {
    lock: String,
    fence: u64,
    start_ms: u64,
    /// A `run-now` grant: counted apart from the scheduled ones.
    manual: bool,
}

/// Grants: record writes that landed with `running` and a token newer than the lock had before
/// the call (an operator's write under a run's lease keeps its token).
fn grants(sent: &[Sent], was: &Before) -> Vec<Grant> {
    sent.iter()
        .filter(|s| s.landed && s.status.is_some_and(|c| (200..300).contains(&c)))
        .filter(|s| s.request.uri().query() == Some("comp=metadata"))
        .filter_map(|s| {
            let header = |name: &str| s.request.headers().get(name)?.to_str().ok();
            (header("x-ms-meta-tc_running")? == "true").then_some(())?;
            let fence: u64 = header("x-ms-meta-tc_fence")?.parse().ok()?;
            let manual = header("x-ms-meta-tc_manual")
                .and_then(|m| m.split_once(':'))
                .is_some_and(|(tagged, _)| tagged == fence.to_string());
            Some(Grant {
                lock: s.request.uri().path().rsplit('/').next()?.to_string(),
                fence,
                start_ms: header("x-ms-meta-tc_start")?.parse().ok()?,
                manual,
            })
        })
        .filter(|g| was.records.get(&g.lock).is_none_or(|old| g.fence > old.fence))
        .collect()
}

/// The due time (index) a start counts for under the call's schedule: the grid's (a
/// quarter-interval tolerance, as the guard uses for guard@0.1.0/0.2.0 options) or the cron
/// schedule's (every two minutes, the default 5 s tolerance).
fn due(call: Call, start_ms: u64) -> u64 {
    if is_cron(call) {
        (start_ms + 5_000) / CRON_PERIOD_MS
    } else {
        (start_ms + INTERVAL_S * 1000 / 4) / (INTERVAL_S * 1000)
    }
}

fn is_cron(call: Call) -> bool {
    use Call::*;
    matches!(call, CronLeader | ManualLeader | Replace | Pause | Resume | RunNow | CompletePaused)
}

fn says(error: &dyn std::fmt::Display, words: &[&str]) -> bool {
    let text = error.to_string();
    words.iter().any(|w| text.contains(w))
}

pub fn judge(
    stage: &Stage,
    call: Call,
    setup: &Setup,
    was: &Before,
    done: &Done,
    sent: &[Sent],
) -> Vec<String> {
    let mut wrong = Vec::new();
    let landed = grants(sent, was);
    let scheduled =
        !matches!(call, Call::KeepAlive | Call::Complete | Call::WriteFenced | Call::WaitLeader);
    for name in &setup.locks {
        let (old, new) = (&was.records[name], record(stage, name));
        if new.fence < old.fence {
            wrong.push(format!("{name}: fencing token rewound {} -> {}", old.fence, new.fence));
        }
        if old.fence > 0 && !new.unknown.iter().any(|(k, v)| k == NEWER.0 && v == NEWER.1) {
            wrong.push(format!("{name}: the newer build's key was lost: {new:?}"));
        }
        // The operator's fields go only when asked: a pause by `resume`, a run-now by the
        // manual run it asked for.
        if old.paused.is_some() && new.paused.is_none() && call != Call::Resume {
            wrong.push(format!("{name}: the pause was lost: {new:?}"));
        }
        let manual_landed = landed.iter().any(|g| &g.lock == name && g.manual);
        if old.run_now.is_some() && new.run_now.is_none() && !manual_landed {
            wrong.push(format!("{name}: the run-now was lost: {new:?}"));
        }
        let mine: Vec<&Grant> = landed.iter().filter(|g| &g.lock == name && !g.manual).collect();
        if scheduled {
            let mut dues: Vec<u64> = mine.iter().map(|g| due(call, g.start_ms)).collect();
            if old.manual_by().is_none() {
                dues.extend(old.started_ms.map(|start| due(call, start)));
            }
            let count = dues.len();
            dues.sort_unstable();
            dues.dedup();
            if dues.len() != count {
                wrong.push(format!("{name}: two scheduled grants for one due time"));
            }
        }
    }
    let held = |name: &str| stage.service.held(CONTAINER, name);
    let ran = |ticket: &Ticket, wrong: &mut Vec<String>| match held(&ticket.lock.blob) {
        Some(h) if h.id == ticket.lease_id.to_string() => {
            if h.until.is_some_and(|until| until < ticket.deadline) {
                wrong.push(format!("{}: deadline past the lease", ticket.lock.blob));
            }
        }
        other => {
            wrong.push(format!("{}: a run without its lease (held: {other:?})", ticket.lock.blob))
        }
    };
    // Leases a call may leave: the setup's other holder's, its granted runs', what it owns up to.
    let mut allowed: Vec<String> = setup.held_by_other.iter().cloned().collect();
    let mut owned_up = false;
    match done {
        Done::Decision(Decision::Run(ticket)) => {
            ran(ticket, &mut wrong);
            allowed.push(ticket.lease_id.to_string());
        }
        Done::Decision(Decision::Skip(reason)) => {
            let used_up = matches!(reason, SkipReason::Error(e) if says(e, &["used up"]));
            if !landed.is_empty() && !used_up {
                wrong.push(format!("a grant landed, yet the call said {reason:?}"));
            }
            let may_hold =
                matches!(reason, SkipReason::Error(e) if says(e, &["may have been granted"]));
            owned_up = used_up || may_hold;
        }
        Done::Tickets(Ok(claim)) => {
            let tickets = &claim.tickets;
            owned_up = claim
                .stopped
                .as_ref()
                .is_some_and(|e| says(e, &["used up", "may have been granted"]));
            for ticket in tickets {
                ran(ticket, &mut wrong);
                allowed.push(ticket.lease_id.to_string());
            }
            let granted: Vec<u64> = tickets.iter().map(|t| t.fencing_token).collect();
            for grant in &landed {
                let stands = granted.contains(&grant.fence);
                let now = record(stage, &grant.lock);
                if !stands && !owned_up && now.fence == grant.fence && now.running {
                    // A grant that landed, runs nowhere, and no error said so.
                    wrong.push(format!("{}: grant {} landed unreported", grant.lock, grant.fence));
                }
            }
        }
        Done::Tickets(Err(error)) => {
            owned_up = says(error, &["used up", "may have been granted"]);
            if !landed.is_empty() && !says(error, &["used up"]) {
                wrong.push(format!("a grant landed, yet claim failed with {error}"));
            }
        }
        Done::KeptAlive(Ok(until)) => {
            let ticket = setup.ticket.as_ref().unwrap();
            match held("job") {
                Some(h) if h.id == ticket.lease_id.to_string() => {
                    if h.until.is_some_and(|u| u < *until) {
                        wrong.push("keep-alive's deadline is past the renewed lease".into());
                    }
                }
                other => wrong.push(format!("keep-alive said ok without the lease: {other:?}")),
            }
            allowed.push(ticket.lease_id.to_string());
        }
        Done::KeptAlive(Err(_)) => {
            allowed.extend(setup.ticket.iter().map(|t| t.lease_id.to_string()))
        }
        Done::Completed(Ok(())) => {
            let closed = record(stage, "job");
            if closed.running || closed.outcome != Some(Outcome::Success) {
                wrong.push(format!("complete said ok, the record is {closed:?}"));
            }
        }
        Done::Completed(Err(error)) => {
            let closed = !record(stage, "job").running;
            let told = says(error, &["was closed", "may or may not"]);
            if closed && !told {
                wrong.push(format!("the record was closed, yet complete failed with {error}"));
            }
            // The run's own lease may stay until it expires; the error says so when it does.
            owned_up = told || !closed;
        }
        Done::Wrote(result) => {
            let ticket = setup.ticket.as_ref().unwrap();
            let stored = stage.service.peek(CONTAINER, DATA, "tc_fencing_token");
            let wrote = stored.as_ref().is_some_and(|(body, _)| body == b"after");
            match result {
                Ok(_) if !wrote => wrong.push(format!("write-fenced said ok; stored {stored:?}")),
                Ok(_) => {}
                Err(FencedError::Failed(e)) if wrote && !says(e, &["may have been written"]) => {
                    wrong.push(format!("the data was written, yet write-fenced failed with {e}"))
                }
                Err(FencedError::Stale { .. }) if wrote => {
                    wrong.push("the data was written, yet write-fenced said stale".into())
                }
                Err(_) => {}
            }
            allowed.push(ticket.lease_id.to_string());
        }
        Done::Read(Ok(Some(data))) if data.contents != b"stored" => {
            wrong.push(format!("read-fenced read {:?}", data.contents))
        }
        Done::Read(Ok(None)) => wrong.push("read-fenced found nothing".into()),
        Done::Board(Ok(entries)) => {
            let job = entries.iter().find(|e| e.name == "job");
            if job.map(|e| e.record.fence) != Some(record(stage, "job").fence) {
                wrong.push(format!("the board disagrees with the record: {job:?}"));
            }
        }
        Done::Granted(Ok(grant)) => match held("job") {
            Some(h) if h.id == grant.lease_id.to_string() => allowed.push(h.id),
            other => wrong.push(format!("{call:?} said ok, but the lease is {other:?}")),
        },
        Done::Granted(Err(error)) => {
            owned_up = says(error, &["may have been granted"]);
            if call != Call::Acquire {
                allowed.extend(setup.lease_id.iter().map(|id| id.to_string()));
                allowed.push(CHANGED_TO.into());
            }
        }
        Done::Released(Ok(()))
            if held("job").is_some_and(|h| {
                Some(h.id.as_str()) == setup.lease_id.as_ref().map(|i| i.as_str())
            }) =>
        {
            wrong.push("release said ok, but the lease is still held".into());
        }
        Done::Released(Err(_)) => allowed.extend(setup.lease_id.iter().map(|id| id.to_string())),
        Done::Broke(Ok(_)) if held("job").is_some() => {
            wrong.push("break said ok, but the lease is held".into());
        }
        Done::Broke(Err(_)) => owned_up = true,
        Done::Operated(result) => {
            let (old, new) = (&was.records["job"], record(stage, "job"));
            let changed = match call {
                Call::Resume => new.paused.is_none(),
                Call::RunNow => new.run_now.is_some(),
                _ => new.paused.is_some(),
            };
            match result {
                Ok(answer) if !changed || answer.paused != new.paused => {
                    wrong.push(format!("{call:?} said ok; the record is {new:?}"))
                }
                Err(error) if changed && old != &new && !says(error, &["may or may not"]) => {
                    wrong.push(format!("{call:?} made its change, yet failed with {error}"))
                }
                _ => {}
            }
            if new.fence != old.fence || new.running != old.running {
                wrong.push(format!("{call:?} touched the run: {old:?} -> {new:?}"));
            }
        }
        Done::Looked(Ok(status)) if status.locked != held("job").is_some() => {
            wrong.push(format!("inspect says locked {}, the service disagrees", status.locked));
        }
        _ => {}
    }
    // The setup's own run (keep-alive, complete, write-fenced) keeps its lease until it ends.
    allowed.extend(setup.ticket.iter().map(|t| t.lease_id.to_string()));
    for name in &setup.locks {
        if let Some(h) = held(name) {
            if !allowed.contains(&h.id) && !owned_up {
                wrong.push(format!("{name}: a lease left held after the call ({h:?})"));
            }
        }
    }
    wrong
}

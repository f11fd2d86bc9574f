//! Interleavings. Contenders run on their own threads, but every request they make goes to one
//! scheduler that answers them one at a time, in an order drawn from a seed, moving virtual
//! time between steps (so leases expire and due times pass mid-flow) and losing some answers
//! after the service acted on them. The fake service is the oracle: whenever a contender is
//! told `run`, the service must say that contender's lease holds the lock at that instant.

use crate::support;

use crate::support::fake_service::FakeService;
use crate::support::threaded::{xorshift as next, Answer, Channel, Clock};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome};
use traffic_cop::transport::{Request, Timeouts, Transport};
use traffic_cop::{LeaseClient, Lock};

const CONTENDERS: usize = 4;
const TICKS: usize = 12;
/// Longer than the lease, so a crash costs at most the due time it happened in.
const INTERVAL: u64 = 20;

// One message at a time through a channel: boxing the request would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Msg {
    Send(Request, Sender<Answer>),
    /// Wake me when virtual time reaches this (ms): a timer trigger waiting for its tick.
    WaitUntil(u64, Sender<Answer>),
    Granted {
        lease_id: String,
        token: u64,
        started_ms: u64,
        ack: Sender<()>,
    },
    Done,
}

/// The fencing token of a record write that closes a run (`tc_running: false`).
fn closing_write(request: &Request) -> Option<u64> {
    let header = |name: &str| request.headers().get(name)?.to_str().ok();
    (header("x-ms-meta-tc_running")? == "false").then_some(())?;
    header("x-ms-meta-tc_fence")?.parse().ok()
}

fn lock() -> Lock {
    Lock::parse(support::EMULATOR, "interleave", "job").unwrap()
}

fn channel_to(scheduler: &Sender<Msg>) -> Channel<Msg> {
    Channel { to_scheduler: scheduler.clone(), wrap: Msg::Send }
}

fn contender(id: usize, tx: Sender<Msg>, ms: Arc<AtomicU64>, seed: u64) {
    let mut client =
        LeaseClient::new(channel_to(&tx), Clock(ms.clone(), std::cell::Cell::new(seed)));
    let options = GuardOptions::every_interval(&format!("c{id}"), 15, INTERVAL, None).unwrap();
    let mut jitter = seed | 1;
    let first_tick = (ms.load(Ordering::SeqCst) / 1000 / INTERVAL + 1) * INTERVAL * 1000;
    for tick in 0..TICKS {
        // Each replica's timer fires somewhere in the first two seconds after the tick.
        let fire_at = first_tick + tick as u64 * INTERVAL * 1000 + next(&mut jitter) % 2000;
        let (woken, wake) = channel();
        tx.send(Msg::WaitUntil(fire_at, woken)).unwrap();
        let _ = wake.recv().unwrap();
        if let Decision::Run(ticket) = guard::guarded_invoke(&mut client, &lock(), &options) {
            let (ack, acked) = channel();
            let (token, lease_id) = (ticket.fencing_token, ticket.lease_id.to_string());
            tx.send(Msg::Granted { lease_id, token, started_ms: ticket.started_ms, ack }).unwrap();
            acked.recv().unwrap();
            // Every fifth run by each contender crashes: no complete, the lease runs out.
            if !(tick + id).is_multiple_of(5) {
                let _ = guard::complete(&mut client, &ticket, &Outcome::Success);
            }
        }
    }
    tx.send(Msg::Done).unwrap();
}

#[test]
fn interleaved_contenders_are_only_told_to_run_while_holding_the_lease() {
    let runs: Vec<usize> = (1..=40u64).map(schedule).collect();
    println!(
        "runs per 12 ticks over 40 seeds: min {:?}, max {:?}, total {}",
        runs.iter().min(),
        runs.iter().max(),
        runs.iter().sum::<usize>()
    );
}

/// Runs one seeded schedule and returns how many runs were granted.
fn schedule(seed: u64) -> usize {
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let start = support::epoch();
    let ms = Arc::new(AtomicU64::new(guard::unix_ms(start)));
    let clock = std::rc::Rc::new(std::cell::Cell::new(start));
    let mut service = FakeService::new(clock.clone());
    let (tx, rx) = channel();
    let threads: Vec<_> = (0..CONTENDERS)
        .map(|id| {
            let (tx, ms) = (tx.clone(), ms.clone());
            std::thread::spawn(move || contender(id, tx, ms, seed * 31 + id as u64 + 1))
        })
        .collect();
    let (mut live, mut pending) =
        (CONTENDERS, Vec::<(Option<Request>, u64, Sender<Answer>)>::new());
    // (token, started_ms) of each grant, and the grant count when each run completed.
    let (mut grants, mut violations) = (Vec::<(u64, u64)>::new(), Vec::<String>::new());
    let mut completed_at: Vec<(u64, usize)> = Vec::new();
    while live > 0 {
        while pending.len() < live {
            match rx.recv().unwrap() {
                Msg::Send(request, reply) => pending.push((Some(request), 0, reply)),
                Msg::WaitUntil(at, reply) => pending.push((None, at, reply)),
                Msg::Done => live -= 1,
                Msg::Granted { lease_id, token, started_ms, ack } => {
                    clock.set(UNIX_EPOCH + Duration::from_millis(ms.load(Ordering::SeqCst)));
                    if service.holder("interleave", "job").as_deref() != Some(lease_id.as_str()) {
                        violations.push(format!("token {token} granted without holding the lease"));
                    }
                    grants.push((token, started_ms));
                    ack.send(()).unwrap();
                }
            }
        }
        if pending.is_empty() {
            continue;
        }
        // Sleepers whose time has not come wait; if nothing else can move, time jumps to them.
        let now = ms.load(Ordering::SeqCst);
        let ready: Vec<usize> = (0..pending.len()).filter(|i| pending[*i].1 <= now).collect();
        let chosen = match ready.len() {
            0 => {
                let (at, i) = pending.iter().enumerate().map(|(i, p)| (p.1, i)).min().unwrap();
                ms.store(at, Ordering::SeqCst);
                i
            }
            n => ready[(next(&mut rng) % n as u64) as usize],
        };
        let (request, _, reply) = pending.swap_remove(chosen);
        let Some(request) = request else {
            let _ = reply.send(support::hooked::lost());
            continue;
        };
        // Time moves between steps: mostly a little, sometimes past a whole lease.
        let step = match next(&mut rng) % 25 {
            0 => 16_000,
            1..=3 => 3_000,
            _ => next(&mut rng) % 400,
        };
        let now = ms.fetch_add(step, Ordering::SeqCst) + step;
        clock.set(UNIX_EPOCH + Duration::from_millis(now));
        let closing = closing_write(&request);
        let answer = service.send(request, Timeouts::default());
        // A run ends when its closing record lands (heard or not): nobody may be granted the
        // lock between a run's grant and that write.
        if let (Some(token), Ok(response)) = (closing, &answer) {
            if response.status().is_success() {
                completed_at.push((token, grants.len()));
            }
        }
        // One answer in twelve is lost after the service acted on it.
        let lost = next(&mut rng).is_multiple_of(12);
        let answer = if lost { support::hooked::lost() } else { answer };
        let _ = reply.send(answer);
    }
    threads.into_iter().for_each(|t| t.join().unwrap());

    // The due time a start counts for, as the guard judges it (a quarter-interval tolerance).
    let options = GuardOptions::every_interval("judge", 15, INTERVAL, None).unwrap();
    let due = |start: u64| options.schedule().counts_for(start, options.early_ms());
    for pair in grants.windows(2) {
        if pair[1].0 <= pair[0].0 {
            violations.push(format!("tokens out of order: {pair:?}"));
        }
        if due(pair[1].1) == due(pair[0].1) {
            violations.push(format!("two runs for one due time: {pair:?}"));
        }
    }
    for (token, grants_before) in &completed_at {
        let position = grants.iter().position(|g| g.0 == *token).unwrap();
        if *grants_before != position + 1 {
            violations.push(format!("token {token} completed after a later grant"));
        }
    }
    assert!(violations.is_empty(), "seed {seed}: {violations:?}");
    // A lease that runs out mid-grant loses its tick; still, most ticks must have run for the
    // checks to mean anything.
    assert!(grants.len() >= TICKS / 3, "seed {seed}: only {} runs in {TICKS} ticks", grants.len());
    grants.len()
}

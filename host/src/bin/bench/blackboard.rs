//! The blackboard at scale: many workers claiming many items through the component (a fresh
//! instance per call), against the naive baseline in which each worker tries every item with
//! `guarded-invoke`. Each round is a new due time: the schedule's phase is moved to the second
//! the round starts, so the bench need not wait a whole interval between rounds. A start counts
//! for the due time up to a skew tolerance after it (a quarter of the interval), so the steady
//! rounds use a 120 s interval and begin at least that tolerance after the last claim.

use super::ms;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_host::component::{fresh, v2};
use traffic_cop_host::proxy::CountingProxy;

/// The first interval: long, so creating every item's blob may take as long as it takes.
pub const FIRST: u64 = 86_400;
/// Steady rounds: every claim must land within the interval (90 s after the tolerance).
pub const STEADY: u64 = 120;
/// Tickets a worker asks for per `claim`; it calls again until it gets none.
const PER_CLAIM: u32 = 100;

#[derive(Clone, Copy, PartialEq)]
pub enum Strategy {
    Claim,
    /// Every worker calls `guarded-invoke` on every item, in its own order.
    Naive,
}

pub struct Round {
    pub claimed: usize,
    pub seconds: f64,
    pub requests: u64,
    pub wasted: u64,
    pub complete_requests: u64,
}

impl Round {
    pub fn print(&self, label: &str) {
        let claimed = self.claimed.max(1) as f64;
        println!(
            "  {label:<30} {:>7} {:>9.0} {:>10.2} {:>8} {:>7.1} % {:>9.2}",
            self.claimed,
            self.claimed as f64 / self.seconds,
            self.requests as f64 / claimed,
            self.wasted,
            100.0 * self.wasted as f64 / self.requests.max(1) as f64,
            self.complete_requests as f64 / claimed,
        );
    }
}

pub fn header() {
    println!(
        "  {:<30} {:>7} {:>9} {:>10} {:>8} {:>9} {:>9}",
        "", "claimed", "items/s", "req/item", "wasted", "wasted", "complete"
    );
}

/// One round: every worker claims until nothing is left (phase 1, counted), then completes
/// what it got (phase 2, counted apart).
pub fn round(
    proxy: &CountingProxy,
    location: &v2::Location,
    items: &Arc<Vec<String>>,
    (workers, strategy, interval): (usize, Strategy, u64),
    last_claim: &mut Option<Instant>,
) -> Round {
    if let Some(last) = last_claim {
        let tolerance = Duration::from_secs(interval / 4 + 1);
        std::thread::sleep(tolerance.saturating_sub(last.elapsed()));
    }
    let offset = (now_s() + 1) % interval;
    // Into the new due time before anyone asks.
    std::thread::sleep(Duration::from_millis(1000 - (now_ms() % 1000) + 50));
    let (before, wasted_before) = (proxy.requests(), proxy.answered(&[409, 412]));
    let claimed_all = Arc::new(Barrier::new(workers + 1));
    let tickets = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let (location, items) = (location.clone(), items.clone());
            let (claimed_all, tickets) = (claimed_all.clone(), tickets.clone());
            std::thread::spawn(move || {
                let options = options(&format!("worker-{w}"), interval, offset);
                let mine = match strategy {
                    Strategy::Claim => claim_all(&location, &items, &options),
                    Strategy::Naive => naive(&location, &items, &options, w),
                };
                let count = mine.len();
                claimed_all.wait();
                for ticket in mine {
                    fresh().complete_v2(&ticket, &v2::Outcome::Success).expect("complete");
                }
                tickets.lock().unwrap().push(count);
            })
        })
        .collect();
    claimed_all.wait();
    let seconds = started.elapsed().as_secs_f64();
    *last_claim = Some(Instant::now());
    let (requests, wasted) =
        (proxy.requests() - before, proxy.answered(&[409, 412]) - wasted_before);
    threads.into_iter().for_each(|t| t.join().unwrap());
    let claimed = tickets.lock().unwrap().iter().sum();
    Round {
        claimed,
        seconds,
        requests,
        wasted,
        complete_requests: proxy.requests() - before - requests,
    }
}

fn claim_all(
    location: &v2::Location,
    items: &[String],
    options: &v2::GuardOptions,
) -> Vec<v2::Ticket> {
    let mut mine = Vec::new();
    loop {
        match fresh().claim_v2(location, items, options, PER_CLAIM) {
            Ok(tickets) if tickets.is_empty() => return mine,
            Ok(tickets) => mine.extend(tickets),
            Err(error) => panic!("claim: {error:?}"),
        }
    }
}

fn naive(
    location: &v2::Location,
    items: &[String],
    options: &v2::GuardOptions,
    worker: usize,
) -> Vec<v2::Ticket> {
    let start = worker * items.len() / 16;
    let order = items[start..].iter().chain(&items[..start]);
    order
        .filter_map(|item| {
            let lock = traffic_cop_host::component::Lock {
                connection_string: location.connection_string.clone(),
                container: location.container.clone(),
                blob: item.clone(),
            };
            match fresh().guarded_invoke_v2(&lock, options) {
                v2::Decision::Run(ticket) => Some(ticket),
                v2::Decision::Skip(_) => None,
            }
        })
        .collect()
}

fn options(holder: &str, interval_seconds: u64, offset_seconds: u64) -> v2::GuardOptions {
    v2::GuardOptions {
        holder: holder.into(),
        lease_seconds: 60,
        interval_seconds,
        offset_seconds,
        starting_deadline_seconds: None,
        keep_alive_seconds: None,
    }
}

fn now_ms() -> u64 {
    ms(SystemTime::now().duration_since(UNIX_EPOCH).unwrap()) as u64
}

fn now_s() -> u64 {
    now_ms() / 1000
}

//! The blackboard at scale: many workers claiming many items through the component (a fresh
//! instance per call), against the naive baseline in which each worker tries every item with
//! `guarded-invoke`. Each round is a new due time: the schedule's phase is moved to the second
//! the round starts, so the bench need not wait a whole interval between rounds (each round's
//! schedule is a newer one, which wins at once: see the guard's `schedules`). A start counts
//! for the due time up to a skew tolerance before it (a quarter of the interval), so the steady
//! rounds use a 400 s interval and begin at least that tolerance after their container's last
//! claim.

use super::ms;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::connection_string_for_port;
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::{fresh, v2};

/// The first interval: long, so creating every item's blob may take as long as it takes.
pub const FIRST: u64 = 86_400;
/// Steady rounds: every claim must land before the items fall due again, `interval` minus
/// the guard's skew tolerance (a quarter of it, at most 300 s) after the due time. 400 s
/// leaves 300 s, plenty for 1,000 items; a saturated Azurite needs about ten minutes for
/// 10,000, so larger sets get 1,800 s (1,500 s to claim them all).
pub fn steady_interval(items: usize) -> u64 {
    if items <= 1_000 {
        400
    } else {
        1_800
    }
}
/// Tickets a worker asks for per `claim`; it calls again until it gets none.
/// (`scripts/bench`'s third argument; 50 by default).
pub static PER_CLAIM: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(50);

pub fn per_claim() -> u32 {
    PER_CLAIM.load(std::sync::atomic::Ordering::Relaxed)
}

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
    /// Completes that failed (the lease ran out first, or a saturated Azurite timed out).
    pub late_completes: u64,
}

impl Round {
    /// Prints the round's row, or stops the benchmark when the round did not claim every item:
    /// its rates would describe part of a round (a round that claims nothing measures nothing).
    pub fn print(&self, label: &str, items: usize) {
        if self.claimed != items {
            eprintln!(
                "blackboard {label}: the round claimed {} of {items} items, so its figures \
                 cannot be measured; the benchmark stops here",
                self.claimed
            );
            std::process::exit(1);
        }
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
        if self.late_completes > 0 {
            println!(
                "  {:<30} ({} completes came after their lease ran out)",
                "", self.late_completes
            );
        }
    }
}

pub fn header() {
    println!(
        "  {:<30} {:>7} {:>9} {:>10} {:>8} {:>9} {:>9}",
        "", "claimed", "items/s", "req/item", "wasted", "wasted", "complete"
    );
}

/// The two ways to the one Azurite: claims (and the naive baseline's invokes) go through one
/// counting proxy, completes through the other, so each is counted on its own.
pub struct Proxies {
    pub claims: CountingProxy,
    pub completes: CountingProxy,
}

impl Proxies {
    pub fn start(azurite_port: u16) -> Proxies {
        let (claims, completes) =
            (CountingProxy::start(azurite_port), CountingProxy::start(azurite_port));
        Proxies { claims, completes }
    }
}

/// One round: every worker claims a batch, completes it, and claims again until it gets none
/// (the naive worker: invokes each item and completes what it is granted).
pub fn round(
    proxies: &Proxies,
    location: &v2::Location,
    items: &Arc<Vec<String>>,
    (workers, strategy, interval): (usize, Strategy, u64),
    last_claim: &mut Option<Instant>,
) -> Round {
    if let Some(last) = last_claim {
        // Past the guard's skew tolerance after the last claim, so this round is a new
        // interval's (the tolerance: a quarter of the interval, at most 300 s).
        let tolerance = Duration::from_secs((interval / 4).min(300) + 1);
        std::thread::sleep(tolerance.saturating_sub(last.elapsed()));
    }
    let offset = (now_s() + 1) % interval;
    // Into the new due time before anyone asks.
    std::thread::sleep(Duration::from_millis(1000 - (now_ms() % 1000) + 50));
    let claims = &proxies.claims;
    let (before, wasted_before) = (claims.requests(), claims.answered(&[409, 412]));
    let completes_before = proxies.completes.requests();
    let complete_through = connection_string_for_port(proxies.completes.port, EMULATOR_KEY_B64);
    let late = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let started = Instant::now();
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let (location, items) = (location.clone(), items.clone());
            let (complete_through, late) = (complete_through.clone(), late.clone());
            std::thread::spawn(move || {
                let options = options(&format!("worker-{w}"), interval, offset);
                // A ticket whose lease ran out before its turn to complete (Azurite saturated)
                // is counted, not fatal: a real worker would have sent keep-alive.
                let complete = |mut ticket: v2::Ticket| {
                    ticket.lock.connection_string = complete_through.clone();
                    // A saturated Azurite may also time out: the run stays recorded as
                    // abandoned, which is what the guard promises; counted, not fatal.
                    if fresh().complete_v2(&ticket, &v2::Outcome::Success).is_err() {
                        late.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                };
                match strategy {
                    Strategy::Claim => claim_all(&location, &items, &options, complete),
                    Strategy::Naive => naive(&location, &items, &options, w, complete),
                }
            })
        })
        .collect();
    let claimed = threads.into_iter().map(|t| t.join().unwrap()).sum();
    *last_claim = Some(Instant::now());
    Round {
        claimed,
        seconds: started.elapsed().as_secs_f64(),
        requests: claims.requests() - before,
        wasted: claims.answered(&[409, 412]) - wasted_before,
        complete_requests: proxies.completes.requests() - completes_before,
        late_completes: late.load(std::sync::atomic::Ordering::SeqCst),
    }
}

fn claim_all(
    location: &v2::Location,
    items: &[String],
    options: &v2::GuardOptions,
    complete: impl Fn(v2::Ticket),
) -> usize {
    let (mut claimed, mut failures) = (0, 0);
    loop {
        match fresh().claim_v2(location, items, options, per_claim()) {
            Ok(tickets) if tickets.is_empty() => return claimed,
            Ok(tickets) => {
                claimed += tickets.len();
                tickets.into_iter().for_each(&complete);
            }
            // Retried by the next call, as a timer would; a claim that keeps failing ends it.
            Err(error) if failures < 5 => {
                failures += 1;
                eprintln!("claim failed, claiming again: {error:?}");
            }
            Err(error) => panic!("claim keeps failing: {error:?}"),
        }
    }
}

fn naive(
    location: &v2::Location,
    items: &[String],
    options: &v2::GuardOptions,
    worker: usize,
    complete: impl Fn(v2::Ticket),
) -> usize {
    let start = (worker * 7919) % items.len().max(1);
    let lock = |item: &String| traffic_cop_wasm_host::component::Lock {
        connection_string: location.connection_string.clone(),
        container: location.container.clone(),
        blob: item.clone(),
    };
    let mut claimed = 0;
    for item in items[start..].iter().chain(&items[..start]) {
        if let v2::Decision::Run(ticket) = fresh().guarded_invoke_v2(&lock(item), options) {
            claimed += 1;
            complete(ticket);
        }
    }
    claimed
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

//! The blackboard at scale: many workers claiming many items through the component (a fresh
//! instance per claim, which completes the runs it was granted), against the naive baseline in
//! which each worker tries every item with `guarded-invoke`. Each round is a new due time: its
//! schedule is a daily cron expression due the second the round starts, so the bench need not
//! wait out an interval between rounds (each round's schedule is a newer one, which wins at
//! once: see the guard's `schedules`). A start counts for a due time up to the early tolerance
//! before it (5 s), so each round begins past that after the last one's claims.

use super::ms;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome};
use traffic_cop_wasm_host::component::{fresh, Instance, ResourceAny};

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
            "  {label:<30} {:>7} {:>9.0} {:>10.2} {:>8} {:>7.1} %",
            self.claimed,
            self.claimed as f64 / self.seconds,
            self.requests as f64 / claimed,
            self.wasted,
            100.0 * self.wasted as f64 / self.requests.max(1) as f64,
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
        "  {:<30} {:>7} {:>9} {:>10} {:>8} {:>9}",
        "", "claimed", "items/s", "req/item", "wasted", "wasted"
    );
}

/// One round: every worker claims a batch, completes it on the instance that claimed it, and
/// claims again until it gets none (the naive worker: invokes each item and completes what it
/// is granted). `location` is the settings of the round's container, through `proxy`.
pub fn round(
    proxy: &CountingProxy,
    location: &v1::Settings,
    items: &Arc<Vec<String>>,
    (workers, strategy): (usize, Strategy),
    last_claim: &mut Option<Instant>,
) -> Round {
    if let Some(last) = last_claim {
        // Past the early tolerance after the last claim, so this round is a new due time's.
        std::thread::sleep(Duration::from_secs(6).saturating_sub(last.elapsed()));
    }
    // Due the coming second, every day: into the new due time before anyone asks.
    let due = now_s() + 1;
    let schedule = format!("{} {} {} * * *", due % 60, due / 60 % 60, due / 3600 % 24);
    std::thread::sleep(Duration::from_millis(1000 - (now_ms() % 1000) + 50));
    let (before, wasted_before) = (proxy.requests(), proxy.answered(&[409, 412]));
    let late = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let started = Instant::now();
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let (items, late) = (items.clone(), late.clone());
            let settings = v1::Settings {
                holder: Some(format!("worker-{w}")),
                lease_seconds: Some("60".into()),
                schedule: Some(schedule.clone()),
                ..location.clone()
            };
            std::thread::spawn(move || {
                // A run whose lease ran out before its turn to complete (Azurite saturated)
                // is counted, not fatal: a real worker would have sent keep-alive. A saturated
                // Azurite may also time out: the run stays recorded as abandoned, which is
                // what the guard promises.
                let complete = |instance: &mut Instance, run: ResourceAny| {
                    let finished = instance.run_complete(run, &Outcome::Success(String::new()));
                    if finished.error.is_some() {
                        late.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                };
                match strategy {
                    Strategy::Claim => claim_all(&settings, &items, complete),
                    Strategy::Naive => naive(&settings, &items, w, complete),
                }
            })
        })
        .collect();
    let claimed = threads.into_iter().map(|t| t.join().unwrap()).sum();
    *last_claim = Some(Instant::now());
    Round {
        claimed,
        seconds: started.elapsed().as_secs_f64(),
        requests: proxy.requests() - before,
        wasted: proxy.answered(&[409, 412]) - wasted_before,
        late_completes: late.load(std::sync::atomic::Ordering::SeqCst),
    }
}

fn claim_all(
    settings: &v1::Settings,
    items: &[String],
    complete: impl Fn(&mut Instance, ResourceAny),
) -> usize {
    let (mut claimed, mut failures) = (0, 0);
    loop {
        let mut instance = fresh();
        match instance.claim(settings, items, per_claim()) {
            Ok(granted) if granted.runs.is_empty() => return claimed,
            Ok(granted) => {
                claimed += granted.runs.len();
                granted.runs.into_iter().for_each(|run| complete(&mut instance, run));
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
    settings: &v1::Settings,
    items: &[String],
    worker: usize,
    complete: impl Fn(&mut Instance, ResourceAny),
) -> usize {
    let start = (worker * 7919) % items.len().max(1);
    let mut claimed = 0;
    for item in items[start..].iter().chain(&items[..start]) {
        let mut instance = fresh();
        let settings = v1::Settings { lock: Some(item.clone()), ..settings.clone() };
        if let Decision::Run(run) = instance.guarded_invoke(&settings) {
            claimed += 1;
            complete(&mut instance, run);
        }
    }
    claimed
}

fn now_ms() -> u64 {
    ms(SystemTime::now().duration_since(UNIX_EPOCH).unwrap()) as u64
}

fn now_s() -> u64 {
    now_ms() / 1000
}

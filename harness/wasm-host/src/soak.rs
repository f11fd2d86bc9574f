//! Contenders under faults, and the mutual-exclusion checker that judges them. Used by the
//! bounded default test (tests/wasmtime/faults.rs) and the long soak command (`scripts/soak`).

use crate::component::fresh;
use crate::component::v1::{self, Decision, Outcome, SkipReason};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use traffic_cop_testbed::faults::{Fault, FaultPlan, FaultProxy};
use traffic_cop_testbed::{sleep_until_unix, unix_secs};

mod check;
pub use check::check;

#[derive(Clone, Debug)]
pub struct SoakConfig {
    pub contenders: usize,
    pub locks: usize,
    pub ticks: u64,
    /// Per mille of granted runs that "crash": no complete, no release.
    pub crash_per_mille: u64,
    /// Per mille of granted runs whose work outlives their lease (no keep-alive) before they
    /// try to complete: a paused holder. Its lease runs out, others may take over, and its
    /// `complete` must then be refused.
    pub overrun_per_mille: u64,
    /// The first this many runs granted overrun as well, so a short run surely has some.
    pub first_overruns: u64,
    pub faults: FaultPlan,
    pub azurite_port: u16,
    pub container: String,
}

/// One granted run as its contender saw it, timed on one shared clock (the host's `Instant`).
#[derive(Clone, Debug)]
pub struct Grant {
    pub lock: String,
    pub contender: usize,
    pub token: u64,
    pub interval: u64,
    /// When the work started (the guard said run) and ended (before `complete`, or the crash).
    pub work: (Duration, Duration),
    /// Until when this run surely held the lease: the end of its work, capped by the ticket's
    /// deadline; for a crash, the deadline (a crashed holder may just be paused).
    pub held_until: Duration,
    pub crashed: bool,
    /// The work ran past the lease's deadline.
    pub overran: bool,
    /// `complete` succeeded.
    pub completed: bool,
}

#[derive(Debug, Default)]
pub struct SoakReport {
    pub decisions: u64,
    pub grants: Vec<Grant>,
    pub skips: BTreeMap<&'static str, u64>,
    pub complete_failures: u64,
    pub errors: Vec<String>,
    pub requests: u64,
    pub faults: BTreeMap<String, u64>,
    pub elapsed: Duration,
}

impl SoakReport {
    pub fn print(&self, violations: &[String]) {
        let crashed = self.grants.iter().filter(|g| g.crashed).count();
        println!("decisions            {}", self.decisions);
        println!("runs granted         {} ({crashed} crashed)", self.grants.len());
        let overran: Vec<&Grant> = self.grants.iter().filter(|g| g.overran).collect();
        println!(
            "runs past their lease {} ({} of them refused at complete)",
            overran.len(),
            overran.iter().filter(|g| !g.completed).count()
        );
        for (reason, count) in &self.skips {
            println!("skips {reason:<14} {count}");
        }
        println!("complete failures    {}", self.complete_failures);
        println!("requests             {}", self.requests);
        let injected: u64 = self.faults.values().sum();
        println!(
            "faults injected      {injected} ({:.1}% of requests)",
            100.0 * injected as f64 / self.requests.max(1) as f64
        );
        for (kind, count) in &self.faults {
            println!("  {kind:<18} {count}");
        }
        println!(
            "faults surfaced      {} (the rest were absorbed by the component's retries)",
            self.skips.get("error").copied().unwrap_or(0) + self.complete_failures
        );
        println!("violations           {}", violations.len());
        for v in violations.iter().take(20) {
            println!("  {v}");
        }
        println!("elapsed              {:.1?}", self.elapsed);
    }
}

/// Runs `contenders` threads; every tick (one second, the job interval) each asks the guard for
/// every lock, in its own random order, through the fault proxy.
pub fn run(config: &SoakConfig) -> SoakReport {
    let proxy = FaultProxy::start(config.azurite_port, config.faults.clone());
    let connection_string = traffic_cop_testbed::azurite::connection_string_for_port(
        proxy.port,
        traffic_cop_testbed::EMULATOR_KEY_B64,
    );
    let report = Arc::new(Mutex::new(SoakReport::default()));
    let epoch = Instant::now();
    let granted = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let first_tick = unix_secs() + 2;
    let threads: Vec<_> = (0..config.contenders)
        .map(|contender| {
            let (config, report, connection_string, granted) =
                (config.clone(), report.clone(), connection_string.clone(), granted.clone());
            std::thread::spawn(move || {
                let mut rng =
                    config.faults.seed ^ (contender as u64 + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93);
                let holder = format!("c{contender}");
                for tick in 0..config.ticks {
                    if contender == 0 && tick % 25 == 0 && tick > 0 {
                        let decisions = report.lock().unwrap().decisions;
                        eprintln!(
                            "  ... tick {tick}/{}: {decisions} decisions so far",
                            config.ticks
                        );
                    }
                    sleep_until_unix(first_tick + tick, next(&mut rng) % 200);
                    let mut order: Vec<usize> = (0..config.locks).collect();
                    order.sort_by_key(|_| next(&mut rng));
                    for lock_index in order {
                        let name = format!("lock-{lock_index}");
                        // Due every second, counted from the second it is due (no early
                        // tolerance), as the report's intervals are.
                        let settings = v1::Settings {
                            lease_seconds: Some("15".into()),
                            schedule: Some("@every 1s".into()),
                            early_tolerance_ms: Some("0".into()),
                            ..v1::settings(&connection_string, &config.container, &name, &holder)
                        };
                        let mut instance = fresh();
                        let decision = instance.guarded_invoke(&settings);
                        let started = epoch.elapsed();
                        let mut tally = report.lock().unwrap();
                        tally.decisions += 1;
                        let run = match decision {
                            Decision::Run(run) => run,
                            Decision::Skip(skipped) => {
                                let key = match skipped.reason {
                                    SkipReason::HeldByOther(_) => "held-by-other",
                                    SkipReason::AlreadyRan(_) => "already-ran",
                                    _ => {
                                        tally.errors.push(skipped.text);
                                        "error"
                                    }
                                };
                                *tally.skips.entry(key).or_default() += 1;
                                continue;
                            }
                        };
                        let details = instance.run_details(run);
                        let lease_left =
                            Duration::from_millis(details.deadline_ms.saturating_sub(unix_ms()));
                        let fate = next(&mut rng) % 1000;
                        let nth = granted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let crashed = nth >= config.first_overruns && fate < config.crash_per_mille;
                        let overran = !crashed
                            && (nth < config.first_overruns
                                || fate < config.crash_per_mille + config.overrun_per_mille);
                        drop(tally);
                        if overran {
                            std::thread::sleep(lease_left + Duration::from_millis(1500));
                        } else if !crashed {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        let ended = epoch.elapsed();
                        let completed = !crashed
                            && instance
                                .run_complete(run, &Outcome::Success(String::new()))
                                .error
                                .is_none();
                        let grant = Grant {
                            lock: name,
                            contender,
                            token: details.fencing_token,
                            interval: details.past_due.due_at_ms / 1000,
                            work: (started, ended),
                            held_until: if crashed {
                                started + lease_left
                            } else {
                                ended.min(started + lease_left)
                            },
                            crashed,
                            overran,
                            completed,
                        };
                        let mut tally = report.lock().unwrap();
                        tally.complete_failures += u64::from(!crashed && !completed);
                        tally.grants.push(grant);
                    }
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().expect("contender thread"));
    let mut report = Arc::try_unwrap(report).expect("threads joined").into_inner().unwrap();
    report.requests = proxy.requests();
    for fault in proxy.injected() {
        let kind = match fault {
            Fault::Status(s) => format!("status {s}"),
            other => format!("{other:?}").to_lowercase(),
        };
        *report.faults.entry(kind).or_default() += 1;
    }
    report.elapsed = epoch.elapsed();
    report
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

//! The whole story on one machine, no Azure account, no Spin: Azurite in memory on loopback,
//! three replicas of a timer-triggered job firing every two seconds, each tick in a fresh
//! instance of the built component. One replica is killed in the middle of a run and wakes up
//! later with its stale ticket; the fencing token makes the ledger refuse it. Ends with the
//! status board. Run it with `scripts/demo`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use traffic_cop_host::azurite::Azurite;
use traffic_cop_host::component::{
    fresh, BoardEntry, Decision, GuardOptions, Location, Lock, Outcome, SkipReason, Ticket,
};

const REPLICAS: usize = 3;
const TICK: Duration = Duration::from_secs(2);
const TICKS: u32 = 16;
const LEASE_SECONDS: u32 = 15;
/// The run during which its replica is killed.
const KILLED_RUN: usize = 3;

/// The singleton job's downstream system: an append-only ledger that refuses writes carrying a
/// fencing token older than one it has already seen.
#[derive(Default)]
struct Ledger {
    highest_token: u64,
    lines: Vec<String>,
}

impl Ledger {
    fn append(&mut self, token: u64, line: String) -> Result<(), String> {
        if token < self.highest_token {
            return Err(format!("refused token {token}: already saw {}", self.highest_token));
        }
        self.highest_token = token;
        self.lines.push(line);
        Ok(())
    }
}

struct Shared {
    started: Instant,
    ledger: Mutex<Ledger>,
    runs: Mutex<usize>,
    /// A stale ticket from the killed replica, with the time it "wakes up".
    sleeper: Mutex<Option<(Ticket, Instant)>>,
}

impl Shared {
    fn say(&self, who: &str, what: &str) {
        println!("[{:>5.1}s] {who:<9} {what}", self.started.elapsed().as_secs_f64());
    }
}

fn main() {
    println!("Starting Azurite (in memory, 127.0.0.1, ephemeral port)...");
    let azurite = Azurite::start();
    let location =
        Location { connection_string: azurite.connection_string(), container: "demo-locks".into() };
    let lock = Lock {
        connection_string: location.connection_string.clone(),
        container: location.container.clone(),
        blob: "nightly-cleanup".into(),
    };
    println!("Azurite on 127.0.0.1:{}; lock {}/{}; {REPLICAS} replicas tick every {TICK:?}; lease {LEASE_SECONDS}s.\n", azurite.port, lock.container, lock.blob);

    let shared = Arc::new(Shared {
        started: Instant::now(),
        ledger: Mutex::default(),
        runs: Mutex::new(0),
        sleeper: Mutex::new(None),
    });
    let threads: Vec<_> = (0..REPLICAS)
        .map(|replica| {
            let (shared, lock) = (shared.clone(), lock.clone());
            std::thread::spawn(move || replica_loop(replica, &shared, &lock))
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().expect("replica thread"));

    println!("\nLedger (downstream system, fenced by token):");
    for line in &shared.ledger.lock().unwrap().lines {
        println!("  {line}");
    }
    println!("\nStatus board:");
    print_board(&fresh().board(&location).expect("board"));
    azurite.stop();
    println!("\nAzurite stopped. Done.");
}

fn replica_loop(replica: usize, shared: &Shared, lock: &Lock) {
    let name = format!("replica-{replica}");
    let options = GuardOptions {
        holder: name.clone(),
        lease_seconds: LEASE_SECONDS,
        interval_seconds: TICK.as_secs(),
        keep_alive_seconds: None,
    };
    let mut dead_until = None;
    for tick in 0..TICKS {
        // Every replica's timer fires at the same moment, like a cron schedule would.
        let due = shared.started + TICK * tick + Duration::from_millis(50 * replica as u64);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        wake_sleeper(shared);
        if dead_until.is_some_and(|until| Instant::now() < until) {
            continue;
        }
        if dead_until.take().is_some() {
            shared.say(&name, "restarted");
        }
        match fresh().guarded_invoke(lock, &options) {
            Decision::Run(ticket) => {
                let run = {
                    let mut runs = shared.runs.lock().unwrap();
                    *runs += 1;
                    *runs
                };
                let abandoned = if ticket.previous_abandoned {
                    " (previous run was abandoned: taking over)"
                } else {
                    ""
                };
                shared
                    .say(&name, &format!("RUN  fencing token {}{abandoned}", ticket.fencing_token));
                if run == KILLED_RUN {
                    shared.say(&name, "KILLED in the middle of its run (no complete, no release)");
                    *shared.sleeper.lock().unwrap() =
                        Some((ticket, Instant::now() + Duration::from_secs(20)));
                    dead_until = Some(Instant::now() + Duration::from_secs(22));
                    continue;
                }
                do_the_work(&name, shared, &ticket);
            }
            Decision::Skip(SkipReason::HeldByOther(held)) => {
                shared.say(
                    &name,
                    &format!(
                        "skip: held by {}",
                        held.holder.as_deref().unwrap_or("someone (unrecorded)")
                    ),
                );
            }
            Decision::Skip(SkipReason::AlreadyRan(ran)) => {
                shared.say(
                    &name,
                    &format!(
                        "skip: already ran this interval ({})",
                        ran.holder.as_deref().unwrap_or("?")
                    ),
                );
            }
            Decision::Skip(SkipReason::Error(error)) => {
                shared.say(&name, &format!("skip: error {error:?}"))
            }
        }
    }
}

/// The singleton work: write one ledger line, fenced by the ticket's token, then complete.
fn do_the_work(name: &str, shared: &Shared, ticket: &Ticket) {
    std::thread::sleep(Duration::from_millis(300));
    let line =
        format!("token {:>2} by {name} at {}", ticket.fencing_token, httpdate(SystemTime::now()));
    if let Err(refused) = shared.ledger.lock().unwrap().append(ticket.fencing_token, line) {
        shared.say(name, &format!("ledger {refused}"));
    }
    match fresh().complete(ticket, &Outcome::Success) {
        Ok(()) => {
            shared.say(name, &format!("done token {}: recorded and released", ticket.fencing_token))
        }
        Err(error) => shared.say(name, &format!("complete failed: {error:?}")),
    }
}

/// The killed replica was only paused: it wakes with its old ticket and tries to finish.
fn wake_sleeper(shared: &Shared) {
    let woken = {
        let mut sleeper = shared.sleeper.lock().unwrap();
        match sleeper.as_ref() {
            Some((_, at)) if Instant::now() >= *at => sleeper.take(),
            _ => None,
        }
    };
    let Some((ticket, _)) = woken else { return };
    let who = format!("{}*", ticket.options.holder);
    shared.say(&who, &format!("wakes up from a long pause holding token {}", ticket.fencing_token));
    match fresh().keep_alive(&ticket) {
        Ok(_) => shared.say(&who, "keep-alive succeeded (nobody took over)"),
        Err(error) => shared.say(&who, &format!("keep-alive says: {}", short(&error))),
    }
    let line = format!("token {:>2} by {who} (stale)", ticket.fencing_token);
    if let Err(refused) = shared.ledger.lock().unwrap().append(ticket.fencing_token, line) {
        shared.say(&who, &format!("tries to write anyway: ledger {refused}"));
    }
}

fn short(error: &traffic_cop_host::component::LeaseError) -> String {
    use traffic_cop_host::component::LeaseError;
    match error {
        LeaseError::LeaseLost(e) => format!("lease lost ({})", e.code.as_deref().unwrap_or("?")),
        other => format!("{other:?}"),
    }
}

fn print_board(entries: &[BoardEntry]) {
    println!(
        "  {:<18} {:<10} {:<10} {:>5} {:<9} {:<9} {:<8} {}",
        "lock", "state", "holder", "token", "start", "stop", "running", "outcome"
    );
    for e in entries {
        let time = |ms: Option<u64>| {
            ms.map_or("-".to_string(), |ms| {
                httpdate(SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
            })
        };
        println!(
            "  {:<18} {:<10} {:<10} {:>5} {:<9} {:<9} {:<8} {}",
            e.name,
            format!("{:?}", e.state).to_lowercase().replace("leasestate::", ""),
            e.holder.as_deref().unwrap_or("-"),
            e.fencing_token,
            time(e.last_start_ms),
            time(e.last_stop_ms),
            e.running,
            e.last_outcome.as_deref().unwrap_or("-")
        );
    }
}

/// `HH:MM:SS` UTC, enough for a demo log.
fn httpdate(at: SystemTime) -> String {
    let secs = at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{:02}:{:02}:{:02}", secs / 3600 % 24, secs / 60 % 60, secs % 60)
}

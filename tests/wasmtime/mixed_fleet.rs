//! A rolling upgrade from an earlier build: a replica of an old build
//! (tests/fixtures/traffic_cop-7cb116a.wasm, its guard@0.2.0 every 2 s) and one of this build
//! (traffic-cop:lease@1.0.0, the same schedule as a cron expression) on one lock in Azurite. They keep one
//! run per due time, the old one keeps the record keys only this build knows, this build's
//! history takes in the old one's runs, and this build takes over a run the old one abandoned.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::runner::Test;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::lease::Lock;
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome, SkipReason, Skipped};
use traffic_cop_wasm_host::old_build::{self, old_fresh};

const EVERY: u64 = 2;

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Sleeps until 150 ms after the next due time; returns it (ms).
fn next_due() -> u64 {
    let period = EVERY * 1000;
    let due = now_ms() / period * period + period;
    std::thread::sleep(Duration::from_millis(due + 150 - now_ms()));
    due
}

fn old_options() -> old_build::GuardOptions {
    old_build::GuardOptions {
        holder: "old-build".into(),
        lease_seconds: 15,
        interval_seconds: EVERY,
        offset_seconds: 0,
        starting_deadline_seconds: None,
        keep_alive_seconds: None,
    }
}

fn new_settings(lock: &Lock) -> v1::Settings {
    v1::Settings {
        lease_seconds: Some("15".into()),
        schedule: Some(format!("*/{EVERY} * * * * *")),
        ..v1::settings(&lock.connection_string, &lock.container, &lock.blob, "new-build")
    }
}

/// A caller's place in a round: the second asks once the first has its answer (and while the
/// first's run lasts). A head start measured in milliseconds was lost to a slow instantiation
/// under load, and the wrong build won.
enum Turn {
    First(mpsc::Sender<()>),
    Second(mpsc::Receiver<()>),
    Alone,
}

impl Turn {
    fn pair(old_first: bool) -> (Turn, Turn) {
        let (answered, first_answered) = mpsc::channel();
        let (first, second) = (Turn::First(answered), Turn::Second(first_answered));
        if old_first {
            (first, second)
        } else {
            (second, first)
        }
    }

    fn ask<T>(self, ask: impl FnOnce() -> T) -> T {
        if let Turn::Second(first_answered) = &self {
            first_answered
                .recv_timeout(Duration::from_secs(30))
                .expect("the first caller answered");
        }
        let answer = ask();
        if let Turn::First(answered) = self {
            answered.send(()).unwrap();
        }
        answer
    }
}

/// This build's run, completed on the instance that granted it: (token, due time).
fn new_run(lock: &Lock, work: Duration, turn: Turn) -> Result<(u64, u64), String> {
    let mut instance = fresh();
    match turn.ask(|| instance.guarded_invoke(&new_settings(lock))) {
        Decision::Run(run) => {
            let details = instance.run_details(run);
            std::thread::sleep(work);
            completed(instance.run_complete(run, &Outcome::Success(String::new())));
            Ok((details.fencing_token, details.past_due.due_at_ms))
        }
        Decision::Skip(skipped) => Err(format!("new: {}", skipped.text)),
    }
}

fn completed(finished: v1::Finished) {
    assert!(finished.error.is_none(), "complete: {}", finished.text);
}

fn old_lock(lock: &Lock) -> old_build::Lock {
    old_build::Lock {
        connection_string: lock.connection_string.clone(),
        container: lock.container.clone(),
        blob: lock.blob.clone(),
    }
}

fn metadata(lock: &Lock) -> BTreeMap<String, String> {
    // A lock not yet created has no record.
    fresh().inspect(lock).map(|s| s.metadata.into_iter().collect()).unwrap_or_default()
}

/// Who ran one due time, with which token.
#[derive(Debug)]
struct Round {
    due_ms: u64,
    winner: &'static str,
    token: u64,
}

/// Both builds tick for one due time, `old_first` or not ([`Turn`]): the first runs and
/// completes, the second skips.
fn round(lock: &Lock, old_first: bool, complete_old: bool) -> Round {
    let due_ms = next_due();
    let (old, new) = (lock.clone(), lock.clone());
    let (old_turn, new_turn) = Turn::pair(old_first);
    let old = std::thread::spawn(move || {
        match old_turn.ask(|| old_fresh().guarded_invoke(&old_lock(&old), &old_options())) {
            old_build::Decision::Run(ticket) => {
                std::thread::sleep(Duration::from_millis(300));
                if complete_old {
                    old_fresh().complete(&ticket, &old_build::Outcome::Success).unwrap();
                }
                Ok((ticket.fencing_token, ticket.past_due.due_at_ms))
            }
            skip => Err(format!("old: {skip:?}")),
        }
    });
    let new = std::thread::spawn(move || new_run(&new, Duration::from_millis(300), new_turn));
    let (old, new) = (old.join().unwrap(), new.join().unwrap());
    let (winner, (token, ticket_due)) = match (old, new) {
        (Ok(run), Err(_)) => ("old", run),
        (Err(_), Ok(run)) => ("new", run),
        both => panic!("due time {due_ms}: not exactly one run: {both:?}"),
    };
    assert_eq!(ticket_due, due_ms, "{winner} ran for another due time than the tick's");
    let first = if old_first { "old" } else { "new" };
    assert_eq!(winner, first, "due time {due_ms}: the second caller ran, the first skipped");
    Round { due_ms, winner, token }
}

fn old_and_new_builds_on_one_lock_keep_one_run_per_due_time_and_each_others_record() {
    let connection_string = Azurite::shared().connection_string();
    let container = format!("mixed-fleet-{}", std::process::id());
    let lock = |blob: &str| Lock {
        connection_string: connection_string.clone(),
        container: container.clone(),
        blob: blob.into(),
    };
    // Compile both builds before timing anything.
    drop((fresh(), old_fresh()));

    // The keys each build writes that the other does not: one run of each on a lock of its own.
    let (only_old, only_new) = (lock("only-old"), lock("only-new"));
    match old_fresh().guarded_invoke(&old_lock(&only_old), &old_options()) {
        old_build::Decision::Run(t) => old_fresh().complete(&t, &old_build::Outcome::Success),
        other => panic!("old build on a fresh lock: {other:?}"),
    }
    .unwrap();
    new_run(&only_new, Duration::ZERO, Turn::Alone).expect("new build on a fresh lock");
    let (old_keys, new_keys) = (metadata(&only_old), metadata(&only_new));
    let new_only: Vec<&String> = new_keys.keys().filter(|k| !old_keys.contains_key(*k)).collect();
    assert!(!new_only.is_empty(), "this build writes no key the old one lacks: {new_keys:?}");

    // Rounds with the first caller alternating: each build wins four (`round` asserts the
    // first caller runs).
    let shared = lock("rolling");
    let mut rounds = Vec::new();
    for i in 0..8 {
        let before = metadata(&shared);
        let r = round(&shared, i % 2 == 0, true);
        let after = metadata(&shared);
        if r.winner == "old" {
            for key in new_only.iter().filter(|k| before.contains_key(**k)) {
                // The history and totals change only with this build's writes.
                assert_eq!(before.get(*key), after.get(*key), "the old build changed {key}");
            }
        }
        rounds.push(r);
    }
    let all = format!("{rounds:#?}");
    let tokens: Vec<u64> = rounds.iter().map(|r| r.token).collect();
    assert_eq!(tokens, (1..=rounds.len() as u64).collect::<Vec<_>>(), "{all}");
    let dues: Vec<u64> = rounds.iter().map(|r| r.due_ms).collect();
    assert!(dues.windows(2).all(|w| w[1] > w[0]), "{all}");

    // The old build abandons a run: this build skips while its lease lasts, then takes over.
    let abandoned = round(&shared, true, false);
    assert_eq!((abandoned.winner, abandoned.token), ("old", rounds.len() as u64 + 1));
    let expiry_ms = abandoned.due_ms + 150 + 15_000;
    loop {
        let due_ms = next_due();
        let mut instance = fresh();
        match instance.guarded_invoke(&new_settings(&shared)) {
            Decision::Run(run) => {
                let details = instance.run_details(run);
                assert!(now_ms() + 1000 >= expiry_ms, "took over before the lease expired");
                assert!(details.previous_abandoned, "{details:?}");
                assert_eq!(details.fencing_token, abandoned.token + 1);
                assert_eq!(details.past_due.due_at_ms, due_ms);
                completed(instance.run_complete(run, &Outcome::Success(String::new())));
                rounds.push(Round { due_ms, winner: "new", token: details.fencing_token });
                break;
            }
            Decision::Skip(Skipped { reason: SkipReason::HeldByOther(held), .. }) => {
                assert_eq!(held.holder.as_deref(), Some("old-build"));
                assert!(now_ms() < expiry_ms + 3 * EVERY * 1000, "no takeover after expiry");
            }
            other => panic!("while the abandoned run's lease lasts: {other:?}"),
        }
    }

    // This build's history lists every run of the fleet: its own, the old build's completed
    // ones (added at its next grant) and the abandoned one; the totals count them.
    let settings = v1::Settings { lock: None, ..new_settings(&shared) };
    let board = fresh().board(&settings).unwrap();
    let entry = board.locks.iter().find(|e| e.name == "rolling").expect("the lock on the board");
    let mut history: Vec<(u64, String)> = entry
        .history
        .iter()
        .map(|run| (run.fencing_token, run.holder.clone().unwrap_or_default()))
        .collect();
    history.sort();
    let mut expected: Vec<(u64, String)> =
        rounds.iter().map(|r| (r.token, format!("{}-build", r.winner))).collect();
    expected.push((abandoned.token, "old-build".into()));
    expected.sort();
    assert_eq!(history, expected, "{:#?}", entry.history);
    let totals = &entry.totals;
    assert_eq!((totals.successes, totals.abandoned), (rounds.len() as u64, 1), "{totals:?}");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        old_and_new_builds_on_one_lock_keep_one_run_per_due_time_and_each_others_record,
    ]
}

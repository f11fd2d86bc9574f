//! The integration tests' runner (libtest-mimic): the same command line and output as
//! `cargo test`'s own, plus tests that end with [`crate::needs::skip`] reported as *ignored*
//! with their reason. Each test module lists its tests with [`tests!`](crate::tests); a test
//! function that is not listed is dead code, which clippy (`-D warnings`) refuses.

use crate::needs::Skip;
/// The runner's command line (cargo test's own), and the run of the trials [`side_by_side`]
/// builds.
pub use libtest_mimic::{run as run_trials, Arguments};
use libtest_mimic::{Completion, Failed, Trial};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// One test: its name and body.
#[derive(Clone)]
pub struct Test {
    pub name: String,
    pub body: fn(),
    /// Why it does not run unless asked for (`--ignored` or `--include-ignored`).
    pub opt_in: Option<&'static str>,
}

/// `tests`, to be run only when asked for: `why` says what they cost (shown by `--list`).
pub fn opt_in(why: &'static str, tests: Vec<Test>) -> Vec<Test> {
    tests.into_iter().map(|test| Test { opt_in: Some(why), ..test }).collect()
}

/// The listed test functions of a module, named `module::function`.
#[macro_export]
macro_rules! tests {
    ($($test:ident),* $(,)?) => {
        vec![$($crate::runner::Test {
            name: format!("{}::{}", module_path!().rsplit("::").next().unwrap_or(""), stringify!($test)),
            body: $test,
            opt_in: None,
        }),*]
    };
}

/// Runs `tests` and exits. `threads` is the default parallelism (`--test-threads` overrides
/// it): the real-time stories mostly wait, so a binary of them runs more at once than cores.
pub fn run(tests: Vec<Test>, threads: usize) -> ! {
    let mut args = Arguments::from_args();
    args.test_threads = args.test_threads.or(Some(threads));
    quiet_skips();
    libtest_mimic::run(&args, ungated(tests, "")).exit()
}

/// Runs the groups side by side ([`side_by_side`]) and exits with the run's verdict. With
/// `--test-threads` given, the groups run one after the other at that parallelism instead
/// (`--test-threads=1` runs every test alone).
pub fn run_groups(groups: Vec<(&'static str, Vec<Test>, Slots)>) -> ! {
    let given = Arguments::from_args();
    quiet_skips();
    if given.test_threads.is_some() {
        let mut failed = false;
        for (group, tests, _) in groups {
            failed |= libtest_mimic::run(&given, ungated(tests, group)).has_failed();
        }
        std::process::exit(if failed { 101 } else { 0 })
    }
    let (args, trials) = side_by_side(groups, given);
    let conclusion = libtest_mimic::run(&args, trials);
    print_slowest(12);
    conclusion.exit()
}

/// Each test that ran: its name, when it started (past its group's gate, in seconds since the
/// first test started) and how long it took.
static TOOK: Mutex<Vec<(String, f64, f64)>> = Mutex::new(Vec::new());
static FIRST_START: OnceLock<std::time::Instant> = OnceLock::new();

/// The `n` slowest tests of the run, for whoever shortens CI: the real-time stories set its
/// length. With `TEST_TIMELINE` set to a file's path, every test's start and end go there too
/// (scripts/test writes target/test-timeline.txt): how the groups' slots were filled.
fn print_slowest(n: usize) {
    let mut took = TOOK.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    took.sort_by(|a, b| b.2.total_cmp(&a.2));
    if !took.is_empty() {
        println!("the {} slowest tests (seconds taken, from the run's start):", n.min(took.len()));
    }
    for (name, from, secs) in took.iter().take(n) {
        println!("  {secs:6.1} s  from {from:5.1} s  {name}");
    }
    if let Some(path) = std::env::var_os("TEST_TIMELINE") {
        took.sort_by(|a, b| a.1.total_cmp(&b.1));
        let lines: String = took
            .iter()
            .map(|(name, from, secs)| format!("{from:7.1} {:7.1} {name}\n", from + secs))
            .collect();
        if let Err(error) = std::fs::write(&path, lines) {
            println!("the timeline could not be written to {}: {error}", path.to_string_lossy());
        }
    }
}

/// How many of a group's tests run at once: `beside` while another group still has tests to
/// run, `alone` once it is the last. The real-time stories of the last group then take the
/// cores the ended group leaves idle.
#[derive(Clone, Copy, Debug)]
pub struct Slots {
    pub beside: usize,
    pub alone: usize,
}

impl Slots {
    /// The same number beside other groups and alone.
    pub fn fixed(at_once: usize) -> Slots {
        Slots { beside: at_once, alone: at_once }
    }
}

/// The groups as one run: names prefixed `group::`, each group's tests started in the order
/// they are listed and at most its [`Slots`] at once, the groups side by side. Their tests
/// mostly wait on real time, so two groups together keep two cores busier than either alone.
/// Returns `args` with the parallelism this needs.
pub fn side_by_side(
    groups: Vec<(&'static str, Vec<Test>, Slots)>,
    args: Arguments,
) -> (Arguments, Vec<Trial>) {
    let gates = Arc::new(Gates {
        groups: Mutex::new(Vec::with_capacity(groups.len())),
        changed: Condvar::new(),
    });
    let mut all = Vec::new();
    for (group, tests, slots) in groups {
        let index = {
            let mut states = gates.groups.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            states.push(GroupState { slots, turns: 0, running: 0, next_turn: 0 });
            states.len() - 1
        };
        let gate = Gate { gates: gates.clone(), group: index };
        let mut turns = 0;
        for (trial, turn) in trials(tests, group, Some(&gate)) {
            // Only the tests this run will start take a turn: a filtered-out one would hold up
            // every test listed after it (and keep its group from ever ending).
            if !args.is_filtered_out(&trial) && !args.is_ignored(&trial) {
                if let Some(turn) = turn {
                    let _ = turn.set(turns);
                }
                turns += 1;
            }
            all.push(trial);
        }
        gates.groups.lock().unwrap_or_else(|poisoned| poisoned.into_inner())[index].turns = turns;
    }
    // Every trial gets a thread of its own and waits at its group's gate: a pool smaller than
    // the trials would fill with one group's waiters while the other group's tests queue.
    let threads = all.len().max(1);
    (Arguments { test_threads: Some(threads), ..args }, all)
}

/// Every group's place in the run, under one lock: a group's limit depends on the others.
struct Gates {
    groups: Mutex<Vec<GroupState>>,
    changed: Condvar,
}

struct GroupState {
    slots: Slots,
    /// How many of its tests this run starts.
    turns: usize,
    running: usize,
    next_turn: usize,
}

impl GroupState {
    fn ended(&self) -> bool {
        self.next_turn >= self.turns && self.running == 0
    }
}

/// One group's entrance: its tests start in their listed order, within its limit.
#[derive(Clone)]
struct Gate {
    gates: Arc<Gates>,
    group: usize,
}

impl Gate {
    /// Waits for `turn` and a free place; the place is held until the [`Place`] drops.
    fn enter(&self, turn: usize) -> Place {
        let gates = &self.gates;
        let mut states = gates.groups.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            let alone = states.iter().enumerate().all(|(i, g)| i == self.group || g.ended());
            let mine = &states[self.group];
            let limit = if alone { mine.slots.alone } else { mine.slots.beside }.max(1);
            if mine.next_turn == turn && mine.running < limit {
                break;
            }
            states = gates.changed.wait(states).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        states[self.group].running += 1;
        states[self.group].next_turn += 1;
        gates.changed.notify_all();
        Place(self.clone())
    }
}

struct Place(Gate);

impl Drop for Place {
    fn drop(&mut self) {
        let gates = &self.0.gates;
        let mut states = gates.groups.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        states[self.0.group].running -= 1;
        gates.changed.notify_all();
    }
}

/// The tests as trials that start whenever the runner's pool has room.
fn ungated(tests: Vec<Test>, group: &str) -> Vec<Trial> {
    trials(tests, group, None).into_iter().map(|(trial, _)| trial).collect()
}

/// The tests as trials; with a gate, each trial also returns the slot for its turn there
/// (a trial whose slot stays empty runs ungated: the run never starts it).
fn trials(
    tests: Vec<Test>,
    group: &str,
    gate: Option<&Gate>,
) -> Vec<(Trial, Option<Arc<OnceLock<usize>>>)> {
    tests
        .into_iter()
        .map(|test| {
            let opt_in = test.opt_in;
            let name = if group.is_empty() { test.name } else { format!("{group}::{}", test.name) };
            let timed = name.clone();
            let turn = gate.map(|gate| (gate.clone(), Arc::new(OnceLock::new())));
            let slot = turn.as_ref().map(|(_, slot)| slot.clone());
            let trial = Trial::ignorable_test(name, move || {
                let _place = turn.as_ref().and_then(|(gate, slot)| Some(gate.enter(*slot.get()?)));
                let started = std::time::Instant::now();
                let from = started.duration_since(*FIRST_START.get_or_init(|| started));
                let ran = catch_unwind(AssertUnwindSafe(test.body));
                let secs = started.elapsed().as_secs_f64();
                let record = (timed, from.as_secs_f64(), secs);
                TOOK.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(record);
                match ran {
                    Ok(()) => Ok(Completion::Completed),
                    Err(payload) => match payload.downcast::<Skip>() {
                        Ok(skip) => Ok(Completion::ignored_with(skip.0)),
                        Err(payload) => Err(Failed::from(failure(&payload))),
                    },
                }
            })
            .with_ignored_flag(opt_in.is_some())
            .with_kind(if opt_in.is_some() { "opt-in" } else { "" });
            (trial, slot)
        })
        .collect()
}

thread_local! {
    /// Where this thread's test last panicked (`file:line:column`), kept by the panic hook.
    static PANICKED_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A skip is not a crash: the default panic message is kept for every other panic, and where
/// it happened is kept for the failure's last line.
fn quiet_skips() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.payload().is::<Skip>() {
            let at = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            PANICKED_AT.with(|cell| *cell.borrow_mut() = at);
            default(info);
        }
    }));
}

/// A failed test's message, ending with where it panicked: a long message (a fleet's logs)
/// is cut in the middle by a CI log's excerpt, and its tail then still names the assertion.
fn failure(payload: &Box<dyn std::any::Any + Send>) -> String {
    let message = panic_message(payload);
    match PANICKED_AT.with(|cell| cell.borrow_mut().take()) {
        Some(at) => format!("{message}\n(panicked at {at})"),
        None => message,
    }
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panicked".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_ends_with_where_it_panicked() {
        quiet_skips();
        let payload = catch_unwind(|| panic!("a long log\nthen more")).unwrap_err();
        let text = failure(&payload);
        let (message, last) = text.rsplit_once('\n').unwrap();
        assert_eq!(message, "a long log\nthen more");
        assert!(last.starts_with("(panicked at ") && last.contains("runner.rs:"), "{text}");
    }
}

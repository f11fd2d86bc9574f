//! The integration tests' runner (libtest-mimic): the same command line and output as
//! `cargo test`'s own, plus tests that end with [`crate::needs::skip`] reported as *ignored*
//! with their reason. Each test module lists its tests with [`tests!`](crate::tests); a test
//! function that is not listed is dead code, which clippy (`-D warnings`) refuses.

use crate::needs::Skip;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::panic::{catch_unwind, AssertUnwindSafe};

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
    libtest_mimic::run(&args, trials(tests, "")).exit()
}

/// Runs each group of tests after the one before, with the group's own default parallelism
/// (`--test-threads` overrides it), names prefixed `group::`, and exits failed if any group
/// failed. One binary for several groups links the test host once; running them one after
/// another keeps each group's load what it was as a binary of its own.
pub fn run_groups(groups: Vec<(&'static str, Vec<Test>, usize)>) -> ! {
    let given = Arguments::from_args();
    quiet_skips();
    let mut failed = false;
    for (group, tests, threads) in groups {
        let mut args = given.clone();
        args.test_threads = given.test_threads.or(Some(threads));
        failed |= libtest_mimic::run(&args, trials(tests, group)).has_failed();
    }
    std::process::exit(if failed { 101 } else { 0 })
}

fn trials(tests: Vec<Test>, group: &str) -> Vec<Trial> {
    tests
        .into_iter()
        .map(|test| {
            let opt_in = test.opt_in;
            let name = if group.is_empty() { test.name } else { format!("{group}::{}", test.name) };
            Trial::ignorable_test(name, move || match catch_unwind(AssertUnwindSafe(test.body)) {
                Ok(()) => Ok(Completion::Completed),
                Err(payload) => match payload.downcast::<Skip>() {
                    Ok(skip) => Ok(Completion::ignored_with(skip.0)),
                    Err(payload) => Err(Failed::from(panic_message(&payload))),
                },
            })
            .with_ignored_flag(opt_in.is_some())
            .with_kind(if opt_in.is_some() { "opt-in" } else { "" })
        })
        .collect()
}

/// A skip is not a crash: the default panic message is kept for every other panic.
fn quiet_skips() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.payload().is::<Skip>() {
            default(info);
        }
    }));
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panicked".into())
}

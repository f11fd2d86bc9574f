//! The oracle tests: the schedule and time-zone code judged by implementations no one here
//! wrote (croniter and Python's zoneinfo, pinned in tests/oracles/requirements.txt and installed
//! by scripts/oracle-tools), over thousands of random cases each. Reported as ignored without
//! the venv (a failure under `CI=true`).

mod cron;
mod cron_corpus;
mod zones;

fn main() {
    let tests: Vec<Vec<traffic_cop_testbed::runner::Test>> = vec![cron::tests(), zones::tests()];
    traffic_cop_testbed::runner::run(tests.concat(), 2)
}

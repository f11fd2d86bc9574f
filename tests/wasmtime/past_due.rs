//! `traffic-cop:lease@1.0.0` through the built component, against Azurite on real time: a
//! schedule's due times every few seconds, the run's past-due signal, the starting deadline's
//! `too-late`, and the board's next due time and overdue flag, for an `@every` schedule (due at
//! whole multiples of its interval, overdue a quarter interval past its next due time) and for a
//! phased cron schedule (`1/4` seconds: due a second past those multiples, overdue only a minute
//! past).

use traffic_cop_testbed::runner::Test;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome, SkipReason};

const INTERVAL: u64 = 4;

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Sleeps until `after_ms` past the next due time (`phase + k * INTERVAL` seconds); returns it.
fn wait_for_due(phase: u64, after_ms: u64) -> u64 {
    let period = INTERVAL * 1000;
    let due = (now_ms() + period - phase * 1000) / period * period + phase * 1000;
    let due = if due < now_ms() { due + period } else { due };
    std::thread::sleep(Duration::from_millis(due + after_ms - now_ms()));
    due
}

/// A job due every `INTERVAL` seconds at `phase`, as `schedule` says it.
struct Job {
    settings: v1::Settings,
    phase: u64,
}

impl Job {
    fn new(schedule: &str, phase: u64) -> Job {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let container =
            format!("past-due-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        let settings = v1::Settings {
            lease_seconds: Some("15".into()),
            schedule: Some(schedule.into()),
            ..v1::settings(&Azurite::shared().connection_string(), &container, "phased", "due")
        };
        Job { settings, phase }
    }

    fn with_deadline(&self, seconds: Option<u64>) -> v1::Settings {
        v1::Settings {
            starting_deadline_seconds: seconds.map(|s| s.to_string()),
            ..self.settings.clone()
        }
    }

    fn entry(&self) -> v1::BoardEntry {
        let mut board = fresh().board(&self.settings).unwrap();
        assert_eq!(board.locks.len(), 1, "{board:?}");
        board.locks.pop().unwrap()
    }
}

/// Runs the job at its next due time, then ticks two seconds late at the one after: too late
/// against a one-second deadline, a catch-up run without it. `shown` is the board's schedule;
/// `overdue_when_late` whether two seconds without a run is past its grace.
fn signals_past_due_skips_too_late_and_shows_next_due(
    job: &Job,
    shown: &str,
    overdue_when_late: bool,
) {
    // Compile and instantiate the component before timing anything.
    drop(fresh());
    let due = wait_for_due(job.phase, 200);
    let mut instance = fresh();
    let run = match instance.guarded_invoke(&job.with_deadline(None)) {
        Decision::Run(run) => run,
        Decision::Skip(skipped) => panic!("expected a run, got {skipped:?}"),
    };
    let details = instance.run_details(run);
    let past_due = &details.past_due;
    assert_eq!(past_due.due_at_ms, due, "{past_due:?}");
    // Storage's clock (the answer's Date header) counts whole seconds: a tick 200 ms after the due
    // time that reaches it after the next second shows 1,000 ms late.
    assert!(past_due.late_by_ms <= 1_000, "{past_due:?}");
    assert_eq!(
        (past_due.missed, past_due.previous_due_at_ms, past_due.previous_start_ms),
        (0, None, None)
    );
    let first_start = details.started_at_ms;
    let finished = instance.run_complete(run, &Outcome::Success(String::new()));
    assert!(finished.error.is_none(), "{finished:?}");
    let entry = job.entry();
    let next = due + INTERVAL * 1000;
    assert_eq!(entry.schedule.as_deref(), Some(shown), "{entry:?}");
    assert_eq!((entry.last_due_ms, entry.next_due_ms), (Some(due), Some(next)), "{entry:?}");
    assert!(!entry.overdue, "{entry:?}");

    // The next due time, two seconds late against a one-second deadline: too late.
    let late_due = wait_for_due(job.phase, 2_000);
    assert_eq!(late_due, next);
    match fresh().guarded_invoke(&job.with_deadline(Some(1))) {
        Decision::Skip(v1::Skipped { reason: SkipReason::TooLate(late), text, report }) => {
            assert_eq!((late.due_at_ms, late.next_due_ms), (next, next + INTERVAL * 1000));
            assert!((2_000..3_000).contains(&late.late_by_ms), "{late:?}");
            assert!(text.starts_with("[due] skipped the due time "), "{text}");
            // The decision log's line, as the component writes it for every adapter to print.
            let line: serde_json::Value = serde_json::from_str(&report).expect(&report);
            assert_eq!((&line["reason"], &line["detail"]), (&"too-late".into(), &text.into()));
            assert_eq!(line["due_at_ms"], next, "{report}");
        }
        Decision::Skip(skipped) => panic!("expected too-late, got {skipped:?}"),
        Decision::Run(_) => panic!("expected too-late, got a run"),
    }
    // Past that due time by more than the schedule's grace with no run: overdue.
    let entry = job.entry();
    assert_eq!(entry.next_due_ms, Some(next), "{entry:?}");
    assert_eq!(entry.overdue, overdue_when_late, "{entry:?}");
    // Without the deadline the same late tick catches up, and says it ran late.
    let mut instance = fresh();
    match instance.guarded_invoke(&job.with_deadline(None)) {
        Decision::Run(run) => {
            let past_due = instance.run_details(run).past_due;
            assert_eq!(past_due.due_at_ms, next);
            assert_eq!(past_due.previous_due_at_ms, Some(due), "{past_due:?}");
            assert_eq!(past_due.previous_start_ms, Some(first_start));
            assert!(past_due.late_by_ms >= 2_000, "{past_due:?}");
            assert_eq!(past_due.missed, 0, "{past_due:?}");
            let finished = instance.run_complete(run, &Outcome::Success(String::new()));
            assert!(finished.error.is_none(), "{finished:?}");
        }
        Decision::Skip(skipped) => panic!("expected a run, got {skipped:?}"),
    }
    assert!(!job.entry().overdue, "caught up");
}

fn an_every_schedule_signals_past_due_skips_too_late_and_shows_overdue() {
    let job = Job::new(&format!("@every {INTERVAL}s"), 0);
    // A quarter of the interval's grace: a second.
    signals_past_due_skips_too_late_and_shows_next_due(&job, "every 4 s from 0 s", true);
}

fn a_phased_schedule_signals_past_due_skips_too_late_and_shows_next_due() {
    let job = Job::new("1/4 * * * * *", 1);
    // A cron schedule's grace is a minute: two seconds late is not overdue yet.
    signals_past_due_skips_too_late_and_shows_next_due(
        &job,
        "cron \"1/4 * * * * *\" in UTC (spin)",
        false,
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        an_every_schedule_signals_past_due_skips_too_late_and_shows_overdue,
        a_phased_schedule_signals_past_due_skips_too_late_and_shows_next_due,
    ]
}

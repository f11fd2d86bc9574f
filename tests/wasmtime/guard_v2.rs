//! `traffic-cop:lease/guard@0.2.0` through the built component, against Azurite on real time:
//! a phased schedule's due times, the past-due signal, the starting deadline's `too-late`, and
//! the board's next due time and overdue flag. The 0.1.0 guard is exercised by guard_azurite.rs
//! against the same component.

use traffic_cop_testbed::runner::Test;

use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_wasm_host::component::v2::{Decision, GuardOptions, Location, Outcome, SkipReason};
use traffic_cop_wasm_host::component::{fresh, Lock};

const INTERVAL: u64 = 4;
const OFFSET: u64 = 1;

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Sleeps until `after_ms` past the next due time (`OFFSET + k * INTERVAL` seconds); returns it.
fn wait_for_due(after_ms: u64) -> u64 {
    let period = INTERVAL * 1000;
    let due = (now_ms() + period - OFFSET * 1000) / period * period + OFFSET * 1000;
    let due = if due < now_ms() { due + period } else { due };
    std::thread::sleep(Duration::from_millis(due + after_ms - now_ms()));
    due
}

fn options(deadline: Option<u64>) -> GuardOptions {
    GuardOptions {
        holder: "v2".into(),
        lease_seconds: 15,
        interval_seconds: INTERVAL,
        offset_seconds: OFFSET,
        starting_deadline_seconds: deadline,
        keep_alive_seconds: None,
    }
}

fn a_phased_schedule_signals_past_due_skips_too_late_and_shows_next_due() {
    let connection_string = Azurite::shared().connection_string();
    let lock = Lock {
        connection_string: connection_string.clone(),
        container: "guard-v2".into(),
        blob: "phased".into(),
    };
    let location = Location { connection_string, container: "guard-v2".into() };

    // Compile and instantiate the component before timing anything.
    drop(fresh());
    let due = wait_for_due(200);
    let ticket = match fresh().guarded_invoke_v2(&lock, &options(None)) {
        Decision::Run(ticket) => ticket,
        other => panic!("expected a run, got {other:?}"),
    };
    assert_eq!(ticket.past_due.due_at_ms, due, "{:?}", ticket.past_due);
    assert!(ticket.past_due.late_by_ms < 1_000);
    assert_eq!((ticket.past_due.missed, ticket.past_due.previous_start_ms), (0, None));
    assert_eq!(ticket.options.offset_seconds, OFFSET);
    let first_start = ticket.started_at_ms;
    fresh().complete_v2(&ticket, &Outcome::Success).unwrap();
    let entry = fresh().board_v2(&location).unwrap().pop().unwrap();
    let next = due + INTERVAL * 1000;
    assert_eq!((entry.interval_seconds, entry.offset_seconds), (Some(INTERVAL), Some(OFFSET)));
    assert_eq!((entry.next_due_ms, entry.overdue), (Some(next), false));

    // The next due time, two seconds late against a one-second deadline: too late.
    let late_due = wait_for_due(2_000);
    assert_eq!(late_due, next);
    match fresh().guarded_invoke_v2(&lock, &options(Some(1))) {
        Decision::Skip(SkipReason::TooLate(late)) => {
            assert_eq!((late.due_at_ms, late.next_due_ms), (next, next + INTERVAL * 1000));
            assert!((2_000..3_000).contains(&late.late_by_ms), "{late:?}");
        }
        other => panic!("expected too-late, got {other:?}"),
    }
    // Past that due time by more than the tolerance (a second here) with no run: overdue.
    assert!(fresh().board_v2(&location).unwrap().pop().unwrap().overdue);
    // Without the deadline the same late tick catches up, and says it ran late.
    match fresh().guarded_invoke_v2(&lock, &options(None)) {
        Decision::Run(ticket) => {
            assert_eq!(ticket.past_due.due_at_ms, next);
            assert_eq!(ticket.past_due.previous_start_ms, Some(first_start));
            assert!(ticket.past_due.late_by_ms >= 2_000, "{:?}", ticket.past_due);
            fresh().complete_v2(&ticket, &Outcome::Success).unwrap();
        }
        other => panic!("expected a run, got {other:?}"),
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_phased_schedule_signals_past_due_skips_too_late_and_shows_next_due,
    ]
}

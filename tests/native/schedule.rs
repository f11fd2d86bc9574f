//! The schedule monitor on virtual time, over the fake service: due times with a phase, one
//! catch-up run after downtime that counts what was missed, the opt-in starting deadline, and
//! the board's next due time and overdue flag.

use crate::support::fake_service::FakeService;
use crate::support::fake_world::FakeWorld;
use crate::support::{VirtualRuntime, EMULATOR};
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, Grid, GuardOptions, Outcome, SkipReason, Ticket};
use traffic_cop::{Account, LeaseClient, Lock};

/// Hourly at :15.
const INTERVAL: u64 = 3_600;
const OFFSET: u64 = 900;

struct World(FakeWorld);

impl World {
    fn new() -> World {
        World(FakeWorld::new())
    }

    fn client(&self) -> LeaseClient<FakeService, VirtualRuntime> {
        self.0.client()
    }

    /// Moves to `seconds` after due time `k` (k counts hours since the epoch).
    fn at_due(&self, k: u64, seconds: i64) {
        let due = (k * INTERVAL + OFFSET) as i64;
        self.0.clock.set(UNIX_EPOCH + Duration::from_secs((due + seconds) as u64));
    }

    /// Three replicas fire, `spread` seconds apart from `first`; the winner completes.
    fn tick(&self, options: &GuardOptions, k: u64, first: i64) -> Vec<Decision> {
        (0..3)
            .map(|replica| {
                self.at_due(k, first + replica * 2);
                let lock = Lock::parse(EMULATOR, "schedule", "hourly").unwrap();
                let options = options.clone().for_holder(&format!("r{replica}")).unwrap();
                let decision = guard::guarded_invoke(&mut self.client(), &lock, &options);
                if let Decision::Run(ticket) = &decision {
                    guard::complete(&mut self.client(), ticket, &Outcome::Success).unwrap();
                }
                decision
            })
            .collect()
    }
}

fn hourly_at_quarter_past(deadline: Option<u64>) -> GuardOptions {
    GuardOptions::every_interval("r", 15, INTERVAL, None)
        .unwrap()
        .with_phase_and_deadline(OFFSET, deadline)
        .unwrap()
}

fn the_run(decisions: &[Decision]) -> Ticket {
    let runs: Vec<&Ticket> = decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Run(ticket) => Some(ticket),
            _ => None,
        })
        .collect();
    assert_eq!(runs.len(), 1, "exactly one run per due time: {decisions:?}");
    runs[0].clone()
}

const K: u64 = 482_000;

#[test]
fn after_downtime_one_run_catches_up_and_reports_what_was_missed() {
    let world = World::new();
    let options = hourly_at_quarter_past(None);
    for k in K..K + 3 {
        let run = the_run(&world.tick(&options, k, 0));
        assert_eq!(run.past_due.missed, 0);
        assert_eq!(run.past_due.due_at_ms, (k * INTERVAL + OFFSET) * 1000);
    }
    // Every replica is down for due times K+3 .. K+6; at K+7 they come back, 40 minutes late.
    let run = the_run(&world.tick(&options, K + 7, 2_400));
    assert_eq!(run.past_due.missed, 4, "{:?}", run.past_due);
    assert_eq!(run.past_due.late_by_ms, 2_400_000);
    assert_eq!(run.past_due.previous_start_ms, Some(((K + 2) * INTERVAL + OFFSET) * 1000));
    // And the next due time is on schedule again.
    assert_eq!(the_run(&world.tick(&options, K + 8, 0)).past_due.missed, 0);
}

#[test]
fn the_phase_is_the_boundary_even_for_a_replica_whose_clock_runs_ahead() {
    let world = World::new();
    let options = hourly_at_quarter_past(None);
    the_run(&world.tick(&options, K, 0));
    // At :14:50 (ten seconds early by the service's clock) the first replica fires for :15.
    let decisions = world.tick(&options, K + 1, -10);
    let run = the_run(&decisions);
    assert_eq!(run.past_due.due_at_ms, ((K + 1) * INTERVAL + OFFSET) * 1000);
    assert_eq!((run.past_due.late_by_ms, run.past_due.missed), (0, 0));
    assert!(matches!(decisions[2], Decision::Skip(SkipReason::AlreadyRan { .. })));
    // The top of the hour is no boundary for this job: a tick at :00 belongs to :15 before it.
    world.at_due(K + 2, -900);
    let lock = Lock::parse(EMULATOR, "schedule", "hourly").unwrap();
    let late = guard::guarded_invoke(&mut world.client(), &lock, &options);
    assert!(matches!(late, Decision::Skip(SkipReason::AlreadyRan { .. })), "{late:?}");
}

#[test]
fn with_a_starting_deadline_late_ticks_skip_and_the_next_due_time_runs() {
    let world = World::new();
    let options = hourly_at_quarter_past(Some(300));
    the_run(&world.tick(&options, K, 0));
    // Back after downtime, 20 minutes past a due time: nobody runs, each says why.
    for decision in world.tick(&options, K + 2, 1_200) {
        match decision {
            Decision::Skip(SkipReason::TooLate { due_at_ms, late_by_ms, next_due_ms }) => {
                assert_eq!(due_at_ms, ((K + 2) * INTERVAL + OFFSET) * 1000);
                assert!((1_200_000..1_205_000).contains(&late_by_ms));
                assert_eq!(next_due_ms, ((K + 3) * INTERVAL + OFFSET) * 1000);
            }
            other => panic!("expected too-late, got {other:?}"),
        }
    }
    let run = the_run(&world.tick(&options, K + 3, 1));
    assert_eq!(run.past_due.missed, 2, "K+1 and K+2 passed without a run");
}

#[test]
fn the_board_shows_the_next_due_time_and_flags_a_missed_one() {
    let world = World::new();
    let options = hourly_at_quarter_past(None);
    the_run(&world.tick(&options, K, 0));
    let account = Account::from_connection_string(EMULATOR).unwrap();
    let board = |world: &World| guard::board(&mut world.client(), &account, "schedule").unwrap();
    let next = ((K + 1) * INTERVAL + OFFSET) * 1000;
    world.at_due(K + 1, 0);
    let entry = board(&world).pop().unwrap();
    assert_eq!((entry.next_due_ms, entry.overdue), (Some(next), false));
    let grid = Grid { interval_seconds: INTERVAL, offset_seconds: OFFSET };
    assert_eq!(entry.record.every, Some(grid));
    // Five minutes (the tolerance for an hourly job) after the due time with no run: overdue.
    world.at_due(K + 1, 301);
    assert!(board(&world).pop().unwrap().overdue);
    the_run(&world.tick(&options, K + 1, 302));
    let entry = board(&world).pop().unwrap();
    assert_eq!((entry.next_due_ms, entry.overdue), (Some(next + INTERVAL * 1000), false));
}

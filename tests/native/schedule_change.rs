//! A schedule changed under a lock that has run, on virtual time over the fake service: a due
//! time of the new schedule at or before the last scheduled start is covered by that run (a
//! tick for it skips, naming the run), manual runs cover nothing, and the first run under the
//! new schedule counts no due time before the new schedule appeared as missed. Replicas that
//! disagree during a deploy: `schedule_deploy`.

use crate::support::fake_world::FakeWorld;
use crate::support::EMULATOR;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, SkipReason, Ticket};
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::schedule::{Schedule, ZonedCron};
use traffic_cop::Lock;

const MINUTE: u64 = 60;
const HOUR: u64 = 3_600;
const DAY: u64 = 86_400;

/// Thursday 2026-11-26 12:47 UTC, 13:47 in Berlin (CET, UTC+1).
const BERLIN_1347: u64 = 1_795_697_220;
/// Friday 2026-11-27 02:00 in Berlin.
const BERLIN_FRIDAY_0200: u64 = BERLIN_1347 - 13 * HOUR - 47 * MINUTE + DAY + 2 * HOUR;
/// 2026-11-01 00:00 UTC.
const NOV_1: u64 = 1_793_491_200;
const DEC_1: u64 = NOV_1 + 30 * DAY;
const JAN_1: u64 = DEC_1 + 31 * DAY;

struct Job {
    world: FakeWorld,
    lock: Lock,
}

impl Job {
    /// The lock is created by a first tick at `created_at` (which runs if a due time is owed).
    fn new(created_at: u64, schedule: &Schedule) -> Job {
        let lock = Lock::parse(EMULATOR, "jobs", "change").unwrap();
        let job = Job { world: FakeWorld::new(), lock };
        job.tick(created_at, "creator", schedule);
        job
    }

    fn at(&self, unix: u64) {
        self.world.clock.set(UNIX_EPOCH + Duration::from_secs(unix));
    }

    /// A replica with `schedule` fires at `unix`; a run completes at once.
    fn tick(&self, unix: u64, holder: &str, schedule: &Schedule) -> Decision {
        self.at(unix);
        let options = GuardOptions::scheduled(holder, 15, None, schedule.clone()).unwrap();
        let decision = guard::guarded_invoke(&mut self.world.client(), &self.lock, &options);
        if let Decision::Run(ticket) = &decision {
            guard::complete(&mut self.world.client(), ticket, &Outcome::Success).unwrap();
        }
        decision
    }

    fn run(&self, unix: u64, holder: &str, schedule: &Schedule) -> Ticket {
        match self.tick(unix, holder, schedule) {
            Decision::Run(ticket) => ticket,
            other => panic!("{holder} at {unix} should run: {other:?}"),
        }
    }

    fn run_now(&self, unix: u64, by: &str) {
        self.at(unix);
        guard::run_now(&mut self.world.client(), &self.lock, by).unwrap();
    }
}

fn cron(expression: &str, zone: &str) -> Schedule {
    Schedule::Cron(ZonedCron::new(expression, Some(zone), Dialect::Spin).unwrap())
}

fn ms(unix: u64) -> u64 {
    unix * 1000
}

/// The skip for a due time the run that started at `started` covers.
fn assert_covered(decision: Decision, due: u64, started: u64, holder: &str, when: &str) {
    match decision {
        Decision::Skip(SkipReason::AlreadyRan { due_at_ms, started_ms, holder: h, .. }) => {
            assert_eq!(due_at_ms, ms(due), "{when}: the due time asked for");
            assert_eq!(started_ms, ms(started), "{when}: the covering run's start");
            assert_eq!(h.as_deref(), Some(holder), "{when}: the covering run's holder");
        }
        other => panic!("{when}: expected a skip naming the covering run, got {other:?}"),
    }
}

#[test]
fn a_daily_schedule_set_in_the_afternoon_first_runs_at_its_next_due_time_not_this_mornings() {
    // The story: every minute until 13:47 Berlin, then redeployed with a weekday 02:00.
    let every_minute = cron("0 * * * * *", "Europe/Berlin");
    let job = Job::new(BERLIN_1347 - 10 * MINUTE + 30, &every_minute);
    for minute in (0..=7).rev() {
        job.run(BERLIN_1347 - minute * MINUTE + 2, "old", &every_minute);
    }
    let nightly = cron("0 0 2 * * Mon-Fri", "Europe/Berlin");
    let this_morning = BERLIN_FRIDAY_0200 - DAY;
    // Every minute for the rest of the day, and through the night until 02:00: nothing runs,
    // from the new schedule's first tick on (it is in force at once).
    for minute in 1..(12 * 60 + 13) {
        let tick = BERLIN_1347 + minute * MINUTE + 4;
        let decision = job.tick(tick, "new", &nightly);
        let when = format!("+{minute} min");
        assert_covered(decision, this_morning, BERLIN_1347 + 2, "old", &when);
    }
    let run = job.run(BERLIN_FRIDAY_0200 + 3, "new", &nightly);
    assert_eq!(run.past_due.due_at_ms, ms(BERLIN_FRIDAY_0200));
    assert_eq!(run.past_due.missed, 0, "nothing of the new schedule came since 13:47");
    assert_eq!(run.past_due.late_by_ms, 3_000);
}

#[test]
fn monthly_to_daily_runs_at_once_counts_missed_after_it_and_back_runs_nothing_early() {
    let monthly = cron("0 0 3 1 * *", "UTC");
    let daily = cron("0 0 3 * * *", "UTC");
    let job = Job::new(NOV_1 - DAY, &monthly);
    // November's run came late: every replica was down until the 3rd at 10:00.
    let late = job.run(NOV_1 + 2 * DAY + 10 * HOUR, "m", &monthly);
    assert_eq!(late.past_due.due_at_ms, ms(NOV_1 + 3 * HOUR));
    // Daily from the 10th at noon: the newest schedule wins at once, and runs its most recent
    // due time (the 10th at 03:00, after the last start), as a CronJob whose schedule is edited
    // does. Its due times before it appeared were not owed: none is counted as missed.
    let first = job.run(NOV_1 + 9 * DAY + 12 * HOUR, "d", &daily);
    assert_eq!(first.past_due.due_at_ms, ms(NOV_1 + 9 * DAY + 3 * HOUR));
    assert_eq!(first.past_due.missed, 0);
    // Every replica down from the 11th until 1 December: the daily due times after the run on
    // the 10th (11..30 November) are missed.
    let after_downtime = job.run(DEC_1 + 3 * HOUR + 90, "d", &daily);
    assert_eq!(after_downtime.past_due.due_at_ms, ms(DEC_1 + 3 * HOUR));
    assert_eq!(after_downtime.past_due.missed, 20);
    job.run(DEC_1 + DAY + 3 * HOUR + 2, "d", &daily);
    let third = DEC_1 + 2 * DAY + 3 * HOUR + 2;
    job.run(third, "d", &daily);
    // And back to monthly: its latest due time (1 Dec) came before the last daily start.
    for hour in [25, 48, 200] {
        let tick = third + hour * HOUR;
        assert_covered(
            job.tick(tick, "m", &monthly),
            DEC_1 + 3 * HOUR,
            third,
            "d",
            &format!("+{hour} h"),
        );
    }
    let january = job.run(JAN_1 + 3 * HOUR + 2, "m", &monthly);
    assert_eq!(january.past_due.missed, 0);
}

#[test]
fn a_manual_run_before_a_change_covers_no_due_time_and_the_scheduled_one_is_named() {
    let hourly = cron("0 0 * * * *", "UTC");
    let ten = NOV_1 + 10 * HOUR;
    let job = Job::new(ten - 600, &hourly);
    job.run(ten + 2, "scheduled", &hourly);
    job.run_now(ten + 20 * MINUTE, "ana");
    let manual = job.run(ten + 20 * MINUTE + 30, "manual", &hourly);
    assert!(manual.manual_by.is_some(), "{manual:?}");
    // A daily 09:30 set at 11:02: its 09:30 came before the 10:00 scheduled start.
    let half_past_nine = cron("0 30 9 * * *", "UTC");
    let covered = job.tick(ten + HOUR + 2 * MINUTE, "new", &half_past_nine);
    assert_covered(covered, ten - 30 * MINUTE, ten + 2, "scheduled", "09:30 after a 10:00 run");
    // A daily 10:15 set then: only the manual run came after 10:15, and it covers nothing.
    let quarter_past_ten = cron("0 15 10 * * *", "UTC");
    let owed = job.run(ten + HOUR + 3 * MINUTE, "new", &quarter_past_ten);
    assert_eq!(owed.past_due.due_at_ms, ms(ten + 15 * MINUTE));
    assert_eq!(owed.past_due.missed, 0);
}

#[test]
fn a_recorded_start_far_ahead_of_the_service_clock_is_passed_over() {
    let hourly = cron("0 0 * * * *", "UTC");
    let job = Job::new(NOV_1 + 30, &hourly);
    // The service's clock steps back two hours after a run.
    job.run(NOV_1 + 5 * HOUR + 2, "before", &hourly);
    let after_step = job.run(NOV_1 + 3 * HOUR + 5, "after", &hourly);
    assert_eq!(after_step.past_due.due_at_ms, ms(NOV_1 + 3 * HOUR));
}

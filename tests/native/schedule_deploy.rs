//! Replicas that disagree about the schedule, on virtual time over the fake service: a change
//! made on every replica at once, a rolling deploy (the old replicas stopped one by one), and a
//! rollback during and after a deploy. The newest schedule wins while a replica with it ticks;
//! judged by what ran: no due time twice, nothing before its due time, none of the old
//! schedule's due times after the new one has run, and the new one's from the first after it
//! appeared.

use crate::support::fake_world::FakeWorld;
use crate::support::EMULATOR;
use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, SkipReason, ALIVE_MS, FORGET_MS};
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::schedule::{Schedule, ZonedCron};
use traffic_cop::Lock;

const MINUTE: u64 = 60;
const HOUR: u64 = 3_600;
const DAY: u64 = 86_400;
/// Monday 2026-11-23 00:00 UTC.
const MONDAY: u64 = 1_795_392_000;

fn cron(expression: &str) -> Schedule {
    Schedule::Cron(ZonedCron::new(expression, Some("UTC"), Dialect::Spin).unwrap())
}

#[derive(Debug)]
struct Ran {
    at: u64,
    holder: String,
    schedule: String,
    due: u64,
    missed: u64,
}

struct Replica {
    name: String,
    schedule: Schedule,
    up: bool,
}

/// Replicas whose triggers fire every minute on one lock; a run completes at once.
struct Fleet {
    world: FakeWorld,
    lock: Lock,
    replicas: Vec<Replica>,
    runs: Vec<Ran>,
    /// The skip lines each replica printed.
    said: BTreeMap<String, Vec<String>>,
}

impl Fleet {
    fn new() -> Fleet {
        let lock = Lock::parse(EMULATOR, "jobs", "deploy").unwrap();
        Fleet {
            world: FakeWorld::new(),
            lock,
            replicas: Vec::new(),
            runs: Vec::new(),
            said: BTreeMap::new(),
        }
    }

    fn start(&mut self, name: &str, schedule: &Schedule) {
        let schedule = schedule.clone();
        self.replicas.push(Replica { name: name.into(), schedule, up: true });
    }

    fn stop(&mut self, name: &str) {
        self.replicas.iter_mut().filter(|r| r.name == name).for_each(|r| r.up = false);
    }

    /// Every replica still up ticks at `unix` (a few ms apart, in the order they started).
    fn tick(&mut self, unix: u64) {
        for (i, replica) in self.replicas.iter().enumerate().filter(|(_, r)| r.up) {
            let at = UNIX_EPOCH + Duration::from_secs(unix) + Duration::from_millis(3 * i as u64);
            self.world.clock.set(at);
            let options =
                GuardOptions::scheduled(&replica.name, 15, None, replica.schedule.clone()).unwrap();
            match guard::guarded_invoke(&mut self.world.client(), &self.lock, &options) {
                Decision::Run(ticket) => {
                    guard::complete(&mut self.world.client(), &ticket, &Outcome::Success).unwrap();
                    self.runs.push(Ran {
                        at: unix,
                        holder: replica.name.clone(),
                        schedule: replica.schedule.to_string(),
                        due: ticket.past_due.due_at_ms / 1000,
                        missed: ticket.past_due.missed,
                    });
                }
                Decision::Skip(SkipReason::Error(error)) => panic!("{}: {error}", replica.name),
                Decision::Skip(reason) => {
                    let line = guard::describe_skip(&reason, Some(&options));
                    self.said.entry(replica.name.clone()).or_default().push(line);
                }
            }
        }
    }

    /// Ticks every minute from `from` up to and including `to`.
    fn run_until(&mut self, from: u64, to: u64) {
        (from..=to).step_by(MINUTE as usize).for_each(|at| self.tick(at));
    }

    /// `name` said it defers to `newer`, at its last skip.
    fn deferred(&self, name: &str, newer: &Schedule) -> bool {
        let line = self.said.get(name).and_then(|lines| lines.last()).cloned().unwrap_or_default();
        line.starts_with(&format!("deferring to the newer schedule {newer} (on this lock since "))
    }

    fn dues(&self, schedule: &Schedule) -> Vec<u64> {
        let shown = schedule.to_string();
        self.runs.iter().filter(|r| r.schedule == shown).map(|r| r.due).collect()
    }

    /// No due time ran twice, and nothing ran before its due time.
    fn assert_sound(&self) {
        let mut seen = BTreeMap::new();
        for ran in &self.runs {
            assert!(ran.at >= ran.due, "ran early: {ran:?}");
            if let Some(first) = seen.insert(ran.due, ran) {
                panic!("due time {} ran twice: {first:?} and {ran:?}", ran.due);
            }
        }
    }
}

/// The due times of `schedule` in (`after`, `until`].
fn due_times(schedule: &Schedule, after: u64, until: u64) -> Vec<u64> {
    let mut dues = Vec::new();
    let mut at = after * 1000;
    while let Some(next) = schedule.after(at).filter(|next| *next <= until * 1000) {
        dues.push(next / 1000);
        at = next;
    }
    dues
}

#[test]
fn daily_to_every_five_minutes_on_every_replica_runs_at_once_then_every_five_minutes() {
    let (daily, five) = (cron("0 0 2 * * *"), cron("0 */5 * * * *"));
    let mut fleet = Fleet::new();
    let ten = MONDAY + DAY + 10 * HOUR;
    for name in ["r0", "r1", "r2"] {
        fleet.start(name, &daily);
    }
    fleet.run_until(MONDAY + DAY + 2 * HOUR - 5 * MINUTE, ten - MINUTE);
    assert_eq!(fleet.dues(&daily), [MONDAY + DAY + 2 * HOUR]);
    // 10:00: every replica redeployed with the new schedule.
    for name in ["r0", "r1", "r2"] {
        fleet.stop(name);
        fleet.start(&format!("{name}-new"), &five);
    }
    fleet.run_until(ten, ten + 2 * HOUR);
    fleet.assert_sound();
    // Kubernetes CronJob's rule: the most recent due time (10:00 itself) at once, then each one.
    assert_eq!(fleet.dues(&five), due_times(&five, ten - 1, ten + 2 * HOUR));
    assert_eq!(fleet.runs[1].at, ten);
    assert_eq!(fleet.runs[1].missed, 0, "the new schedule's due times before 10:00 were not owed");
}

#[test]
fn weekly_to_daily_and_every_five_minutes_to_daily_run_nothing_early_and_nothing_twice() {
    let (weekly, daily) = (cron("0 0 2 * * Mon"), cron("0 0 3 * * *"));
    let mut fleet = Fleet::new();
    fleet.start("w0", &weekly);
    fleet.start("w1", &weekly);
    fleet.run_until(MONDAY + 2 * HOUR - MINUTE, MONDAY + 2 * HOUR + MINUTE);
    // Wednesday 10:00: daily at 03:00 everywhere. Its most recent due time (Wednesday 03:00)
    // came after the last run (Monday 02:00), so it runs at once; then every day at 03:00.
    let wednesday = MONDAY + 2 * DAY + 10 * HOUR;
    fleet.stop("w0");
    fleet.stop("w1");
    fleet.start("d0", &daily);
    fleet.start("d1", &daily);
    fleet.run_until(wednesday, wednesday + 2 * DAY);
    fleet.assert_sound();
    let mut owed = vec![MONDAY + 2 * DAY + 3 * HOUR];
    owed.extend(due_times(&daily, wednesday, wednesday + 2 * DAY));
    assert_eq!(fleet.dues(&daily), owed);

    let five = cron("0 */5 * * * *");
    let mut fleet = Fleet::new();
    fleet.start("f0", &five);
    fleet.run_until(MONDAY + 9 * HOUR, MONDAY + 10 * HOUR);
    // 10:00: daily at 02:00. Today's 02:00 came before the last run (10:00): nothing until
    // tomorrow 02:00.
    fleet.stop("f0");
    fleet.start("d0", &cron("0 0 2 * * *"));
    fleet.run_until(MONDAY + 10 * HOUR + MINUTE, MONDAY + DAY + 3 * HOUR);
    fleet.assert_sound();
    assert_eq!(fleet.dues(&cron("0 0 2 * * *")), [MONDAY + DAY + 2 * HOUR]);
}

#[test]
fn a_rolling_deploy_hands_over_at_the_new_schedules_first_tick_and_never_back() {
    let (old, new) = (cron("0 */2 * * * *"), cron("0 */3 * * * *"));
    let mut fleet = Fleet::new();
    let ten = MONDAY + 10 * HOUR;
    fleet.start("old-0", &old);
    fleet.start("old-1", &old);
    fleet.run_until(ten - 10 * MINUTE, ten);
    // Two replicas with the new schedule join at 10:00:30; the old ones go at 10:10 and 10:20.
    fleet.start("new-0", &new);
    fleet.start("new-1", &new);
    fleet.run_until(ten + MINUTE, ten + 10 * MINUTE);
    assert!(fleet.deferred("old-0", &new), "{:?}", fleet.said["old-0"]);
    assert!(fleet.deferred("old-1", &new), "{:?}", fleet.said["old-1"]);
    fleet.stop("old-0");
    fleet.run_until(ten + 11 * MINUTE, ten + 20 * MINUTE);
    fleet.stop("old-1");
    fleet.run_until(ten + 21 * MINUTE, ten + HOUR);
    fleet.assert_sound();
    let first_new = fleet.runs.iter().find(|r| r.holder.starts_with("new")).unwrap().at;
    assert!(
        fleet.runs.iter().all(|r| r.holder.starts_with("new") || r.at < first_new),
        "an old due time ran after the new schedule's first run: {:?}",
        fleet.runs
    );
    assert_eq!(fleet.dues(&new), due_times(&new, ten + 30, ten + HOUR));
    assert_eq!(fleet.dues(&old), due_times(&old, ten - 10 * MINUTE - 1, ten));
}

#[test]
fn a_rollback_during_the_deploy_hands_back_once_the_newer_replicas_are_gone() {
    let (old, new) = (cron("0 */2 * * * *"), cron("0 */3 * * * *"));
    let mut fleet = Fleet::new();
    let ten = MONDAY + 10 * HOUR;
    fleet.start("old-0", &old);
    fleet.start("old-1", &old);
    fleet.run_until(ten - 4 * MINUTE, ten);
    fleet.start("new-0", &new);
    fleet.run_until(ten + MINUTE, ten + 10 * MINUTE);
    assert!(!fleet.dues(&new).is_empty());
    // Rolled back before the old replicas were gone: the new one stops, a third old one starts.
    // The old schedule never left, so nothing tells the returning replica from the old ones:
    // they defer until the newer schedule's replicas have been gone three minutes.
    fleet.stop("new-0");
    let gone = ten + 10 * MINUTE;
    fleet.start("old-2", &old);
    fleet.run_until(gone + MINUTE, gone + 30 * MINUTE);
    fleet.assert_sound();
    let back: Vec<&Ran> = fleet.runs.iter().filter(|r| r.at > gone).collect();
    assert!(back.iter().all(|r| r.schedule == old.to_string()), "{back:?}");
    // The first tick after the newer one's last stamp is three minutes old takes over (for the
    // most recent due time), and every due time after that runs.
    let takeover = gone + ALIVE_MS / 1000 + MINUTE;
    assert!(back.first().is_some_and(|r| r.at <= takeover), "{back:?}");
    let dues: Vec<u64> = back.iter().map(|r| r.due).filter(|due| *due > takeover).collect();
    assert_eq!(dues, due_times(&old, takeover, gone + 30 * MINUTE), "{back:?}");
    let old_2 = &fleet.said["old-2"];
    assert!(old_2[0].starts_with("deferring to the newer schedule"), "{old_2:?}");
}

#[test]
fn a_rollback_after_the_deploy_is_a_change_like_any_other() {
    let (old, new) = (cron("0 */2 * * * *"), cron("0 */3 * * * *"));
    let mut fleet = Fleet::new();
    let ten = MONDAY + 10 * HOUR;
    fleet.start("old-0", &old);
    fleet.run_until(ten - 4 * MINUTE, ten);
    fleet.start("new-0", &new);
    fleet.start("new-1", &new);
    fleet.run_until(ten + MINUTE, ten + 5 * MINUTE);
    fleet.stop("old-0");
    // The deploy is done; long after, the old schedule comes back on a new replica while the
    // newer ones are still up (being replaced): it is the newest now, and wins at its first tick.
    let back = ten + 5 * MINUTE + FORGET_MS / 1000 + 5 * MINUTE;
    fleet.run_until(ten + 6 * MINUTE, back - MINUTE);
    fleet.start("old-again", &old);
    fleet.run_until(back, back + 10 * MINUTE);
    fleet.stop("new-0");
    fleet.stop("new-1");
    fleet.run_until(back + 11 * MINUTE, back + 20 * MINUTE);
    fleet.assert_sound();
    let first_back = fleet.runs.iter().find(|r| r.holder == "old-again").unwrap();
    assert_eq!(first_back.at, back, "{:?}", fleet.runs);
    assert!(fleet.runs.iter().all(|r| r.holder == "old-again" || r.at < back));
    assert!(fleet.deferred("new-0", &old), "{:?}", fleet.said["new-0"]);
}

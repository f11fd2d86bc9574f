//! `check_settings` over the fake service: each setting judged as `guarded_invoke` judges it and
//! named by its field, due times shown on the job's wall clock and in UTC, no request without
//! `reach_storage` and one look with it, which creates nothing. And a replica that loses the
//! race for the lease names the winner once the winner's run is recorded.

use crate::support::fake_world::FakeWorld;
use crate::support::hooked::{step, Hooked};
use crate::support::EMULATOR;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{
    self, check_settings, BadSetting, Decision, GuardOptions, Settings, SettingsCheck, SkipReason,
    StorageAnswer,
};
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::schedule::{Schedule, ZonedCron};
use traffic_cop::transport::Transport;
use traffic_cop::{Error, Lock};

/// Thursday 2026-11-26 12:47 UTC, 13:47 in Berlin.
const BERLIN_1347: u64 = 1_795_697_220;

fn weekdays_at_two(zone: &str) -> Result<Schedule, Error> {
    ZonedCron::new("0 0 2 * * Mon-Fri", Some(zone), Dialect::Spin)
        .map(Schedule::Cron)
        .map_err(Error::BadOption)
}

fn check(
    world: &FakeWorld,
    connection_string: &str,
    container: &str,
    options: Result<GuardOptions, Error>,
    schedule: Result<Schedule, Error>,
    reach: bool,
) -> SettingsCheck {
    let settings = Settings { connection_string, container, blob: "nightly", options, schedule };
    check_settings(&mut world.client(), settings, 3, reach)
}

fn options(
    holder: &str,
    lease: u32,
    schedule: &Result<Schedule, Error>,
) -> Result<GuardOptions, Error> {
    GuardOptions::scheduled(holder, lease, None, schedule.clone()?)
}

fn fields(check: &SettingsCheck) -> Vec<&str> {
    check.problems.iter().map(|p| p.field.as_str()).collect()
}

#[test]
fn good_settings_show_the_next_due_times_in_the_zone_and_in_utc_without_a_request() {
    let world = FakeWorld::new();
    world.clock.set(UNIX_EPOCH + Duration::from_secs(BERLIN_1347));
    let schedule = weekdays_at_two("Europe/Berlin");
    let found =
        check(&world, EMULATOR, "jobs", options("web-0", 15, &schedule), schedule.clone(), false);
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    assert_eq!(found.time_zone, "Europe/Berlin");
    let shown: Vec<(&str, &str)> =
        found.next_due.iter().map(|t| (t.local.as_str(), t.utc.as_str())).collect();
    assert_eq!(
        shown,
        [
            ("2026-11-27T02:00:00+01:00", "2026-11-27T01:00:00Z"),
            ("2026-11-30T02:00:00+01:00", "2026-11-30T01:00:00Z"),
            ("2026-12-01T02:00:00+01:00", "2026-12-01T01:00:00Z"),
        ]
    );
    let account = found.account.expect("the emulator's account");
    assert_eq!(account.name, "devstoreaccount1");
    assert_eq!(account.endpoint, "http://127.0.0.1:10000/devstoreaccount1");
    assert_eq!(account.credential, "shared-key");
    assert_eq!(found.storage, None);
    assert_eq!(world.service.requests(), 0, "no request without reach_storage");
}

#[test]
fn each_bad_setting_is_named_by_its_field() {
    let world = FakeWorld::new();
    let berln = weekdays_at_two("Europe/Berln");
    let found = check(&world, EMULATOR, "jobs", options("web-0", 15, &berln), berln.clone(), false);
    assert_eq!(fields(&found), ["time-zone"], "{:?}", found.problems);
    assert!(
        found.problems[0].message.contains("Europe/Berlin"),
        "a suggestion: {:?}",
        found.problems
    );
    assert!(found.next_due.is_empty());

    let schedule = weekdays_at_two("UTC");
    for (holder, lease, field) in [("web-0", 5, "lease-seconds"), ("", 15, "holder")] {
        let found = check(
            &world,
            EMULATOR,
            "jobs",
            options(holder, lease, &schedule),
            schedule.clone(),
            false,
        );
        assert_eq!(fields(&found), [field]);
        assert_eq!(found.next_due.len(), 3, "a good schedule still shows its due times");
    }
    let keep_alive = GuardOptions::scheduled("web-0", 15, Some(10), schedule.clone().unwrap());
    let found = check(&world, EMULATOR, "jobs", keep_alive, schedule.clone(), false);
    assert_eq!(fields(&found), ["keep-alive-seconds"]);

    let found = check(
        &world,
        "AccountName=acct;AccountKey=bm90IGEga2V5IQ==;DefaultEndpointsProtocol=ftp",
        "Jobs_",
        options("web-0", 15, &schedule),
        schedule.clone(),
        true,
    );
    assert_eq!(fields(&found), ["connection-string", "container"], "{:?}", found.problems);
    assert_eq!(found.storage, None, "nothing sent for unusable settings");
    assert!(!format!("{found:?}").contains("bm90IGEga2V5IQ"), "the key stays out: {found:?}");
}

#[test]
fn reaching_storage_looks_once_and_creates_nothing() {
    let world = FakeWorld::new();
    world.clock.set(UNIX_EPOCH + Duration::from_secs(BERLIN_1347));
    let schedule = weekdays_at_two("Europe/Berlin");
    let reach =
        || check(&world, EMULATOR, "jobs", options("web-0", 15, &schedule), schedule.clone(), true);
    assert_eq!(reach().storage, Some(StorageAnswer::LockMissing));
    assert_eq!(reach().storage, Some(StorageAnswer::LockMissing), "the first look created nothing");
    assert_eq!(world.service.requests(), 2, "one look per check");

    let every_second = Schedule::Cron(ZonedCron::new("* * * * * *", None, Dialect::Spin).unwrap());
    let lock = Lock::parse(EMULATOR, "jobs", "nightly").unwrap();
    let opts = GuardOptions::scheduled("web-0", 15, None, every_second).unwrap();
    let Decision::Run(_) = guard::guarded_invoke(&mut world.client(), &lock, &opts) else {
        panic!("the first tick of an every-second job runs")
    };
    match reach().storage {
        Some(StorageAnswer::LockExists { holder, last_start_ms, .. }) => {
            assert_eq!(holder.as_deref(), Some("web-0"));
            assert!(last_start_ms.is_some());
        }
        other => panic!("the lock exists now: {other:?}"),
    }
}

#[test]
fn an_option_refusal_names_its_field_for_every_argument_field() {
    let schedule = Schedule::None;
    for (made, field) in [
        (GuardOptions::scheduled("x", 61, None, schedule.clone()), "lease-seconds"),
        (GuardOptions::scheduled("x", 15, Some(0), schedule.clone()), "keep-alive-seconds"),
        (GuardOptions::scheduled(&"x".repeat(65), 15, None, schedule.clone()), "holder"),
        (
            GuardOptions::every_interval("x", 15, 60, None)
                .and_then(|o| o.with_phase_and_deadline(60, None)),
            "offset-seconds",
        ),
        (
            GuardOptions::every_interval("x", 15, 60, None)
                .and_then(|o| o.with_phase_and_deadline(0, Some(61))),
            "starting-deadline-seconds",
        ),
    ] {
        let error = made.expect_err(field);
        let BadSetting { field: named, .. } = guard::bad_option(&error);
        assert_eq!(named, field, "{error}");
    }
}

/// Two replicas look at a free lock together; the winner's acquire lands, then the loser's
/// (409: the lease is held), then the winner's record write. The loser's second look names the
/// winner's recorded run instead of "another instance".
#[test]
fn the_loser_of_a_race_names_the_winner() {
    let world = FakeWorld::new();
    world.clock.set(UNIX_EPOCH + Duration::from_secs(BERLIN_1347));
    let lock = Lock::parse(EMULATOR, "jobs", "raced").unwrap();
    let every_second = Schedule::Cron(ZonedCron::new("* * * * * *", None, Dialect::Spin).unwrap());
    let opts = |holder| GuardOptions::scheduled(holder, 15, None, every_second.clone()).unwrap();
    // The lock exists (its first run done), so both replicas contend for the next due time.
    let Decision::Run(first) = guard::guarded_invoke(&mut world.client(), &lock, &opts("creator"))
    else {
        panic!("the first tick runs")
    };
    guard::complete(&mut world.client(), &first, &guard::Outcome::Success).unwrap();
    world.clock.set(UNIX_EPOCH + Duration::from_secs(BERLIN_1347 + 1));

    let winner_world = FakeWorld::on(world.service.clone(), world.clock.clone());
    let (winner_lock, winner_opts) = (lock.clone(), opts("winner"));
    let service = world.service.clone();
    let mut raced = false;
    let hooked = Hooked::new(world.service.clone()).before(move |_, request, timeouts| {
        if step(request) != "acquire" || raced {
            return None;
        }
        raced = true;
        // The loser's acquire reaches the service between the winner's acquire and its write.
        let loser_acquire: Rc<RefCell<Option<_>>> = Rc::default();
        let (stash, request, mut service) =
            (loser_acquire.clone(), request.clone(), service.clone());
        let winner = Hooked::new(winner_world.service.clone()).before(move |_, own, _| {
            if step(own) == "comp=metadata" && stash.borrow().is_none() {
                *stash.borrow_mut() = Some(service.send(request.clone(), timeouts));
            }
            None
        });
        let won = guard::guarded_invoke(
            &mut winner_world.client_over(winner),
            &winner_lock,
            &winner_opts,
        );
        assert!(matches!(won, Decision::Run(_)), "the winner runs: {won:?}");
        let answer = loser_acquire.borrow_mut().take();
        answer
    });
    let mut client = world.client_over(hooked);
    match guard::guarded_invoke(&mut client, &lock, &opts("loser")) {
        Decision::Skip(SkipReason::HeldByOther { holder, since_ms, .. }) => {
            assert_eq!(holder.as_deref(), Some("winner"));
            assert!(since_ms.is_some());
        }
        other => panic!("the loser skips, naming the winner: {other:?}"),
    }
    let steps: Vec<&str> = client.transport().log.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(steps, ["look", "acquire", "look"], "one look more for the loser, not a loop");
}

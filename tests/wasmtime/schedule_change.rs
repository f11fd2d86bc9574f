//! A schedule changed under a lock that has run, through the built component against Azurite,
//! with the service's clock (its answers' `Date`) moved by a proxy: every minute until 13:47 on a
//! Thursday in Berlin, then `0 0 2 * * Mon-Fri`. Nothing runs that afternoon (the 02:00 that
//! morning is covered by the 13:47 run, and the skip names it); the next run is Friday 02:00.

use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::clock_proxy::ServiceClockProxy;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome, SkipReason};

/// Thursday 2036-12-04 13:47:00 in Berlin (12:47 UTC). Azurite dates the lock's creation by
/// real time, which must come before the first due time for that one to be owed.
const BERLIN_1347: u64 = 2_112_007_620;
const MINUTE: u64 = 60;
/// Friday 2036-12-05 02:00 in Berlin.
const FRIDAY_0200: u64 = BERLIN_1347 - 13 * 3_600 - 47 * MINUTE + 86_400 + 2 * 3_600;

fn secs(ms: u64) -> u64 {
    ms / 1000
}

/// What one tick answered: the run's start and past-due (it was completed at once), or the skip.
enum Ticked {
    Ran(v1::RunDetails),
    Skipped(v1::Skipped),
}

fn a_schedule_changed_in_the_afternoon_does_not_run_this_mornings_due_time() {
    let clock = ServiceClockProxy::start(Azurite::shared().port);
    let connection_string = connection_string_for_port(clock.port, EMULATOR_KEY_B64);
    let blob =
        format!("nightly-{}", SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos());
    let berlin = |expression: &str| v1::Settings {
        lease_seconds: Some("15".into()),
        schedule: Some(expression.into()),
        time_zone: Some("Europe/Berlin".into()),
        ..v1::settings(&connection_string, "schedule-change", &blob, "replica")
    };
    let tick = |at: u64, settings: &v1::Settings| {
        // A second ahead: `Date` has whole seconds, so it reads `at` or the second after.
        clock.set(UNIX_EPOCH + Duration::from_secs(at) + Duration::from_millis(1_000));
        let mut instance = fresh();
        match instance.guarded_invoke(settings) {
            Decision::Run(run) => {
                let details = instance.run_details(run);
                let finished = instance.run_complete(run, &Outcome::Success(String::new()));
                assert!(finished.error.is_none(), "{finished:?}");
                Ticked::Ran(details)
            }
            Decision::Skip(skipped) => Ticked::Skipped(skipped),
        }
    };
    let every_minute = berlin("0 * * * * *");
    let mut last_start = 0;
    for at in [BERLIN_1347 - 2 * MINUTE + 2, BERLIN_1347 - MINUTE + 2, BERLIN_1347 + 2] {
        match tick(at, &every_minute) {
            Ticked::Ran(details) => last_start = secs(details.started_at_ms),
            Ticked::Skipped(skipped) => panic!("every minute at {at}: {skipped:?}"),
        }
    }
    assert!((BERLIN_1347 + 2..BERLIN_1347 + 5).contains(&last_start), "{last_start}");

    let nightly = berlin("0 0 2 * * Mon-Fri");
    let this_morning = FRIDAY_0200 - 86_400;
    let mut covered = 0;
    for at in [1, 2, 3, 4, 43, 60 * 11].map(|minutes| BERLIN_1347 + minutes * MINUTE + 4) {
        match tick(at, &nightly) {
            Ticked::Skipped(v1::Skipped { reason: SkipReason::AlreadyRan(ran), text, .. }) => {
                assert_eq!(secs(ran.due_at_ms), this_morning, "{ran:?}");
                assert_eq!(secs(ran.started_at_ms), last_start, "names the 13:47 run: {ran:?}");
                assert_eq!(ran.holder.as_deref(), Some("replica"));
                assert_eq!(ran.next_due_ms.map(secs), Some(FRIDAY_0200), "{ran:?}");
                assert_eq!((ran.running, ran.outcome.as_deref()), (false, Some("success")));
                assert!(
                    text.starts_with("[replica] skipped the due time ")
                        && text.contains("(succeeded)"),
                    "{text}"
                );
                covered += 1;
            }
            Ticked::Skipped(skipped) => {
                panic!("at {at} (13:47 + {} s): {skipped:?}", at - BERLIN_1347)
            }
            Ticked::Ran(details) => {
                panic!("at {at} (13:47 + {} s): ran {details:?}", at - BERLIN_1347)
            }
        }
    }
    assert!(covered >= 3, "{covered}");
    match tick(FRIDAY_0200 + 3, &nightly) {
        Ticked::Ran(details) => {
            assert_eq!(secs(details.past_due.due_at_ms), FRIDAY_0200);
            assert_eq!(details.past_due.missed, 0);
        }
        Ticked::Skipped(skipped) => panic!("Friday 02:00: {skipped:?}"),
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_schedule_changed_in_the_afternoon_does_not_run_this_mornings_due_time
    ]
}

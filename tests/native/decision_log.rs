//! The decision log's line, which every adapter prints as the lease component hands it out: its
//! fields for a run, each skip and a setting to fix, its `detail` the line for people, times on
//! the schedule's wall clock, and any text escaped (a holder may say anything).

use crate::support::fake_world::FakeWorld;
use crate::support::EMULATOR;
use serde_json::{json, Value};
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, RunEnd, SkipReason};
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::schedule::{Schedule, ZonedCron};
use traffic_cop::{Error, FieldError, Lock};

/// Friday 2026-11-27 02:00 in Berlin (01:00 UTC).
const BERLIN_FRIDAY_0200: u64 = 1_795_741_200;

fn nightly(holder: &str) -> GuardOptions {
    let cron = ZonedCron::new("0 0 2 * * *", Some("Europe/Berlin"), Dialect::Spin).unwrap();
    GuardOptions::scheduled(holder, 15, None, Schedule::Cron(cron)).unwrap()
}

fn line(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn a_run_and_the_skip_beside_it_are_one_json_line_each_in_the_zone_of_the_schedule() {
    let world = FakeWorld::new();
    world.clock.set(UNIX_EPOCH + Duration::from_secs(BERLIN_FRIDAY_0200 + 3));
    let lock = Lock::parse(EMULATOR, "jobs", "nightly").unwrap();
    let holder = "web \"0\"";
    let Decision::Run(ticket) = guard::guarded_invoke(&mut world.client(), &lock, &nightly(holder))
    else {
        panic!("the first tick after a due time runs")
    };
    let other = guard::guarded_invoke(&mut world.client(), &lock, &nightly("web-1"));
    let Decision::Skip(reason) = other else { panic!("the second replica skips: {other:?}") };
    let detail = guard::skip_line("web-1", &reason, Some(&nightly("web-1")));
    let skipped =
        line(&guard::skip_log("nightly", "web-1", &reason, Some(&nightly("web-1")), &detail));
    assert_eq!(skipped["decision"], "skip");
    assert_eq!(skipped["reason"], "held-by-other");
    assert_eq!(skipped["due_at_ms"], BERLIN_FRIDAY_0200 * 1000);
    assert_eq!(skipped["due_at"], "2026-11-27T02:00:00+01:00");
    assert_eq!(skipped["detail"], detail.as_str());
    assert_eq!(skipped["fencing_token"], Value::Null);

    guard::complete(&mut world.client(), &ticket, &Outcome::Success).unwrap();
    let end = RunEnd::Closed { failed: None, outlived_ms: None };
    let text = guard::finished_line(&ticket, &Outcome::Success, "done", &end);
    let ran = line(&guard::run_log(&ticket, &end, &text));
    let expected = json!({
        "lock": "nightly", "holder": holder, "decision": "run", "reason": null, "variable": null,
        "fencing_token": ticket.fencing_token, "due_at_ms": BERLIN_FRIDAY_0200 * 1000,
        "due_at": "2026-11-27T02:00:00+01:00", "late_by_ms": 3000, "missed": 0,
        "manual_by": null, "previous_abandoned": false, "detail": text, "blocked": false,
    });
    assert_eq!(ran, expected);
}

#[test]
fn a_setting_to_fix_is_an_error_naming_the_variable_and_a_blocked_run_says_so() {
    let bad = SkipReason::Error(Error::BadOption(FieldError {
        field: "time-zone",
        message: "unknown".into(),
    }));
    let detail = guard::skip_line("web-0", &bad, None);
    let error = line(&guard::skip_log("nightly", "web-0", &bad, None, &detail));
    assert_eq!(
        (&error["decision"], &error["reason"], &error["variable"]),
        (&json!("error"), &json!("misconfigured"), &json!("time_zone"))
    );
    assert_eq!(error["detail"], detail.as_str());

    let world = FakeWorld::new();
    world.clock.set(UNIX_EPOCH + Duration::from_secs(BERLIN_FRIDAY_0200));
    let lock = Lock::parse(EMULATOR, "jobs", "nightly").unwrap();
    let Decision::Run(ticket) = guard::guarded_invoke(&mut world.client(), &lock, &nightly("a"))
    else {
        panic!("runs")
    };
    let ran_out = traffic_cop::RanOut {
        when: traffic_cop::RanOutWhen::Blocked,
        message: "renewals blocked".into(),
    };
    let end = RunEnd::Stopped(Error::LeaseLost(traffic_cop::LeaseLoss::RanOut(ran_out)));
    let blocked = line(&guard::run_log(&ticket, &end, "stopped"));
    assert_eq!((&blocked["blocked"], &blocked["decision"]), (&json!(true), &json!("run")));
}

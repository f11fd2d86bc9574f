//! The export glue's conversions, run natively: what each version answers for each core value,
//! without a component host.

use super::exports::traffic_cop::lease0_1_0::lease::{LeaseError, Lock, ServiceError};
use super::exports::traffic_cop::lease0_3_0::guard as wit;
use super::glue::Version;
use super::guard_v1::V1;
use super::guard_v3_convert::V3;
use super::Component;
use crate::error::{
    Contention, Error, FieldError, LeaseLoss, RanOut, RanOutWhen, TokenProblem, UnusableToken,
};
use crate::guard::{self as core, Overlap, PastDue};
use crate::ops::LeaseId;
use crate::schedule::{cron::Dialect, Schedule, ZonedCron};
use crate::transport::StdRuntime;
use std::time::{Duration, SystemTime};

fn decided(status: u16, code: Option<&str>, message: &str) -> ServiceError {
    ServiceError {
        status,
        code: code.map(str::to_string),
        request_id: None,
        message: message.to_string(),
    }
}

fn ran_out(when: RanOutWhen) -> Error {
    Error::LeaseLost(LeaseLoss::RanOut(RanOut { when, message: "ran out".into() }))
}

fn contended() -> Error {
    Error::Contended(Contention { attempts: 4, message: "moved".into() })
}

fn unusable(problem: TokenProblem) -> Error {
    Error::UnusableToken(UnusableToken { problem, message: "token".into() })
}

/// Debug, because the generated types do not derive `PartialEq`.
fn same<A: std::fmt::Debug, B: std::fmt::Debug>(a: A, b: B) {
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn released_versions_report_what_this_code_decided_in_the_shapes_they_always_had() {
    // What guard@0.1.0/0.2.0 and the raw verbs returned before the core had these variants.
    same(LeaseError::from(ran_out(RanOutWhen::BetweenAttempts)), {
        LeaseError::LeaseLost(decided(0, None, "ran out"))
    });
    same(LeaseError::from(contended()), {
        LeaseError::Service(decided(412, Some("ConditionNotMet"), "moved"))
    });
    same(LeaseError::from(Error::UnexpectedAnswer("no Date".into())), {
        LeaseError::Service(decided(200, None, "unexpected response: no Date"))
    });
    same(LeaseError::from(unusable(TokenProblem::Expired)), {
        LeaseError::Unauthorized(decided(0, Some("TokenExpired"), "token"))
    });
    same(LeaseError::from(unusable(TokenProblem::WrongAudience)), {
        LeaseError::Unauthorized(decided(0, Some("InvalidAudience"), "token"))
    });
    same(
        LeaseError::from(Error::BadOption(FieldError::new("lease-seconds", "too short".into()))),
        LeaseError::InvalidArgument("lease-seconds: too short".into()),
    );
    // The service's own word passes through whole.
    let said = crate::ServiceError {
        status: 409,
        code: Some("LeaseIdMismatchWithLeaseOperation".into()),
        request_id: Some("req-1".into()),
        message: "The lease ID specified did not match".into(),
    };
    let lost = LeaseError::from(Error::LeaseLost(LeaseLoss::Service(said.clone())));
    same(
        lost,
        LeaseError::LeaseLost(ServiceError {
            status: said.status,
            code: said.code,
            request_id: said.request_id,
            message: said.message,
        }),
    );
}

#[test]
fn guard_0_3_reports_each_local_decision_in_a_case_of_its_own() {
    for (when, expected) in [
        (RanOutWhen::BeforeSending, wit::RanOutWhen::BeforeSending),
        (RanOutWhen::BetweenAttempts, wit::RanOutWhen::BetweenAttempts),
        (RanOutWhen::GrantedTooLate, wit::RanOutWhen::GrantedTooLate),
        (RanOutWhen::DuringClaim, wit::RanOutWhen::DuringClaim),
        (RanOutWhen::WhileHolding, wit::RanOutWhen::WhileHolding),
        (RanOutWhen::Blocked, wit::RanOutWhen::Blocked),
    ] {
        same(
            V3::error(ran_out(when)),
            wit::GuardError::LeaseRanOut(wit::LeaseRanOut {
                when: expected,
                message: "ran out".into(),
            }),
        );
    }
    same(
        V3::error(contended()),
        wit::GuardError::Contended(wit::Contended { attempts: 4, message: "moved".into() }),
    );
    same(
        V3::error(Error::LimitReached("pages".into())),
        wit::GuardError::LimitReached("pages".into()),
    );
    same(
        V3::error(unusable(TokenProblem::WrongAudience)),
        wit::GuardError::UnusableToken(wit::UnusableToken {
            problem: wit::TokenProblem::WrongAudience,
            message: "token".into(),
        }),
    );
    same(
        V3::error(Error::BadOption(FieldError::new("holder", "empty".into()))),
        wit::GuardError::BadOption(wit::BadOption {
            field: "holder".into(),
            message: "empty".into(),
        }),
    );
    // A lease the service says is gone stays the raw verbs' case.
    let said = decided(412, Some("LeaseLost"), "gone");
    let service = crate::ServiceError {
        status: 412,
        code: Some("LeaseLost".into()),
        request_id: None,
        message: "gone".into(),
    };
    same(
        V3::error(Error::LeaseLost(LeaseLoss::Service(service))),
        wit::GuardError::Lease(LeaseError::LeaseLost(said)),
    );
}

#[test]
fn a_skip_older_versions_have_no_case_for_is_an_error_skip_that_names_it() {
    let paused = core::SkipReason::Paused(core::Paused {
        by: "ops".into(),
        since_ms: 5,
        reason: "deploy".into(),
    });
    match V1::skip(paused) {
        super::exports::traffic_cop::lease0_1_0::guard::Decision::Skip(
            super::exports::traffic_cop::lease0_1_0::guard::SkipReason::Error(error),
        ) => same(
            error,
            LeaseError::Service(decided(0, Some("Paused"), "paused by ops since 5 ms: deploy")),
        ),
        other => panic!("a pause seen through 0.1.0 was {other:?}"),
    }
}

#[test]
fn every_option_refusal_through_0_3_names_its_field() {
    let options = |change: &dyn Fn(&mut wit::GuardOptions)| {
        let mut options = wit::GuardOptions {
            holder: "me".into(),
            lease_seconds: 30,
            keep_alive_seconds: None,
            schedule: wit::Schedule::Every(wit::Every {
                interval_seconds: 3_600,
                offset_seconds: 0,
            }),
            early_tolerance_ms: None,
            starting_deadline_seconds: None,
            overlap: None,
            wait_ms: None,
        };
        change(&mut options);
        options
    };
    let field = |options: wit::GuardOptions| match V3::options(&options) {
        Err(Error::BadOption(bad)) => bad.field,
        other => panic!("{options:?} gave {other:?}"),
    };
    assert_eq!(field(options(&|o| o.holder = String::new())), "holder");
    assert_eq!(field(options(&|o| o.lease_seconds = 14)), "lease-seconds");
    assert_eq!(field(options(&|o| o.keep_alive_seconds = Some(16))), "keep-alive-seconds");
    assert_eq!(
        field(options(&|o| o.starting_deadline_seconds = Some(0))),
        "starting-deadline-seconds"
    );
    assert_eq!(field(options(&|o| o.early_tolerance_ms = Some(300_001))), "early-tolerance-ms");
    assert_eq!(field(options(&|o| o.overlap = Some(wit::Overlap::Replace(59)))), "overlap");
    assert_eq!(field(options(&|o| o.wait_ms = Some(u32::MAX))), "wait-ms");
    let cron = |expression: &str, zone: &str| {
        wit::Schedule::Cron(wit::Cron {
            expression: expression.into(),
            time_zone: Some(zone.into()),
            dialect: None,
        })
    };
    assert_eq!(field(options(&|o| o.schedule = cron("0 61 * * * *", "UTC"))), "minute");
    assert_eq!(field(options(&|o| o.schedule = cron("0 0 2 * * *", "Mars/Olympus"))), "time-zone");
    let every = |interval_seconds, offset_seconds| {
        wit::Schedule::Every(wit::Every { interval_seconds, offset_seconds })
    };
    assert_eq!(field(options(&|o| o.schedule = every(60, 60))), "offset-seconds");
}

#[test]
fn due_times_through_0_3_are_the_cores_for_the_same_schedule() {
    use super::exports::traffic_cop::lease0_3_0::guard::Guest as _;
    let wit_cron = wit::Schedule::Cron(wit::Cron {
        expression: "30 2 * * *".into(),
        time_zone: Some("Europe/Berlin".into()),
        dialect: Some(wit::CronDialect::Classic),
    });
    // 2026-03-27, two days before Berlin's spring gap swallows 02:30.
    let after = 1_774_569_600_000;
    let core_cron = ZonedCron::new("30 2 * * *", Some("Europe/Berlin"), Dialect::Classic).unwrap();
    let expected = core::due_times(&Schedule::Cron(core_cron), after, 4);
    assert_eq!(Component::due_times(wit_cron, after, 4).unwrap(), expected);
    assert_eq!(expected.len(), 4);
    let wrong = wit::Schedule::Cron(wit::Cron {
        expression: "30 2 * * *".into(),
        time_zone: None,
        dialect: None,
    });
    match Component::due_times(wrong, after, 4) {
        Err(wit::GuardError::BadOption(bad)) => assert_eq!(bad.field, "expression"),
        other => panic!("five fields in the Spin dialect gave {other:?}"),
    }
}

#[test]
fn a_0_3_ticket_carries_every_field_of_the_core_ticket_there_and_back() {
    let lock = Lock {
        connection_string: "UseDevelopmentStorage=true".into(),
        container: "jobs".into(),
        blob: "nightly".into(),
    };
    let cron = ZonedCron::new("0 30 2 * * *", Some("Asia/Kathmandu"), Dialect::Spin).unwrap();
    let options = core::GuardOptions::scheduled("replica-2", 45, Some(12), Schedule::Cron(cron))
        .and_then(|o| o.early_by(1_500))
        .and_then(|o| o.starting_deadline(Some(600)))
        .and_then(|o| o.overlapping(Overlap::Replace { after_seconds: 900 }))
        .and_then(|o| o.waiting(Duration::from_millis(2_500)))
        .unwrap();
    let record = core::RunRecord {
        fence: 7,
        started_ms: Some(1_700_000_000_000),
        running: true,
        holder: Some("replica-2".into()),
        ..Default::default()
    };
    let at = |ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms);
    let ticket = core::Ticket {
        lock: super::lease::lock_ref(&lock).unwrap(),
        lease_id: LeaseId::random(&StdRuntime),
        fencing_token: 7,
        started_ms: 1_700_000_000_000,
        deadline: at(1_700_000_045_000),
        keep_alive_by: at(1_700_000_012_000),
        lease_deadline: None,
        previous_abandoned: true,
        replaced: Some(6),
        manual_by: Some("ops".into()),
        past_due: PastDue {
            due_at_ms: 1_699_999_999_000,
            late_by_ms: 1_000,
            previous_due_ms: Some(1_699_913_599_000),
            previous_start_ms: Some(1_699_913_599_500),
            missed: 2,
        },
        options,
        grant: Some(core::Grant { etag: "\"0x8DD\"".into(), record }),
    };
    let carried = V3::ticket(ticket.clone(), lock);
    assert_eq!(V3::core_ticket(&carried).unwrap(), ticket);
}

//! Conversions from the core's values to `traffic-cop:lease@1.0.0`'s. One way only: 1.0 takes
//! no value back from a caller but its settings (parsed by the core) and its own `run`
//! resources, so nothing here validates a value that came from outside.

use super::exports::traffic_cop::lease1_0_0::guard as wit;
use super::exports::traffic_cop::lease1_0_0::lease as wl;
use crate::error::{Error, LeaseLoss, RanOutWhen, TokenProblem};
use crate::guard as core;
use crate::schedule::Schedule;

fn service(e: crate::ServiceError) -> wl::ServiceError {
    wl::ServiceError {
        status: e.status,
        code: e.code,
        request_id: e.request_id,
        message: e.message,
    }
}

/// The core's error, case for case: no status is made up for what this component decided.
pub(super) fn error(error: Error) -> wl::Error {
    match error {
        Error::HeldByOther(e) => wl::Error::HeldByOther(service(e)),
        Error::LeaseLost(LeaseLoss::Service(e)) => wl::Error::LeaseLost(service(e)),
        Error::LeaseLost(LeaseLoss::RanOut(r)) => wl::Error::LeaseRanOut(wl::LeaseRanOut {
            when: match r.when {
                RanOutWhen::BeforeSending => wl::RanOutWhen::BeforeSending,
                RanOutWhen::BetweenAttempts => wl::RanOutWhen::BetweenAttempts,
                RanOutWhen::GrantedTooLate => wl::RanOutWhen::GrantedTooLate,
                RanOutWhen::DuringClaim => wl::RanOutWhen::DuringClaim,
                RanOutWhen::WhileHolding => wl::RanOutWhen::WhileHolding,
                RanOutWhen::Blocked => wl::RanOutWhen::Blocked,
            },
            message: r.message,
        }),
        Error::NotFound(e) => wl::Error::NotFound(service(e)),
        Error::Unauthorized(e) => wl::Error::Unauthorized(service(e)),
        Error::Throttled(e) => wl::Error::Throttled(service(e)),
        Error::Service(e) => wl::Error::Service(service(e)),
        Error::Transport(e) => wl::Error::Transport(e.to_string()),
        Error::InvalidConfig(m) => wl::Error::InvalidConfig(m),
        Error::InvalidArgument(m) => wl::Error::InvalidArgument(m),
        Error::BadOption(e) => wl::Error::BadSetting(wl::BadSetting {
            variable: core::variable_of(e.field).to_string(),
            message: e.message,
        }),
        Error::Contended(c) => {
            wl::Error::Contended(wl::Contended { attempts: c.attempts, message: c.message })
        }
        Error::UnexpectedAnswer(m) => wl::Error::UnexpectedAnswer(m),
        Error::LimitReached(m) => wl::Error::LimitReached(m),
        Error::UnusableToken(t) => wl::Error::UnusableToken(wl::UnusableToken {
            problem: match t.problem {
                TokenProblem::Expired => wl::TokenProblem::Expired,
                TokenProblem::WrongAudience => wl::TokenProblem::WrongAudience,
            },
            message: t.message,
        }),
    }
}

/// Back to the core's error, for `error-text` (the words are the core's).
pub(super) fn core_error(error: wl::Error) -> Error {
    let service = |e: wl::ServiceError| crate::ServiceError {
        status: e.status,
        code: e.code,
        request_id: e.request_id,
        message: e.message,
    };
    match error {
        wl::Error::HeldByOther(e) => Error::HeldByOther(service(e)),
        wl::Error::LeaseLost(e) => Error::LeaseLost(LeaseLoss::Service(service(e))),
        wl::Error::LeaseRanOut(r) => Error::LeaseLost(LeaseLoss::RanOut(crate::error::RanOut {
            when: match r.when {
                wl::RanOutWhen::BeforeSending => RanOutWhen::BeforeSending,
                wl::RanOutWhen::BetweenAttempts => RanOutWhen::BetweenAttempts,
                wl::RanOutWhen::GrantedTooLate => RanOutWhen::GrantedTooLate,
                wl::RanOutWhen::DuringClaim => RanOutWhen::DuringClaim,
                wl::RanOutWhen::WhileHolding => RanOutWhen::WhileHolding,
                wl::RanOutWhen::Blocked => RanOutWhen::Blocked,
            },
            message: r.message,
        })),
        wl::Error::NotFound(e) => Error::NotFound(service(e)),
        wl::Error::Unauthorized(e) => Error::Unauthorized(service(e)),
        wl::Error::Throttled(e) => Error::Throttled(service(e)),
        wl::Error::Service(e) => Error::Service(service(e)),
        wl::Error::Transport(shown) => Error::Transport(transport_error(&shown)),
        wl::Error::InvalidConfig(m) => Error::InvalidConfig(m),
        wl::Error::InvalidArgument(m) => Error::InvalidArgument(m),
        wl::Error::BadSetting(b) => Error::BadOption(crate::error::FieldError::new(
            core::variable_of(&b.variable),
            b.message,
        )),
        wl::Error::Contended(c) => {
            Error::Contended(crate::error::Contention { attempts: c.attempts, message: c.message })
        }
        wl::Error::UnexpectedAnswer(m) => Error::UnexpectedAnswer(m),
        wl::Error::LimitReached(m) => Error::LimitReached(m),
        wl::Error::UnusableToken(t) => Error::UnusableToken(crate::error::UnusableToken {
            problem: match t.problem {
                wl::TokenProblem::Expired => TokenProblem::Expired,
                wl::TokenProblem::WrongAudience => TokenProblem::WrongAudience,
            },
            message: t.message,
        }),
    }
}

pub(super) fn lease_state(state: crate::LeaseState) -> wl::LeaseState {
    match state {
        crate::LeaseState::Available => wl::LeaseState::Available,
        crate::LeaseState::Leased => wl::LeaseState::Leased,
        crate::LeaseState::Expired => wl::LeaseState::Expired,
        crate::LeaseState::Breaking => wl::LeaseState::Breaking,
        crate::LeaseState::Broken => wl::LeaseState::Broken,
    }
}

pub(super) fn past_due(past_due: &core::PastDue) -> wit::PastDue {
    wit::PastDue {
        due_at_ms: past_due.due_at_ms,
        late_by_ms: past_due.late_by_ms,
        previous_due_at_ms: past_due.previous_due_ms,
        previous_start_ms: past_due.previous_start_ms,
        missed: past_due.missed,
    }
}

fn paused(paused: &core::Paused) -> wit::Paused {
    wit::Paused { by: paused.by.clone(), since_ms: paused.since_ms, reason: paused.reason.clone() }
}

pub(super) fn skip_reason(reason: core::SkipReason) -> wit::SkipReason {
    match reason {
        core::SkipReason::HeldByOther { holder, since_ms, waited_ms, due_at_ms } => {
            wit::SkipReason::HeldByOther(wit::HeldByOther {
                holder,
                since_ms,
                waited_ms,
                due_at_ms,
            })
        }
        core::SkipReason::AlreadyRan {
            due_at_ms,
            started_ms,
            holder,
            running,
            outcome,
            next_due_ms,
        } => wit::SkipReason::AlreadyRan(wit::AlreadyRan {
            due_at_ms,
            started_at_ms: started_ms,
            holder,
            running,
            outcome: outcome.as_ref().map(core::Outcome::as_record_text),
            next_due_ms,
        }),
        core::SkipReason::TooLate { due_at_ms, late_by_ms, next_due_ms } => {
            wit::SkipReason::TooLate(wit::TooLate { due_at_ms, late_by_ms, next_due_ms })
        }
        core::SkipReason::NotDue { next_due_ms } => {
            wit::SkipReason::NotDue(wit::NotDue { next_due_ms })
        }
        core::SkipReason::Paused(p) => wit::SkipReason::Paused(paused(&p)),
        core::SkipReason::ScheduleConflict { newer, ours, since_ms, until_ms } => {
            wit::SkipReason::ScheduleConflict(wit::ScheduleConflict {
                newer,
                ours,
                since_ms,
                until_ms,
            })
        }
        core::SkipReason::Remembered(r) => wit::SkipReason::Remembered(wit::Remembered {
            looked_at_ms: r.looked_at_ms,
            next_due_ms: r.next_due_ms,
            paused: r.paused,
            asks_from_ms: r.asks_from_ms,
        }),
        core::SkipReason::Error(e) => wit::SkipReason::Error(error(e)),
    }
}

pub(super) fn operator_answer(answer: core::OperatorAnswer) -> wit::OperatorAnswer {
    wit::OperatorAnswer {
        paused: answer.paused.as_ref().map(paused),
        run_now_by: answer.run_now.map(|r| r.by),
        running: answer.running.map(|r| wit::RunningRun {
            holder: r.holder,
            since_ms: r.since_ms,
            fencing_token: r.fencing_token,
        }),
    }
}

pub(super) fn status_board(entries: Vec<core::BoardEntry>) -> wit::StatusBoard {
    wit::StatusBoard {
        tzdata: crate::zone::TZDATA_VERSION.to_string(),
        locks: entries.into_iter().map(board_entry).collect(),
    }
}

fn board_entry(entry: core::BoardEntry) -> wit::BoardEntry {
    let record = &entry.record;
    let schedules_seen = record
        .schedules
        .iter()
        .map(|seen| wit::SeenSchedule {
            schedule: seen.shown(),
            first_seen_ms: seen.first_seen_ms,
            last_seen_ms: seen.last_seen_ms,
            alive: seen.alive(entry.listed_ms),
        })
        .collect();
    wit::BoardEntry {
        name: entry.name.clone(),
        state: lease_state(entry.state),
        holder: record.holder.clone(),
        fencing_token: record.fence,
        last_start_ms: record.started_ms,
        last_stop_ms: record.stopped_ms,
        running: record.running,
        last_outcome: record.outcome.as_ref().map(core::Outcome::as_record_text),
        schedule: entry.schedule.as_ref().map(|s| s.to_string()),
        time_zone: match &entry.schedule {
            Some(Schedule::Cron(cron)) => Some(cron.zone().name().to_string()),
            _ => None,
        },
        last_due_ms: entry.last_due_ms,
        next_due_ms: entry.next_due_ms,
        overdue: entry.overdue,
        paused: entry.paused.as_ref().map(paused),
        run_now_by: entry.run_now.as_ref().map(|r| r.by.clone()),
        schedules_seen,
        disagreeing_since_ms: entry.agreement.disagreeing_since_ms,
        newest_period_ms: entry.agreement.newest_period_ms,
        history: record.history.iter().map(past_run).collect(),
        consecutive_failures: record.consecutive_failures(),
        totals: wit::RunTotals {
            successes: record.totals.successes,
            failures: record.totals.failures,
            abandoned: record.totals.abandoned,
            missed: record.totals.missed,
            last_success_ms: record.totals.last_success_ms,
            last_failure_ms: record.totals.last_failure_ms,
            blocked: record.totals.blocked,
        },
    }
}

fn past_run(run: &core::PastRun) -> wit::PastRun {
    wit::PastRun {
        fencing_token: run.fence,
        due_at_ms: run.due_ms,
        started_at_ms: run.started_ms,
        stopped_at_ms: run.stopped_ms,
        late_by_ms: run.late_by_ms(),
        missed: run.missed,
        manual: run.manual,
        holder: run.holder.clone(),
        outcome: match &run.outcome {
            core::PastOutcome::Success => wit::PastOutcome::Success,
            core::PastOutcome::Failure(text) => wit::PastOutcome::Failure(text.clone()),
            core::PastOutcome::Abandoned => wit::PastOutcome::Abandoned,
            core::PastOutcome::Replaced => wit::PastOutcome::Replaced,
        },
    }
}

pub(super) fn shown_time(shown: core::ShownTime) -> wit::ShownTime {
    wit::ShownTime { at_ms: shown.at_ms, utc: shown.utc, local: shown.local }
}

pub(super) fn settings_check(check: core::SettingsCheck) -> wit::SettingsCheck {
    let storage = check.storage.map(|answer| match answer {
        core::StorageAnswer::LockExists { state, holder, last_start_ms } => {
            wit::StorageAnswer::LockExists(wit::LockFound {
                state: lease_state(state),
                holder,
                last_start_ms,
            })
        }
        core::StorageAnswer::LockMissing => wit::StorageAnswer::LockMissing,
        core::StorageAnswer::Failed(failure) => wit::StorageAnswer::Failed(error(failure)),
    });
    wit::SettingsCheck {
        problems: check
            .problems
            .into_iter()
            .map(|p| wl::BadSetting {
                variable: core::variable_of(&p.field).to_string(),
                message: p.message,
            })
            .collect(),
        time_zone: check.time_zone,
        next_due: check.next_due.into_iter().map(shown_time).collect(),
        account: check.account.map(|a| wit::AccountShown {
            name: a.name,
            endpoint: a.endpoint,
            credential: a.credential.to_string(),
        }),
        storage,
    }
}

/// A transport error as `error` carries it (`Timeout: …`, its `Display`), read back.
fn transport_error(shown: &str) -> crate::transport::TransportError {
    use crate::transport::{TransportError, TransportErrorKind as Kind};
    let (kind, detail) = shown.split_once(": ").unwrap_or(("Other", shown));
    let kind = match kind {
        "Connect" => Kind::Connect,
        "Timeout" => Kind::Timeout,
        "Interrupted" => Kind::Interrupted,
        "Denied" => Kind::Denied,
        "Other" => Kind::Other,
        _ => return TransportError::new(Kind::Other, shown),
    };
    TransportError::new(kind, detail)
}

//! Conversions between guard@0.3.0's WIT values and the core's.

use super::exports::traffic_cop::lease0_1_0::lease::Lock;
use super::exports::traffic_cop::lease0_3_0::guard as wit;
use super::glue;
use super::lease::lock_ref;
use super::shared::at;
use crate::error::{Error, FieldError, LeaseLoss, RanOutWhen, TokenProblem};
use crate::guard::{self as core, unix_ms, Overlap};
use crate::ops::LeaseId;
use crate::schedule::{cron::Dialect, Every, Schedule, ZonedCron};
use std::time::Duration;
use wit::{Decision, GuardOptions, Outcome, Ticket};

/// guard@0.3.0's values.
pub(super) struct V3;

glue::version!(V3, wit::GuardError, wit::Claimed, wit::StatusBoard);

pub(super) fn wit_error(error: Error) -> wit::GuardError {
    match error {
        Error::BadOption(e) => {
            wit::GuardError::BadOption(wit::BadOption { field: e.field.into(), message: e.message })
        }
        Error::LeaseLost(LeaseLoss::RanOut(r)) => wit::GuardError::LeaseRanOut(wit::LeaseRanOut {
            when: match r.when {
                RanOutWhen::BeforeSending => wit::RanOutWhen::BeforeSending,
                RanOutWhen::BetweenAttempts => wit::RanOutWhen::BetweenAttempts,
                RanOutWhen::GrantedTooLate => wit::RanOutWhen::GrantedTooLate,
                RanOutWhen::DuringClaim => wit::RanOutWhen::DuringClaim,
                RanOutWhen::WhileHolding => wit::RanOutWhen::WhileHolding,
                RanOutWhen::Blocked => wit::RanOutWhen::Blocked,
            },
            message: r.message,
        }),
        Error::Contended(c) => {
            wit::GuardError::Contended(wit::Contended { attempts: c.attempts, message: c.message })
        }
        Error::UnexpectedAnswer(m) => wit::GuardError::UnexpectedAnswer(m),
        Error::LimitReached(m) => wit::GuardError::LimitReached(m),
        Error::UnusableToken(t) => wit::GuardError::UnusableToken(wit::UnusableToken {
            problem: match t.problem {
                TokenProblem::Expired => wit::TokenProblem::Expired,
                TokenProblem::WrongAudience => wit::TokenProblem::WrongAudience,
            },
            message: t.message,
        }),
        other => wit::GuardError::Lease(other.into()),
    }
}

fn bad(error: FieldError) -> Error {
    Error::BadOption(error)
}

pub(super) fn schedule(schedule: &wit::Schedule) -> Result<Schedule, Error> {
    Ok(match schedule {
        wit::Schedule::None => Schedule::None,
        wit::Schedule::Every(every) => {
            Schedule::Every(Every::new(every.interval_seconds, every.offset_seconds).map_err(bad)?)
        }
        wit::Schedule::Cron(cron) => {
            let dialect = match cron.dialect {
                None | Some(wit::CronDialect::Spin) => Dialect::Spin,
                Some(wit::CronDialect::Classic) => Dialect::Classic,
            };
            let zone = cron.time_zone.as_deref();
            Schedule::Cron(ZonedCron::new(&cron.expression, zone, dialect).map_err(bad)?)
        }
    })
}

fn wit_schedule(schedule: &Schedule) -> wit::Schedule {
    match schedule {
        Schedule::None => wit::Schedule::None,
        Schedule::Every(every) => wit::Schedule::Every(wit::Every {
            interval_seconds: every.interval_seconds(),
            offset_seconds: every.offset_seconds(),
        }),
        Schedule::Cron(cron) => wit::Schedule::Cron(wit::Cron {
            expression: cron.expression().to_string(),
            time_zone: Some(cron.zone().name().to_string()),
            dialect: Some(match cron.dialect() {
                Dialect::Classic => wit::CronDialect::Classic,
                Dialect::Spin => wit::CronDialect::Spin,
            }),
        }),
    }
}

pub(super) fn core_options(options: &wit::GuardOptions) -> Result<core::GuardOptions, Error> {
    let overlap = match options.overlap {
        None | Some(wit::Overlap::Forbid) => Overlap::Forbid,
        Some(wit::Overlap::Replace(after_seconds)) => Overlap::Replace { after_seconds },
    };
    let early = options.early_tolerance_ms.map_or(core::DEFAULT_EARLY_MS, u64::from);
    let wait = Duration::from_millis(options.wait_ms.map_or(0, u64::from));
    core::GuardOptions::scheduled(
        &options.holder,
        options.lease_seconds,
        options.keep_alive_seconds,
        schedule(&options.schedule)?,
    )?
    .early_by(early)?
    .starting_deadline(options.starting_deadline_seconds)?
    .overlapping(overlap)?
    .waiting(wait)
}

fn wit_options(options: &core::GuardOptions) -> wit::GuardOptions {
    wit::GuardOptions {
        holder: options.holder.clone(),
        lease_seconds: options.lease_seconds,
        keep_alive_seconds: Some(options.keep_alive_seconds),
        schedule: wit_schedule(&options.schedule),
        early_tolerance_ms: Some(options.early_ms as u32),
        starting_deadline_seconds: options.starting_deadline_seconds,
        overlap: Some(match options.overlap {
            Overlap::Forbid => wit::Overlap::Forbid,
            Overlap::Replace { after_seconds } => wit::Overlap::Replace(after_seconds),
        }),
        wait_ms: Some(options.wait.as_millis() as u32),
    }
}

/// `lock` is the caller's own record, handed back unchanged.
pub(super) fn wit_ticket(ticket: core::Ticket, lock: Lock) -> wit::Ticket {
    let past_due = &ticket.past_due;
    let (grant_etag, grant_record) = match &ticket.grant {
        Some(grant) => (grant.etag.clone(), grant.record.to_metadata()),
        None => (String::new(), Vec::new()),
    };
    wit::Ticket {
        lock,
        lease_id: ticket.lease_id.to_string(),
        fencing_token: ticket.fencing_token,
        started_at_ms: ticket.started_ms,
        deadline_ms: unix_ms(ticket.deadline),
        keep_alive_by_ms: unix_ms(ticket.keep_alive_by),
        previous_abandoned: ticket.previous_abandoned,
        replaced: ticket.replaced,
        manual_by: ticket.manual_by.clone(),
        past_due: wit_past_due(past_due),
        options: wit_options(&ticket.options),
        grant_etag,
        grant_record,
    }
}

pub(super) fn wit_past_due(past_due: &core::PastDue) -> wit::PastDue {
    wit::PastDue {
        due_at_ms: past_due.due_at_ms,
        late_by_ms: past_due.late_by_ms,
        previous_due_at_ms: past_due.previous_due_ms,
        previous_start_ms: past_due.previous_start_ms,
        missed: past_due.missed,
    }
}

/// A ticket comes back from outside: every field is validated again.
pub(super) fn core_ticket(ticket: &wit::Ticket) -> Result<core::Ticket, Error> {
    let grant = (!ticket.grant_etag.is_empty()).then(|| core::Grant {
        etag: ticket.grant_etag.clone(),
        record: core::RunRecord::from_metadata(&ticket.grant_record),
    });
    Ok(core::Ticket {
        lock: lock_ref(&ticket.lock)?,
        lease_id: LeaseId::parse(&ticket.lease_id)?,
        fencing_token: ticket.fencing_token,
        started_ms: ticket.started_at_ms,
        deadline: at(ticket.deadline_ms),
        keep_alive_by: at(ticket.keep_alive_by_ms),
        lease_deadline: None,
        previous_abandoned: ticket.previous_abandoned,
        replaced: ticket.replaced,
        manual_by: ticket.manual_by.clone(),
        past_due: core::PastDue {
            due_at_ms: ticket.past_due.due_at_ms,
            late_by_ms: ticket.past_due.late_by_ms,
            previous_due_ms: ticket.past_due.previous_due_at_ms,
            previous_start_ms: ticket.past_due.previous_start_ms,
            missed: ticket.past_due.missed,
        },
        options: core_options(&ticket.options)?,
        grant,
    })
}

pub(super) fn paused(paused: &core::Paused) -> wit::Paused {
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
            next_due_ms: next_due_ms.unwrap_or(u64::MAX),
        }),
        core::SkipReason::TooLate { due_at_ms, late_by_ms, next_due_ms } => {
            wit::SkipReason::TooLate(wit::TooLate { due_at_ms, late_by_ms, next_due_ms })
        }
        core::SkipReason::NotDue { next_due_ms } => {
            wit::SkipReason::NotDue(wit::NotDue { next_due_ms: next_due_ms.unwrap_or(u64::MAX) })
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
        core::SkipReason::Error(e) => wit::SkipReason::Error(wit_error(e)),
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

fn board_entry(entry: core::BoardEntry) -> wit::BoardEntry {
    let record = &entry.record;
    let recorded = entry.schedule.as_ref().map(|s| s.to_string());
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
        state: super::lease_state(entry.state),
        holder: record.holder.clone(),
        fencing_token: record.fence,
        last_start_ms: record.started_ms,
        last_stop_ms: record.stopped_ms,
        running: record.running,
        last_outcome: record.outcome.as_ref().map(core::Outcome::as_record_text),
        schedule: recorded,
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
                state: super::lease_state(state),
                holder,
                last_start_ms,
            })
        }
        core::StorageAnswer::LockMissing => wit::StorageAnswer::LockMissing,
        core::StorageAnswer::Failed(error) => wit::StorageAnswer::Failed(error.into()),
    });
    wit::SettingsCheck {
        problems: check
            .problems
            .into_iter()
            .map(|p| wit::BadSetting { field: p.field, message: p.message })
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

fn wit_claimed(tickets: Vec<wit::Ticket>, stopped: Option<Error>) -> wit::Claimed {
    wit::Claimed { tickets, stopped: stopped.map(wit_error) }
}

fn wit_board(entries: Vec<core::BoardEntry>) -> wit::StatusBoard {
    wit::StatusBoard {
        tzdata: crate::zone::TZDATA_VERSION.to_string(),
        locks: entries.into_iter().map(board_entry).collect(),
    }
}

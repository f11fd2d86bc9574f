//! `traffic-cop:lease/guard@0.3.0`: schedules as cron expressions in a time zone or grids, the
//! operator's verbs, overlap policies and waiting for a held lock. A thin conversion onto the
//! one core (guard_v3_convert.rs holds the conversions).

use super::exports::traffic_cop::lease0_1_0::lease::Lock;
use super::exports::traffic_cop::lease0_3_0::guard::{
    Claimed, Decision, FencedData, FencedError, FencedWrite, GuardError, GuardOptions, Guest,
    Location, OperatorAnswer, Outcome, Schedule, SettingsCheck, ShownTime, SkipReason,
    StaleFencingToken, StatusBoard, Ticket,
};
use super::guard_v3_convert as convert;
use super::lease::lock_ref;
use super::shared;
use super::{client, Component};
use crate::config::Account;
use crate::error::Error;
use crate::guard::{self as core, unix_ms};
use crate::schedule::ScheduleError;
use std::time::Duration;

/// The most due times one `due-times` call lists.
const MAX_DUE_TIMES: u32 = 1000;

impl Guest for Component {
    fn guarded_invoke(lock: Lock, options: GuardOptions) -> Decision {
        match convert::options(&options).and_then(|options| shared::invoke(&lock, &options)) {
            Ok(core::Decision::Run(ticket)) => Decision::Run(convert::ticket(ticket, lock)),
            Ok(core::Decision::Skip(reason)) => Decision::Skip(convert::skip_reason(reason)),
            Err(error) => Decision::Skip(SkipReason::Error(convert::error(error))),
        }
    }

    fn keep_alive(ticket: Ticket) -> Result<u64, GuardError> {
        let ticket = convert::core_ticket(&ticket).map_err(convert::error)?;
        shared::keep_alive(ticket).map(unix_ms).map_err(convert::error)
    }

    fn complete(ticket: Ticket, outcome: Outcome) -> Result<(), GuardError> {
        let outcome = match outcome {
            Outcome::Success => core::Outcome::Success,
            Outcome::Failure(reason) => core::Outcome::Failure(reason),
        };
        let ticket = convert::core_ticket(&ticket).map_err(convert::error)?;
        shared::complete(ticket, &outcome).map_err(convert::error)
    }

    fn claim(
        location: Location,
        items: Vec<String>,
        options: GuardOptions,
        max: u32,
    ) -> Result<Claimed, GuardError> {
        let options = convert::options(&options).map_err(convert::error)?;
        let (claim, locks) =
            shared::claim(&location.connection_string, &location.container, &items, &options, max)
                .map_err(convert::error)?;
        let tickets = claim.tickets.into_iter().zip(locks).map(|(t, l)| convert::ticket(t, l));
        Ok(Claimed { tickets: tickets.collect(), stopped: claim.stopped.map(convert::error) })
    }

    fn board(location: Location) -> Result<StatusBoard, GuardError> {
        let entries = shared::board(&location.connection_string, &location.container)
            .map_err(convert::error)?;
        Ok(StatusBoard {
            tzdata: crate::zone::TZDATA_VERSION.to_string(),
            locks: entries.into_iter().map(convert::board_entry).collect(),
        })
    }

    fn write_fenced(
        ticket: Ticket,
        name: String,
        contents: Vec<u8>,
    ) -> Result<FencedWrite, FencedError> {
        let failed = |e| FencedError::Failed(convert::error(e));
        let ticket = shared::recall(convert::core_ticket(&ticket).map_err(failed)?);
        match core::write_fenced(&mut client(), &ticket, &name, &contents) {
            Ok(written) => Ok(FencedWrite {
                name: written.name,
                fencing_token: written.fencing_token,
                etag: written.etag,
            }),
            Err(core::FencedError::Stale { presented, stored }) => {
                Err(FencedError::StaleFencingToken(StaleFencingToken { presented, stored }))
            }
            Err(core::FencedError::Failed(error)) => Err(failed(error)),
        }
    }

    fn read_fenced(location: Location, name: String) -> Result<Option<FencedData>, GuardError> {
        let read = || {
            let account = Account::from_connection_string(&location.connection_string)?;
            core::read_fenced(&mut client(), &account, &location.container, &name)
        };
        Ok(read().map_err(convert::error)?.map(|data| FencedData {
            contents: data.contents,
            fencing_token: data.fencing_token,
            etag: data.etag,
        }))
    }

    fn pause(
        lock: Lock,
        by: String,
        reason: String,
        drain_ms: u32,
    ) -> Result<OperatorAnswer, GuardError> {
        let lock = lock_ref(&lock).map_err(convert::error)?;
        let drain = Duration::from_millis(drain_ms.into());
        core::pause(&mut client(), &lock, &by, &reason, drain)
            .map(convert::operator_answer)
            .map_err(convert::error)
    }

    fn resume(lock: Lock, by: String) -> Result<OperatorAnswer, GuardError> {
        let lock = lock_ref(&lock).map_err(convert::error)?;
        core::resume(&mut client(), &lock, &by)
            .map(convert::operator_answer)
            .map_err(convert::error)
    }

    fn run_now(lock: Lock, by: String) -> Result<OperatorAnswer, GuardError> {
        let lock = lock_ref(&lock).map_err(convert::error)?;
        core::run_now(&mut client(), &lock, &by)
            .map(convert::operator_answer)
            .map_err(convert::error)
    }

    fn due_times(schedule: Schedule, after_ms: u64, count: u32) -> Result<Vec<u64>, GuardError> {
        let schedule = convert::schedule(&schedule).map_err(convert::error)?;
        Ok(core::due_times(&schedule, after_ms, count.min(MAX_DUE_TIMES)))
    }

    fn check_settings(
        lock: Lock,
        options: GuardOptions,
        count: u32,
        reach_storage: bool,
    ) -> SettingsCheck {
        let settings = core::Settings {
            connection_string: &lock.connection_string,
            container: &lock.container,
            blob: &lock.blob,
            options: convert::options(&options),
            schedule: convert::schedule(&options.schedule),
        };
        convert::settings_check(core::check_settings(&mut client(), settings, count, reach_storage))
    }

    fn show_time(at_ms: u64, time_zone: Option<String>) -> Result<ShownTime, GuardError> {
        let zone = match time_zone.as_deref().map(str::trim) {
            None | Some("") => crate::zone::Zone::utc(),
            Some(name) => crate::zone::Zone::named(name).map_err(|e| {
                convert::error(Error::BadSchedule(ScheduleError::new("time-zone", e.to_string())))
            })?,
        };
        Ok(convert::shown_time(core::ShownTime::new(at_ms, &zone)))
    }
}

//! `traffic-cop:lease/guard@0.3.0`: schedules as cron expressions in a time zone or grids, the
//! operator's verbs, overlap policies and waiting for a held lock. A thin conversion onto the
//! one core (guard_v3_convert.rs holds the conversions).

use super::exports::traffic_cop::lease0_1_0::lease::Lock;
use super::exports::traffic_cop::lease0_3_0::guard::{
    Decision, FencedData, FencedError, FencedWrite, GuardError, GuardOptions, Guest, Location,
    OperatorAnswer, Outcome, Schedule, SettingsCheck, ShownTime, StaleFencingToken, Ticket,
};
use super::glue::{self, Version};
use super::guard_v3_convert::{self as convert, V3};
use super::lease::lock_ref;
use super::{client, Component};
use crate::error::Error;
use crate::error::FieldError;
use crate::guard as core;
use std::time::Duration;

/// The most due times one `due-times` call lists.
const MAX_DUE_TIMES: u32 = 1000;

impl Guest for Component {
    glue::guard_calls!(V3);

    glue::fenced_calls!(V3);

    fn pause(
        lock: Lock,
        by: String,
        reason: String,
        drain_ms: u32,
    ) -> Result<OperatorAnswer, GuardError> {
        let lock = lock_ref(&lock).map_err(convert::wit_error)?;
        let drain = Duration::from_millis(drain_ms.into());
        core::pause(&mut client(), &lock, &by, &reason, drain)
            .map(convert::operator_answer)
            .map_err(convert::wit_error)
    }

    fn resume(lock: Lock, by: String) -> Result<OperatorAnswer, GuardError> {
        let lock = lock_ref(&lock).map_err(convert::wit_error)?;
        core::resume(&mut client(), &lock, &by)
            .map(convert::operator_answer)
            .map_err(convert::wit_error)
    }

    fn run_now(lock: Lock, by: String) -> Result<OperatorAnswer, GuardError> {
        let lock = lock_ref(&lock).map_err(convert::wit_error)?;
        core::run_now(&mut client(), &lock, &by)
            .map(convert::operator_answer)
            .map_err(convert::wit_error)
    }

    fn due_times(schedule: Schedule, after_ms: u64, count: u32) -> Result<Vec<u64>, GuardError> {
        let schedule = convert::schedule(&schedule).map_err(convert::wit_error)?;
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
            options: convert::core_options(&options),
            schedule: convert::schedule(&options.schedule),
        };
        convert::settings_check(core::check_settings(&mut client(), settings, count, reach_storage))
    }

    fn show_time(at_ms: u64, time_zone: Option<String>) -> Result<ShownTime, GuardError> {
        let zone = match time_zone.as_deref().map(str::trim) {
            None | Some("") => crate::zone::Zone::utc(),
            Some(name) => crate::zone::Zone::named(name).map_err(|e| {
                convert::wit_error(Error::BadOption(FieldError::new("time-zone", e.to_string())))
            })?,
        };
        Ok(convert::shown_time(core::ShownTime::new(at_ms, &zone)))
    }
}

//! A guarded job's settings as its deployment spells them: the raw strings of its Spin
//! variables, parsed and judged here once for every consumer (the wrappers, the one-line forms,
//! the templates and the settings check copy variables in and interpret none). A setting that
//! cannot be used is [`Error::BadOption`] naming the variable a user sets (`time_zone`), never
//! the field of a WIT record.

use super::{
    GuardOptions, Overlap, DEFAULT_EARLY_MS, DEFAULT_REFRESH_SECONDS, MAX_REFRESH_SECONDS,
};
use crate::config::{Account, Lock};
use crate::error::{Error, FieldError};
use crate::schedule::cron::Dialect;
use crate::schedule::{Every, Schedule, ZonedCron};
use crate::transport::Runtime;
use std::time::Duration;

/// The lease period when `lease_seconds` is unset: the shortest the service grants, so a crashed
/// holder blocks the others for the least time.
pub const DEFAULT_LEASE_SECONDS: u32 = 15;

/// Each field is a variable's raw value; `None`, or only blanks, is unset.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RawSettings {
    pub connection_string: Option<String>,
    pub container: Option<String>,
    pub lock: Option<String>,
    pub holder: Option<String>,
    pub lease_seconds: Option<String>,
    pub keep_alive_seconds: Option<String>,
    pub schedule: Option<String>,
    pub time_zone: Option<String>,
    pub cron_dialect: Option<String>,
    pub early_tolerance_ms: Option<String>,
    pub starting_deadline_seconds: Option<String>,
    pub replace_after_seconds: Option<String>,
    pub wait_ms: Option<String>,
    pub max_job_seconds: Option<String>,
    pub refresh_seconds: Option<String>,
}

/// The connection string is a secret: it is never printed.
impl std::fmt::Debug for RawSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawSettings")
            .field("container", &self.container)
            .field("lock", &self.lock)
            .field("holder", &self.holder)
            .field("schedule", &self.schedule)
            .field("time_zone", &self.time_zone)
            .finish_non_exhaustive()
    }
}

fn bad(variable: &'static str, message: impl Into<String>) -> Error {
    Error::BadOption(FieldError::new(variable, message.into()))
}

/// Every variable [`RawSettings`] reads, as a user spells it.
pub const VARIABLES: [&str; 15] = [
    "connection_string",
    "container",
    "lock",
    "holder",
    "lease_seconds",
    "keep_alive_seconds",
    "schedule",
    "time_zone",
    "cron_dialect",
    "early_tolerance_ms",
    "starting_deadline_seconds",
    "replace_after_seconds",
    "wait_ms",
    "max_job_seconds",
    "refresh_seconds",
];

/// The variable a user sets for a field a validator named: a variable's own name, or an
/// option's or a schedule part's as the core's errors name them (`minute` is `schedule`).
pub fn variable_of(field: &str) -> &'static str {
    if let Some(variable) = VARIABLES.iter().find(|v| **v == field) {
        return variable;
    }
    match field {
        "holder" => "holder",
        "lease-seconds" => "lease_seconds",
        "keep-alive-seconds" => "keep_alive_seconds",
        "starting-deadline-seconds" => "starting_deadline_seconds",
        "early-tolerance-ms" => "early_tolerance_ms",
        "overlap" => "replace_after_seconds",
        "wait-ms" => "wait_ms",
        "time-zone" => "time_zone",
        "connection-string" => "connection_string",
        "container" => "container",
        "blob" => "lock",
        _ => "schedule",
    }
}

/// A core error whose field is an option's or a schedule's, renamed to the variable to set
/// (the part of the schedule at fault stays in the message).
fn as_variable(error: Error) -> Error {
    match error {
        Error::BadOption(e) => {
            let variable = variable_of(e.field);
            let message = if variable == "schedule" && e.field != "expression" {
                format!("{}: {}", e.field, e.message)
            } else {
                e.message
            };
            bad(variable, message)
        }
        other => other,
    }
}

impl RawSettings {
    fn value<'a>(&self, field: &'a Option<String>) -> Option<&'a str> {
        field.as_deref().map(str::trim).filter(|v| !v.is_empty())
    }

    fn required<'a>(
        &self,
        variable: &'static str,
        field: &'a Option<String>,
    ) -> Result<&'a str, Error> {
        self.value(field).ok_or_else(|| bad(variable, "is not set"))
    }

    fn number<T: std::str::FromStr>(
        &self,
        variable: &'static str,
        field: &Option<String>,
    ) -> Result<Option<T>, Error> {
        self.value(field)
            .map(|text| {
                text.parse()
                    .map_err(|_| bad(variable, format!("must be a whole number, got {text:?}")))
            })
            .transpose()
    }

    /// The account and the container: what `board` and `claim` need.
    pub fn place(&self) -> Result<(Account, String), Error> {
        let text = self.required("connection_string", &self.connection_string)?;
        let account = Account::from_connection_string(text).map_err(|e| match e {
            Error::InvalidConfig(message) => bad("connection_string", message),
            other => other,
        })?;
        let container = self.required("container", &self.container)?;
        crate::config::validate_container(container).map_err(|e| bad("container", reason(e)))?;
        Ok((account, container.to_string()))
    }

    /// The one lock a job's calls act on.
    pub fn lock(&self) -> Result<Lock, Error> {
        let (account, container) = self.place()?;
        let blob = self.required("lock", &self.lock)?;
        Lock::new(account, &container, blob).map_err(|e| bad("lock", reason(e)))
    }

    /// The schedule: a cron expression on `time_zone`'s wall clock, `@every <duration>`, or none.
    pub fn schedule(&self) -> Result<Schedule, Error> {
        let Some(text) = self.value(&self.schedule) else {
            return Ok(Schedule::None);
        };
        if let Some(every) = text.strip_prefix("@every") {
            let seconds = every_seconds(every.trim()).map_err(|m| bad("schedule", m))?;
            return Ok(Schedule::Every(
                Every::new(seconds, 0).map_err(|e| bad("schedule", e.message))?,
            ));
        }
        let dialect = match self.value(&self.cron_dialect) {
            None | Some("spin") => Dialect::Spin,
            Some("classic") => Dialect::Classic,
            Some(other) => {
                return Err(bad(
                    "cron_dialect",
                    format!("must be `spin` or `classic`, got {other:?}"),
                ))
            }
        };
        let zone = self.value(&self.time_zone).filter(|zone| *zone != "UTC");
        ZonedCron::new(text, zone, dialect)
            .map(Schedule::Cron)
            .map_err(|e| as_variable(Error::BadOption(e)))
    }

    /// The options a run is decided with; an unset holder is a random label for this instance.
    pub fn options(&self, runtime: &impl Runtime) -> Result<GuardOptions, Error> {
        let holder = match self.value(&self.holder) {
            Some(holder) => holder.to_string(),
            None => format!("instance-{:06x}", runtime.random_u64() & 0xff_ffff),
        };
        let lease_seconds =
            self.number("lease_seconds", &self.lease_seconds)?.unwrap_or(DEFAULT_LEASE_SECONDS);
        let keep_alive = self.number("keep_alive_seconds", &self.keep_alive_seconds)?;
        let early = self.number("early_tolerance_ms", &self.early_tolerance_ms)?;
        let deadline = self.number("starting_deadline_seconds", &self.starting_deadline_seconds)?;
        let replace = self.number("replace_after_seconds", &self.replace_after_seconds)?;
        let wait: Option<u64> = self.number("wait_ms", &self.wait_ms)?;
        let max_job: Option<u64> = self.number("max_job_seconds", &self.max_job_seconds)?;
        let schedule = self.schedule()?;
        // Judged with the others, so that a bad value fails every call that decides, and the
        // settings check names it.
        self.refresh_ms()?;
        let options = GuardOptions::scheduled(&holder, lease_seconds, keep_alive, schedule)
            .and_then(|o| o.early_by(early.unwrap_or(DEFAULT_EARLY_MS)))
            .and_then(|o| o.starting_deadline(deadline))
            .and_then(|o| match replace {
                Some(after_seconds) => o.overlapping(Overlap::Replace { after_seconds }),
                None => Ok(o),
            })
            .and_then(|o| o.waiting(Duration::from_millis(wait.unwrap_or(0))))
            .map_err(as_variable)?;
        if let Some(longest) = max_job.filter(|longest| *longest > u64::from(lease_seconds)) {
            return Err(bad(
                "max_job_seconds",
                format!(
                    "{longest} s is longer than the lease ({lease_seconds} s), and nothing renews \
                     the lease while such a job runs: raise `lease_seconds` (at most 60), or let \
                     `hold` renew it (the async wrapper)"
                ),
            ));
        }
        Ok(options)
    }
}

impl RawSettings {
    /// How long what a look taught is trusted (`refresh_seconds`, 0 to
    /// [`MAX_REFRESH_SECONDS`]; 0 trusts nothing: every tick asks storage).
    pub fn refresh_ms(&self) -> Result<u64, Error> {
        let seconds = self.number("refresh_seconds", &self.refresh_seconds)?;
        match seconds.unwrap_or(DEFAULT_REFRESH_SECONDS) {
            seconds @ 0..=MAX_REFRESH_SECONDS => Ok(seconds * 1000),
            seconds => Err(bad(
                "refresh_seconds",
                format!(
                    "must be at most {MAX_REFRESH_SECONDS} (an hour), got {seconds}: a replica \
                     asks storage at least this often, so a resume or a run-now is seen within it"
                ),
            )),
        }
    }
}

/// A message without the error kind's own prefix.
fn reason(error: Error) -> String {
    match error {
        Error::InvalidArgument(message) | Error::InvalidConfig(message) => message,
        other => other.to_string(),
    }
}

/// `90s`, `5m`, `1h30m`: the seconds of a Go-style duration of whole hours, minutes and seconds.
fn every_seconds(text: &str) -> Result<u64, String> {
    let refuse = || format!("`@every` takes a duration such as 90s, 5m or 1h30m, got {text:?}");
    let (mut total, mut digits) = (0u64, String::new());
    for c in text.chars() {
        match c {
            '0'..='9' => digits.push(c),
            'h' | 'm' | 's' if !digits.is_empty() => {
                let unit = match c {
                    'h' => 3600,
                    'm' => 60,
                    _ => 1,
                };
                let n: u64 = digits.parse().map_err(|_| refuse())?;
                total =
                    n.checked_mul(unit).and_then(|s| total.checked_add(s)).ok_or_else(refuse)?;
                digits.clear();
            }
            _ => return Err(refuse()),
        }
    }
    if !digits.is_empty() || total == 0 {
        return Err(refuse());
    }
    Ok(total)
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;

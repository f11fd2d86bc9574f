//! `check_settings`: what a deployment would do with its settings, found before it runs. Every
//! setting is judged the way `guarded_invoke` judges it, the schedule's next due times are
//! shown on the job's own wall clock and in UTC, and at most one request is sent: a look at the
//! lock (Get Blob Properties) that creates nothing, because the lock's creation time decides
//! which due times are owed.

use super::{GuardOptions, RunRecord};
use crate::civil;
use crate::client::LeaseClient;
use crate::config::{validate_blob, validate_container, Account, Credential, Lock};
use crate::error::Error;
use crate::ops::LeaseState;
use crate::schedule::Schedule;
use crate::transport::{Runtime, Transport};
use crate::zone::Zone;

/// The most due times one check shows.
pub const MAX_SHOWN_DUE_TIMES: u32 = 100;

/// A setting that cannot be used: the field of the options or the lock at fault, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadSetting {
    pub field: String,
    pub message: String,
}

/// An instant as people read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShownTime {
    pub at_ms: u64,
    /// ISO 8601 in UTC: `2026-11-27T01:00:00Z`.
    pub utc: String,
    /// ISO 8601 on the zone's wall clock, with its offset: `2026-11-27T02:00:00+01:00`.
    pub local: String,
}

impl ShownTime {
    pub fn new(at_ms: u64, zone: &Zone) -> ShownTime {
        let offset = zone.offset_at((at_ms / 1000) as i64);
        ShownTime { at_ms, utc: civil::iso8601(at_ms, 0), local: civil::iso8601(at_ms, offset) }
    }
}

/// The account a connection string names, without its secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountShown {
    pub name: String,
    /// The blob endpoint requests go to: `https://acct.blob.core.windows.net`.
    pub endpoint: String,
    /// `shared-key`, `sas` or `entra-id`.
    pub credential: &'static str,
}

/// What the one look at the lock found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageAnswer {
    /// The credential was accepted and the lock exists.
    LockExists {
        state: LeaseState,
        holder: Option<String>,
        last_start_ms: Option<u64>,
    },
    /// The credential was accepted (or the container is missing, which the service says before
    /// judging it on some accounts); the first tick creates the lock.
    LockMissing,
    Failed(Error),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsCheck {
    /// Every setting that cannot be used; empty when all can. The options are judged in the
    /// order `guarded_invoke` judges them, so only their first refusal is here.
    pub problems: Vec<BadSetting>,
    /// The schedule's IANA zone (`UTC` without a cron schedule, or when it cannot be read).
    pub time_zone: String,
    /// The next due times after this host's now.
    pub next_due: Vec<ShownTime>,
    pub account: Option<AccountShown>,
    /// None when storage was not asked or the lock's settings cannot be used.
    pub storage: Option<StorageAnswer>,
}

/// The settings of one lock, as the caller has them: the options and the schedule already
/// converted (their refusals are findings here, not failures).
pub struct Settings<'a> {
    pub connection_string: &'a str,
    pub container: &'a str,
    pub blob: &'a str,
    pub options: Result<GuardOptions, Error>,
    pub schedule: Result<Schedule, Error>,
}

/// Judges `settings`; with `reach_storage`, looks at the lock once (nothing is written).
pub fn check_settings<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    settings: Settings,
    count: u32,
    reach_storage: bool,
) -> SettingsCheck {
    let mut problems = Vec::new();
    if let Err(error) = &settings.options {
        problems.push(bad_option(error));
    }
    let (time_zone, next_due) = match &settings.schedule {
        Ok(schedule) => {
            let zone = match schedule {
                Schedule::Cron(cron) => cron.zone().clone(),
                _ => Zone::utc(),
            };
            let now = super::unix_ms(client.runtime().now());
            let due = due_times(schedule, now, count.min(MAX_SHOWN_DUE_TIMES));
            (zone.name().to_string(), due.into_iter().map(|at| ShownTime::new(at, &zone)).collect())
        }
        Err(_) => ("UTC".to_string(), Vec::new()),
    };
    let account = match Account::from_connection_string(settings.connection_string) {
        Ok(account) => Some(account),
        Err(error) => {
            problems.push(BadSetting { field: "connection-string".into(), message: text(&error) });
            None
        }
    };
    for (field, valid) in [
        ("container", validate_container(settings.container)),
        ("blob", validate_blob(settings.blob)),
    ] {
        if let Err(error) = valid {
            problems.push(BadSetting { field: field.into(), message: text(&error) });
        }
    }
    let shown = account.as_ref().map(|account| AccountShown {
        name: account.name.clone(),
        endpoint: format!("{}://{}{}", account.scheme, account.authority, account.base_path),
        credential: match account.credential {
            Credential::SharedKey(_) => "shared-key",
            Credential::Sas(_) => "sas",
            Credential::Bearer(_) => "entra-id",
        },
    });
    let lock = account
        .filter(|_| reach_storage)
        .and_then(|account| Lock::new(account, settings.container, settings.blob).ok());
    let storage = lock.map(|lock| look(client, &lock));
    SettingsCheck { problems, time_zone, next_due, account: shown, storage }
}

/// The next `count` due times after `after_ms`.
pub fn due_times(schedule: &Schedule, after_ms: u64, count: u32) -> Vec<u64> {
    let mut times = Vec::new();
    let mut at = after_ms;
    while times.len() < count as usize {
        match schedule.after(at) {
            Some(due) => {
                times.push(due);
                at = due;
            }
            None => break,
        }
    }
    times
}

fn look<T: Transport, R: Runtime>(client: &mut LeaseClient<T, R>, lock: &Lock) -> StorageAnswer {
    match client.inspect(lock) {
        // A record this build cannot read fails its ticks: the check says so.
        Ok(status) => match RunRecord::readable(&status.metadata) {
            Ok(record) => StorageAnswer::LockExists {
                state: status.state,
                holder: record.holder.clone(),
                last_start_ms: record.started_ms,
            },
            Err(error) => StorageAnswer::Failed(error),
        },
        Err(Error::NotFound(_)) => StorageAnswer::LockMissing,
        Err(error) => StorageAnswer::Failed(error),
    }
}

/// The field an options refusal is about, and what is wrong with it.
pub fn bad_option(error: &Error) -> BadSetting {
    match error {
        Error::BadOption(bad) => {
            BadSetting { field: bad.field.to_string(), message: bad.message.clone() }
        }
        other => BadSetting { field: "options".into(), message: other.to_string() },
    }
}

/// An error's own words, without the kind its `Display` prefixes.
fn text(error: &Error) -> String {
    match error {
        Error::InvalidConfig(message) | Error::InvalidArgument(message) => message.clone(),
        other => other.to_string(),
    }
}

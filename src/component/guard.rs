//! `traffic-cop:lease/guard@1.0.0`: the guard over a job's settings as its deployment spells
//! them (parsed by the core) with a granted run kept in this instance as a `run` resource.
//! Every line of text comes from the core's words (`guard::describe`).

use super::convert::{self, error};
use super::exports::traffic_cop::lease1_0_0::guard::{self as wit, Guest, GuestRun};
use super::exports::traffic_cop::lease1_0_0::lease as wl;
use super::{client, Component};
use crate::error::Error;
use crate::guard::{self as core, Held, RawSettings};
use crate::transport::{Runtime, StdRuntime};
use std::time::Duration;

/// The most due times one `due-times` call lists.
const MAX_DUE_TIMES: u32 = 1000;

thread_local! {
    /// The holder of an instance whose settings name none: one label for all its calls.
    static INSTANCE_HOLDER: String =
        format!("instance-{:06x}", StdRuntime.random_u64() & 0xff_ffff);
}

fn raw(settings: wit::Settings) -> RawSettings {
    let holder = settings.holder.filter(|holder| !holder.trim().is_empty());
    RawSettings {
        connection_string: settings.connection_string,
        container: settings.container,
        lock: settings.lock,
        holder: holder.or_else(|| Some(INSTANCE_HOLDER.with(Clone::clone))),
        lease_seconds: settings.lease_seconds,
        keep_alive_seconds: settings.keep_alive_seconds,
        schedule: settings.schedule,
        time_zone: settings.time_zone,
        cron_dialect: settings.cron_dialect,
        early_tolerance_ms: settings.early_tolerance_ms,
        starting_deadline_seconds: settings.starting_deadline_seconds,
        replace_after_seconds: settings.replace_after_seconds,
        wait_ms: settings.wait_ms,
        max_job_seconds: settings.max_job_seconds,
        refresh_seconds: settings.refresh_seconds,
    }
}

/// A granted run: the caller holds a handle; the lease id, the connection string and the
/// grant's record stay here.
pub(super) struct GrantedRun {
    pub(super) ticket: core::Ticket,
    pub(super) held: Held,
    /// The lease was lost while the job worked (`hold` or `keep-alive` said so): `complete`
    /// then sends nothing, and the next grant reports the run abandoned.
    stopped: std::cell::RefCell<Option<Error>>,
}

impl GrantedRun {
    fn granted(ticket: core::Ticket) -> wit::Run {
        let held = Held::new(&ticket, &StdRuntime);
        wit::Run::new(GrantedRun { ticket, held, stopped: Default::default() })
    }

    /// Keeps a lost lease's error: the run is over whatever the job does next.
    pub(super) fn note(&self, error: &Error) {
        if matches!(error, Error::LeaseLost(_)) {
            self.stopped.borrow_mut().get_or_insert_with(|| error.clone());
        }
    }

    /// The ticket as the blocking calls take it, its lease's end brought up to date; refused
    /// once the run is completed.
    fn open(&self) -> Result<core::Ticket, Error> {
        if self.held.is_closed() {
            return Err(Error::InvalidArgument(
                "the run was completed: its lease is released".into(),
            ));
        }
        Ok(self.held.current(&self.ticket))
    }
}

impl GuestRun for GrantedRun {
    fn details(&self) -> wit::RunDetails {
        let ticket = self.held.current(&self.ticket);
        wit::RunDetails {
            lock: ticket.lock.blob.clone(),
            holder: ticket.options.holder().to_string(),
            fencing_token: ticket.fencing_token,
            started_at_ms: ticket.started_ms,
            deadline_ms: core::unix_ms(ticket.deadline),
            keep_alive_by_ms: core::unix_ms(ticket.keep_alive_by),
            previous_abandoned: ticket.previous_abandoned,
            replaced: ticket.replaced,
            manual_by: ticket.manual_by.clone(),
            past_due: convert::past_due(&ticket.past_due),
        }
    }

    fn text(&self) -> String {
        core::run_line(&self.ticket)
    }

    fn keep_alive(&self) -> Result<u64, wl::Error> {
        let renewed = self
            .open()
            .and_then(|_| core::keep_alive_held(&mut client(), &self.ticket, &self.held));
        if let Err(lost) = &renewed {
            self.note(lost);
        }
        renewed.map(core::unix_ms).map_err(error)
    }

    fn write_fenced(
        &self,
        name: String,
        contents: Vec<u8>,
    ) -> Result<wit::FencedWrite, wit::FencedError> {
        let ticket = self.open().map_err(|e| wit::FencedError::Failed(error(e)))?;
        match core::write_fenced(&mut client(), &ticket, &name, &contents) {
            Ok(written) => Ok(wit::FencedWrite {
                name: written.name,
                fencing_token: written.fencing_token,
                etag: written.etag,
            }),
            Err(core::FencedError::Stale { presented, stored }) => {
                Err(wit::FencedError::StaleFencingToken(wit::StaleFencingToken {
                    presented,
                    stored,
                }))
            }
            Err(core::FencedError::Failed(failure)) => {
                Err(wit::FencedError::Failed(error(failure)))
            }
        }
    }

    fn complete(&self, outcome: wit::Outcome) -> wit::Finished {
        let (outcome, summary) = match outcome {
            wit::Outcome::Success(summary) => (core::Outcome::Success, summary),
            wit::Outcome::Failure(why) => (core::Outcome::Failure(why), String::new()),
        };
        let stopped = self.stopped.borrow().clone();
        let end = match (stopped, self.open()) {
            (Some(lost), _) => {
                self.held.close();
                core::RunEnd::Stopped(lost)
            }
            (None, Err(refused)) => {
                core::RunEnd::Closed { failed: Some(refused), outlived_ms: None }
            }
            (None, Ok(ticket)) => {
                let now = StdRuntime.monotonic();
                let blocked = self.held.stalled(now).is_some();
                // Past the lease's end on this instance's monotonic clock: nothing renewed it
                // while the job ran (a wrapped sync handler), and another run may have started.
                let outlived_ms = now
                    .checked_sub(self.held.lease_ends().instant())
                    .map(|over| over.as_millis() as u64);
                // Closed before anything is sent: `hold` renews nothing more.
                self.held.close();
                let closed = if blocked {
                    core::complete_held(&mut client(), &ticket, &self.held, &outcome)
                } else {
                    core::complete(&mut client(), &ticket, &outcome)
                };
                core::RunEnd::Closed { failed: closed.err(), outlived_ms }
            }
        };
        let failure = match &end {
            core::RunEnd::Stopped(lost) => Some(lost.clone()),
            core::RunEnd::Closed { failed, .. } => failed.clone(),
        };
        let text = core::finished_line(&self.ticket, &outcome, &summary, &end);
        wit::Finished {
            report: core::run_log(&self.ticket, &end, &text),
            text,
            error: failure.map(error),
        }
    }
}

impl Guest for Component {
    type Run = GrantedRun;

    fn guarded_invoke(settings: wit::Settings) -> wit::Decision {
        Self::guarded_tick(settings, None).decision
    }

    fn guarded_tick(settings: wit::Settings, memory: Option<String>) -> wit::Tick {
        let raw = raw(settings);
        let options = raw.options(&StdRuntime);
        let ticked = options.clone().and_then(|options| {
            let (lock, refresh_ms) = (raw.lock()?, raw.refresh_ms()?);
            Ok(core::guarded_tick(&mut client(), &lock, &options, memory.as_deref(), refresh_ms))
        });
        let (decided, memory) = match ticked {
            Ok((decided, memory)) => (decided, memory),
            Err(failure) => (core::Decision::Skip(core::SkipReason::Error(failure)), None),
        };
        let decision = match decided {
            core::Decision::Run(ticket) => wit::Decision::Run(GrantedRun::granted(ticket)),
            core::Decision::Skip(reason) => skip(&raw, reason, options.ok().as_ref()),
        };
        wit::Tick { decision, memory }
    }

    fn memory_key(settings: wit::Settings) -> Result<String, wl::Error> {
        let raw = raw(settings);
        let options = raw.options(&StdRuntime).map_err(error)?;
        Ok(core::memory_key(&raw.lock().map_err(error)?, &options))
    }

    fn claim(
        settings: wit::Settings,
        items: Vec<String>,
        max: u32,
    ) -> Result<wit::Claimed, wl::Error> {
        let raw = raw(settings);
        let options = raw.options(&StdRuntime).map_err(error)?;
        let (account, container) = raw.place().map_err(error)?;
        let claim = core::claim(&mut client(), &account, &container, &items, &options, max)
            .map_err(error)?;
        Ok(wit::Claimed {
            runs: claim.tickets.into_iter().map(GrantedRun::granted).collect(),
            stopped: claim.stopped.map(error),
        })
    }

    fn board(settings: wit::Settings) -> Result<wit::StatusBoard, wl::Error> {
        let (account, container) = raw(settings).place().map_err(error)?;
        let entries = core::board(&mut client(), &account, &container).map_err(error)?;
        Ok(convert::status_board(entries))
    }

    fn read_fenced(
        settings: wit::Settings,
        name: String,
    ) -> Result<Option<wit::FencedData>, wl::Error> {
        let (account, container) = raw(settings).place().map_err(error)?;
        let data = core::read_fenced(&mut client(), &account, &container, &name).map_err(error)?;
        Ok(data.map(|data| wit::FencedData {
            contents: data.contents,
            fencing_token: data.fencing_token,
            etag: data.etag,
        }))
    }

    fn pause(
        settings: wit::Settings,
        by: String,
        reason: String,
        drain_ms: u32,
    ) -> Result<wit::OperatorAnswer, wl::Error> {
        let lock = raw(settings).lock().map_err(error)?;
        let drain = Duration::from_millis(drain_ms.into());
        core::pause(&mut client(), &lock, &by, &reason, drain)
            .map(convert::operator_answer)
            .map_err(error)
    }

    fn resume(settings: wit::Settings, by: String) -> Result<wit::OperatorAnswer, wl::Error> {
        let lock = raw(settings).lock().map_err(error)?;
        core::resume(&mut client(), &lock, &by).map(convert::operator_answer).map_err(error)
    }

    fn run_now(settings: wit::Settings, by: String) -> Result<wit::OperatorAnswer, wl::Error> {
        let lock = raw(settings).lock().map_err(error)?;
        core::run_now(&mut client(), &lock, &by).map(convert::operator_answer).map_err(error)
    }

    fn check_settings(
        settings: wit::Settings,
        count: u32,
        reach_storage: bool,
    ) -> wit::SettingsCheck {
        let raw = raw(settings);
        let text = |field: &Option<String>| {
            field.as_deref().map(str::trim).unwrap_or_default().to_string()
        };
        let (connection_string, container, blob) =
            (text(&raw.connection_string), text(&raw.container), text(&raw.lock));
        let checked = core::Settings {
            connection_string: &connection_string,
            container: &container,
            blob: &blob,
            options: raw.options(&StdRuntime),
            schedule: raw.schedule(),
        };
        convert::settings_check(core::check_settings(&mut client(), checked, count, reach_storage))
    }

    fn due_times(
        settings: wit::Settings,
        after_ms: u64,
        count: u32,
    ) -> Result<Vec<u64>, wl::Error> {
        let schedule = raw(settings).schedule().map_err(error)?;
        Ok(core::due_times(&schedule, after_ms, count.min(MAX_DUE_TIMES)))
    }

    fn show_time(at_ms: u64, time_zone: Option<String>) -> Result<wit::ShownTime, wl::Error> {
        let zone = match time_zone.as_deref().map(str::trim) {
            None | Some("") => crate::zone::Zone::utc(),
            Some(name) => crate::zone::Zone::named(name).map_err(|e| {
                error(Error::BadOption(crate::error::FieldError::new("time_zone", e.to_string())))
            })?,
        };
        Ok(convert::shown_time(core::ShownTime::new(at_ms, &zone)))
    }

    fn error_text(failure: wl::Error) -> String {
        core::error_text(&convert::core_error(failure))
    }
}

/// A skip with its line: the holder the settings name (or, when they cannot be read, the
/// variable's raw value), times on the schedule's wall clock (UTC when unreadable).
fn skip(
    raw: &RawSettings,
    reason: core::SkipReason,
    options: Option<&core::GuardOptions>,
) -> wit::Decision {
    let holder = match options {
        Some(options) => options.holder().to_string(),
        None => raw.holder.clone().unwrap_or_else(|| "this replica".into()),
    };
    let text = core::skip_line(&holder, &reason, options);
    let lock = raw.lock.as_deref().map(str::trim).unwrap_or_default();
    let report = core::skip_log(lock, &holder, &reason, options, &text);
    wit::Decision::Skip(wit::Skipped { reason: convert::skip_reason(reason), text, report })
}

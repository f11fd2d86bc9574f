//! `traffic-cop:lease/guard@0.4.0` (the async component only): 0.3.0's values, a granted run
//! that is a resource kept in this instance, and `hold`, which renews in the background over
//! WASI 0.3. Conversions only: the calls are the one core's, the values 0.3.0's
//! (guard_v3_convert).

use super::exports::traffic_cop::lease0_1_0::lease::Lock;
use super::exports::traffic_cop::lease0_3_0::guard as v3;
use super::exports::traffic_cop::lease0_4_0::guard::{
    Decision, Guest, GuestTicket, RunDetails, Skipped, Ticket,
};
use super::glue::Version;
use super::guard_v3_convert::{self as convert, V3};
use super::{client, shared, Component};
use crate::error::{Error, LeaseLoss, RanOutWhen};
use crate::guard::{self as core, Held};
use crate::transport::{Runtime, StdRuntime};
use crate::wasi_http_async::WasiHttpAsync;

/// A granted run: the caller holds a handle, the lease id, the connection string and the
/// grant's record stay here.
pub(super) struct GrantedRun {
    ticket: core::Ticket,
    held: Held,
}

impl Guest for Component {
    type Ticket = GrantedRun;

    fn guarded_invoke(lock: Lock, options: v3::GuardOptions) -> Decision {
        let options = match V3::options(&options) {
            Ok(options) => options,
            Err(error) => return skip(core::SkipReason::Error(error), None),
        };
        match shared::invoke(&lock, &options) {
            Ok(core::Decision::Run(ticket)) => {
                let held = Held::new(&ticket, &StdRuntime);
                Decision::Run(Ticket::new(GrantedRun { ticket, held }))
            }
            Ok(core::Decision::Skip(reason)) => skip(reason, Some(&options)),
            Err(error) => skip(core::SkipReason::Error(error), Some(&options)),
        }
    }
}

/// A skip with its line of text; options that could not be read show times in UTC.
fn skip(reason: core::SkipReason, options: Option<&core::GuardOptions>) -> Decision {
    let text = core::describe_skip(&reason, options);
    Decision::Skip(Skipped { reason: convert::skip_reason(reason), text })
}

impl GrantedRun {
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

impl GuestTicket for GrantedRun {
    fn details(&self) -> RunDetails {
        let ticket = &self.ticket;
        RunDetails {
            fencing_token: ticket.fencing_token,
            started_at_ms: ticket.started_ms,
            previous_abandoned: ticket.previous_abandoned,
            replaced: ticket.replaced,
            manual_by: ticket.manual_by.clone(),
            past_due: convert::wit_past_due(&ticket.past_due),
        }
    }

    fn describe(&self) -> String {
        core::describe_run(&self.ticket)
    }

    async fn hold(&self) -> Result<(), v3::GuardError> {
        let mut client = client();
        let held = core::hold(&mut client, &mut WasiHttpAsync, &self.ticket, &self.held).await;
        if let Err(Error::LeaseLost(LeaseLoss::RanOut(stop))) = &held {
            if stop.when == RanOutWhen::Blocked {
                // The job is told to stop and its run is left to the next grant to close as
                // abandoned: the lock still learns that this one was blocked.
                core::note_blocked(
                    &mut client,
                    &self.ticket.lock,
                    self.ticket.fencing_token,
                    &stop.message,
                );
            }
        }
        held.map_err(convert::wit_error)
    }

    fn keep_alive(&self) -> Result<u64, v3::GuardError> {
        core::keep_alive_held(&mut client(), &self.ticket, &self.held)
            .map(core::unix_ms)
            .map_err(convert::wit_error)
    }

    fn complete(&self, outcome: v3::Outcome) -> Result<(), v3::GuardError> {
        let ticket = self.open().map_err(convert::wit_error)?;
        let blocked = self.held.stalled(StdRuntime.monotonic()).is_some();
        // Closed before anything is sent: `hold` renews nothing more.
        self.held.close();
        if blocked {
            return core::complete_held(&mut client(), &ticket, &self.held, &V3::outcome(outcome))
                .map_err(convert::wit_error);
        }
        shared::complete(ticket, &V3::outcome(outcome)).map_err(convert::wit_error)
    }

    fn write_fenced(
        &self,
        name: String,
        contents: Vec<u8>,
    ) -> Result<v3::FencedWrite, v3::FencedError> {
        let ticket =
            self.open().map_err(|error| v3::FencedError::Failed(convert::wit_error(error)))?;
        match core::write_fenced(&mut client(), &ticket, &name, &contents) {
            Ok(written) => Ok(v3::FencedWrite {
                name: written.name,
                fencing_token: written.fencing_token,
                etag: written.etag,
            }),
            Err(core::FencedError::Stale { presented, stored }) => {
                Err(v3::FencedError::StaleFencingToken(v3::StaleFencingToken { presented, stored }))
            }
            Err(core::FencedError::Failed(error)) => {
                Err(v3::FencedError::Failed(convert::wit_error(error)))
            }
        }
    }
}

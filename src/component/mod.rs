//! The WIT export glue. Bindings are generated here, once, for the world
//! `traffic-cop:lease/lease-provider@0.2.0`; `lease`, `guard` (0.1.0) and `guard_v2` (0.2.0)
//! implement the three exported interfaces by converting WIT values to the crate's validated
//! types, calling the core over `wasi:http`, and converting back. Nothing here can trap: every
//! input is validated and every failure is a `lease-error`.

/// The four calls whose bodies are the same in every version of the guard interface. Each
/// version's file brings its own WIT types into scope and its own `core_options`, `wit_ticket`,
/// `core_ticket` and `skip_reason` conversions; only the board differs in shape.
macro_rules! guard_calls {
    () => {
        fn guarded_invoke(lock: Lock, options: GuardOptions) -> Decision {
            let decision = lock_ref(&lock).and_then(|core_lock| {
                let options = core_options(&options)?;
                Ok(core::guarded_invoke(&mut client(), &core_lock, &options))
            });
            match decision {
                Ok(core::Decision::Run(ticket)) => Decision::Run(wit_ticket(ticket, lock)),
                Ok(core::Decision::Skip(reason)) => Decision::Skip(skip_reason(reason)),
                Err(error) => Decision::Skip(SkipReason::Error(error.into())),
            }
        }

        fn keep_alive(ticket: Ticket) -> Result<u64, LeaseError> {
            let ticket = core_ticket(&ticket)?;
            Ok(unix_ms(core::keep_alive(&mut client(), &ticket)?))
        }

        fn complete(ticket: Ticket, outcome: Outcome) -> Result<(), LeaseError> {
            let ticket = core_ticket(&ticket)?;
            let outcome = match outcome {
                Outcome::Success => core::Outcome::Success,
                Outcome::Failure(reason) => core::Outcome::Failure(reason),
            };
            Ok(core::complete(&mut client(), &ticket, &outcome)?)
        }

        fn claim(
            location: Location,
            items: Vec<String>,
            options: GuardOptions,
            max: u32,
        ) -> Result<Vec<Ticket>, LeaseError> {
            let account = Account::from_connection_string(&location.connection_string)?;
            let options = core_options(&options)?;
            let tickets =
                core::claim(&mut client(), &account, &location.container, &items, &options, max)?
                    .tickets;
            let lock_of = |ticket: &core::Ticket| Lock {
                connection_string: location.connection_string.clone(),
                container: location.container.clone(),
                blob: ticket.lock.blob.clone(),
            };
            Ok(tickets
                .into_iter()
                .map(|ticket| {
                    let lock = lock_of(&ticket);
                    wit_ticket(ticket, lock)
                })
                .collect())
        }
    };
}

mod guard;
mod guard_v2;
mod identity;
mod lease;

use crate::error::Error;
use crate::transport::StdRuntime;
use crate::wasi_http::WasiHttp;
use crate::LeaseClient;

wit_bindgen::generate!({ world: "traffic-cop:lease/lease-provider@0.2.0", path: "wit" });

use exports::traffic_cop::lease0_1_0::lease::{LeaseError, LeaseState, ServiceError};

struct Component;

export!(Component);

thread_local! {
    /// Bearer tokens outlive one call: the calls of one event (guarded-invoke, then complete)
    /// reach the same instance of this component, which fetches one token for all of them.
    static TOKENS: crate::identity::TokenCache = crate::identity::TokenCache::default();
}

/// A client for one exported call, sharing the instance's bearer tokens.
fn client() -> LeaseClient<WasiHttp, StdRuntime> {
    LeaseClient::new(WasiHttp, StdRuntime).with_token_cache(TOKENS.with(Clone::clone))
}

fn lease_state(state: crate::LeaseState) -> LeaseState {
    match state {
        crate::LeaseState::Available => LeaseState::Available,
        crate::LeaseState::Leased => LeaseState::Leased,
        crate::LeaseState::Expired => LeaseState::Expired,
        crate::LeaseState::Breaking => LeaseState::Breaking,
        crate::LeaseState::Broken => LeaseState::Broken,
    }
}

impl From<Error> for LeaseError {
    fn from(error: Error) -> LeaseError {
        let service = |e: crate::ServiceError| ServiceError {
            status: e.status,
            code: e.code,
            request_id: e.request_id,
            message: e.message,
        };
        match error {
            Error::HeldByOther(e) => LeaseError::HeldByOther(service(e)),
            Error::LeaseLost(e) => LeaseError::LeaseLost(service(e)),
            Error::NotFound(e) => LeaseError::NotFound(service(e)),
            Error::Unauthorized(e) => LeaseError::Unauthorized(service(e)),
            Error::InvalidConfig(m) => LeaseError::InvalidConfig(m),
            Error::InvalidArgument(m) => LeaseError::InvalidArgument(m),
            Error::Throttled(e) => LeaseError::Throttled(service(e)),
            Error::Transport(e) => LeaseError::Transport(e.to_string()),
            Error::Service(e) => LeaseError::Service(service(e)),
        }
    }
}

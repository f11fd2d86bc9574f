//! The one body under every exported guard version. A version is a file of conversions: the
//! functions [`version!`] names, which turn its WIT values into the core's and back, and a
//! `Guest` impl whose calls come here ([`guard_calls!`] writes the ones every version has).
//! What the calls do, and the instance's memory of the runs it granted (`shared`), is written
//! once.

use super::exports::traffic_cop::lease0_1_0::lease::Lock;
use super::{client, shared};
use crate::config::Account;
use crate::error::Error;
use crate::guard::{self as core, unix_ms};

/// One exported version's values and its conversions to and from the core's.
pub(super) trait Version {
    type Options;
    type Ticket;
    type Decision;
    type Outcome;
    /// The error of every call but `guarded-invoke` (which skips instead).
    type Error;
    /// What `claim` answers: the tickets, and in 0.3.0 why the claim stopped early.
    type Claimed;
    /// What `board` answers.
    type Board;

    /// The caller's options, validated as this version defines them.
    fn options(options: &Self::Options) -> Result<core::GuardOptions, Error>;
    /// A granted run; `lock` is the caller's own value, handed back unchanged.
    fn ticket(ticket: core::Ticket, lock: Lock) -> Self::Ticket;
    /// A ticket that came back from outside: every field validated again.
    fn core_ticket(ticket: &Self::Ticket) -> Result<core::Ticket, Error>;
    fn run(ticket: Self::Ticket) -> Self::Decision;
    /// A skip; one this version has no case for says which, as an error skip.
    fn skip(reason: core::SkipReason) -> Self::Decision;
    fn outcome(outcome: Self::Outcome) -> core::Outcome;
    fn error(error: Error) -> Self::Error;
    fn claimed(tickets: Vec<Self::Ticket>, stopped: Option<Error>) -> Self::Claimed;
    fn board(entries: Vec<core::BoardEntry>) -> Self::Board;
}

/// A version's [`Version`] impl, from the conversion functions its file defines by these names:
/// `core_options`, `wit_ticket`, `core_ticket`, `skip_reason`, `wit_error`, `wit_claimed` and
/// `wit_board`, over the value types its bindings name `GuardOptions`, `Ticket`, `Decision`
/// and `Outcome`.
macro_rules! version {
    ($version:ident, $error:ty, $claimed:ty, $board:ty) => {
        impl $crate::component::glue::Version for $version {
            type Options = GuardOptions;
            type Ticket = Ticket;
            type Decision = Decision;
            type Outcome = Outcome;
            type Error = $error;
            type Claimed = $claimed;
            type Board = $board;

            fn options(given: &GuardOptions) -> Result<core::GuardOptions, Error> {
                core_options(given)
            }

            fn ticket(granted: core::Ticket, lock: Lock) -> Ticket {
                wit_ticket(granted, lock)
            }

            fn core_ticket(given: &Ticket) -> Result<core::Ticket, Error> {
                core_ticket(given)
            }

            fn run(granted: Ticket) -> Decision {
                Decision::Run(granted)
            }

            fn skip(reason: core::SkipReason) -> Decision {
                Decision::Skip(skip_reason(reason))
            }

            fn outcome(outcome: Outcome) -> core::Outcome {
                match outcome {
                    Outcome::Success => core::Outcome::Success,
                    Outcome::Failure(reason) => core::Outcome::Failure(reason),
                }
            }

            fn error(failure: Error) -> $error {
                wit_error(failure)
            }

            fn claimed(tickets: Vec<Ticket>, stopped: Option<Error>) -> $claimed {
                wit_claimed(tickets, stopped)
            }

            fn board(entries: Vec<core::BoardEntry>) -> $board {
                wit_board(entries)
            }
        }
    };
}
pub(super) use version;

/// The `Guest` calls every guard version has, onto the one body, inside a version's
/// `impl Guest for Component`.
macro_rules! guard_calls {
    ($version:ident) => {
        fn guarded_invoke(lock: Lock, options: GuardOptions) -> Decision {
            $crate::component::glue::guarded_invoke::<$version>(lock, &options)
        }

        fn keep_alive(ticket: Ticket) -> Result<u64, <$version as Version>::Error> {
            $crate::component::glue::keep_alive::<$version>(&ticket)
        }

        fn complete(ticket: Ticket, outcome: Outcome) -> Result<(), <$version as Version>::Error> {
            $crate::component::glue::complete::<$version>(&ticket, outcome)
        }

        fn claim(
            location: Location,
            items: Vec<String>,
            options: GuardOptions,
            max: u32,
        ) -> Result<<$version as Version>::Claimed, <$version as Version>::Error> {
            let place = (location.connection_string.as_str(), location.container.as_str());
            $crate::component::glue::claim::<$version>(place, &items, &options, max)
        }

        fn board(
            location: Location,
        ) -> Result<<$version as Version>::Board, <$version as Version>::Error> {
            let (connection_string, container) = (&location.connection_string, &location.container);
            $crate::component::glue::board::<$version>(connection_string, container)
        }
    };
}
pub(super) use guard_calls;

/// `write-fenced` and `read-fenced` (guard@0.2.0 and later), inside a version's
/// `impl Guest for Component`, over value types its bindings name alike.
macro_rules! fenced_calls {
    ($version:ident) => {
        fn write_fenced(
            ticket: Ticket,
            name: String,
            contents: Vec<u8>,
        ) -> Result<FencedWrite, FencedError> {
            match $crate::component::glue::write_fenced::<$version>(&ticket, &name, &contents) {
                Ok(written) => Ok(FencedWrite {
                    name: written.name,
                    fencing_token: written.fencing_token,
                    etag: written.etag,
                }),
                Err(core::FencedError::Stale { presented, stored }) => {
                    Err(FencedError::StaleFencingToken(StaleFencingToken { presented, stored }))
                }
                Err(core::FencedError::Failed(error)) => {
                    Err(FencedError::Failed(<$version as Version>::error(error)))
                }
            }
        }

        fn read_fenced(
            location: Location,
            name: String,
        ) -> Result<Option<FencedData>, <$version as Version>::Error> {
            let (connection_string, container) = (&location.connection_string, &location.container);
            let data = $crate::component::glue::read_fenced(connection_string, container, &name)
                .map_err(<$version as Version>::error)?;
            Ok(data.map(|data| FencedData {
                contents: data.contents,
                fencing_token: data.fencing_token,
                etag: data.etag,
            }))
        }
    };
}
pub(super) use fenced_calls;

/// A decision that could not be made is a skip, never a run.
pub(super) fn guarded_invoke<V: Version>(lock: Lock, options: &V::Options) -> V::Decision {
    match V::options(options).and_then(|options| shared::invoke(&lock, &options)) {
        Ok(core::Decision::Run(ticket)) => V::run(V::ticket(ticket, lock)),
        Ok(core::Decision::Skip(reason)) => V::skip(reason),
        Err(error) => V::skip(core::SkipReason::Error(error)),
    }
}

/// The new local deadline (ms since the Unix epoch).
pub(super) fn keep_alive<V: Version>(ticket: &V::Ticket) -> Result<u64, V::Error> {
    let ticket = V::core_ticket(ticket).map_err(V::error)?;
    shared::keep_alive(ticket).map(unix_ms).map_err(V::error)
}

pub(super) fn complete<V: Version>(
    ticket: &V::Ticket,
    outcome: V::Outcome,
) -> Result<(), V::Error> {
    let ticket = V::core_ticket(ticket).map_err(V::error)?;
    shared::complete(ticket, &V::outcome(outcome)).map_err(V::error)
}

/// Tickets for up to `max` due items of `(connection string, container)`.
pub(super) fn claim<V: Version>(
    (connection_string, container): (&str, &str),
    items: &[String],
    options: &V::Options,
    max: u32,
) -> Result<V::Claimed, V::Error> {
    let options = V::options(options).map_err(V::error)?;
    let (claim, locks) =
        shared::claim(connection_string, container, items, &options, max).map_err(V::error)?;
    let tickets = claim.tickets.into_iter().zip(locks).map(|(t, lock)| V::ticket(t, lock));
    Ok(V::claimed(tickets.collect(), claim.stopped))
}

pub(super) fn board<V: Version>(
    connection_string: &str,
    container: &str,
) -> Result<V::Board, V::Error> {
    let entries = shared::board(connection_string, container).map_err(V::error)?;
    Ok(V::board(entries))
}

/// A fenced write under the ticket's run, completed with what this instance knew of its grant.
pub(super) fn write_fenced<V: Version>(
    ticket: &V::Ticket,
    name: &str,
    contents: &[u8],
) -> Result<core::FencedWrite, core::FencedError> {
    let ticket = V::core_ticket(ticket).map_err(core::FencedError::Failed)?;
    core::write_fenced(&mut client(), &shared::recall(ticket), name, contents)
}

pub(super) fn read_fenced(
    connection_string: &str,
    container: &str,
    name: &str,
) -> Result<Option<core::FencedData>, Error> {
    let account = Account::from_connection_string(connection_string)?;
    core::read_fenced(&mut client(), &account, container, name)
}

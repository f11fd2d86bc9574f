//! What every guard version's glue shares: the calls into the core that take WIT locks and
//! locations.

use super::client;
use super::exports::traffic_cop::lease0_1_0::lease::{LeaseError, Lock};
use super::lease::lock_ref;
use crate::config::Account;
use crate::error::Error;
use crate::guard::{self as core, GuardOptions};
use crate::transport::{Deadline, StdRuntime};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

/// A core error as versions before 0.3.0 report it.
pub(super) fn lease_error(error: Error) -> LeaseError {
    error.into()
}

/// A claim's tickets, for versions with no room for why it stopped early.
pub(super) fn tickets_only<T>(tickets: Vec<T>, _stopped: Option<Error>) -> Vec<T> {
    tickets
}

pub(super) fn at(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

pub(super) fn invoke(lock: &Lock, options: &GuardOptions) -> Result<core::Decision, Error> {
    let decision = core::guarded_invoke(&mut client(), &lock_ref(lock)?, options);
    if let core::Decision::Run(ticket) = &decision {
        remember(ticket);
    }
    Ok(decision)
}

/// The core's claim, and for each ticket the WIT lock it names (the caller's connection
/// string and container, the item's blob).
pub(super) fn claim(
    connection_string: &str,
    container: &str,
    items: &[String],
    options: &GuardOptions,
    max: u32,
) -> Result<(core::Claim, Vec<Lock>), Error> {
    let account = Account::from_connection_string(connection_string)?;
    let claim = core::claim(&mut client(), &account, container, items, options, max)?;
    claim.tickets.iter().for_each(remember);
    let locks = claim
        .tickets
        .iter()
        .map(|ticket| Lock {
            connection_string: connection_string.to_string(),
            container: container.to_string(),
            blob: ticket.lock.blob.clone(),
        })
        .collect();
    Ok((claim, locks))
}

pub(super) fn board(
    connection_string: &str,
    container: &str,
) -> Result<Vec<core::BoardEntry>, Error> {
    let account = Account::from_connection_string(connection_string)?;
    core::board(&mut client(), &account, container)
}

/// How many granted runs an instance remembers (a claim grants up to its `max` at once).
const REMEMBERED: usize = 64;

thread_local! {
    /// The runs this instance granted. The calls of one event (guarded-invoke, then keep-alive
    /// and complete) reach the same instance, so a ticket that comes back as a WIT value finds
    /// what the value has no room for: the grant's record and ETag (complete then closes the
    /// run without reading it again, one round trip fewer) and the lease's end on this
    /// instance's monotonic clock (which a wall-clock step cannot move).
    static GRANTED: RefCell<VecDeque<core::Ticket>> = const { RefCell::new(VecDeque::new()) };
}

/// Keeps a granted ticket for [`recall`].
fn remember(ticket: &core::Ticket) {
    GRANTED.with_borrow_mut(|granted| {
        if granted.len() == REMEMBERED {
            granted.pop_front();
        }
        granted.push_back(ticket.clone());
    });
}

/// Completes a ticket that came back from outside with what this instance knew of its grant:
/// only a ticket for the same lock, lease id, token and start, so a forged or stale value
/// gains nothing it did not carry.
pub(super) fn recall(mut ticket: core::Ticket) -> core::Ticket {
    GRANTED.with_borrow(|granted| {
        if let Some(known) = granted.iter().rev().find(|known| same_run(known, &ticket)) {
            ticket.grant = ticket.grant.take().or_else(|| known.grant.clone());
            ticket.lease_deadline = ticket.lease_deadline.or(known.lease_deadline);
        }
    });
    ticket
}

/// A keep-alive succeeded: the lease now ends one period after `sent` (when it was sent).
fn renewed(ticket: &core::Ticket, sent: Deadline) {
    GRANTED.with_borrow_mut(|granted| {
        for known in granted.iter_mut().filter(|known| same_run(known, ticket)) {
            known.lease_deadline = Some(sent);
        }
    });
}

fn same_run(a: &core::Ticket, b: &core::Ticket) -> bool {
    a.lock == b.lock
        && a.lease_id == b.lease_id
        && a.fencing_token == b.fencing_token
        && a.started_ms == b.started_ms
}

/// `keep_alive` for a ticket from any version, with what this instance knew of its grant.
pub(super) fn keep_alive(ticket: core::Ticket) -> Result<SystemTime, Error> {
    let ticket = recall(ticket);
    let sent = Deadline::after(&StdRuntime, ticket.options.lease_period());
    let renewed_until = core::keep_alive(&mut client(), &ticket)?;
    renewed(&ticket, sent);
    Ok(renewed_until)
}

/// `complete` for a ticket from any version, with what this instance knew of its grant.
pub(super) fn complete(ticket: core::Ticket, outcome: &core::Outcome) -> Result<(), Error> {
    core::complete(&mut client(), &recall(ticket), outcome)
}

//! `traffic-cop:lease/guard`: guarded invoke, keep-alive, complete, claim and the board.

use super::lease::lock_ref;
use super::{client, lease_state, Component};
use crate::config::Account;
use crate::error::Error;
use crate::guard::{self as core, unix_ms};
use crate::ops::LeaseId;
use std::time::{Duration, SystemTime};

use super::exports::traffic_cop::lease0_1_0::guard::{
    AlreadyRan, BoardEntry, Decision, GuardOptions, Guest, HeldByOther, Location, Outcome,
    SkipReason, Ticket,
};
use super::exports::traffic_cop::lease0_1_0::lease::{LeaseError, Lock};

impl Guest for Component {
    guard_calls!();

    fn board(location: Location) -> Result<Vec<BoardEntry>, LeaseError> {
        let account = Account::from_connection_string(&location.connection_string)?;
        let entries = core::board(&mut client(), &account, &location.container)?;
        Ok(entries
            .into_iter()
            .map(|entry| BoardEntry {
                name: entry.name,
                state: lease_state(entry.state),
                holder: entry.record.holder,
                fencing_token: entry.record.fence,
                last_start_ms: entry.record.started_ms,
                last_stop_ms: entry.record.stopped_ms,
                running: entry.record.running,
                last_outcome: entry.record.outcome,
            })
            .collect())
    }
}

fn core_options(options: &GuardOptions) -> Result<core::GuardOptions, Error> {
    core::GuardOptions::new(
        &options.holder,
        options.lease_seconds,
        options.interval_seconds,
        options.keep_alive_seconds,
    )
}

fn wit_options(options: &core::GuardOptions) -> GuardOptions {
    GuardOptions {
        holder: options.holder.clone(),
        lease_seconds: options.lease_seconds,
        interval_seconds: options.interval_seconds,
        keep_alive_seconds: Some(options.keep_alive_seconds),
    }
}

/// `lock` is the caller's own record, handed back unchanged so the ticket names the lock
/// exactly as the caller did.
fn wit_ticket(ticket: core::Ticket, lock: Lock) -> Ticket {
    Ticket {
        lock,
        lease_id: ticket.lease_id.to_string(),
        fencing_token: ticket.fencing_token,
        interval: ticket.interval,
        started_at_ms: ticket.started_ms,
        deadline_ms: unix_ms(ticket.deadline),
        keep_alive_by_ms: unix_ms(ticket.keep_alive_by),
        previous_abandoned: ticket.previous_abandoned,
        options: wit_options(&ticket.options),
    }
}

/// A ticket comes back from outside: every field is validated again.
fn core_ticket(ticket: &Ticket) -> Result<core::Ticket, Error> {
    let at = |ms: u64| SystemTime::UNIX_EPOCH + Duration::from_millis(ms);
    Ok(core::Ticket {
        lock: lock_ref(&ticket.lock)?,
        lease_id: LeaseId::parse(&ticket.lease_id)?,
        fencing_token: ticket.fencing_token,
        interval: ticket.interval,
        started_ms: ticket.started_at_ms,
        deadline: at(ticket.deadline_ms),
        keep_alive_by: at(ticket.keep_alive_by_ms),
        lease_deadline: None,
        previous_abandoned: ticket.previous_abandoned,
        // Not carried by a 0.1.0 ticket, and nothing after the grant reads it.
        past_due: Default::default(),
        options: core_options(&ticket.options)?,
    })
}

fn skip_reason(reason: core::SkipReason) -> SkipReason {
    match reason {
        core::SkipReason::HeldByOther { holder, since_ms } => {
            SkipReason::HeldByOther(HeldByOther { holder, since_ms })
        }
        core::SkipReason::AlreadyRan { started_ms, holder, running, outcome } => {
            SkipReason::AlreadyRan(AlreadyRan {
                started_at_ms: started_ms,
                holder,
                running,
                outcome,
            })
        }
        // 0.1.0 options have no starting deadline, so this cannot happen; were it to, the
        // caller must still not run.
        core::SkipReason::TooLate { .. } => SkipReason::Error(LeaseError::InvalidArgument(
            "too late after the due time (a 0.2.0 starting deadline)".into(),
        )),
        core::SkipReason::Error(error) => SkipReason::Error(error.into()),
    }
}

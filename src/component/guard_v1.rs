//! `traffic-cop:lease/guard@0.1.0`: grids from the Unix epoch, the due index on the ticket. A
//! thin conversion onto the one core.

use super::exports::traffic_cop::lease0_1_0::guard::{
    AlreadyRan, BoardEntry, Decision, GuardOptions, Guest, HeldByOther, Location, Outcome,
    SkipReason, Ticket,
};
use super::exports::traffic_cop::lease0_1_0::lease::{LeaseError, Lock};
use super::glue::{self, Version};
use super::lease::{lock_ref, unspeakable};
// Versions before 0.3.0 report a core error as a lease error, and have no room for why a claim
// stopped early (the tickets granted before it go ahead).
use super::shared::{at, lease_error as wit_error, tickets_only as wit_claimed};
use super::{lease_state, Component};
use crate::error::Error;
use crate::guard::{self as core, unix_ms};
use crate::ops::LeaseId;

/// guard@0.1.0's values.
pub(super) struct V1;

glue::version!(V1, LeaseError, Vec<Ticket>, Vec<BoardEntry>);

impl Guest for Component {
    glue::guard_calls!(V1);
}

fn wit_board(entries: Vec<core::BoardEntry>) -> Vec<BoardEntry> {
    let entry = |entry: core::BoardEntry| BoardEntry {
        name: entry.name,
        state: lease_state(entry.state),
        holder: entry.record.holder,
        fencing_token: entry.record.fence,
        last_start_ms: entry.record.started_ms,
        last_stop_ms: entry.record.stopped_ms,
        running: entry.record.running,
        last_outcome: entry.record.outcome.as_ref().map(core::Outcome::as_record_text),
    };
    entries.into_iter().map(entry).collect()
}

fn core_options(options: &GuardOptions) -> Result<core::GuardOptions, Error> {
    core::GuardOptions::every_interval(
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
        interval_seconds: options.every().0,
        keep_alive_seconds: Some(options.keep_alive_seconds),
    }
}

/// `lock` is the caller's own record, handed back unchanged so the ticket names the lock
/// exactly as the caller did.
fn wit_ticket(ticket: core::Ticket, lock: Lock) -> Ticket {
    let interval_ms = ticket.options.every().0 * 1000;
    Ticket {
        lock,
        lease_id: ticket.lease_id.to_string(),
        fencing_token: ticket.fencing_token,
        // The due index, as 0.1.0 numbers due times: k of `k * interval` (0 without one).
        interval: ticket.past_due.due_at_ms.checked_div(interval_ms).unwrap_or(0),
        started_at_ms: ticket.started_ms,
        deadline_ms: unix_ms(ticket.deadline),
        keep_alive_by_ms: unix_ms(ticket.keep_alive_by),
        previous_abandoned: ticket.previous_abandoned,
        options: wit_options(&ticket.options),
    }
}

/// A ticket comes back from outside: every field is validated again.
fn core_ticket(ticket: &Ticket) -> Result<core::Ticket, Error> {
    Ok(core::Ticket {
        lock: lock_ref(&ticket.lock)?,
        lease_id: LeaseId::parse(&ticket.lease_id)?,
        fencing_token: ticket.fencing_token,
        started_ms: ticket.started_at_ms,
        deadline: at(ticket.deadline_ms),
        keep_alive_by: at(ticket.keep_alive_by_ms),
        lease_deadline: None,
        previous_abandoned: ticket.previous_abandoned,
        replaced: None,
        manual_by: None,
        // Not carried by a 0.1.0 ticket, and nothing after the grant reads it.
        past_due: Default::default(),
        options: core_options(&ticket.options)?,
        grant: None,
    })
}

fn skip_reason(reason: core::SkipReason) -> SkipReason {
    match reason {
        core::SkipReason::HeldByOther { holder, since_ms, .. } => {
            SkipReason::HeldByOther(HeldByOther { holder, since_ms })
        }
        core::SkipReason::AlreadyRan { started_ms, holder, running, outcome, .. } => {
            SkipReason::AlreadyRan(AlreadyRan {
                started_at_ms: started_ms,
                holder,
                running,
                outcome: outcome.as_ref().map(core::Outcome::as_record_text),
            })
        }
        core::SkipReason::Error(error) => SkipReason::Error(error.into()),
        other => SkipReason::Error(unspeakable(&other)),
    }
}

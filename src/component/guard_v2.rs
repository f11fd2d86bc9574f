//! `traffic-cop:lease/guard@0.2.0`: the same core as 0.1.0, in the 0.2.0 shapes: a grid
//! schedule with a phase and an optional starting deadline, the past-due signal on every ticket,
//! the `too-late` skip, and the next due time on the board; and the fenced writes, new in 0.2.0.

use super::glue::{self, Version};
use super::lease::{lock_ref, unspeakable};
// Versions before 0.3.0 report a core error as a lease error, and have no room for why a claim
// stopped early (the tickets granted before it go ahead).
use super::shared::{at, lease_error as wit_error, tickets_only as wit_claimed};
use super::{lease_state, Component};
use crate::error::Error;
use crate::guard::{self as core, unix_ms};
use crate::ops::LeaseId;
use crate::schedule::Schedule;

use super::exports::traffic_cop::lease0_1_0::lease::{LeaseError, Lock};
use super::exports::traffic_cop::lease0_2_0::guard::{
    AlreadyRan, BoardEntry, Decision, FencedData, FencedError, FencedWrite, GuardOptions, Guest,
    HeldByOther, Location, Outcome, PastDue, SkipReason, StaleFencingToken, Ticket, TooLate,
};

/// guard@0.2.0's values.
pub(super) struct V2;

glue::version!(V2, LeaseError, Vec<Ticket>, Vec<BoardEntry>);

impl Guest for Component {
    glue::guard_calls!(V2);

    glue::fenced_calls!(V2);
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
        interval_seconds: grid(&entry.schedule).map(|(every, _)| every),
        offset_seconds: grid(&entry.schedule).map(|(_, phase)| phase),
        next_due_ms: entry.next_due_ms,
        overdue: entry.overdue,
    };
    entries.into_iter().map(entry).collect()
}

fn core_options(options: &GuardOptions) -> Result<core::GuardOptions, Error> {
    core::GuardOptions::every_interval(
        &options.holder,
        options.lease_seconds,
        options.interval_seconds,
        options.keep_alive_seconds,
    )?
    .with_phase_and_deadline(options.offset_seconds, options.starting_deadline_seconds)
}

/// A grid schedule's (interval, offset): all 0.2.0 can show.
fn grid(schedule: &Option<Schedule>) -> Option<(u64, u64)> {
    match schedule {
        Some(Schedule::Every(every)) => Some((every.interval_seconds(), every.offset_seconds())),
        _ => None,
    }
}

fn wit_options(options: &core::GuardOptions) -> GuardOptions {
    GuardOptions {
        holder: options.holder.clone(),
        lease_seconds: options.lease_seconds,
        interval_seconds: options.every().0,
        offset_seconds: options.every().1,
        starting_deadline_seconds: options.starting_deadline_seconds,
        keep_alive_seconds: Some(options.keep_alive_seconds),
    }
}

/// `lock` is the caller's own record, handed back unchanged.
fn wit_ticket(ticket: core::Ticket, lock: Lock) -> Ticket {
    let past_due = &ticket.past_due;
    Ticket {
        lock,
        lease_id: ticket.lease_id.to_string(),
        fencing_token: ticket.fencing_token,
        started_at_ms: ticket.started_ms,
        deadline_ms: unix_ms(ticket.deadline),
        keep_alive_by_ms: unix_ms(ticket.keep_alive_by),
        previous_abandoned: ticket.previous_abandoned,
        past_due: PastDue {
            due_at_ms: past_due.due_at_ms,
            late_by_ms: past_due.late_by_ms,
            previous_start_ms: past_due.previous_start_ms,
            missed: past_due.missed,
        },
        options: wit_options(&ticket.options),
    }
}

/// A ticket comes back from outside: every field is validated again.
fn core_ticket(ticket: &Ticket) -> Result<core::Ticket, Error> {
    let options = core_options(&ticket.options)?;
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
        past_due: core::PastDue {
            due_at_ms: ticket.past_due.due_at_ms,
            late_by_ms: ticket.past_due.late_by_ms,
            previous_due_ms: None,
            previous_start_ms: ticket.past_due.previous_start_ms,
            missed: ticket.past_due.missed,
        },
        options,
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
        core::SkipReason::TooLate { due_at_ms, late_by_ms, next_due_ms } => {
            SkipReason::TooLate(TooLate { due_at_ms, late_by_ms, next_due_ms })
        }
        core::SkipReason::Error(error) => SkipReason::Error(error.into()),
        other => SkipReason::Error(unspeakable(&other)),
    }
}

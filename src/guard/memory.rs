//! What a replica learned at its last look at a lock, kept by the caller between ticks (the
//! wrappers keep it in the host's key-value store) so that a tick that cannot be due costs no request. Pure:
//! [`recall`] says whether a tick may skip without asking, [`learned`] what a look taught.
//!
//! The memory only ever turns a look into a skip, and only a look can grant a run, so nothing
//! about mutual exclusion or fencing depends on it: a wrong memory can only delay a look, and
//! never past `refresh` after the look it claims to come from.
//!
//! What it remembers, and when a tick still asks:
//! - the next due time the look knew of (service clock) and the most the service's clock can be
//!   ahead of this host's, measured at the look (its `Date` plus the second it truncates, less
//!   this host's clock when the look was sent): a tick asks once, by that, the service's clock
//!   may have reached the due time's early tolerance, less 1 ms for each second since the look
//!   (a host clock drifting by up to 0.1 %), so the first tick at or after a due time asks;
//! - a pause: a resume is seen at the next due time or after `refresh`, whichever comes first;
//! - when it looked, by this host's clock: a tick `refresh` or more after it asks, and so does
//!   one before it (a clock stepped back, or a memory from elsewhere).
//!
//! A look remembers nothing when the next tick must ask anyway: the lock held by a run of
//! another due time (its holder may have crashed) or changing hands, a run-now pending or a
//! manual run just granted, another schedule in the lock's list (a
//! deploy or a schedule change: until the first run under the new schedule, replicas must keep
//! ticking to be seen), an error, or no schedule.

use super::{Decision, GuardOptions, SkipReason};
use crate::config::Lock;
use sha2::{Digest, Sha256};

/// `refresh_seconds` when unset: a run-now or a resume is seen within ten minutes.
pub const DEFAULT_REFRESH_SECONDS: u64 = 600;
/// The longest `refresh_seconds`: an operator waits at most an hour for a resume to be seen.
pub const MAX_REFRESH_SECONDS: u64 = 3600;

/// The format written; a memory of another format is ignored (the tick asks).
const FORMAT: u32 = 1;

/// What one look taught, as kept between ticks: one line of six fields, opaque to the caller
/// (a JSON reader would add tens of KiB to the component for a line only it reads).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Memory {
    v: u32,
    /// Whose: [`subject`] of the lock and options it was learned with.
    of: String,
    /// This host's clock at the look (ms since the Unix epoch).
    looked_at_ms: u64,
    /// The most the service's clock can be ahead of this host's, as the look measured it (ms).
    offset_ms: i64,
    /// The next due time the look knew of (service clock).
    next_due_ms: Option<u64>,
    paused: bool,
}

impl Memory {
    fn text(&self) -> String {
        let next = self.next_due_ms.map_or("-".to_string(), |next| next.to_string());
        let (v, of, looked, offset) = (self.v, &self.of, self.looked_at_ms, self.offset_ms);
        format!("{v} {of} {looked} {offset} {next} {}", u8::from(self.paused))
    }

    fn read(text: &str) -> Option<Memory> {
        let fields: Vec<&str> = text.split(' ').collect();
        let [v, of, looked, offset, next, paused] = fields[..] else { return None };
        Some(Memory {
            v: v.parse().ok()?,
            of: of.to_string(),
            looked_at_ms: looked.parse().ok()?,
            offset_ms: offset.parse().ok()?,
            next_due_ms: match next {
                "-" => None,
                next => Some(next.parse().ok()?),
            },
            paused: match paused {
                "0" => false,
                "1" => true,
                _ => return None,
            },
        })
    }
}

/// What a tick that skips without asking says of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remembered {
    /// When this replica last looked at the lock (this host's clock, ms since the Unix epoch).
    pub looked_at_ms: u64,
    /// The next due time that look knew of (service clock).
    pub next_due_ms: Option<u64>,
    pub paused: bool,
    /// From when a tick asks storage again (this host's clock).
    pub asks_from_ms: u64,
}

/// What a look at the lock showed besides the decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Looked {
    /// The service's clock at the look (its `Date`), ms since the Unix epoch.
    pub service_ms: u64,
    /// This host's clock when the look was sent, and when its answer arrived.
    pub sent_ms: u64,
    pub local_ms: u64,
    /// The lock's list holds a schedule besides this replica's.
    pub other_schedules: bool,
    /// The due time of the scheduled run that holds the lock, if one does.
    pub running_for_ms: Option<u64>,
}

/// The key a caller keeps a lock's memory under: one per account, container, lock, schedule,
/// zone and early tolerance, so a memory learned under other settings is never found.
pub fn key(lock: &Lock, options: &GuardOptions) -> String {
    format!("traffic-cop/memory/{}", subject(lock, options))
}

/// A digest of what a memory is about (not a secret: the account's name, never its key).
fn subject(lock: &Lock, options: &GuardOptions) -> String {
    let about = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        lock.account.authority,
        lock.account.name,
        lock.container,
        lock.blob,
        options.schedule.recorded(),
        options.early_ms
    );
    let digest = Sha256::digest(about.as_bytes());
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a tick at `now_ms` (this host's clock) may skip without asking, from `kept` (what
/// the last look left, as [`learned`] wrote it). Anything unreadable, of other settings, from
/// the future or older than `refresh_ms` asks.
pub fn recall(
    kept: Option<&str>,
    lock: &Lock,
    options: &GuardOptions,
    now_ms: u64,
    refresh_ms: u64,
) -> Option<Remembered> {
    let memory = Memory::read(kept?)?;
    if memory.v != FORMAT || memory.of != subject(lock, options) || now_ms < memory.looked_at_ms {
        return None;
    }
    let refresh_at = memory.looked_at_ms.saturating_add(refresh_ms);
    // The next due time on this host's clock at the earliest, less the early tolerance and a
    // drift of 1 ms a second since the look.
    let drift = now_ms.saturating_sub(memory.looked_at_ms) / 1000;
    let due_ask = memory.next_due_ms.map(|next_due| {
        let local_due = i128::from(next_due) - i128::from(memory.offset_ms);
        let ask = local_due - i128::from(options.early_ms + drift);
        u64::try_from(ask.max(0)).unwrap_or(u64::MAX)
    });
    let asks_from = match due_ask {
        Some(ask) => refresh_at.min(ask),
        None if memory.paused => refresh_at,
        None => return None,
    };
    (now_ms < asks_from).then_some(Remembered {
        looked_at_ms: memory.looked_at_ms,
        next_due_ms: memory.next_due_ms,
        paused: memory.paused,
        asks_from_ms: asks_from,
    })
}

/// What to keep after a look that ended in `decision`, as text for the caller to store; none
/// when the next tick must ask.
pub fn learned(
    decision: &Decision,
    looked: &Looked,
    lock: &Lock,
    options: &GuardOptions,
) -> Option<String> {
    let schedule = &options.schedule;
    if !schedule.is_scheduled() {
        return None;
    }
    let remember = |next_due_ms: Option<u64>, paused: bool| Memory {
        v: FORMAT,
        of: subject(lock, options),
        looked_at_ms: looked.local_ms,
        // The most the service's clock can be ahead of this host's: its `Date` has whole
        // seconds, and it was stamped at most the look's round trip before the answer came.
        offset_ms: (looked.service_ms + 1000) as i64 - looked.sent_ms as i64,
        next_due_ms,
        paused,
    };
    let memory = match decision {
        // Asked again at the next due time too: a resume then runs it without waiting out the
        // refresh period.
        Decision::Skip(SkipReason::Paused(_)) => remember(schedule.after(looked.service_ms), true),
        _ if looked.other_schedules => return None,
        // The grant is recorded: every later look sees this due time taken, so until the next
        // one there is nothing to ask. A manual run leaves the due time it came in owed.
        Decision::Run(ticket) if ticket.manual_by.is_none() => {
            let due = ticket.past_due.due_at_ms.max(looked.service_ms);
            remember(Some(schedule.after(due)?), false)
        }
        // The run holding the lock is this due time's: whether it ends well or is abandoned,
        // this due time has had its run.
        Decision::Skip(SkipReason::HeldByOther { due_at_ms: Some(due), .. })
            if looked.running_for_ms == Some(*due) =>
        {
            remember(Some(schedule.after((*due).max(looked.service_ms))?), false)
        }
        Decision::Skip(SkipReason::NotDue { next_due_ms: Some(next) })
        | Decision::Skip(SkipReason::AlreadyRan { next_due_ms: Some(next), .. }) => {
            remember(Some(*next), false)
        }
        Decision::Skip(SkipReason::TooLate { next_due_ms, .. }) if *next_due_ms != u64::MAX => {
            remember(Some(*next_due_ms), false)
        }
        _ => return None,
    };
    Some(memory.text())
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;

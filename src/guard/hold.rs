//! `hold`: a granted run's lease renewed in the background while its work runs (`hold@0.5.0`),
//! until the run is completed, the caller gives the call up (drops it), or the lease can no
//! longer be trusted. Then the work must stop.
//!
//! What it promises, with `lease` the run's lease period (the anchor is client-go's leader
//! election, whose renew deadline is shorter than its lease duration):
//! - It renews every keep-alive period (a third of the lease unless set), counted from when the
//!   last renewal that succeeded was sent. After a renewal that failed (its retries spent), it
//!   tries again every [`HoldPlan::retry_every`].
//! - **It stops a margin before the lease could expire.** The lease is counted from when the
//!   last successful renewal was *sent*, so it ends no earlier on the service. If renewals keep
//!   failing, `hold` returns `LeaseLost(RanOut { when: WhileHolding })` once only
//!   [`HoldPlan::margin`] (a third of the lease) is left, and nothing is sent after that
//!   moment: each attempt's time limits end by it. Azure renews an expired lease nobody took
//!   (and Azurite renews under any id), so a renewal sent later could quietly revive a lease
//!   another replica was entitled to.
//! - When the service says the lease is gone (409 `LeaseIdMismatchWithLeaseOperation`,
//!   `LeaseNotPresentWithLeaseOperation` and the other lease codes, or 404), it returns that at
//!   once as `LeaseLost(Service)`.
//! - A job that blocks its instance (a blocking call, a loop that never yields) starves the
//!   renewals: the margin holds only while the job awaits. When the instance runs again only
//!   past the stop line, after a renewal was due, the run is **blocked**: `hold` (or, when the
//!   work ended first, `complete_held`) says so with the lease's timeline, the run counts as a
//!   failure, and the lock's totals count it (see `blocked`).
//!
//! Every stop says the lease's timeline in wall-clock time: the request that last renewed it
//! (or granted it), when it could expire, when the job was told to stop, and whether that came
//! before or after.

use super::Ticket;
use crate::client::LeaseClient;
use crate::error::{Error, LeaseLoss, RanOut, RanOutWhen};
use crate::ops::Renew;
use crate::transport::{AsyncTransport, Deadline, Runtime, Transport};
use std::cell::Cell;
use std::time::{Duration, SystemTime};

/// What the calls on one granted run share on this instance (the `run` resource):
/// when its lease ends by the last renewal heard, whether the run was closed, whether `hold`
/// is running.
#[derive(Debug)]
pub struct Held {
    lease_ends: Cell<Deadline>,
    closed: Cell<bool>,
    holding: Cell<bool>,
    renewals: Cell<u32>,
    plan: HoldPlan,
    /// While `hold` waits: when it means to run again (monotonic).
    waking_at: Cell<Option<Duration>>,
    /// When a renewal was due and when the instance ran again, past the stop line (monotonic).
    stall: Cell<Option<(Duration, Duration)>>,
}

impl Held {
    pub fn new(ticket: &Ticket, runtime: &dyn Runtime) -> Held {
        Held {
            lease_ends: Cell::new(super::keep_alive::lease_ends(ticket, runtime)),
            closed: Cell::new(false),
            holding: Cell::new(false),
            renewals: Cell::new(0),
            plan: HoldPlan::of(&ticket.options),
            waking_at: Cell::new(None),
            stall: Cell::new(None),
        }
    }

    /// When `hold` stops and says the lease is lost: its margin before the lease could expire.
    fn stop_line(&self) -> Duration {
        self.lease_ends().instant().saturating_sub(self.plan.margin)
    }

    /// Whether the instance could not run when a renewal was due, as of `now` (monotonic):
    /// `hold` meant to run before its stop line, and the instance ran again only at or past it.
    /// The span from when it was due to when the instance ran again, once found.
    pub fn stalled(&self, now: Duration) -> Option<(Duration, Duration)> {
        if let Some(stall) = self.stall.get() {
            return Some(stall);
        }
        let due = self.waking_at.get()?;
        let stop = self.stop_line();
        (due < stop && now >= stop).then(|| {
            self.stall.set(Some((due, now)));
            (due, now)
        })
    }

    /// The lease's timeline as of `now` (monotonic), in wall-clock time, for a run that stops
    /// now: the request that last renewed (or granted) it, when it could expire, when the job
    /// was told to stop, and, when the instance stalled, from when to when it did not run.
    pub fn timeline(&self, runtime: &dyn Runtime, now: Duration) -> String {
        let (wall_now, mono_now) = (runtime.now(), runtime.monotonic());
        let wall = |at: Duration| {
            let shown = match at.checked_sub(mono_now) {
                Some(ahead) => wall_now + ahead,
                None => wall_now.checked_sub(mono_now - at).unwrap_or(wall_now),
            };
            // To the millisecond: these times are compared with the storage service's logs.
            let ms = super::unix_ms(shown);
            let whole = crate::civil::iso8601(ms, 0);
            format!("{}.{:03}Z", whole.trim_end_matches('Z'), ms % 1000)
        };
        let lease = self.plan.lease;
        let renewed = self.renewed_at(lease);
        let expires = self.lease_ends().instant();
        let by = if self.renewals() == 0 { "granted" } else { "last renewed" };
        let relative = if now < expires {
            format!(
                "{} before it could expire",
                super::duration((expires - now).as_millis() as u64)
            )
        } else {
            format!("{} after it could expire", super::duration((now - expires).as_millis() as u64))
        };
        let lease_line = format!(
            "the lease ({} s) was {by} by a request sent at {}, so it could expire at {}; the job \
             was told to stop at {}, {relative}",
            lease.as_secs(),
            wall(renewed),
            wall(expires),
            wall(now)
        );
        match self.stall.get() {
            Some((due, ran)) => format!(
                "this instance did not run from {} (a renewal was due) to {} ({}): a blocking \
                 call in the job, or a host that froze it, kept it from renewing; {lease_line}",
                wall(due),
                wall(ran),
                super::duration(ran.saturating_sub(due).as_millis() as u64)
            ),
            None => lease_line,
        }
    }

    /// When the lease ends by the last renewal heard (counted from when it was sent), on this
    /// instance's monotonic clock.
    pub fn lease_ends(&self) -> Deadline {
        self.lease_ends.get()
    }

    /// Renewals that succeeded, by `hold` or `keep_alive_held`.
    pub fn renewals(&self) -> u32 {
        self.renewals.get()
    }

    /// Marks the run closed: `hold` sends nothing more and returns.
    pub fn close(&self) {
        self.closed.set(true);
    }

    pub fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// The ticket, its lease's end brought up to the last renewal: what `complete` and fenced
    /// writes budget their calls by.
    pub fn current(&self, ticket: &Ticket) -> Ticket {
        Ticket { lease_deadline: Some(self.lease_ends()), ..ticket.clone() }
    }

    fn renewed(&self, sent_at: Duration, lease: Duration) {
        self.lease_ends.set(Deadline::at(sent_at + lease));
        self.renewals.set(self.renewals.get() + 1);
    }

    fn renewed_at(&self, lease: Duration) -> Duration {
        self.lease_ends().instant().saturating_sub(lease)
    }

    fn start_holding(&self) -> Option<Holding<'_>> {
        (!self.holding.replace(true)).then_some(Holding(&self.holding))
    }
}

/// Marks `hold` as running until it returns or is dropped.
struct Holding<'a>(&'a Cell<bool>);

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// `keep_alive` for a held run (one renewal, blocking), which `hold` then counts from.
pub fn keep_alive_held<T: Transport, R: Runtime>(
    client: &mut LeaseClient<T, R>,
    ticket: &Ticket,
    held: &Held,
) -> Result<SystemTime, Error> {
    if held.is_closed() {
        return Err(Error::InvalidArgument("the run was completed: its lease is released".into()));
    }
    let (sent_at, sent_at_wall) = (client.runtime().monotonic(), client.runtime().now());
    let renew = Renew { lease_id: ticket.lease_id.clone() };
    client.execute_by(&ticket.lock, &renew, Some(held.lease_ends()))?;
    let lease = ticket.options.lease_period();
    held.renewed(sent_at, lease);
    Ok(sent_at_wall + lease)
}

/// When `hold` renews and when it gives up, from a run's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HoldPlan {
    /// The lease period.
    pub lease: Duration,
    /// Between a successful renewal and the next: the keep-alive period.
    pub every: Duration,
    /// Between a failed renewal and the next try.
    pub retry_every: Duration,
    /// How long before the lease could expire `hold` stops and says it is lost.
    pub margin: Duration,
}

impl HoldPlan {
    pub fn of(options: &super::GuardOptions) -> HoldPlan {
        let lease = options.lease_period();
        // The options keep keep-alive at half the lease or less, so at least one renewal
        // falls before the stop line at two thirds.
        let every = Duration::from_secs(u64::from(options.keep_alive_seconds()));
        HoldPlan {
            lease,
            every,
            retry_every: (lease / 15).max(Duration::from_secs(1)),
            margin: lease / 3,
        }
    }
}

/// Renews `ticket`'s lease until `held` is closed (`Ok`) or the lease is lost (`Err`), sending
/// and waiting through `link` so the work beside it goes on.
pub async fn hold<T: Transport, R: Runtime, A: AsyncTransport>(
    client: &mut LeaseClient<T, R>,
    link: &mut A,
    ticket: &Ticket,
    held: &Held,
) -> Result<(), Error> {
    let Some(_holding) = held.start_holding() else {
        return Err(Error::InvalidArgument(
            "`hold` is already running on this ticket: one call renews it".into(),
        ));
    };
    let plan = held.plan;
    let renew = Renew { lease_id: ticket.lease_id.clone() };
    let mut next = held.renewed_at(plan.lease) + plan.every;
    let mut failures: Vec<Error> = Vec::new();
    loop {
        if held.is_closed() {
            return Ok(());
        }
        let stop = held.stop_line();
        let now = client.runtime().monotonic();
        if held.stalled(now).is_some() {
            return Err(blocked(held, client.runtime(), now));
        }
        if now >= stop {
            return Err(ran_out(held, client.runtime(), now, &failures));
        }
        let wake = next.min(stop);
        if now < wake {
            held.waking_at.set(Some(wake));
            link.sleep(wake - now).await;
            let woke = client.runtime().monotonic();
            held.stalled(woke);
            held.waking_at.set(None);
            continue;
        }
        let sent_at = client.runtime().monotonic();
        let answer =
            client.execute_by_async(link, &ticket.lock, &renew, Some(Deadline::at(stop))).await;
        if held.is_closed() {
            return Ok(());
        }
        match answer {
            Ok(_) => {
                held.renewed(sent_at, plan.lease);
                next = sent_at + plan.every;
                failures.clear();
            }
            Err(Error::LeaseLost(LeaseLoss::Service(said)) | Error::NotFound(said)) => {
                return Err(Error::LeaseLost(LeaseLoss::Service(said)));
            }
            // The stop line passed during the call's retries.
            Err(Error::LeaseLost(LeaseLoss::RanOut(_))) => {
                let now = client.runtime().monotonic();
                return Err(ran_out(held, client.runtime(), now, &failures));
            }
            Err(other) => {
                failures.push(other);
                next = client.runtime().monotonic() + plan.retry_every;
            }
        }
    }
}

fn ran_out(held: &Held, runtime: &dyn Runtime, now: Duration, failures: &[Error]) -> Error {
    let last = match failures.last() {
        Some(error) => format!("{} renewals failed, the last: {error}", failures.len()),
        // The renewal's time came and went while the instance ran, but nothing was sent: the
        // call's own time limits ended first.
        None => "no renewal could be sent in time".to_string(),
    };
    let message = format!(
        "the lease could not be renewed ({last}); {}; nothing was sent after: treat the lease \
         as lost and stop the work",
        held.timeline(runtime, now)
    );
    Error::LeaseLost(LeaseLoss::RanOut(RanOut { when: RanOutWhen::WhileHolding, message }))
}

/// The stop of a run whose instance could not run when a renewal was due.
pub(crate) fn blocked(held: &Held, runtime: &dyn Runtime, now: Duration) -> Error {
    let message = format!(
        "renewals blocked: {}; treat the lease as lost (another replica may have run the job \
         meanwhile)",
        held.timeline(runtime, now)
    );
    Error::LeaseLost(LeaseLoss::RanOut(RanOut { when: RanOutWhen::Blocked, message }))
}

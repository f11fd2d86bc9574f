//! `hold`: a granted run's lease renewed in the background while its work runs (guard@0.4.0),
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
//! - A work loop that never yields starves the renewals of its instance: the margin holds
//!   only while the job awaits.

use super::Ticket;
use crate::client::LeaseClient;
use crate::error::{Error, LeaseLoss, RanOut, RanOutWhen};
use crate::ops::Renew;
use crate::transport::{AsyncTransport, Deadline, Runtime, Transport};
use std::cell::Cell;
use std::time::{Duration, SystemTime};

/// What the calls on one granted run share on this instance (guard@0.4.0's ticket resource):
/// when its lease ends by the last renewal heard, whether the run was closed, whether `hold`
/// is running.
#[derive(Debug)]
pub struct Held {
    lease_ends: Cell<Deadline>,
    closed: Cell<bool>,
    holding: Cell<bool>,
    renewals: Cell<u32>,
}

impl Held {
    pub fn new(ticket: &Ticket, runtime: &dyn Runtime) -> Held {
        Held {
            lease_ends: Cell::new(super::keep_alive::lease_ends(ticket, runtime)),
            closed: Cell::new(false),
            holding: Cell::new(false),
            renewals: Cell::new(0),
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
    let plan = HoldPlan::of(&ticket.options);
    let renew = Renew { lease_id: ticket.lease_id.clone() };
    let mut next = held.renewed_at(plan.lease) + plan.every;
    let mut failures: Vec<Error> = Vec::new();
    loop {
        if held.is_closed() {
            return Ok(());
        }
        let stop = held.lease_ends().instant().saturating_sub(plan.margin);
        let now = client.runtime().monotonic();
        if now >= stop {
            return Err(ran_out(&plan, &failures));
        }
        let wake = next.min(stop);
        if now < wake {
            link.sleep(wake - now).await;
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
            Err(Error::LeaseLost(LeaseLoss::RanOut(_))) => return Err(ran_out(&plan, &failures)),
            Err(other) => {
                failures.push(other);
                next = client.runtime().monotonic() + plan.retry_every;
            }
        }
    }
}

fn ran_out(plan: &HoldPlan, failures: &[Error]) -> Error {
    let last = match failures.last() {
        Some(error) => format!("{} failed, the last: {error}", failures.len()),
        // The renewal's time came and went without this instance running: frozen, starved
        // by a job that does not yield, or suspended.
        None => "no renewal could be sent in time: this instance did not run".to_string(),
    };
    let message = format!(
        "the lease could not be renewed ({last}); stopped {} s before it could expire, with \
         nothing sent after: treat the lease as lost and stop the work",
        plan.margin.as_secs_f64()
    );
    Error::LeaseLost(LeaseLoss::RanOut(RanOut { when: RanOutWhen::WhileHolding, message }))
}

//! What a claim is working with: the items it was asked for, and the tickets it holds so far.

use super::{Claim, Ticket};
use crate::client::LeaseClient;
use crate::config::{Account, Lock};
use crate::error::{Error, LeaseLoss, RanOut, RanOutWhen};
use crate::transport::{Runtime, Transport};
use std::time::Duration;

/// The tickets granted so far, up to `max`.
pub(super) struct Claimed {
    pub(super) tickets: Vec<Ticket>,
    pub(super) max: usize,
}

impl Claimed {
    /// `max` tickets are held, or the oldest has less than its keep-alive period left on its
    /// lease: granting more would have its work start only after the first ones' leases ran
    /// down (seen at 10,000 items on a slow service).
    pub(super) fn full(&self, runtime: &dyn Runtime) -> bool {
        self.tickets.len() >= self.max
            || self.tickets.first().is_some_and(|oldest| {
                let keep_alive = Duration::from_secs(oldest.options.keep_alive_seconds.into());
                let left = oldest.lease_deadline.and_then(|d| d.left(runtime));
                left.is_none_or(|left| left < keep_alive)
            })
    }

    /// Drops the tickets whose lease ran out while later items were granted (a stall in the
    /// middle of a claim): their runs would start without a lease. Each lease gets one release
    /// attempt (it may live a moment longer on the service); the error names their due times
    /// as used up, since their records say they were granted.
    pub(super) fn drop_ran_down<T: Transport, R: Runtime>(
        &mut self,
        client: &mut LeaseClient<T, R>,
    ) -> Option<Error> {
        let mut named = Vec::new();
        // Releasing takes time too (a stalled release can run another lease down): again until
        // none runs down.
        loop {
            let (alive, ran_down): (Vec<Ticket>, Vec<Ticket>) = std::mem::take(&mut self.tickets)
                .into_iter()
                .partition(|t| t.lease_deadline.is_none_or(|d| d.left(client.runtime()).is_some()));
            self.tickets = alive;
            if ran_down.is_empty() {
                break;
            }
            for ticket in &ran_down {
                client.release_unheard(&ticket.lock, &ticket.lease_id, None);
                named
                    .push(format!("{} (fencing token {})", ticket.lock.blob, ticket.fencing_token));
            }
        }
        if named.is_empty() {
            return None;
        }
        let message = format!(
            "the leases of {} ran out while the claim went on; those runs were not handed out, \
             and their due times are used up (they show as abandoned)",
            named.join(", ")
        );
        Some(Error::LeaseLost(LeaseLoss::RanOut(RanOut { when: RanOutWhen::DuringClaim, message })))
    }

    /// Tickets already granted stand (their work should go ahead); the error only when none were.
    pub(super) fn failed(self, error: Error) -> Result<Claim, Error> {
        if self.tickets.is_empty() {
            Err(error)
        } else {
            Ok(Claim { tickets: self.tickets, stopped: Some(error) })
        }
    }
}

/// The items asked for: their locks (all validated before any request), their indices sorted
/// by name for lookup, and which of them the listing showed.
pub(super) struct Wanted {
    pub(super) locks: Vec<Lock>,
    by_name: Vec<usize>,
    listed: Vec<bool>,
}

impl Wanted {
    pub(super) fn new(
        account: &Account,
        container: &str,
        items: &[String],
    ) -> Result<Wanted, Error> {
        let locks: Vec<Lock> = items
            .iter()
            .map(|item| Lock::new(account.clone(), container, item))
            .collect::<Result<_, _>>()?;
        let mut by_name: Vec<usize> = (0..locks.len()).collect();
        by_name.sort_by(|a, b| locks[*a].blob.cmp(&locks[*b].blob));
        // An item named twice is claimed once.
        by_name.dedup_by(|a, b| locks[*a].blob == locks[*b].blob);
        let listed = vec![false; locks.len()];
        Ok(Wanted { locks, by_name, listed })
    }

    /// The index of the item named `name`, if it was asked for; remembers that it was listed.
    pub(super) fn mark_listed(&mut self, name: &str) -> Option<usize> {
        let found = self.by_name.binary_search_by(|i| self.locks[*i].blob.as_str().cmp(name));
        let index = self.by_name[found.ok()?];
        self.listed[index] = true;
        Some(index)
    }

    pub(super) fn unlisted(&self) -> impl Iterator<Item = usize> + '_ {
        self.by_name.iter().copied().filter(|i| !self.listed[*i])
    }
}

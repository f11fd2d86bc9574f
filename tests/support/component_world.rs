//! The behaviour suite's [`World`] over the built component in wasmtime against a real Azurite,
//! on real time. Shared by tests/wasmtime/guard_azurite (Shared Key, counted at a proxy) and
//! tests/wasmtime/entra (bearer tokens, counted by the host's outbound hooks): only how the
//! world is made and how its storage round trips are counted differ.

use crate::scenarios::{Failure, Row, Seen, World};
use std::collections::HashMap;
use std::time::{Duration, SystemTime};
use traffic_cop_wasm_host::component::{
    fresh, Decision, GuardOptions, Instance, LeaseError, LeaseState, Location, Lock, Outcome,
    SkipReason, Ticket,
};

pub struct ComponentWorld {
    pub location: Location,
    /// Storage round trips so far (whatever keeps the counter alive lives in the closure).
    pub storage_requests: Box<dyn Fn() -> u64 + Send>,
    /// The instance that granted each run still held (by lease id): one event's calls reach one
    /// instance, as on Spin, where the request that was granted also keeps alive and completes.
    pub granted_on: HashMap<String, Instance>,
}

impl ComponentWorld {
    pub fn over(location: Location, storage_requests: Box<dyn Fn() -> u64 + Send>) -> Self {
        ComponentWorld { location, storage_requests, granted_on: HashMap::new() }
    }

    /// The instance that granted `ticket` (a fresh one for a ticket this world did not grant).
    fn instance_of(&mut self, ticket: &Ticket) -> &mut Instance {
        self.granted_on.entry(ticket.lease_id.clone()).or_insert_with(fresh)
    }

    pub fn lock(&self, name: &str) -> Lock {
        Lock {
            connection_string: self.location.connection_string.clone(),
            container: self.location.container.clone(),
            blob: name.into(),
        }
    }
}

pub fn options(holder: &str, interval_seconds: u64) -> GuardOptions {
    GuardOptions {
        holder: holder.into(),
        lease_seconds: 15,
        interval_seconds,
        keep_alive_seconds: None,
    }
}

fn failure(error: LeaseError) -> Failure {
    match error {
        LeaseError::LeaseLost(_) => Failure::Lost,
        other => Failure::Other(format!("{other:?}")),
    }
}

fn seen(decision: Decision) -> Seen<Ticket> {
    match decision {
        Decision::Run(ticket) => {
            Seen::Run { token: ticket.fencing_token, abandoned: ticket.previous_abandoned, ticket }
        }
        Decision::Skip(SkipReason::HeldByOther(h)) => Seen::Held { holder: h.holder },
        Decision::Skip(SkipReason::AlreadyRan(r)) => {
            Seen::AlreadyRan { holder: r.holder, running: r.running, outcome: r.outcome }
        }
        Decision::Skip(SkipReason::Error(e)) => Seen::Error(format!("{e:?}")),
    }
}

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Sleeps until `offset_ms` past the next multiple of `interval_ms` (Azurite runs on this
/// machine's clock, so this is the service's interval boundary too).
pub fn sleep_to_boundary(interval_ms: u64, offset_ms: u64) {
    let now = now_ms();
    std::thread::sleep(Duration::from_millis(interval_ms - now % interval_ms + offset_ms));
}

impl World for ComponentWorld {
    type Ticket = Ticket;

    fn interval_seconds(&self) -> u64 {
        4
    }

    fn invoke_every(&mut self, lock: &str, holder: &str, interval_seconds: u64) -> Seen<Ticket> {
        let mut instance = fresh();
        let decision =
            instance.guarded_invoke(&self.lock(lock), &options(holder, interval_seconds));
        if let Decision::Run(ticket) = &decision {
            self.granted_on.insert(ticket.lease_id.clone(), instance);
        }
        seen(decision)
    }

    fn keep_alive(&mut self, ticket: &Ticket) -> Result<(), Failure> {
        self.instance_of(ticket).keep_alive(ticket).map(drop).map_err(failure)
    }

    fn complete(&mut self, ticket: &Ticket, success: bool) -> Result<(), Failure> {
        let outcome = if success { Outcome::Success } else { Outcome::Failure("scripted".into()) };
        let mut instance = self.granted_on.remove(&ticket.lease_id).unwrap_or_else(fresh);
        instance.complete(ticket, &outcome).map_err(failure)
    }

    fn claim(
        &mut self,
        items: &[String],
        holder: &str,
        max: u32,
    ) -> Result<Vec<(Ticket, String, u64)>, Failure> {
        let tickets = fresh()
            .claim(&self.location, items, &options(holder, self.interval_seconds()), max)
            .map_err(failure)?;
        Ok(tickets.into_iter().map(|t| (t.clone(), t.lock.blob.clone(), t.fencing_token)).collect())
    }

    fn board(&mut self) -> Vec<Row> {
        fresh()
            .board(&self.location)
            .unwrap()
            .into_iter()
            .map(|e| Row {
                name: e.name,
                state: match e.state {
                    LeaseState::Available => "available",
                    LeaseState::Leased => "leased",
                    LeaseState::Expired => "expired",
                    LeaseState::Breaking => "breaking",
                    LeaseState::Broken => "broken",
                }
                .to_string(),
                holder: e.holder,
                token: e.fencing_token,
                running: e.running,
                outcome: e.last_outcome,
            })
            .collect()
    }

    fn advance(&mut self, by: Duration) {
        std::thread::sleep(by);
    }

    fn align(&mut self) {
        sleep_to_boundary(self.interval_seconds() * 1000, 100);
    }

    fn requests(&self) -> u64 {
        (self.storage_requests)()
    }
}

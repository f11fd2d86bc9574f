//! The guard's behaviour suite (tests/support/scenarios.rs, as tests/guard_azurite.rs runs it)
//! with bearer authorization: client-secret tokens from the fake IdP, fetched by every fresh
//! instance, against OAuth Azurite. `requests()` counts storage round trips only, so the
//! suite's "one round trip per follower" holds the storage side to the same bar as SharedKey;
//! the token requests each step adds are counted in sources.rs.

use super::env::{Env, Source};
use crate::scenarios::{Failure, Row, Seen, World};
use std::time::{Duration, SystemTime};
use traffic_cop_host::component::{
    fresh, Decision, GuardOptions, LeaseError, LeaseState, Location, Lock, Outcome, SkipReason,
    Ticket,
};

pub struct Bearer {
    env: Env,
    location: Location,
}

impl Bearer {
    pub fn new() -> Bearer {
        let env = Env::new();
        let connection_string = env.connection_string(Source::ClientSecret);
        let location = Location { connection_string, container: env.container.clone() };
        Bearer { env, location }
    }

    fn lock(&self, name: &str) -> Lock {
        Lock {
            connection_string: self.location.connection_string.clone(),
            container: self.location.container.clone(),
            blob: name.into(),
        }
    }
}

fn options(holder: &str, interval_seconds: u64) -> GuardOptions {
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

impl World for Bearer {
    type Ticket = Ticket;

    fn interval_seconds(&self) -> u64 {
        4
    }

    fn invoke_every(&mut self, lock: &str, holder: &str, interval_seconds: u64) -> Seen<Ticket> {
        seen(fresh().guarded_invoke(&self.lock(lock), &options(holder, interval_seconds)))
    }

    fn keep_alive(&mut self, ticket: &Ticket) -> Result<(), Failure> {
        fresh().keep_alive(ticket).map(drop).map_err(failure)
    }

    fn complete(&mut self, ticket: &Ticket, success: bool) -> Result<(), Failure> {
        let outcome = if success { Outcome::Success } else { Outcome::Failure("scripted".into()) };
        fresh().complete(ticket, &outcome).map_err(failure)
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
        let state = |s: LeaseState| match s {
            LeaseState::Available => "available",
            LeaseState::Leased => "leased",
            LeaseState::Expired => "expired",
            LeaseState::Breaking => "breaking",
            LeaseState::Broken => "broken",
        };
        fresh()
            .board(&self.location)
            .unwrap()
            .into_iter()
            .map(|e| Row {
                name: e.name,
                state: state(e.state).to_string(),
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
        // Azurite runs on this machine's clock: its interval boundaries are ours.
        let interval_ms = self.interval_seconds() * 1000;
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis();
        std::thread::sleep(Duration::from_millis(interval_ms - now as u64 % interval_ms + 100));
    }

    fn requests(&self) -> u64 {
        self.env.storage_trips() as u64
    }
}

//! The behaviour suite's [`World`] over the built component in wasmtime against a real Azurite,
//! on real time. Shared by tests/wasmtime/guard_azurite (Shared Key, counted at a proxy) and
//! tests/wasmtime/entra (bearer tokens, counted by the host's outbound hooks): only how the
//! world is made and how its storage round trips are counted differ.

use crate::scenarios::{Failure, Row, Seen, World};
use std::time::{Duration, SystemTime};
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome, SkipReason};
use traffic_cop_wasm_host::component::{fresh, Instance, ResourceAny};

/// Where a world's locks live: a connection string and a container.
#[derive(Clone)]
pub struct Location {
    pub connection_string: String,
    pub container: String,
}

impl Location {
    /// The settings of `holder` on `lock`: a 15 s lease, due every `interval_seconds` (0: no
    /// schedule, any tick runs once the lease is free), and no early tolerance: a scenario's
    /// steps after [`World::align`] share one due time for the whole interval.
    pub fn settings(&self, lock: &str, holder: &str, interval_seconds: u64) -> v1::Settings {
        v1::Settings {
            lease_seconds: Some("15".into()),
            schedule: (interval_seconds > 0).then(|| format!("@every {interval_seconds}s")),
            early_tolerance_ms: Some("0".into()),
            ..v1::settings(&self.connection_string, &self.container, lock, holder)
        }
    }

    /// The settings of `claim` and `board`: no lock of their own.
    pub fn container_settings(&self, holder: &str, interval_seconds: u64) -> v1::Settings {
        v1::Settings { lock: None, ..self.settings("", holder, interval_seconds) }
    }
}

pub struct ComponentWorld {
    pub location: Location,
    /// Storage round trips so far (whatever keeps the counter alive lives in the closure).
    pub storage_requests: Box<dyn Fn() -> u64 + Send>,
    /// Every instance that granted a run: a run is a resource of the instance that granted it,
    /// and its calls go there, as on Spin, where the event that was granted also keeps alive
    /// and completes.
    pub granted_on: Vec<Instance>,
}

/// A run this world was granted: its instance (an index into `granted_on`) and its handle.
#[derive(Clone, Copy, Debug)]
pub struct Granted {
    instance: usize,
    run: ResourceAny,
}

impl ComponentWorld {
    pub fn over(location: Location, storage_requests: Box<dyn Fn() -> u64 + Send>) -> Self {
        ComponentWorld { location, storage_requests, granted_on: Vec::new() }
    }

    fn settings(&self, lock: &str, holder: &str, interval_seconds: u64) -> v1::Settings {
        self.location.settings(lock, holder, interval_seconds)
    }

    fn keep(&mut self, instance: Instance) -> usize {
        self.granted_on.push(instance);
        self.granted_on.len() - 1
    }
}

fn failure(error: v1::Error) -> Failure {
    match error {
        v1::Error::LeaseLost(_) | v1::Error::LeaseRanOut(_) => Failure::Lost,
        other => Failure::Other(format!("{other:?}")),
    }
}

fn seen(instance: &mut Instance, at: usize, decision: Decision) -> Seen<Granted> {
    match decision {
        Decision::Run(run) => {
            let details = instance.run_details(run);
            let (token, abandoned) = (details.fencing_token, details.previous_abandoned);
            Seen::Run { ticket: Granted { instance: at, run }, token, abandoned }
        }
        Decision::Skip(skipped) => match skipped.reason {
            SkipReason::HeldByOther(h) => Seen::Held { holder: h.holder },
            SkipReason::AlreadyRan(r) => {
                Seen::AlreadyRan { holder: r.holder, running: r.running, outcome: r.outcome }
            }
            other => Seen::Error(format!("{other:?}: {}", skipped.text)),
        },
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
    type Ticket = Granted;

    /// Long enough for a claim of six items and their completes on a loaded machine (a
    /// claim of four takes about 25 round trips), short of the 15 s lease.
    fn interval_seconds(&self) -> u64 {
        8
    }

    fn invoke_every(&mut self, lock: &str, holder: &str, interval_seconds: u64) -> Seen<Granted> {
        let settings = self.settings(lock, holder, interval_seconds);
        let at = self.keep(fresh());
        let instance = &mut self.granted_on[at];
        let decision = instance.guarded_invoke(&settings);
        seen(instance, at, decision)
    }

    fn keep_alive(&mut self, ticket: &Granted) -> Result<(), Failure> {
        self.granted_on[ticket.instance].run_keep_alive(ticket.run).map(drop).map_err(failure)
    }

    fn complete(&mut self, ticket: &Granted, success: bool) -> Result<(), Failure> {
        let said = "scripted".to_string();
        let outcome = if success { Outcome::Success(said) } else { Outcome::Failure(said) };
        let finished = self.granted_on[ticket.instance].run_complete(ticket.run, &outcome);
        finished.error.map_or(Ok(()), |error| Err(failure(error)))
    }

    fn claim(
        &mut self,
        items: &[String],
        holder: &str,
        max: u32,
    ) -> Result<Vec<(Granted, String, u64)>, Failure> {
        let settings = self.location.container_settings(holder, self.interval_seconds());
        let at = self.keep(fresh());
        let instance = &mut self.granted_on[at];
        let claimed = instance.claim(&settings, items, max).map_err(failure)?;
        Ok(claimed
            .runs
            .into_iter()
            .map(|run| {
                let details = instance.run_details(run);
                (Granted { instance: at, run }, details.lock, details.fencing_token)
            })
            .collect())
    }

    fn board(&mut self) -> Vec<Row> {
        let settings = self.location.container_settings("board", 0);
        fresh()
            .board(&settings)
            .unwrap()
            .locks
            .into_iter()
            .map(|e| Row {
                name: e.name,
                state: match e.state {
                    v1::lease::LeaseState::Available => "available",
                    v1::lease::LeaseState::Leased => "leased",
                    v1::lease::LeaseState::Expired => "expired",
                    v1::lease::LeaseState::Breaking => "breaking",
                    v1::lease::LeaseState::Broken => "broken",
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

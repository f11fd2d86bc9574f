//! The world one sweep case runs in (fake service, virtual clock, the faulty transport), and
//! the locks it sets up: what both families of calls (`calls`, `calls_v3`) stand on.

use super::faulty::Faulty;
use crate::support::fake_service::FakeService;
use crate::support::{epoch, VirtualRuntime, EMULATOR};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, SystemTime};
use traffic_cop::ops::SetMetadata;
use traffic_cop::{Account, LeaseClient, LeaseId, Lock};

pub const CONTAINER: &str = "sweep";
/// Keys a newer build wrote, which must survive every write.
pub const NEWER: (&str, &str) = ("tc_newer_build", "kept");

/// The world one case runs in.
pub struct Stage {
    pub clock: Rc<Cell<SystemTime>>,
    pub service: FakeService,
    pub faulty: Faulty,
    seed: Cell<u64>,
}

impl Stage {
    pub fn new() -> Stage {
        let clock = Rc::new(Cell::new(epoch() + Duration::from_secs(5)));
        let service = FakeService::new(clock.clone());
        let faulty = Faulty::new(service.clone(), clock.clone());
        Stage { clock, service, faulty, seed: Cell::new(1) }
    }

    pub fn runtime(&self) -> VirtualRuntime {
        self.seed.set(self.seed.get() + 1);
        VirtualRuntime::on_clock(self.clock.clone(), self.seed.get() * 0x9E37_79B9)
    }

    pub fn client(&self) -> LeaseClient<FakeService, VirtualRuntime> {
        LeaseClient::new(self.service.clone(), self.runtime())
    }

    pub fn faulty_client(&self) -> LeaseClient<Faulty, VirtualRuntime> {
        LeaseClient::new(self.faulty.clone(), self.runtime())
    }

    pub fn advance(&self, by: Duration) {
        self.clock.set(self.clock.get() + by);
    }
}

pub fn lock(name: &str) -> Lock {
    Lock::parse(EMULATOR, CONTAINER, name).unwrap()
}

pub fn account() -> Account {
    Account::from_connection_string(EMULATOR).unwrap()
}

/// Adds the newer build's key to a lock's record.
pub fn seed_newer(stage: &Stage, name: &str) {
    let lock = lock(name);
    let mut metadata = stage.client().inspect(&lock).unwrap().metadata;
    metadata.push((NEWER.0.into(), NEWER.1.into()));
    let held = stage.service.held(CONTAINER, name).map(|h| LeaseId::parse(&h.id).unwrap());
    stage.client().execute(&lock, &SetMetadata::new(metadata, held, None).unwrap()).unwrap();
}

//! One fake service on one virtual clock, and fresh clients for it: each call of a serverless
//! replica gets a new client (a new component instance), with randomness of its own.

use super::fake_service::FakeService;
use super::VirtualRuntime;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, SystemTime};
use traffic_cop::transport::Transport;
use traffic_cop::LeaseClient;

pub struct FakeWorld {
    pub clock: Rc<Cell<SystemTime>>,
    pub service: FakeService,
    seed: Cell<u64>,
}

impl FakeWorld {
    pub fn new() -> FakeWorld {
        let clock = Rc::new(Cell::new(super::epoch()));
        FakeWorld { service: FakeService::new(clock.clone()), clock, seed: Cell::new(7) }
    }

    /// Another world's service and clock: a second replica's view of the same storage.
    pub fn on(service: FakeService, clock: Rc<Cell<SystemTime>>) -> FakeWorld {
        FakeWorld { service, clock, seed: Cell::new(11) }
    }

    pub fn runtime(&self) -> VirtualRuntime {
        self.seed.set(self.seed.get() + 1);
        VirtualRuntime::on_clock(self.clock.clone(), self.seed.get() * 0x9E37_79B9)
    }

    pub fn client(&self) -> LeaseClient<FakeService, VirtualRuntime> {
        self.client_over(self.service.clone())
    }

    /// A client whose requests go through `transport` (a hooked view of the same service).
    pub fn client_over<T: Transport>(&self, transport: T) -> LeaseClient<T, VirtualRuntime> {
        LeaseClient::new(transport, self.runtime())
    }
}

pub fn advance(clock: &Rc<Cell<SystemTime>>, by: Duration) {
    clock.set(clock.get() + by);
}

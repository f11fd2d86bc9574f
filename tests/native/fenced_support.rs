//! What the fenced-write tests share: a lock, runs granted on it, and the data blob as stored.
#![allow(dead_code)]

use crate::support::fake_world::{advance, FakeWorld};
use crate::support::EMULATOR;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;
use traffic_cop::guard::{self, Decision, GuardOptions, Ticket, FENCING_TOKEN_METADATA};
use traffic_cop::transport::Request;
use traffic_cop::Lock;

pub const CONTAINER: &str = "fenced";
pub const RESULT: &str = "results/daily.json";

pub fn lock() -> Lock {
    Lock::parse(EMULATOR, CONTAINER, "daily").unwrap()
}

/// A run of the lock: no schedule, so a takeover needs nothing but the lease's expiry.
pub fn run(world: &FakeWorld, holder: &str) -> Ticket {
    let options = GuardOptions::every_interval(holder, 15, 0, None).unwrap();
    match guard::guarded_invoke(&mut world.client(), &lock(), &options) {
        Decision::Run(ticket) => ticket,
        other => panic!("expected a run for {holder}, got {other:?}"),
    }
}

/// The run after `previous` paused past its lease: another replica took over.
pub fn takeover(world: &FakeWorld, previous: &Ticket, holder: &str) -> Ticket {
    advance(&world.clock, Duration::from_secs(20));
    let next = run(world, holder);
    assert!(next.fencing_token > previous.fencing_token);
    next
}

/// The data blob's body and kept token, as the service stores them.
pub fn stored(world: &FakeWorld) -> Option<(Vec<u8>, Option<String>)> {
    world.service.peek(CONTAINER, RESULT, FENCING_TOKEN_METADATA)
}

/// Every request a hooked client sent, for looking at its headers afterwards.
pub type Sent = Rc<RefCell<Vec<Request>>>;

pub fn header(request: &Request, name: &str) -> Option<String> {
    request.headers().get(name).map(|v| v.to_str().unwrap().to_string())
}

/// `HEAD`, `PUT if-match`, `PUT if-none-match`, `GET`: what each request was.
pub fn shape(request: &Request) -> String {
    let condition = if header(request, "if-match").is_some() {
        " if-match"
    } else if header(request, "if-none-match").is_some() {
        " if-none-match"
    } else {
        ""
    };
    format!("{}{condition}", request.method())
}

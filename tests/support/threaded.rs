//! Contenders on threads whose requests all go to one scheduler thread: the transport hands a
//! request over and waits for the scheduler's answer, and time is one virtual clock they share.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop::transport::{Request, Response, Runtime, Timeouts, Transport, TransportError};

pub type Answer = Result<Response, TransportError>;

/// Sends each request to the scheduler as `wrap(request, reply)` and waits for the reply.
pub struct Channel<M> {
    pub to_scheduler: Sender<M>,
    pub wrap: fn(Request, Sender<Answer>) -> M,
}

impl<M> Transport for Channel<M> {
    fn send(&mut self, request: Request, _: Timeouts) -> Answer {
        let (reply, answer) = channel();
        self.to_scheduler.send((self.wrap)(request, reply)).unwrap();
        answer.recv().unwrap()
    }
}

/// Virtual time shared by all threads (ms since the epoch); sleeping moves it. Randomness is a
/// seeded xorshift per contender, so a schedule replays from its seed.
pub struct Clock(pub Arc<AtomicU64>, pub Cell<u64>);

impl Runtime for Clock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.0.load(Ordering::SeqCst))
    }
    fn monotonic(&self) -> Duration {
        Duration::from_millis(self.0.load(Ordering::SeqCst))
    }
    fn sleep(&self, duration: Duration) {
        self.0.fetch_add(duration.as_millis() as u64, Ordering::SeqCst);
    }
    fn random_u64(&self) -> u64 {
        self.1.set(xorshift(&mut self.1.get()));
        self.1.get()
    }
}

/// A tiny deterministic generator (seed must not be 0).
pub fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

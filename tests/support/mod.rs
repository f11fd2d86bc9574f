//! Test doubles: a scripted transport that fails on any request it was not told to expect, and
//! a virtual clock. Shared by the native test files.
#![allow(dead_code)]

pub mod fake_service;
pub mod fake_world;
pub mod hooked;
pub mod scripted;
pub mod threaded;
pub mod tick_fleet;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, SystemTime};
use traffic_cop::transport::{
    Request, Response, Runtime, Timeouts, Transport, TransportError, TransportErrorKind,
};

pub const EMULATOR: &str = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;\
AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;\
BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;";

type Check = Box<dyn Fn(&Request)>;

/// Answers requests from a script, in order. Each entry checks the request it receives; a
/// request beyond the script panics, and `assert_done` fails if the script was not used up.
#[derive(Default)]
pub struct ScriptedTransport {
    script: VecDeque<(Check, Result<Response, TransportError>)>,
    pub sent: Vec<Request>,
}

impl ScriptedTransport {
    pub fn new() -> ScriptedTransport {
        ScriptedTransport::default()
    }

    pub fn expect(
        mut self,
        check: impl Fn(&Request) + 'static,
        reply: Result<Response, TransportError>,
    ) -> Self {
        self.script.push_back((Box::new(check), reply));
        self
    }

    pub fn assert_done(&self) {
        assert!(self.script.is_empty(), "{} scripted requests were never sent", self.script.len());
    }
}

impl Transport for ScriptedTransport {
    fn send(&mut self, request: Request, _timeouts: Timeouts) -> Result<Response, TransportError> {
        let (check, reply) = self.script.pop_front().unwrap_or_else(|| {
            panic!("unexpected request: {} {}", request.method(), request.uri())
        });
        check(&request);
        self.sent.push(request);
        reply
    }
}

/// A response with the given status and headers.
pub fn response(status: u16, headers: &[(&str, &str)]) -> Result<Response, TransportError> {
    let mut builder = http::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    Ok(builder.body(Vec::new()).unwrap())
}

/// An Azure-style error response: `x-ms-error-code` header plus XML body.
pub fn refusal(status: u16, code: &str) -> Result<Response, TransportError> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>{code}</Code><Message>Refused.\nRequestId:r\nTime:t</Message></Error>"
    );
    Ok(http::Response::builder()
        .status(status)
        .header("x-ms-error-code", code)
        .header("x-ms-request-id", "req-42")
        .body(body.into_bytes())
        .unwrap())
}

pub fn transport_error(kind: TransportErrorKind) -> Result<Response, TransportError> {
    Err(TransportError::new(kind, "scripted failure"))
}

/// Checks that a request is a lease call with the given action.
pub fn lease_action(action: &'static str) -> impl Fn(&Request) {
    move |request: &Request| {
        assert_eq!(request.method(), "PUT");
        assert_eq!(request.uri().query(), Some("comp=lease"));
        assert_eq!(request.headers()["x-ms-lease-action"], action);
    }
}

pub fn any_request(_: &Request) {}

/// Virtual time: `sleep` advances the clock instantly and is recorded; randomness is a fixed
/// sequence so jitter is reproducible.
pub struct VirtualRuntime {
    /// Shared with the fake lease service, so both see one virtual time.
    pub now: Rc<Cell<SystemTime>>,
    pub sleeps: RefCell<Vec<Duration>>,
    seed: Cell<u64>,
    /// How far this runtime's wall clock has been stepped away from the shared time (ms,
    /// negative: back). Its monotonic clock is not moved by a step.
    pub wall_step_ms: Rc<Cell<i64>>,
}

/// Wed, 01 Jan 2025 00:00:00 GMT: where virtual time starts.
pub fn epoch() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_735_689_600)
}

impl VirtualRuntime {
    pub fn new() -> VirtualRuntime {
        VirtualRuntime::on_clock(Rc::new(Cell::new(epoch())), 0x9E37_79B9_7F4A_7C15)
    }

    /// A runtime on a shared clock; `seed` makes each contender's randomness its own.
    pub fn on_clock(now: Rc<Cell<SystemTime>>, seed: u64) -> VirtualRuntime {
        VirtualRuntime {
            now,
            sleeps: RefCell::new(Vec::new()),
            seed: Cell::new(seed | 1),
            wall_step_ms: Rc::new(Cell::new(0)),
        }
    }
}

impl Runtime for VirtualRuntime {
    fn now(&self) -> SystemTime {
        let step = self.wall_step_ms.get();
        let magnitude = Duration::from_millis(step.unsigned_abs());
        if step < 0 {
            self.now.get() - magnitude
        } else {
            self.now.get() + magnitude
        }
    }

    fn monotonic(&self) -> Duration {
        self.now.get().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default()
    }

    fn sleep(&self, duration: Duration) {
        self.sleeps.borrow_mut().push(duration);
        self.now.set(self.now.get() + duration);
    }

    fn random_u64(&self) -> u64 {
        // xorshift64*: deterministic, and distinct draws give distinct lease ids.
        let mut x = self.seed.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Runs a future whose waits all end on a virtual clock (they are ready when polled): polls it
/// to the end with a waker nobody needs, as `traffic_cop::transport::run_blocking` does for
/// the library.
pub fn poll_to_end<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

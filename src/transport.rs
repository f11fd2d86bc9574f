//! The seams to the outside world: sending a request, and reading the clock, sleeping and
//! drawing randomness. The protocol code takes both as parameters and never does I/O itself.

use std::fmt;
use std::future::Future;
use std::time::{Duration, SystemTime};

/// A request body is always small (lease calls are empty), so bodies are plain bytes.
pub type Request = http::Request<Vec<u8>>;
pub type Response = http::Response<Vec<u8>>;

/// Per-request time limits. Every exchange must end within `connect + response` so a hung
/// service cannot stall a timer tick past its lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Time to establish the connection.
    pub connect: Duration,
    /// Time from sending the request to receiving the whole response.
    pub response: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts { connect: Duration::from_secs(5), response: Duration::from_secs(10) }
    }
}

impl Timeouts {
    /// These limits, shrunk so that connecting and answering together fit in `left`. Shared in
    /// the same proportion, so a short budget still leaves time for the answer.
    pub fn within(self, left: Duration) -> Timeouts {
        let total = self.connect + self.response;
        if left >= total {
            return self;
        }
        let connect = left.mul_f64(self.connect.as_secs_f64() / total.as_secs_f64().max(1e-9));
        Timeouts { connect, response: left.saturating_sub(connect) }
    }
}

/// Sends one request and returns whatever the server answered. A non-2xx status is an `Ok`
/// response; `Err` means the exchange did not complete.
pub trait Transport {
    fn send(&mut self, request: Request, timeouts: Timeouts) -> Result<Response, TransportError>;
}

impl<T: Transport + ?Sized> Transport for &mut T {
    fn send(&mut self, request: Request, timeouts: Timeouts) -> Result<Response, TransportError> {
        (**self).send(request, timeouts)
    }
}

/// The seam of the calls that must not block their instance (`hold`'s renewal in the
/// background): sending and waiting as futures. The clock and randomness stay a [`Runtime`]:
/// reading them never waits.
pub trait AsyncTransport {
    fn send(
        &mut self,
        request: Request,
        timeouts: Timeouts,
    ) -> impl Future<Output = Result<Response, TransportError>>;
    /// Waits without holding up the instance's other tasks.
    fn sleep(&mut self, duration: Duration) -> impl Future<Output = ()>;
}

/// A [`Transport`] and a [`Runtime`] seen as an [`AsyncTransport`] whose futures are ready at
/// once: so one attempt loop, written async, also serves every blocking call.
pub(crate) struct Blocking<'a, T, R> {
    pub transport: &'a mut T,
    pub runtime: &'a R,
}

impl<T: Transport, R: Runtime> AsyncTransport for Blocking<'_, T, R> {
    fn send(
        &mut self,
        request: Request,
        timeouts: Timeouts,
    ) -> impl Future<Output = Result<Response, TransportError>> {
        std::future::ready(self.transport.send(request, timeouts))
    }

    fn sleep(&mut self, duration: Duration) -> impl Future<Output = ()> {
        self.runtime.sleep(duration);
        std::future::ready(())
    }
}

/// Runs a future whose every await is [`Blocking`]'s: ready when first polled, so the loop
/// ends at its first turn.
pub(crate) fn run_blocking<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

/// Why an exchange did not complete; decides whether it is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportErrorKind {
    /// No connection was made (refused, DNS, TLS): the request surely did not arrive.
    Connect,
    /// A time limit ran out: the request may or may not have been acted on.
    Timeout,
    /// The connection broke mid-exchange: the request may or may not have been acted on.
    Interrupted,
    /// Refused by the host before sending (for example an outbound-host policy): not retried.
    Denied,
    /// Anything else.
    Other,
}

/// A failed exchange. `detail` comes from the host's error and never contains request headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportError {
    pub kind: TransportErrorKind,
    pub detail: String,
}

impl TransportError {
    pub fn new(kind: TransportErrorKind, detail: impl Into<String>) -> TransportError {
        TransportError { kind, detail: detail.into() }
    }

    /// Whether trying again can help.
    pub fn is_transient(&self) -> bool {
        matches!(
            self.kind,
            TransportErrorKind::Connect
                | TransportErrorKind::Timeout
                | TransportErrorKind::Interrupted
        )
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

/// Time and randomness, injected so tests run on a virtual clock with scripted jitter.
pub trait Runtime {
    /// Wall-clock time, used for `x-ms-date` (Azure rejects dates more than 15 minutes off) and
    /// for the instants a ticket reports. It may be stepped (NTP, an operator), so no time
    /// budget is measured with it: see [`Runtime::monotonic`].
    fn now(&self) -> SystemTime;
    /// Time since an arbitrary origin that never goes back: what budgets within one instance
    /// (a lease's time left, retry waits) are measured with.
    fn monotonic(&self) -> Duration;
    /// Waits between retries.
    fn sleep(&self, duration: Duration);
    /// 64 random bits, for lease ids and jitter.
    fn random_u64(&self) -> u64;
}

/// The real clock, `std::thread::sleep`, and OS randomness. On `wasm32-wasip2` these are the
/// WASI clocks; randomness there comes from `wasi:random` (see the component).
#[derive(Clone, Copy, Debug, Default)]
pub struct StdRuntime;

impl Runtime for StdRuntime {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn monotonic(&self) -> Duration {
        // On wasm32-wasip2 `Instant` is `wasi:clocks/monotonic-clock`.
        static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        ORIGIN.get_or_init(std::time::Instant::now).elapsed()
    }

    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration)
    }

    fn random_u64(&self) -> u64 {
        #[cfg(target_arch = "wasm32")]
        {
            wasi::random::random::get_random_u64()
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            use std::hash::{BuildHasher, Hasher};
            // RandomState is keyed from OS randomness; hashing a counter keeps successive draws
            // distinct without adding a dependency for an RNG.
            static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            hasher.finish()
        }
    }
}

/// A moment on a [`Runtime`]'s monotonic clock by which something must be done: the end of the
/// time left on a lease, for the calls that serve it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline(Duration);

impl Deadline {
    /// `within` from now.
    pub fn after(runtime: &dyn Runtime, within: Duration) -> Deadline {
        Deadline(runtime.monotonic().saturating_add(within))
    }

    /// The moment `at` on the runtime's monotonic clock.
    pub fn at(at: Duration) -> Deadline {
        Deadline(at)
    }

    /// This moment on the monotonic clock.
    pub fn instant(self) -> Duration {
        self.0
    }

    /// The time left, `None` once it has passed.
    pub fn left(self, runtime: &dyn Runtime) -> Option<Duration> {
        self.0.checked_sub(runtime.monotonic()).filter(|left| !left.is_zero())
    }
}

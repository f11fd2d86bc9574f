//! An instance whose monotonic clock and outgoing sender the test sets, for the transport's
//! edges: [`at_the_deadline`] makes every answer ready exactly when the guest's own deadline
//! for it passes, so the guest's `poll` sees both at once.
//!
//! How it lines up: the monotonic clock stands still (from [`FROZEN`]), so the guest's deadline
//! is the clock's reading plus connect and first-byte (the limits it hands the host with the
//! request). When the
//! request arrives the sender moves the clock to `LEAD` before that deadline, so the guest's
//! timer is a `LEAD` sleep, and the answer comes after a `LEAD` sleep of its own, started
//! microseconds earlier: tokio's timer wheel ticks in whole milliseconds, so both wake in the
//! same tick nearly always.

use crate::component::{Host, Instance, State};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::ResourceTable;
use wasmtime::Store;
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpCtx, WasiHttpHooks};

/// Where the frozen monotonic clock starts, in ns.
pub const FROZEN: u64 = 1_000_000_000_000;
/// How long before the guest's deadline its request is answered, and its timer set.
const LEAD: Duration = Duration::from_millis(20);

/// A monotonic clock that moves only when told to.
#[derive(Clone)]
struct Frozen(Arc<AtomicU64>);

impl wasmtime_wasi::HostMonotonicClock for Frozen {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Answers every request with a lock blob's HEAD (available, an ETag, a Date) just as the
/// guest's deadline for it passes.
struct AtTheDeadline {
    clock: Frozen,
}

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;

impl WasiHttpHooks for AtTheDeadline {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: IoFuture,
    ) -> Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send> {
        drop((request, fut));
        let options = options.unwrap_or_default();
        let limit = options.connect_timeout.unwrap_or_default()
            + options.first_byte_timeout.unwrap_or_default();
        // The guest read the clock for its deadline just before; it has not moved since.
        let deadline = self.clock.0.load(Ordering::SeqCst) + limit.as_nanos() as u64;
        self.clock.0.store(deadline - LEAD.as_nanos() as u64, Ordering::SeqCst);
        Box::new(async move {
            tokio::time::sleep(LEAD).await;
            let body = Empty::<Bytes>::new().map_err(|never| match never {}).boxed_unsync();
            let response = http::Response::builder()
                .status(200)
                .header("etag", "\"0x1\"")
                .header("x-ms-lease-state", "available")
                .header("x-ms-lease-status", "unlocked")
                .header("date", "Wed, 01 Jan 2025 00:00:00 GMT")
                .header("content-length", "0")
                .body(body)
                .expect("a valid response");
            Ok((response, Box::new(async { Ok(()) }) as IoFuture))
        })
    }
}

/// A fresh instance whose every request is answered exactly at its deadline.
pub fn at_the_deadline() -> Instance {
    let host = Host::shared();
    let clock = Frozen(Arc::new(AtomicU64::new(FROZEN)));
    let state = State {
        wasi: WasiCtx::builder().inherit_stderr().monotonic_clock(clock.clone()).build(),
        http: WasiHttpCtx::new(),
        table: ResourceTable::new(),
        variables: Default::default(),
        hooks: Some(Box::new(AtTheDeadline { clock })),
        kv: None,
    };
    let mut store = Store::new(&host.engine, state);
    let provider = host.pre.instantiate(&mut store).expect("instantiates");
    Instance { store, provider }
}

/// Forwards to wasmtime's own sender with the connect and first-byte limits cut to `LIMIT`, so
/// an answer held back by a lossy proxy counts as late in seconds rather than the guest's 15.
struct ShortLimits;

/// The limits [`short_limits`] instances send with.
pub const LIMIT: Duration = Duration::from_secs(2);

impl WasiHttpHooks for ShortLimits {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: IoFuture,
    ) -> Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send> {
        drop(fut);
        let mut options = options.unwrap_or_default();
        let cut = |limit: Option<Duration>| Some(limit.unwrap_or(LIMIT).min(LIMIT));
        options.connect_timeout = cut(options.connect_timeout);
        options.first_byte_timeout = cut(options.first_byte_timeout);
        options.between_bytes_timeout = cut(options.between_bytes_timeout);
        Box::new(async move {
            let (response, io) =
                wasmtime_wasi_http::default_send_request(request, Some(options)).await?;
            Ok((response.map(BodyExt::boxed_unsync), Box::new(io) as IoFuture))
        })
    }
}

/// A fresh instance whose requests give up after [`LIMIT`] without an answer.
pub fn short_limits() -> Instance {
    let host = Host::shared();
    let state = State {
        wasi: WasiCtx::builder().inherit_stderr().build(),
        http: WasiHttpCtx::new(),
        table: ResourceTable::new(),
        variables: Default::default(),
        hooks: Some(Box::new(ShortLimits)),
        kv: None,
    };
    let mut store = Store::new(&host.engine, state);
    let provider = host.pre.instantiate(&mut store).expect("instantiates");
    Instance { store, provider }
}

//! traffic-cop: an Azure Blob lease as a "traffic cop" for WebAssembly components.
//!
//! Many instances of a serverless function race for one blob lease; the holder does the
//! singleton work, the others skip. This crate speaks the Blob lease REST protocol itself,
//! signs with SharedKey (or uses a SAS) and sends through an injected [`Transport`], so the
//! same code runs as a `wasm32-wasip2` component (over `wasi:http`) and natively.
//!
//! # Layout
//! The IO is injected, not absent: the decision (`guard::decide`), signing and the calendar
//! are pure, while the drivers (the client, the guard's calls) hold a client and sleep, but
//! read the clock, sleep and send only through [`Runtime`] and [`Transport`]. So the tests run
//! every driver on a virtual clock over a fake service, and the component runs it over
//! `wasi:http`.
//!
//! | module | what it holds |
//! |---|---|
//! | [`config`] | connection-string parsing, account credentials, lock and name validation |
//! | [`signing`] | pure SharedKey signing over an `http::Request` |
//! | [`identity`] | Entra ID bearer tokens: sources, token requests and answers |
//! | [`ops`] | one file per lease verb: validate, build the request, interpret the response |
//! | [`error`] | the one public error enum and the status/error-code mapping |
//! | [`transport`] | the transport seam and its error kinds; [`Runtime`] (clock, sleep, randomness) |
//! | [`retry`] | bounded exponential backoff with jitter |
//! | [`client`] | [`LeaseClient`]: stamps, signs, sends, retries, creates the lock on first use |
//! | [`guard`] | guarded invoke: the pure decision, run records, fencing tokens, claims, board, the settings check |
//! | [`schedule`] | when a job is due: cron expressions in a time zone (two dialects), fixed intervals |
//! | [`zone`] | the IANA time-zone table the component carries, and POSIX rules past its end |
//! | [`civil`] | the one calendar: civil dates and instants, ISO 8601 for people |
//! | `component` | (wasm only) the WIT export glue, the only file that sees generated bindings |
//! | `wasi_http` | (wasm only) [`Transport`] over `wasi:http/outgoing-handler` |
//! | `wasi_http_async` | (the async component only) [`AsyncTransport`](transport::AsyncTransport) over WASI 0.3's `wasi:http/client` |

pub mod civil;
pub mod client;
pub mod config;
pub mod error;
pub mod guard;
mod http_date;
pub mod identity;
pub mod ops;
mod percent;
pub mod retry;
pub mod schedule;
pub mod signing;
pub mod transport;
pub mod zone;

#[cfg(target_arch = "wasm32")]
mod component;
#[cfg(target_arch = "wasm32")]
mod wasi_http;
#[cfg(all(target_arch = "wasm32", feature = "async"))]
mod wasi_http_async;

pub use client::LeaseClient;
pub use config::{Account, Credential, Lock};
pub use error::{
    Contention, Error, FieldError, LeaseLoss, RanOut, RanOutWhen, ServiceError, TokenProblem,
    UnusableToken,
};
pub use ops::{BreakPeriod, LeaseDuration, LeaseGrant, LeaseId, LeaseState, LockStatus};
pub use transport::{Runtime, StdRuntime, Transport, TransportError, TransportErrorKind};

/// The storage REST version every request is signed for. Fixed on purpose: it is accepted by
/// Azure and by Azurite 3.35 (which rejects newer versions unless told to skip the check), so the
/// emulator tests run against the same protocol the product speaks in production.
pub const STORAGE_VERSION: &str = "2025-11-05";

//! [`Transport`] over `wasi:http/outgoing-handler`, synchronous (WASI 0.2 has no threads and our
//! exports are plain functions). Time limits are set on the request where the host supports
//! it and also enforced here with a monotonic-clock deadline, so no host can hang a call.

use crate::transport::{
    Request, Response, Timeouts, Transport, TransportError, TransportErrorKind,
};
use wasi::clocks::monotonic_clock;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasi::io::streams::StreamError;

/// A host's `wasi:http` error code as a [`TransportError`]: one table for WASI 0.2's and WASI
/// 0.3's code (two generated types with the same cases).
macro_rules! error_kind {
    ($code:ident, $error:expr) => {{
        let error = $error;
        let kind = match &error {
            $code::DnsTimeout
            | $code::DnsError(_)
            | $code::DestinationNotFound
            | $code::DestinationUnavailable
            | $code::DestinationIpProhibited
            | $code::DestinationIpUnroutable
            | $code::ConnectionRefused
            | $code::TlsProtocolError
            | $code::TlsCertificateError
            | $code::TlsAlertReceived(_) => TransportErrorKind::Connect,
            $code::ConnectionTimeout
            | $code::ConnectionReadTimeout
            | $code::ConnectionWriteTimeout
            | $code::HttpResponseTimeout => TransportErrorKind::Timeout,
            // wasmtime reports a connection closed before any answer as a protocol error: the
            // request may have been acted on, so it is an interrupted exchange (found by the
            // fault-injecting proxy's reset and lost-answer cases).
            $code::ConnectionTerminated
            | $code::ConnectionLimitReached
            | $code::HttpResponseIncomplete
            | $code::HttpProtocolError => TransportErrorKind::Interrupted,
            $code::HttpRequestDenied => TransportErrorKind::Denied,
            // Spin reports an outbound host outside `allowed_outbound_hosts` this way.
            $code::InternalError(Some(text)) if text.contains("not permitted") => {
                TransportErrorKind::Denied
            }
            _ => TransportErrorKind::Other,
        };
        // The host's error names a condition, never our headers.
        TransportError::new(kind, format!("{error:?}"))
    }};
}
// Used by the async transport, which only the async component has.
#[cfg_attr(not(feature = "async"), allow(unused_imports))]
pub(crate) use error_kind;

/// Sets a request's method, scheme, authority and path on a WASI version's outgoing request
/// (the same cases and setters in both versions' generated types).
macro_rules! set_request_line {
    ($outgoing:expr, $request:expr, $line:expr, $method:ident, $scheme:ident) => {{
        let method = match *$request.method() {
            http::Method::GET => $method::Get,
            http::Method::HEAD => $method::Head,
            http::Method::PUT => $method::Put,
            http::Method::DELETE => $method::Delete,
            ref other_method => $method::Other(other_method.to_string()),
        };
        let scheme = if $line.https { $scheme::Https } else { $scheme::Http };
        $outgoing
            .set_method(&method)
            .and($outgoing.set_scheme(Some(&scheme)))
            .and($outgoing.set_authority($line.authority))
            .and($outgoing.set_path_with_query(Some($line.path)))
            .map_err(|_| other("host refused the request line"))
    }};
}
// Used by the async transport, which only the async component has.
#[cfg_attr(not(feature = "async"), allow(unused_imports))]
pub(crate) use set_request_line;

/// The largest answer we buffer. Bodies are error XML (well under 1 KiB) or one List Blobs page
/// of `LIST_PAGE_SIZE` (200) blobs: about 200 KiB for typical locks and 3.4 MiB for 200 of the
/// largest a lock can be (see `ops::LIST_PAGE_SIZE`); a page `claim` widens is sized to half
/// this limit by the blobs seen so far. A longer answer is refused, never cut short: a
/// truncated listing would read as a shorter one.
const MAX_RESPONSE_BODY: usize = 8 * 1024 * 1024;

#[derive(Default)]
pub struct WasiHttp;

impl Transport for WasiHttp {
    fn send(&mut self, request: Request, timeouts: Timeouts) -> Result<Response, TransportError> {
        let deadline = monotonic_clock::now()
            .saturating_add((timeouts.connect + timeouts.response).as_nanos() as u64);
        let outgoing = outgoing_request(&request)?;
        let body = outgoing.body().map_err(|_| other("request body unavailable"))?;
        let options = RequestOptions::new();
        // A host may refuse to take a timeout; the deadline below still holds.
        let _ = options.set_connect_timeout(Some(timeouts.connect.as_nanos() as u64));
        let _ = options.set_first_byte_timeout(Some(timeouts.response.as_nanos() as u64));
        let _ = options.set_between_bytes_timeout(Some(timeouts.response.as_nanos() as u64));
        // An empty body (every lease verb's) is finished before the request is handed over,
        // so the host sends a complete request at once instead of waiting on the body stream.
        // A body with bytes is written after: a host buffers only so much of it before
        // sending, so a body written first (a Put Blob's) would wait forever.
        let body = if request.body().is_empty() {
            OutgoingBody::finish(body, None).map_err(|_| other("request body refused"))?;
            None
        } else {
            Some(body)
        };
        let future = outgoing_handler::handle(outgoing, Some(options)).map_err(classify)?;
        let head_only = request.method() == http::Method::HEAD;
        let Some(body) = body else {
            return await_response(future, deadline, head_only);
        };
        if write_body(&body, request.body(), deadline).is_ok() {
            // A body that failed to finish fails the request; its answer below says how.
            let _ = OutgoingBody::finish(body, None);
        } else {
            // Dropped unfinished, the body tells the host the request is incomplete. The
            // answer still decides: an early refusal from the service, or the host's reason
            // (a refused connection is no ambiguous exchange), or the deadline.
            drop(body);
        }
        await_response(future, deadline, head_only)
    }
}

/// Waits for the answer's head, never past `deadline`. The pollables are the future's
/// children, so they are declared after it and dropped first.
fn await_response(
    future: wasi::http::types::FutureIncomingResponse,
    deadline: u64,
    head_only: bool,
) -> Result<Response, TransportError> {
    let timer = monotonic_clock::subscribe_instant(deadline);
    let ready = future.subscribe();
    loop {
        // Looked at once per wake-up, and kept: `get` hands an answer out only once, so an
        // answer that became ready together with the deadline is still this call's answer.
        if let Some(outcome) = future.get() {
            let incoming =
                outcome.map_err(|_| other("response already taken"))?.map_err(classify)?;
            return read_response(incoming, deadline, head_only);
        }
        let woken = wasi::io::poll::poll(&[&ready, &timer]);
        if woken.contains(&1) && !woken.contains(&0) {
            return Err(TransportError::new(TransportErrorKind::Timeout, "no response in time"));
        }
    }
}

fn outgoing_request(request: &Request) -> Result<OutgoingRequest, TransportError> {
    let line = RequestLine::of(request);
    let headers =
        Fields::from_list(&line.headers).map_err(|_| other("host refused a request header"))?;
    let outgoing = OutgoingRequest::new(headers);
    set_request_line!(outgoing, request, line, Method, Scheme)?;
    Ok(outgoing)
}

/// A request's parts as both WASI versions' `wasi:http` take them.
pub(crate) struct RequestLine<'a> {
    pub headers: Vec<(String, Vec<u8>)>,
    pub https: bool,
    pub authority: Option<&'a str>,
    pub path: &'a str,
}

impl RequestLine<'_> {
    pub(crate) fn of(request: &Request) -> RequestLine<'_> {
        let headers = request
            .headers()
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), value.as_bytes().to_vec()))
            .collect();
        let uri = request.uri();
        RequestLine {
            headers,
            https: uri.scheme_str() != Some("http"),
            authority: uri.authority().map(|a| a.as_str()),
            path: uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"),
        }
    }
}

/// Writes as fast as the host takes it, never past `deadline`.
fn write_body(body: &OutgoingBody, bytes: &[u8], deadline: u64) -> Result<(), TransportError> {
    if bytes.is_empty() {
        return Ok(());
    }
    let stream = body.write().map_err(|_| other("request body stream unavailable"))?;
    // Declared after the stream, so dropped before it, as the pollable's parent requires.
    let writable = stream.subscribe();
    let timer = monotonic_clock::subscribe_instant(deadline);
    let broke =
        |_| TransportError::new(TransportErrorKind::Interrupted, "request body write failed");
    let mut rest = bytes;
    let mut flushing = false;
    loop {
        let permitted = stream.check_write().map_err(broke)? as usize;
        if permitted == 0 {
            if wasi::io::poll::poll(&[&writable, &timer]).contains(&1) {
                return Err(TransportError::new(
                    TransportErrorKind::Timeout,
                    "request body not taken in time",
                ));
            }
            continue;
        }
        if rest.is_empty() {
            if flushing {
                return Ok(());
            }
            stream.flush().map_err(broke)?;
            flushing = true;
            continue;
        }
        let (chunk, after) = rest.split_at(permitted.min(rest.len()));
        stream.write(chunk).map_err(broke)?;
        rest = after;
    }
}

/// The answer, with its body unless `head_only` (the answer to a HEAD, which has none whatever
/// its Content-Length says).
fn read_response(
    incoming: wasi::http::types::IncomingResponse,
    deadline: u64,
    head_only: bool,
) -> Result<Response, TransportError> {
    let mut builder = http::Response::builder().status(incoming.status());
    for (name, value) in incoming.headers().entries() {
        builder = builder.header(name, value);
    }
    let status = incoming.status();
    let head = builder.body(()).map_err(|_| other("malformed response head"))?;
    let too_long = || too_long_error(status, head.headers().get("x-ms-request-id"));
    let declared = head
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    // No body to read: most lease answers. Not waiting for the end of an empty body spares
    // the guest one more wait on the host per request.
    if head_only || declared == Some(0) {
        return Ok(head.map(|()| Vec::new()));
    }
    if declared.is_some_and(|length| length > MAX_RESPONSE_BODY) {
        return Err(too_long());
    }
    let body = incoming.consume().map_err(|_| other("response body unavailable"))?;
    let bytes = read_body(&body, deadline, declared.unwrap_or(0), &too_long)?;
    IncomingBody::finish(body);
    Ok(head.map(|()| bytes))
}

/// Not retried (kind `Other`): the same request would get the same answer. The status and
/// request id say which answer it was; neither is a secret.
fn too_long_error(status: u16, request_id: Option<&http::HeaderValue>) -> TransportError {
    let id = request_id.and_then(|v| v.to_str().ok()).unwrap_or("none");
    other(&format!(
        "HTTP {status} answer is longer than the {} MiB this client buffers (request id {id})",
        MAX_RESPONSE_BODY / (1024 * 1024)
    ))
}

/// The whole body; `too_long()` once it passes [`MAX_RESPONSE_BODY`].
fn read_body(
    body: &IncomingBody,
    deadline: u64,
    declared: usize,
    too_long: &dyn Fn() -> TransportError,
) -> Result<Vec<u8>, TransportError> {
    let stream = body.stream().map_err(|_| other("response body stream unavailable"))?;
    let mut bytes = Vec::with_capacity(declared);
    let timer = monotonic_clock::subscribe_instant(deadline);
    let readable = stream.subscribe();
    loop {
        match stream.read(64 * 1024) {
            Ok(chunk) if chunk.is_empty() => {
                if wasi::io::poll::poll(&[&readable, &timer]).contains(&1) {
                    return Err(TransportError::new(
                        TransportErrorKind::Timeout,
                        "response body stalled",
                    ));
                }
            }
            Ok(chunk) if bytes.len() + chunk.len() > MAX_RESPONSE_BODY => return Err(too_long()),
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => return Ok(bytes),
            Err(StreamError::LastOperationFailed(_)) => {
                return Err(TransportError::new(
                    TransportErrorKind::Interrupted,
                    "response body broke off",
                ))
            }
        }
    }
}

fn classify(error: ErrorCode) -> TransportError {
    error_kind!(ErrorCode, error)
}

pub(crate) fn other(detail: &str) -> TransportError {
    TransportError::new(TransportErrorKind::Other, detail)
}

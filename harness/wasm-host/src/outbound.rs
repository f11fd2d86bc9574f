//! The hooks behind the component's outgoing wasi:http requests (component.rs's `State` hands
//! out [`hooks`]). Until a test process calls [`trust_test_ca`] they are wasmtime's defaults,
//! sender included, so every other test is untouched. After it, requests go out through the
//! same hyper/rustls path as wasmtime-wasi-http 48's `default_send_request`, but trusting the
//! public roots plus this process's throwaway CA (tls.rs), and each is recorded: over TLS a
//! counting proxy sees only ciphertext, so round trips are counted here, on the client side.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

static TRUSTING: AtomicBool = AtomicBool::new(false);
static SENT: Mutex<Vec<Sent>> = Mutex::new(Vec::new());
static TIMING: AtomicBool = AtomicBool::new(false);
static MOMENTS: Mutex<Vec<(Instant, Moment)>> = Mutex::new(Vec::new());

/// When a guest request crossed into the host, for the bench's breakdown of a component call
/// (recorded only after [`time_requests`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// The guest called `outgoing-handler.handle`: its request is built and signed.
    Handed,
    /// The host's sender has the answer's head; the guest has not yet been woken for it.
    Answered,
}

/// From now on, in this process, every request's [`Moment`]s are recorded.
pub fn time_requests() {
    TIMING.store(true, Ordering::SeqCst);
}

/// The moments recorded since the last call, oldest first.
pub fn take_moments() -> Vec<(Instant, Moment)> {
    std::mem::take(&mut *MOMENTS.lock().unwrap())
}

fn record(moment: Moment) {
    if TIMING.load(Ordering::Relaxed) {
        MOMENTS.lock().unwrap().push((Instant::now(), moment));
    }
}

/// One request the component sent (after [`trust_test_ca`]).
#[derive(Clone, Debug)]
pub struct Sent {
    pub method: String,
    /// scheme://host:port/path?query
    pub url: String,
    /// The Authorization scheme (`Bearer`, `SharedKey`), never the credential.
    pub auth_scheme: Option<String>,
}

/// From now on, in this process, the component trusts the throwaway CA and its requests are
/// recorded.
pub fn trust_test_ca() {
    let _ = traffic_cop_testbed::tls::client_config();
    TRUSTING.store(true, Ordering::SeqCst);
}

/// Requests whose URL contains `needle` (an authority, a container path), in order.
pub fn sent(needle: &str) -> Vec<Sent> {
    SENT.lock().unwrap().iter().filter(|s| s.url.contains(needle)).cloned().collect()
}

/// How many requests so far had `needle` in their URL.
pub fn count(needle: &str) -> usize {
    SENT.lock().unwrap().iter().filter(|s| s.url.contains(needle)).count()
}

struct Hooks;

/// For `WasiHttpCtxView::hooks`. `Hooks` is zero-sized, so leaking one allocates nothing.
pub fn hooks<'a>() -> &'a mut dyn WasiHttpHooks {
    Box::leak(Box::new(Hooks))
}

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;

impl WasiHttpHooks for Hooks {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: IoFuture,
    ) -> Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send> {
        _ = fut;
        record(Moment::Handed);
        let trusting = TRUSTING.load(Ordering::SeqCst);
        if trusting {
            let auth_scheme = request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(' ').next())
                .map(str::to_string);
            SENT.lock().unwrap().push(Sent {
                method: request.method().to_string(),
                url: request.uri().to_string(),
                auth_scheme,
            });
        }
        Box::new(async move {
            let (res, io) = if trusting {
                let (res, io) = send(request, options).await?;
                (res, Box::new(io) as IoFuture)
            } else {
                let (res, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
                (res.map(BodyExt::boxed_unsync), Box::new(io) as IoFuture)
            };
            record(Moment::Answered);
            Ok((res, io))
        })
    }
}

/// `default_send_request` with our roots; one connection per request, as there.
async fn send(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Result<(http::Response<WasiBody>, impl Future<Output = Result<(), Error>> + Send), Error> {
    let uri = request.uri().clone();
    let authority = uri.authority().ok_or(Error::HttpRequestUriInvalid)?;
    let tls = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
    let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_string();
    let connect = options.and_then(|o| o.connect_timeout).unwrap_or(Duration::from_secs(30));
    let first_byte = options.and_then(|o| o.first_byte_timeout).unwrap_or(Duration::from_secs(60));
    let tcp = tokio::time::timeout(connect, tokio::net::TcpStream::connect((host.as_str(), port)))
        .await
        .map_err(|_| Error::ConnectionTimeout)?
        .map_err(Error::Connect)?;
    let (mut sender, conn) = if tls {
        let name = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => rustls::pki_types::ServerName::from(ip),
            Err(_) => rustls::pki_types::ServerName::try_from(host.clone())?,
        };
        let connector = tokio_rustls::TlsConnector::from(traffic_cop_testbed::tls::client_config());
        let stream = connector.connect(name, tcp).await.map_err(Error::Tls)?;
        handshake(Box::new(stream)).await?
    } else {
        handshake(Box::new(tcp)).await?
    };
    // On the wire the target is origin-form: path and query only.
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    *request.uri_mut() = http::Uri::builder().path_and_query(path).build().expect("valid");
    let mut conn = Some(Box::pin(conn));
    let mut response = Box::pin(tokio::time::timeout(first_byte, sender.send_request(request)));
    // Drive the connection while waiting for the response head, as the default sender does;
    // a connection that ends first either failed or left the response ready.
    let response = std::future::poll_fn(|cx| {
        use std::task::Poll;
        if let Poll::Ready(r) = response.as_mut().poll(cx) {
            return Poll::Ready(Ok(r));
        }
        let Some(c) = conn.as_mut() else { return Poll::Pending };
        let done = std::task::ready!(c.as_mut().poll(cx));
        conn = None;
        match done {
            Ok(()) => response.as_mut().poll(cx).map(Ok),
            Err(e) => Poll::Ready(Err(Error::from(e))),
        }
    })
    .await?
    .map_err(|_| Error::ConnectionReadTimeout)??;
    let response = response.map(|body| body.map_err(Error::from).boxed_unsync());
    Ok((response, async move {
        match conn {
            Some(c) => c.await.map_err(Error::from),
            None => Ok(()),
        }
    }))
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Io for T {}

type Conn = hyper::client::conn::http1::Connection<TokioIo<Box<dyn Io>>, WasiBody>;

async fn handshake(
    stream: Box<dyn Io>,
) -> Result<(hyper::client::conn::http1::SendRequest<WasiBody>, Conn), Error> {
    Ok(hyper::client::conn::http1::Builder::new().handshake(TokioIo::new(stream)).await?)
}

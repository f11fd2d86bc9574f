//! A fake identity endpoint on 127.0.0.1 for the Entra ID tests. One thread serves two
//! listeners, one request per connection: HTTPS with the throwaway certificate (tls.rs), as the
//! real authority is https, and plain HTTP, as IMDS (169.254.169.254) and the App Service
//! identity endpoint are. Every path is served on both. Paths:
//! - `POST /{tenant}/oauth2/v2.0/token`: client credentials with `client_secret` or a
//!   `client_assertion` (workload identity), refusing bad ones the way Entra ID does;
//! - `GET /metadata/identity/oauth2/token` (IMDS, needs `Metadata: true`);
//! - `GET /msi/token` (App Service / Functions, needs `X-IDENTITY-HEADER`);
//! - anything under `/devstoreaccount1`: 403 AuthorizationPermissionMismatch, a storage
//!   account where the identity has no data role.
//!
//! Tokens are JWTs Azurite's `--oauth basic` accepts (azurite_oauth.rs lists its rules); they
//! carry a dummy signature, which Azurite never checks. [`Issue`] makes the next ones expired or
//! for another audience. Requests are counted per path so tests can assert token round trips.
//! The listeners close when the [`FakeIdp`] is dropped.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::fake_idp_request::read_request;
pub use crate::fake_idp_request::Request;
use crate::fake_idp_state::View;
pub use crate::fake_idp_state::{
    mint, IdpConfig, Issue, APP_SERVICE_PATH, IMDS_PATH, STORAGE_AUDIENCE, TOKEN_PATH_SUFFIX,
};

struct Shared {
    config: IdpConfig,
    issue: Mutex<Issue>,
    counts: Mutex<BTreeMap<String, u32>>,
    /// Method and target of each request (queries carry no secrets; bodies are not kept).
    log: Mutex<Vec<String>>,
}

pub struct FakeIdp {
    pub https_port: u16,
    pub http_port: u16,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeIdp {
    pub fn start(config: IdpConfig) -> FakeIdp {
        let https = TcpListener::bind("127.0.0.1:0").expect("binds a loopback port");
        let http = TcpListener::bind("127.0.0.1:0").expect("binds a loopback port");
        let (https_port, http_port) =
            (https.local_addr().unwrap().port(), http.local_addr().unwrap().port());
        // Polled, so one thread serves both and sees the stop flag within a few milliseconds.
        https.set_nonblocking(true).unwrap();
        http.set_nonblocking(true).unwrap();
        let shared = Arc::new(Shared {
            config,
            issue: Mutex::new(Issue::Valid),
            counts: Mutex::default(),
            log: Mutex::default(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let tls = crate::tls::server_config();
        let (s, st) = (shared.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::SeqCst) {
                let mut idle = true;
                for (listener, secure) in [(&https, true), (&http, false)] {
                    if let Ok((stream, _)) = listener.accept() {
                        idle = false;
                        let _ = serve(stream, secure.then(|| tls.clone()), &s);
                    }
                }
                if idle {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        });
        FakeIdp { https_port, http_port, shared, stop, thread: Some(thread) }
    }

    /// `AuthorityHost` for the client-credentials flows.
    pub fn authority(&self) -> String {
        format!("https://127.0.0.1:{}", self.https_port)
    }
    /// `ImdsEndpoint`: the base IMDS paths hang off.
    pub fn imds_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.http_port)
    }
    /// `IdentityEndpoint`, as App Service sets IDENTITY_ENDPOINT.
    pub fn identity_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}{APP_SERVICE_PATH}", self.http_port)
    }
    /// A `BlobEndpoint` whose every request is refused 403 AuthorizationPermissionMismatch, as
    /// by a storage account where the identity lacks a data role.
    pub fn no_role_blob_endpoint(&self) -> String {
        format!("https://127.0.0.1:{}/devstoreaccount1", self.https_port)
    }
    pub fn config(&self) -> &IdpConfig {
        &self.shared.config
    }
    pub fn set_issue(&self, issue: Issue) {
        *self.shared.issue.lock().unwrap() = issue;
    }
    /// Requests to one path (no query), answered or refused.
    pub fn count(&self, path: &str) -> u32 {
        self.shared.counts.lock().unwrap().get(path).copied().unwrap_or(0)
    }
    /// Requests to any path.
    pub fn total(&self) -> u32 {
        self.shared.counts.lock().unwrap().values().sum()
    }
    /// "METHOD target" of every request so far.
    pub fn log(&self) -> Vec<String> {
        self.shared.log.lock().unwrap().clone()
    }
    /// The v2 token endpoint path for this tenant.
    pub fn token_path(&self) -> String {
        format!("/{}{TOKEN_PATH_SUFFIX}", self.shared.config.tenant)
    }
}

impl Drop for FakeIdp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

fn serve(
    tcp: TcpStream,
    tls: Option<Arc<rustls::ServerConfig>>,
    shared: &Shared,
) -> std::io::Result<()> {
    tcp.set_nonblocking(false)?;
    // A client that stalls must not stop the single thread for long.
    tcp.set_read_timeout(Some(Duration::from_secs(5)))?;
    tcp.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut stream: Box<dyn Stream> = match tls {
        Some(config) => {
            let conn = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
            Box::new(rustls::StreamOwned::new(conn, tcp))
        }
        None => Box::new(tcp),
    };
    let request = read_request(&mut stream)?;
    let (status, body) = crate::fake_idp_routes::answer(&request, shared_view(shared));
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "This request is not authorized to perform this operation using this permission.",
        _ => "Not Found",
    };
    let kind = if body == crate::fake_idp_routes::NO_ROLE {
        "application/xml\r\nx-ms-error-code: AuthorizationPermissionMismatch\r\n\
         x-ms-request-id: 00000000-0000-0000-0000-00000000000a"
    } else {
        "application/json; charset=utf-8"
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

fn shared_view(shared: &Shared) -> View<'_> {
    View {
        config: &shared.config,
        issue: *shared.issue.lock().unwrap(),
        counts: &shared.counts,
        log: &shared.log,
    }
}

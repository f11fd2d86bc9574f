//! An in-memory Blob service with Azure's lease state machine, ETags, conditional requests,
//! metadata, paged listing and whole-blob Put/Get, on the virtual clock.
//!
//! What it was checked against:
//! - the lease outcome matrix, error codes and statuses of shared/protocol.md §1.4-§1.5, which
//!   cite the .NET client's tests run against the cloud, the REST docs and Azurite's source;
//! - Azurite 3.35 live: the same guard scenario suite (tests/support/scenarios.rs) runs
//!   against this fake (tests/native/guard.rs) and through the component against Azurite
//!   (tests/wasmtime/guard_azurite), and a List Blobs answer of Azurite 3.35 for the document shape.
//!
//! Where Azure and Azurite differ (the client must accept both):
//! - a write carrying the id of an expired lease: Azure `412 LeaseLost`, Azurite
//!   `412 LeaseNotPresentWithBlobOperation` (protocol.md §1.4, §6.4 item 5). This fake's
//!   Set Metadata answers as Azurite does; the client reads both codes as lease-lost;
//! - renewing an expired lease with a wrong id: refused here as on Azure, granted by Azurite
//!   (§6.4 item 1);
//! - releasing a lease that is no longer there: `409 LeaseIdMismatchWithLeaseOperation` here,
//!   as Azurite and the .NET cloud tests say (§1.4); Azure is also reported to answer
//!   `LeaseNotPresentWithLeaseOperation`, and a release after an ambiguous retry accepts both;
//! - a bad signature: Azure `AuthenticationFailed`, Azurite `AuthorizationFailure`; this fake
//!   checks no signature, only that one is present, and refuses dates more than 15 minutes
//!   off as Azure does (Azurite never checks the date);
//! - listing: Azure percent-encodes names XML cannot carry (`<Name Encoded="true">`) and uses
//!   opaque markers; Azurite fails to list such names and uses blob names as markers (see
//!   `list`). How Azure answers a marker it never issued is not confirmed; the fake says
//!   `400 InvalidQueryParameterValue`.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::{Duration, SystemTime};
use traffic_cop::transport::{Request, Response, Timeouts, Transport, TransportError};

mod blob;
mod lease;
mod list;
mod oracle;
use lease::settle;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Lease {
    Available,
    /// `expires: None` is an infinite lease.
    Leased {
        id: String,
        expires: Option<SystemTime>,
        seconds: Option<u64>,
    },
    Expired {
        id: String,
        seconds: Option<u64>,
    },
    Breaking {
        id: String,
        until: SystemTime,
    },
    Broken {
        id: String,
    },
}

struct Blob {
    /// When the blob was first written (kept across overwrites, as the service does).
    created: SystemTime,
    etag: u64,
    lease: Lease,
    metadata: BTreeMap<String, String>,
    body: Vec<u8>,
}

#[derive(Default)]
struct State {
    containers: BTreeSet<String>,
    blobs: BTreeMap<(String, String), Blob>,
    next_etag: u64,
    requests: u64,
    /// `maxresults` of each List Blobs request, so tests can see that the client pages.
    list_requests: Vec<Option<usize>>,
}

/// A handle on one shared service; clone it for each contender.
#[derive(Clone)]
pub struct FakeService {
    state: Rc<RefCell<State>>,
    now: Rc<Cell<SystemTime>>,
}

type Answer = (u16, Vec<(String, String)>, Vec<u8>);

impl FakeService {
    pub fn new(now: Rc<Cell<SystemTime>>) -> FakeService {
        FakeService { state: Rc::default(), now }
    }

    /// The id of the lease that holds `container/blob` right now, if one does: the oracle the
    /// interleaving tests judge grants by.
    pub fn holder(&self, container: &str, blob: &str) -> Option<String> {
        let state = self.state.borrow();
        let blob = state.blobs.get(&(container.to_string(), blob.to_string()))?;
        match settle(blob.lease.clone(), self.now.get()) {
            Lease::Leased { id, .. } | Lease::Breaking { id, .. } => Some(id),
            _ => None,
        }
    }

    /// Requests answered so far, across all handles.
    pub fn requests(&self) -> u64 {
        self.state.borrow().requests
    }

    fn handle(&self, request: &Request) -> Answer {
        let now = self.now.get();
        let mut state = self.state.borrow_mut();
        state.requests += 1;
        if request.headers().get("authorization").is_none() {
            return error(403, "AuthorizationFailure");
        }
        // Azure refuses a request dated more than 15 minutes from its own clock.
        let dated = request
            .headers()
            .get("x-ms-date")
            .and_then(|d| httpdate::parse_http_date(d.to_str().ok()?).ok());
        let skew = dated.map(|d| d.duration_since(now).unwrap_or_else(|e| e.duration()));
        if skew.is_none_or(|skew| skew > Duration::from_secs(15 * 60)) {
            return error(403, "AuthenticationFailed");
        }
        // Path: /account/container[/blob…]
        let path = request.uri().path().trim_start_matches('/');
        let mut parts = path.splitn(3, '/');
        let (_account, container) = (parts.next(), parts.next().unwrap_or("").to_string());
        let blob = parts.next().map(str::to_string);
        let query = request.uri().query().unwrap_or("");
        let header = |name: &str| {
            request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
        };
        match (request.method().as_str(), blob, query) {
            ("PUT", None, "restype=container") => {
                if state.containers.insert(container) {
                    (201, vec![], Vec::new())
                } else {
                    error(409, "ContainerAlreadyExists")
                }
            }
            ("GET", None, q) if q.starts_with("restype=container&comp=list") => {
                state.list(&container, q, now)
            }
            (method, Some(blob), query) => {
                if !state.containers.contains(&container) {
                    return error(404, "ContainerNotFound");
                }
                let key = (container, blob);
                if method == "PUT" && query.is_empty() {
                    return state.put_blob(key, request, &header, now);
                }
                let etag = state.next_etag;
                let Some(blob) = state.blobs.get_mut(&key) else {
                    return error(404, "BlobNotFound");
                };
                blob.lease = settle(blob.lease.clone(), now);
                if let Some(expected) = header("if-match") {
                    if expected != format!("\"{}\"", blob.etag) {
                        return error(412, "ConditionNotMet");
                    }
                }
                let answer = match (method, query) {
                    ("HEAD", "") => match blob.read_lease_check(header("x-ms-lease-id")) {
                        Some(refusal) => refusal,
                        None => blob.head(),
                    },
                    ("GET", "") => blob.get(),
                    ("PUT", "comp=lease") => {
                        // Every successful lease answer carries the blob's (unchanged) ETag.
                        let (status, mut headers, body) = blob.lease_action(&header, now);
                        if status < 300 {
                            headers.push(("etag".into(), format!("\"{}\"", blob.etag)));
                        }
                        (status, headers, body)
                    }
                    ("PUT", "comp=metadata") => {
                        blob.set_metadata(request, header("x-ms-lease-id"), etag + 1)
                    }
                    _ => error(400, "UnsupportedRequest"),
                };
                state.next_etag = state.next_etag.max(etag + 1);
                answer
            }
            _ => error(400, "UnsupportedRequest"),
        }
    }
}

impl Blob {
    fn locked(&self) -> bool {
        matches!(self.lease, Lease::Leased { .. } | Lease::Breaking { .. })
    }

    fn state_name(&self) -> &'static str {
        match self.lease {
            Lease::Available => "available",
            Lease::Leased { .. } => "leased",
            Lease::Expired { .. } => "expired",
            Lease::Breaking { .. } => "breaking",
            Lease::Broken { .. } => "broken",
        }
    }

    fn head(&self) -> Answer {
        let mut headers = vec![
            ("etag".to_string(), format!("\"{}\"", self.etag)),
            ("x-ms-lease-state".into(), self.state_name().into()),
            ("x-ms-lease-status".into(), if self.locked() { "locked" } else { "unlocked" }.into()),
            ("x-ms-creation-time".into(), httpdate::fmt_http_date(self.created)),
        ];
        if let Lease::Leased { expires, .. } = &self.lease {
            headers.push((
                "x-ms-lease-duration".into(),
                if expires.is_some() { "fixed" } else { "infinite" }.into(),
            ));
        }
        headers.extend(self.metadata.iter().map(|(k, v)| (format!("x-ms-meta-{k}"), v.clone())));
        (200, headers, Vec::new())
    }

    /// A read carrying `x-ms-lease-id` is answered only while that lease is active and ours
    /// (Get Blob Properties docs; shared/protocol.md §1.4). Azure says `LeaseLost` for an
    /// expired lease where Azurite says `LeaseNotPresentWithBlobOperation`: both read as lost.
    fn read_lease_check(&self, lease_id: Option<String>) -> Option<Answer> {
        let given = lease_id?;
        match &self.lease {
            Lease::Leased { id, .. } | Lease::Breaking { id, .. } if *id == given => None,
            Lease::Leased { .. } | Lease::Breaking { .. } => {
                Some(error(412, "LeaseIdMismatchWithBlobOperation"))
            }
            Lease::Expired { .. } => Some(error(412, "LeaseLost")),
            _ => Some(error(412, "LeaseNotPresentWithBlobOperation")),
        }
    }

    fn set_metadata(&mut self, request: &Request, lease_id: Option<String>, etag: u64) -> Answer {
        self.lease = match write_lease(self.lease.clone(), lease_id) {
            Ok(lease) => lease,
            Err(refusal) => return refusal,
        };
        self.metadata = request_metadata(request);
        self.etag = etag;
        (200, vec![("etag".into(), format!("\"{etag}\""))], Vec::new())
    }
}

/// The lease a write leaves behind, or the refusal: under a lease a write must carry its id; a
/// lease id on an unleased blob is refused; a write without one resets an expired or broken
/// lease. Shared by Set Blob Metadata and Put Blob, as the service applies one rule to writes.
fn write_lease(lease: Lease, lease_id: Option<String>) -> Result<Lease, Answer> {
    let held = match &lease {
        Lease::Leased { id, .. } | Lease::Breaking { id, .. } => Some(id.clone()),
        _ => None,
    };
    match (held, lease_id) {
        (Some(_), None) => Err(error(412, "LeaseIdMissing")),
        (Some(held), Some(given)) if held != given => {
            Err(error(412, "LeaseIdMismatchWithBlobOperation"))
        }
        (Some(_), Some(_)) => Ok(lease),
        (None, Some(_)) => Err(error(412, "LeaseNotPresentWithBlobOperation")),
        (None, None) => Ok(Lease::Available),
    }
}

/// The `x-ms-meta-*` headers of a write, prefix removed.
fn request_metadata(request: &Request) -> BTreeMap<String, String> {
    request
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            let name = name.as_str().strip_prefix("x-ms-meta-")?;
            Some((name.to_string(), value.to_str().ok()?.to_string()))
        })
        .collect()
}

fn error(status: u16, code: &str) -> Answer {
    let body = format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>{code}</Code><Message>fake: {code}</Message></Error>");
    (status, vec![("x-ms-error-code".into(), code.into())], body.into_bytes())
}

impl Transport for FakeService {
    fn send(&mut self, request: Request, _: Timeouts) -> Result<Response, TransportError> {
        let (status, headers, body) = self.handle(&request);
        let mut response = http::Response::builder()
            .status(status)
            .header("date", httpdate::fmt_http_date(self.now.get()))
            .header("x-ms-request-id", "fake");
        for (name, value) in headers {
            response = response.header(name, value);
        }
        Ok(response.body(body).unwrap())
    }
}

//! The sweep's transport: the fake service (and a fake identity endpoint) with a fault planned
//! for chosen requests, each fault one way a request fails in the field. Every request is
//! logged with whether it landed (the service acted on it) and what the service answered, which
//! is what the judge reads the grants from.

use crate::support::fake_service::FakeService;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::SystemTime;
use traffic_cop::transport::{
    Request, Response, Timeouts, Transport, TransportError, TransportErrorKind,
};

/// One way a request fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    /// Refused before it lands: no connection.
    Refused,
    /// Lands; the answer is lost (the connection breaks after the request went out).
    Lost,
    /// Lands; the answer comes after the client's time limit (it waited the whole limit).
    Late,
    /// Not landed: 500 InternalError.
    Internal500,
    /// Not landed: 503 ServerBusy.
    Busy503,
    /// Lands, then 503 ServerBusy (a gateway timing out on a service that acted).
    Busy503Landed,
    /// Not landed: 429 with `Retry-After: 1`.
    Throttled429,
    /// Lands; the connection breaks in the middle of the answer's body.
    CutBody,
}

pub const FAULTS: [Fault; 8] = [
    Fault::Refused,
    Fault::Lost,
    Fault::Late,
    Fault::Internal500,
    Fault::Busy503,
    Fault::Busy503Landed,
    Fault::Throttled429,
    Fault::CutBody,
];

/// One request as it went.
#[derive(Clone, Debug)]
pub struct Sent {
    pub request: Request,
    /// The service acted on it.
    pub landed: bool,
    /// What the service answered, when it was asked.
    pub status: Option<u16>,
}

/// The fake service behind planned faults. Clones share the log and the plan.
#[derive(Clone)]
pub struct Faulty {
    pub service: FakeService,
    clock: Rc<Cell<SystemTime>>,
    plan: Rc<RefCell<BTreeMap<usize, Fault>>>,
    pub sent: Rc<RefCell<Vec<Sent>>>,
}

impl Faulty {
    pub fn new(service: FakeService, clock: Rc<Cell<SystemTime>>) -> Faulty {
        Faulty { service, clock, plan: Rc::default(), sent: Rc::default() }
    }

    /// From now on, request `index` (counted from this call) meets `fault`.
    pub fn plan(&self, faults: &[(usize, Fault)]) {
        self.sent.borrow_mut().clear();
        *self.plan.borrow_mut() = faults.iter().copied().collect();
    }

    pub fn log(&self) -> Vec<Sent> {
        self.sent.borrow().clone()
    }

    fn answer(&mut self, request: &Request, timeouts: Timeouts) -> Response {
        if request.uri().path().starts_with("/devstoreaccount1") {
            self.service.send(request.clone(), timeouts).expect("the fake always answers")
        } else {
            identity_endpoint()
        }
    }
}

/// The identity endpoint: a token for an hour to anyone (the refusals are tested elsewhere).
fn identity_endpoint() -> Response {
    let body = r#"{"token_type":"Bearer","expires_in":3600,"access_token":"token-1"}"#;
    http::Response::builder().status(200).body(body.as_bytes().to_vec()).unwrap()
}

fn status(code: u16, error: &str, retry_after: Option<&str>) -> Response {
    let mut response = http::Response::builder().status(code).header("x-ms-error-code", error);
    if let Some(seconds) = retry_after {
        response = response.header("retry-after", seconds);
    }
    response.body(Vec::new()).unwrap()
}

fn broken(kind: TransportErrorKind, what: &str) -> TransportError {
    TransportError::new(kind, format!("{what} (sweep)"))
}

impl Transport for Faulty {
    fn send(&mut self, request: Request, timeouts: Timeouts) -> Result<Response, TransportError> {
        let index = self.sent.borrow().len();
        let fault = self.plan.borrow().get(&index).copied();
        let lands = matches!(
            fault,
            None | Some(Fault::Lost | Fault::Late | Fault::Busy503Landed | Fault::CutBody)
        );
        let answered = lands.then(|| self.answer(&request, timeouts));
        self.sent.borrow_mut().push(Sent {
            request: request.clone(),
            landed: lands,
            status: answered.as_ref().map(|r| r.status().as_u16()),
        });
        match (fault, answered) {
            (None, Some(response)) => Ok(response),
            (Some(Fault::Refused), _) => {
                Err(broken(TransportErrorKind::Connect, "connection refused"))
            }
            (Some(Fault::Lost), _) => Err(broken(TransportErrorKind::Interrupted, "answer lost")),
            (Some(Fault::Late), _) => {
                self.clock.set(self.clock.get() + timeouts.connect + timeouts.response);
                Err(broken(TransportErrorKind::Timeout, "no answer in time"))
            }
            (Some(Fault::CutBody), _) => {
                Err(broken(TransportErrorKind::Interrupted, "answer body broke off"))
            }
            (Some(Fault::Internal500), _) => Ok(status(500, "InternalError", None)),
            (Some(Fault::Busy503 | Fault::Busy503Landed), _) => Ok(status(503, "ServerBusy", None)),
            (Some(Fault::Throttled429), _) => Ok(status(429, "TooManyRequests", Some("1"))),
            (None, None) => unreachable!("an unplanned request always lands"),
        }
    }
}

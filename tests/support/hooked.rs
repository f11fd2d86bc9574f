//! The fake service behind hooks, for deterministic edge cases: a hook sees each request (with
//! its index and time limits) before it is answered and may move the virtual clock, let another
//! contender act at exactly that point, or answer in the service's place; another sees each
//! answer and may lose it or delay it.

use super::fake_service::FakeService;
use traffic_cop::transport::{
    Request, Response, Timeouts, Transport, TransportError, TransportErrorKind,
};

type Answer = Result<Response, TransportError>;
type Before = Box<dyn FnMut(usize, &Request, Timeouts) -> Option<Answer>>;
type After = Box<dyn FnMut(usize, &Request, Response) -> Answer>;

pub struct Hooked {
    service: FakeService,
    sent: usize,
    before: Before,
    after: After,
    /// Every request's method, query and time limits, in order.
    pub log: Vec<(String, String, Timeouts)>,
}

impl Hooked {
    pub fn new(service: FakeService) -> Hooked {
        Hooked {
            service,
            sent: 0,
            before: Box::new(|_, _, _| None),
            after: Box::new(|_, _, response| Ok(response)),
            log: Vec::new(),
        }
    }

    pub fn before(
        self,
        hook: impl FnMut(usize, &Request, Timeouts) -> Option<Answer> + 'static,
    ) -> Hooked {
        Hooked { before: Box::new(hook), ..self }
    }

    pub fn after(self, hook: impl FnMut(usize, &Request, Response) -> Answer + 'static) -> Hooked {
        Hooked { after: Box::new(hook), ..self }
    }
}

/// What a connection that broke after the request went out looks like to the client.
pub fn lost() -> Answer {
    Err(TransportError::new(TransportErrorKind::Interrupted, "answer lost (hook)"))
}

/// The request's `x-ms-lease-action`, or its query, or `HEAD`: enough to name each step.
pub fn step(request: &Request) -> String {
    match request.headers().get("x-ms-lease-action") {
        Some(action) => action.to_str().unwrap_or("").to_string(),
        None if request.method() == "HEAD" => "look".into(),
        None => request.uri().query().unwrap_or("").to_string(),
    }
}

impl Transport for Hooked {
    fn send(&mut self, request: Request, timeouts: Timeouts) -> Answer {
        let index = self.sent;
        self.sent += 1;
        self.log.push((request.method().to_string(), step(&request), timeouts));
        if let Some(answer) = (self.before)(index, &request, timeouts) {
            return answer;
        }
        let response = self.service.send(request.clone(), timeouts)?;
        (self.after)(index, &request, response)
    }
}

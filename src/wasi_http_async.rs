//! [`AsyncTransport`] over WASI 0.3's `wasi:http/client` and monotonic clock (the
//! 0.3.0-rc-2026-03-15 interfaces Spin 4.0.2 hosts), for the async component: what `hold`
//! renews through, so the job's work goes on while a renewal waits. Time limits are our own
//! timer raced against the exchange; a limit that passes drops the exchange.

use crate::transport::{
    AsyncTransport, Request, Response, Timeouts, TransportError, TransportErrorKind,
};
use crate::wasi_http::{error_kind, other, set_request_line, RequestLine};
use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;
use wasip3::clocks::monotonic_clock;
use wasip3::http::types::{ErrorCode, Fields, Method, Request as WasiRequest, Scheme};

pub(crate) struct WasiHttpAsync;

impl AsyncTransport for WasiHttpAsync {
    async fn send(
        &mut self,
        request: Request,
        timeouts: Timeouts,
    ) -> Result<Response, TransportError> {
        let limit = timeouts.connect + timeouts.response;
        match first(exchange(request), wait(limit)).await {
            Some(answer) => answer,
            None => Err(TransportError::new(TransportErrorKind::Timeout, "no response in time")),
        }
    }

    fn sleep(&mut self, duration: Duration) -> impl Future<Output = ()> {
        wait(duration)
    }
}

fn wait(duration: Duration) -> impl Future<Output = ()> {
    monotonic_clock::wait_for(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX))
}

/// `work`'s output, or `None` if `limit` ends first (then `work` is dropped, which cancels it).
async fn first<T>(work: impl Future<Output = T>, limit: impl Future<Output = ()>) -> Option<T> {
    let (mut work, mut limit) = (pin!(work), pin!(limit));
    std::future::poll_fn(|context| {
        if let Poll::Ready(output) = work.as_mut().poll(context) {
            return Poll::Ready(Some(output));
        }
        limit.as_mut().poll(context).map(|()| None)
    })
    .await
}

async fn exchange(request: Request) -> Result<Response, TransportError> {
    // `hold` only renews: lease calls have empty bodies, and this transport sends no other.
    if !request.body().is_empty() {
        return Err(other("the WASI 0.3 transport sends no request body"));
    }
    let line = RequestLine::of(&request);
    let headers =
        Fields::from_list(&line.headers).map_err(|_| other("host refused a request header"))?;
    let (trailers_writer, trailers) = wasip3::wit_future::new(|| Ok(None));
    drop(trailers_writer);
    let (outgoing, _sent) = WasiRequest::new(headers, None, trailers, None);
    set_request_line!(outgoing, request, line, Method, Scheme)?;
    let incoming =
        wasip3::http::client::send(outgoing).await.map_err(|e| error_kind!(ErrorCode, e))?;
    let mut response = http::Response::builder().status(incoming.get_status_code());
    for (name, value) in incoming.get_headers().copy_all() {
        response = response.header(name, value);
    }
    let (done_writer, done) = wasip3::wit_future::new(|| Ok(()));
    drop(done_writer);
    let (body, _trailers) = wasip3::http::types::Response::consume_body(incoming, done);
    let body = body.collect().await;
    response.body(body).map_err(|_| other("the host's answer is not a valid HTTP response"))
}

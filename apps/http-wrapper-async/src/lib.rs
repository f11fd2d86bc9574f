//! The async HTTP wrapper (Spin 4, `wasi:http@0.3.0-rc-2026-03-15`): a guarded singleton made of
//! any WASI 0.3 HTTP component, unchanged, for hosts where a scheduler calls a route (a
//! Kubernetes CronJob's `curl`). Every request that reaches the wrapper is a tick: the guard
//! decides, and only on the replica whose turn it is does the wrapped component's own handler
//! get the request, with the lease component's `hold` renewing the lease beside it. Routes the manifest
//! sends straight to the job are not guarded.
//!
//! Answers, so that a scheduler's `curl --fail` counts only real failures:
//! - a skip: 200, the decision as JSON (`decision: "skip"` and the reason);
//! - a run: the handler's own response, passed through; a status of 400 or more is recorded
//!   as the run's failure, and an error the handler returns instead of a response is returned
//!   to the host (which answers 500) and recorded as a failure too;
//! - a run whose lease was lost while the handler worked: 503, the handler's call dropped;
//! - settings that cannot be used: 500, the variable to fix named.
//!
//! The job gets the caller's request with the run in three headers, which replace any the
//! caller sent: `traffic-cop-fencing-token`, `traffic-cop-due-at-ms` (the due time the run is
//! for) and `traffic-cop-missed`. A job that ignores them is unchanged; one that writes
//! elsewhere can fence its writes with the token.

wit_bindgen::generate!({ world: "http-wrapper-async", path: "../wit", generate_all });

use exports::wasi::http::handler::Guest;
use traffic_cop_app::guard::{Outcome, RunDetails};
use traffic_cop_app::{answered, run_header_values, run_holding, Settings};
use traffic_cop_app::{TickReport, RUN_HEADERS};
use wasi::http::handler::handle as wrapped_handle;
use wasi::http::types::{ErrorCode, Fields, Request, Response};

struct Wrapper;

export!(Wrapper);

impl Guest for Wrapper {
    async fn handle(request: Request) -> Result<Response, ErrorCode> {
        let prefix = format!("http {}: ", request.get_path_with_query().unwrap_or_default());
        let settings = match Settings::from_wasi_config() {
            Ok(settings) => settings,
            Err(bad) => {
                eprintln!("{prefix}error: {bad}");
                return Ok(answer(500, "text/plain; charset=utf-8", bad.to_string()));
            }
        };
        let (report, reply) = tick(&settings, request).await;
        report.print(&prefix);
        match reply {
            Answered::Decision(status) => Ok(answer(status, "application/json", report.json())),
            Answered::Handler(response) => response,
        }
    }
}

/// What the caller gets: the decision itself, or the wrapped handler's own answer.
enum Answered {
    Decision(u16),
    Handler(Result<Response, ErrorCode>),
}

async fn tick(settings: &Settings, request: Request) -> (TickReport, Answered) {
    let call = move |run: &RunDetails| {
        let response = wrapped_handle(with_run(request, run));
        async {
            let response = response.await;
            let outcome = match &response {
                Ok(response) => answered(response.get_status_code()),
                Err(error) => Outcome::Failure(format!("the handler returned an error: {error:?}")),
            };
            (outcome, response)
        }
    };
    match run_holding(settings, call).await {
        (report, Some(response)) => (report, Answered::Handler(response)),
        // A run whose lease was lost while the handler worked: its call was dropped.
        (report, None) if report.fencing_token.is_some() => (report, Answered::Decision(503)),
        (report, None) => {
            let status = if report.is_misconfigured() { 500 } else { 200 };
            (report, Answered::Decision(status))
        }
    }
}

/// The caller's request, its body streamed through, with the run in [`RUN_HEADERS`].
fn with_run(request: Request, run: &RunDetails) -> Request {
    let headers = request.get_headers().clone();
    for (name, value) in RUN_HEADERS.into_iter().zip(run_header_values(run)) {
        // A caller's own header of the name is dropped: the job must not be told a token
        // it was not granted. A fresh copy of the headers is mutable, and the names and
        // digits are valid, so neither call fails.
        let _ = headers.delete(name);
        let _ = headers.append(name, value.as_bytes());
    }
    let (method, path, scheme, authority, options) = (
        request.get_method(),
        request.get_path_with_query(),
        request.get_scheme(),
        request.get_authority(),
        request.get_options(),
    );
    let (read_writer, read_reader) = wit_future::new(|| Ok(()));
    let (body, trailers) = Request::consume_body(request, read_reader);
    let (forwarded, sent) = Request::new(headers, Some(body), trailers, options);
    // The copied parts were valid on the caller's request, so they are on this one.
    let _ = forwarded.set_method(&method);
    let _ = forwarded.set_path_with_query(path.as_deref());
    let _ = forwarded.set_scheme(scheme.as_ref());
    let _ = forwarded.set_authority(authority.as_deref());
    // The caller's body is read once the job has read the forwarded one.
    wit_bindgen::spawn_local(async move {
        let _ = read_writer.write(sent.await).await;
    });
    forwarded
}

/// A response of the wrapper's own, its body written once the host reads it.
fn answer(status: u16, content_type: &str, body: String) -> Response {
    let headers = Fields::new();
    // Both values are the wrapper's own constants, valid header values.
    let _ = headers.append("content-type", content_type.as_bytes());
    let (mut body_writer, body_reader) = wit_stream::new();
    let (trailers_writer, trailers_reader) = wit_future::new(|| Ok(None));
    drop(trailers_writer);
    let (response, _sent) = Response::new(headers, Some(body_reader), trailers_reader);
    // Every status the wrapper answers with is a valid one.
    let _ = response.set_status_code(status);
    wit_bindgen::spawn_local(async move {
        body_writer.write_all(body.into_bytes()).await;
    });
    response
}

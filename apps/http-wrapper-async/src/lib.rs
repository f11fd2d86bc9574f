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
use traffic_cop_app::guard::RunDetails;
use traffic_cop_app::{answered, run_header_values, run_holding, Settings, RUN_HEADERS};
use wasi::http::handler::handle as wrapped_handle;
use wasi::http::types::{ErrorCode, Fields, Request, Response};

struct Wrapper;

export!(Wrapper);

impl Guest for Wrapper {
    async fn handle(request: Request) -> Result<Response, ErrorCode> {
        let prefix = format!("http {}: ", request.get_path_with_query().unwrap_or_default());
        let call = move |run: &RunDetails| {
            let response = wrapped_handle(with_run(request, run));
            async {
                let response = response.await;
                let status = response.as_ref().map(Response::get_status_code);
                (answered(status.map_err(|error| format!("{error:?}"))), response)
            }
        };
        let (report, response) = run_holding(&Settings::from_wasi_config(), call).await;
        report.print(&prefix);
        match response {
            Some(response) => response,
            None => Ok(answer(report.status(), report.json())),
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
    let (method, path, scheme) =
        (request.get_method(), request.get_path_with_query(), request.get_scheme());
    let (authority, options) = (request.get_authority(), request.get_options());
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
fn answer(status: u16, json: String) -> Response {
    let headers = Fields::new();
    // A valid header, as is every status the wrapper answers with.
    let _ = headers.append("content-type", b"application/json");
    let (mut body_writer, body_reader) = wit_stream::new();
    // No trailers: the writer is dropped at once.
    let (_, trailers) = wit_future::new(|| Ok(None));
    let (response, _sent) = Response::new(headers, Some(body_reader), trailers);
    let _ = response.set_status_code(status);
    wit_bindgen::spawn_local(async move {
        body_writer.write_all(json.into_bytes()).await;
    });
    response
}

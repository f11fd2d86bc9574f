//! The one-line form of a guarded singleton, for HTTP on WASI 0.2 (Spin 3.6.3, SpinKube's
//! shims), where no wrapper component can take a handler's answer (docs/wrappers.md): one
//! attribute above a spin-sdk handler, and its spin.toml gives it the lease component and the
//! settings.
//!
//! ```ignore
//! #[traffic_cop_guarded::guarded]
//! #[http_component]
//! fn handle(request: Request) -> anyhow::Result<impl IntoResponse> { … }
//! ```
//!
//! Every request the component gets is a tick, answered as the WASI 0.3 HTTP wrapper answers:
//! a skip 200 with the decision as JSON, a run the handler's own response (a status of 400 or
//! more is the run's failure), settings that cannot be used 500. The handler's request carries
//! the run in `RUN_HEADERS`, which replace any the caller sent. Nothing renews the lease while the handler runs (WASI 0.2 has no
//! background task), so the handler must end within its lease, as behind the sync cron wrapper:
//! `max_job_seconds` states how long it may take, and a longer one than the lease is refused.

use spin_sdk::http::IntoResponse;
use std::future::Future;
use traffic_cop_app::{answered, run_header_values, run_unrenewed, Settings, RUN_HEADERS};

pub use spin_sdk::http::{Request, Response};
pub use traffic_cop_guarded_macro::guarded;

/// One tick: the guard's decision, and on this replica's turn `job`'s answer to `request`.
/// What `#[guarded]` calls; a handler may also call it itself.
pub async fn http<F, R>(mut request: Request, job: impl FnOnce(Request) -> F) -> Response
where
    F: Future<Output = R>,
    R: IntoResponse,
{
    let prefix = match request.query() {
        "" => format!("http {}: ", request.path()),
        query => format!("http {}?{query}: ", request.path()),
    };
    let call = |run: &_| {
        for (name, value) in RUN_HEADERS.into_iter().zip(run_header_values(run)) {
            request.set_header(name, value);
        }
        async {
            let response = job(request).await.into_response();
            (answered(Ok(*response.status())), response)
        }
    };
    let (report, response) = run_unrenewed(&Settings::from_wasi_config(), call).await;
    report.print(&prefix);
    match response {
        Some(response) => response,
        None => Response::builder()
            .status(report.status())
            .header("content-type", "application/json")
            .body(report.json())
            .build(),
    }
}

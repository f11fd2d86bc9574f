//! HTTP-triggered Spin component: the job for hosts without a cron trigger (SpinKube: a
//! Kubernetes CronJob or any scheduler POSTs /run), the board, /metrics and the operator's
//! routes. The routes are in the shared crate (`routes`).

use spin_sdk::http::{IntoResponse, Method, Request, Response};
use spin_sdk::http_component;
use traffic_cop_app::routes::{handle as route, unsettled, Asked};
use traffic_cop_app::Settings;

#[http_component]
fn handle(request: Request) -> Response {
    let method = match request.method() {
        Method::Get => "GET",
        Method::Post => "POST",
        _ => "OTHER",
    };
    let header = |name: &str| request.header(name).and_then(|v| v.as_str());
    let asked = Asked {
        method,
        path: request.path(),
        query: request.query(),
        authorization: header("authorization"),
        accept: header("accept"),
    };
    let answer = match Settings::for_event() {
        Ok(settings) => route(&settings, &asked),
        Err(bad) => {
            eprintln!("http {}: error: {bad}", asked.path);
            unsettled(&bad, &asked)
        }
    };
    respond(answer.status, answer.content_type, answer.body)
}

fn respond(status: u16, content_type: &str, body: String) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(body)
        .build()
        .into_response()
}

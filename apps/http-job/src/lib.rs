//! HTTP-triggered Spin component: the job for hosts without a cron trigger (SpinKube: a
//! Kubernetes CronJob or any scheduler POSTs /run), the board, /metrics and the operator's
//! routes. The routes are in the shared crate (`routes`).

use spin_sdk::http::{IntoResponse, Method, Request, Response};
use spin_sdk::http_component;
use traffic_cop_app::routes::{handle as route, unsettled, Asked, CHALLENGE};
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
    let mut response = Response::builder();
    response.status(answer.status).header("content-type", answer.content_type);
    if answer.challenge {
        response.header("www-authenticate", CHALLENGE);
    }
    response.body(answer.body).build().into_response()
}

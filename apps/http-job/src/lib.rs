//! HTTP-triggered Spin component, for hosts without a cron trigger (SpinKube: a Kubernetes
//! CronJob or any scheduler calls the route):
//! - `POST /run`: one guarded tick, as the cron component does; the report as JSON.
//! - `GET /status`: the status board as JSON; `GET /status.html`: the same as an HTML table.

use spin_sdk::http::{IntoResponse, Method, Request, Response};
use spin_sdk::http_component;
use traffic_cop_app::{board_html, board_json, tick, Settings};

#[http_component]
fn handle(request: Request) -> Response {
    let settings = match Settings::from_spin_variables() {
        Ok(settings) => settings,
        Err(error) => return text(500, "text/plain", error),
    };
    let path = request.path().trim_end_matches('/');
    match (request.method(), path.rsplit('/').next().unwrap_or("")) {
        (Method::Post, "run") => {
            let report = tick(&settings);
            println!("http tick: {}", report.line());
            text(200, "application/json", serde_json::to_string(&report).unwrap_or_default())
        }
        (Method::Get, "status") => rendered(board_json(&settings), "application/json"),
        (Method::Get, "status.html") => rendered(board_html(&settings), "text/html; charset=utf-8"),
        _ => text(404, "text/plain", "routes: POST /run, GET /status, GET /status.html".into()),
    }
}

fn rendered(body: Result<String, String>, content_type: &str) -> Response {
    match body {
        Ok(body) => text(200, content_type, body),
        Err(error) => text(502, "text/plain", error),
    }
}

fn text(status: u16, content_type: &str, body: String) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(body)
        .build()
        .into_response()
}

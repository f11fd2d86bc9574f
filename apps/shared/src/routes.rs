//! The HTTP component's routes, matched exactly (`/x/run` is not `/run`):
//! - `POST /run`: one guarded tick, as the cron component does; the decision as JSON.
//! - `GET /status`, `GET /status.html`: the board as JSON and as a page.
//! - `GET /metrics`: Prometheus' text format, or OpenMetrics when asked for.
//! - `GET /check`: the settings judged before they run (`check`): the variables to fix, the next
//!   due times in the job's zone and in UTC, and one look at storage that creates nothing; as
//!   sentences with `Accept: text/plain`, JSON otherwise.
//! - `POST /pause?by=…&reason=…&drain_ms=…`, `POST /resume?by=…`, `POST /run-now?by=…`: the
//!   operator's verbs; they exist only when `board_token` is set.
//!
//! With `board_token` set, every route needs the token: `Authorization: Bearer <board_token>`
//! from a script or a scraper, or HTTP Basic with any user name and the token as the password
//! from a browser, which asks for it when a route answers 401 (the token stays off URLs and
//! out of logs). Without it, the board, /metrics and /run answer anyone who can reach the app,
//! except that `/run` on a job without a schedule is refused: anyone could run it at will.

use crate::board::{board_json, Snapshot};
use crate::board_html::board_html;
use crate::settings::BadVariable;
use crate::{cache, check, janitor, metrics, operator, Settings};

/// A route's answer.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    /// A 401 that asks for the token: send [`CHALLENGE`] with it, so a browser prompts for it.
    pub challenge: bool,
}

/// What a 401 answers in `WWW-Authenticate`: Basic, which a browser prompts for (a script
/// sends its Bearer token without being asked).
pub const CHALLENGE: &str = "Basic realm=\"traffic-cop\", charset=\"UTF-8\"";

impl Answer {
    fn text(status: u16, body: impl Into<String>) -> Answer {
        let content_type = "text/plain; charset=utf-8";
        Answer { status, content_type, body: body.into(), challenge: false }
    }

    fn json(status: u16, body: String) -> Answer {
        Answer { status, content_type: "application/json", body, challenge: false }
    }
}

/// What a request says, as the routes read it.
pub struct Asked<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub authorization: Option<&'a str>,
    pub accept: Option<&'a str>,
}

const ROUTES: &str = "routes: POST /run, GET /status, GET /status.html, GET /metrics, GET /check \
                      (and, with board_token set, POST /pause, /resume, /run-now)";

pub fn handle(settings: &Settings, asked: &Asked) -> Answer {
    let protected = !settings.board_token.is_empty();
    let path = asked.path.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(asked.path);
    let operator_route = matches!(path, "/pause" | "/resume" | "/run-now");
    let known = matches!(path, "/run" | "/status" | "/status.html" | "/metrics" | "/check");
    if !(known || operator_route && protected) {
        return Answer::text(404, ROUTES);
    }
    if protected && !authorized(&settings.board_token, asked.authorization) {
        let said = "this route needs the board token: Authorization: Bearer <board_token>, or in \
                    a browser any user name with the board token as the password";
        return Answer { challenge: true, ..Answer::text(401, said) };
    }
    match (asked.method, path) {
        ("POST", "/run") if !protected && settings.schedule.is_empty() => Answer::text(
            403,
            "POST /run on a job without a schedule would let anyone run it at will: set a \
             schedule, or board_token to protect the routes",
        ),
        ("POST", "/run") => {
            let report = janitor::tick(settings);
            report.print("http tick: ");
            // A scheduler that POSTs /run (a Kubernetes CronJob) sees misconfiguration fail.
            Answer::json(if report.is_misconfigured() { 500 } else { 200 }, report.json())
        }
        ("GET", "/check") if check::wants_text(asked.accept) => {
            let (status, body) = check::check_text(settings);
            Answer::text(status, body)
        }
        ("GET", "/check") => {
            let (status, body) = check::check_json(settings);
            Answer::json(status, body)
        }
        ("GET", "/status") => listed(settings, |s| Answer::json(200, board_json(s))),
        ("GET", "/status.html") => listed(settings, |s| Answer {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: board_html(s),
            challenge: false,
        }),
        ("GET", "/metrics") => {
            let openmetrics = metrics::wants_openmetrics(asked.accept);
            let content_type =
                if openmetrics { metrics::OPENMETRICS_TYPE } else { metrics::PROMETHEUS_TYPE };
            // A failed listing is still an answer: storage_up 0, so "storage unreachable" and
            // "app not scraped" are told apart.
            let snapshot = cache::snapshot(settings).ok().map(|(snapshot, _)| snapshot);
            let body = metrics::render(snapshot.as_ref(), &check::problems(settings), openmetrics);
            Answer { status: 200, content_type, body, challenge: false }
        }
        ("POST", verb @ ("/pause" | "/resume" | "/run-now")) => {
            match operator::call(settings, verb, asked.query) {
                Ok(answer) => Answer::json(200, answer),
                Err((status, error)) => Answer::text(status, error),
            }
        }
        _ => Answer::text(405, ROUTES),
    }
}

/// The answer when the app's variables cannot even be read into settings: `/metrics` and
/// `/check` still say which variable to fix (so the alert fires and the check explains), every
/// other route is a 500 that names it. No route is served to anyone else: without settings the
/// board token cannot be checked, and these two answers carry no secret.
pub fn unsettled(bad: &BadVariable, asked: &Asked) -> Answer {
    let path = asked.path.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(asked.path);
    match (asked.method, path) {
        ("GET", "/metrics") => {
            let openmetrics = metrics::wants_openmetrics(asked.accept);
            let content_type =
                if openmetrics { metrics::OPENMETRICS_TYPE } else { metrics::PROMETHEUS_TYPE };
            let body = metrics::render(None, std::slice::from_ref(bad), openmetrics);
            Answer { status: 200, content_type, body, challenge: false }
        }
        ("GET", "/check") if check::wants_text(asked.accept) => {
            Answer::text(422, format!("The settings cannot be used yet:\n- {bad}\n"))
        }
        ("GET", "/check") => {
            let body = serde_json::json!({
                "ok": false,
                "problems": [{"variable": bad.variable, "message": bad.message}],
            });
            Answer::json(422, serde_json::to_string_pretty(&body).unwrap_or_default())
        }
        _ => Answer::text(500, bad.to_string()),
    }
}

fn listed(settings: &Settings, render: impl Fn(&Snapshot) -> Answer) -> Answer {
    match cache::snapshot(settings) {
        Ok((snapshot, _)) => render(&snapshot),
        Err(error) => Answer::text(502, error),
    }
}

/// The board token, given as a Bearer token or as a Basic password (any user name).
fn authorized(token: &str, authorization: Option<&str>) -> bool {
    let Some(authorization) = authorization else { return false };
    if let Some(given) = authorization.strip_prefix("Bearer ") {
        return same(given.trim().as_bytes(), token.as_bytes());
    }
    let Some(encoded) = authorization.strip_prefix("Basic ") else { return false };
    use base64::Engine;
    let Ok(pair) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
        return false;
    };
    let password = pair.iter().position(|b| *b == b':').map(|colon| &pair[colon + 1..]);
    password.is_some_and(|password| same(password, token.as_bytes()))
}

/// Compares in time that does not depend on where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    let differs = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    a.len() == b.len() && differs == 0
}

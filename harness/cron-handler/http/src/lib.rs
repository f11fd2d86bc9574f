//! The wrapped job of the HTTP wrapper's stories: a plain WASI 0.3 HTTP handler that knows
//! nothing of traffic-cop. Prints `handler called for <path>: <mode>` on every call (the test
//! counts them), and the run the wrapper's headers carry, then, by its environment: waits `HANDLER_MS`, and answers by `HANDLER_MODE`:
//! `ok` (200), `fail` (500), `trap` (a panic, which traps and takes the instance with it), or
//! `cycle` (ok, fail, trap, ok in turn by the wall clock's 3 s slot: `seconds / 3 % 4`; four
//! slots, so the run that takes over a trap after a 15 s lease, 15 or 18 s later, answers ok).

use wasip3::clocks::{monotonic_clock, system_clock};
use wasip3::http::types::{ErrorCode, Fields, Request, Response};
use wasip3::{wit_bindgen, wit_future, wit_stream};

wasip3::http::service::export!(Handler);

struct Handler;

impl wasip3::exports::http::handler::Guest for Handler {
    async fn handle(request: Request) -> Result<Response, ErrorCode> {
        let mode = std::env::var("HANDLER_MODE").unwrap_or_default();
        let mode = match mode.as_str() {
            "cycle" => {
                let seconds = system_clock::now().seconds;
                ["ok", "fail", "trap", "ok"][(seconds / 3 % 4) as usize]
            }
            other => other,
        };
        let path = request.get_path_with_query().unwrap_or_default();
        println!("handler called for {path}: {mode}");
        // The run, when a wrapper passed it on (an unchanged job would ignore these).
        let headers = request.get_headers();
        let header = |name: &str| {
            let values = headers.get(name);
            values.first().map(|v| String::from_utf8_lossy(v).into_owned())
        };
        if let Some(token) = header("traffic-cop-fencing-token") {
            let due = header("traffic-cop-due-at-ms").unwrap_or_default();
            let missed = header("traffic-cop-missed").unwrap_or_default();
            println!(
                "handler given fencing token {token} for the due time {due} ({missed} missed)"
            );
        }
        let wait_ms: u64 =
            std::env::var("HANDLER_MS").ok().and_then(|ms| ms.parse().ok()).unwrap_or(0);
        if wait_ms > 0 {
            monotonic_clock::wait_for(wait_ms * 1_000_000).await;
        }
        match mode {
            "fail" => Ok(answer(500, format!("the job failed for {path}"))),
            "trap" => panic!("the job trapped for {path}"),
            _ => Ok(answer(200, format!("the job ran for {path}"))),
        }
    }
}

fn answer(status: u16, body: String) -> Response {
    let (mut body_writer, body_reader) = wit_stream::new();
    let (trailers_writer, trailers_reader) = wit_future::new(|| Ok(None));
    drop(trailers_writer);
    let (response, _sent) = Response::new(Fields::new(), Some(body_reader), trailers_reader);
    response.set_status_code(status).expect("a valid status");
    wit_bindgen::spawn(async move {
        body_writer.write_all(body.into_bytes()).await;
    });
    response
}

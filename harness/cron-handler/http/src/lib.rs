//! The wrapped job of the HTTP wrapper's stories: a plain WASI 0.3 HTTP handler that knows
//! nothing of traffic-cop. Prints its call, the run the wrapper's headers carry and the body it read, waits
//! `HANDLER_MS`, and answers by its mode (`behaviour.rs`): `ok` 200, `fail` 500, `trap` a panic
//! (which traps and takes the instance with it).

use wasip3::clocks::{monotonic_clock, system_clock};
use wasip3::http::types::{ErrorCode, Fields, Request, Response};
use wasip3::{wit_bindgen, wit_future, wit_stream};

#[path = "../../behaviour.rs"]
mod behaviour;

wasip3::http::service::export!(Handler);

struct Handler;

impl wasip3::exports::http::handler::Guest for Handler {
    async fn handle(request: Request) -> Result<Response, ErrorCode> {
        let mode = behaviour::http_mode(system_clock::now().seconds.unsigned_abs());
        let path = request.get_path_with_query().unwrap_or_default();
        let headers = request.get_headers();
        behaviour::print_call(&path, &mode, |name| {
            let values = headers.get(name);
            values.first().map(|v| String::from_utf8_lossy(v).into_owned())
        });
        let (_read, read) = wit_future::new(|| Ok(()));
        let (body, _trailers) = Request::consume_body(request, read);
        behaviour::print_body(&body.collect().await);
        let wait_ms = behaviour::work_ms();
        if wait_ms > 0 {
            monotonic_clock::wait_for(wait_ms * 1_000_000).await;
        }
        match mode.as_str() {
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

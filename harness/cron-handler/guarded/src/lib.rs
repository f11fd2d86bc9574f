//! The one-line form's job (tests/spin/http_wrapper.rs): a spin-sdk HTTP handler for WASI 0.2
//! as `spin new -t http-rust` writes one, guarded by the attribute above it and nothing else.
//! It prints and answers as the WASI 0.3 job does (`behaviour.rs`), its failure an `Err`.

use spin_sdk::http::{IntoResponse, Request, Response};
use spin_sdk::http_component;
use std::time::{Duration, SystemTime};

#[path = "../../behaviour.rs"]
mod behaviour;

#[traffic_cop_guarded::guarded]
#[http_component]
fn handle_nightly(req: Request) -> anyhow::Result<impl IntoResponse> {
    let seconds = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH)?.as_secs();
    let mode = behaviour::http_mode(seconds);
    let path = req.path().to_string();
    behaviour::print_call(&path, &mode, |name| {
        req.header(name).and_then(|v| v.as_str()).map(str::to_string)
    });
    behaviour::print_body(req.body());
    std::thread::sleep(Duration::from_millis(behaviour::work_ms()));
    match mode.as_str() {
        "fail" => Err(anyhow::anyhow!("the job failed for {path}")),
        "trap" => panic!("the job trapped for {path}"),
        _ => Ok(Response::new(200, format!("the job ran for {path}"))),
    }
}

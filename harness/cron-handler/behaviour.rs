//! What the cron test handlers do, by their environment (each crate includes this file):
//! work `HANDLER_MS`, then answer by `HANDLER_MODE`: `ok`, `fail` (an error), `trap` (a panic,
//! which traps and takes the instance with it), or `cycle` (ok, fail, trap in turn by the due
//! time: `due / 3 % 3`).

/// How long the job works, in milliseconds.
pub fn work_ms() -> u64 {
    std::env::var("HANDLER_MS").ok().and_then(|ms| ms.parse().ok()).unwrap_or(0)
}

/// The job's answer for the due time `due` (Unix seconds): `Err` with the failure's text.
#[allow(dead_code)] // the HTTP handlers answer by `http_mode`
pub fn answer(due: u64) -> Result<(), String> {
    let mode = std::env::var("HANDLER_MODE").unwrap_or_default();
    let mode = match mode.as_str() {
        "cycle" => ["ok", "fail", "trap"][(due / 3 % 3) as usize],
        other => other,
    };
    match mode {
        "fail" => Err(format!("the job failed for {due}")),
        "trap" => panic!("the job trapped for {due}"),
        _ => Ok(()),
    }
}

/// The HTTP handlers' mode for a call at `seconds` (Unix, the wall clock): `HANDLER_MODE`, and
/// for `cycle` ok, fail, trap, ok in turn by the 3 s slot (`seconds / 3 % 4`; four slots, so the
/// run that takes over a trap after a 15 s lease, 15 or 18 s later, answers ok).
#[allow(dead_code)] // the cron handlers include this file too
pub fn http_mode(seconds: u64) -> String {
    match std::env::var("HANDLER_MODE").unwrap_or_default().as_str() {
        "cycle" => ["ok", "fail", "trap", "ok"][(seconds / 3 % 4) as usize].to_string(),
        other => other.to_string(),
    }
}

/// An HTTP handler's lines for a call (the tests count them): the call, and the run a wrapper
/// passed on in its headers, read with `header` (an unchanged job would ignore them).
#[allow(dead_code)]
pub fn print_call(path: &str, mode: &str, header: impl Fn(&str) -> Option<String>) {
    println!("handler called for {path}: {mode}");
    if let Some(token) = header("traffic-cop-fencing-token") {
        let due = header("traffic-cop-due-at-ms").unwrap_or_default();
        let missed = header("traffic-cop-missed").unwrap_or_default();
        println!("handler given fencing token {token} for the due time {due} ({missed} missed)");
    }
}

/// An HTTP handler's line for the request body it read (the tests compare it with what the
/// scheduler sent): its length and its first line.
#[allow(dead_code)]
pub fn print_body(body: &[u8]) {
    let first = body.split(|b| *b == b'\n').next().unwrap_or_default();
    println!("handler read {} bytes: {}", body.len(), String::from_utf8_lossy(first));
}

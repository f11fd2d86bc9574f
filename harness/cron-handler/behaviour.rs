//! What the cron test handlers do, by their environment (each crate includes this file):
//! work `HANDLER_MS`, then answer by `HANDLER_MODE`: `ok`, `fail` (an error), `trap` (a panic,
//! which traps and takes the instance with it), or `cycle` (ok, fail, trap in turn by the due
//! time: `due / 3 % 3`).

/// How long the job works, in milliseconds.
pub fn work_ms() -> u64 {
    std::env::var("HANDLER_MS").ok().and_then(|ms| ms.parse().ok()).unwrap_or(0)
}

/// The job's answer for the due time `due` (Unix seconds): `Err` with the failure's text.
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

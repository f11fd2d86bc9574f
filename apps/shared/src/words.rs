//! How the app says things to people: times in ISO 8601 (on the job's wall clock beside UTC),
//! durations, and guard errors in a sentence. The apps carry no calendar and no zone data: the
//! lease component renders every time (`show-time`), from the same zone table its schedules
//! use.

use crate::guard::{self, GuardError};
use crate::lease::{LeaseError, ServiceError};

/// `at_ms` in UTC: `2026-11-27T01:00:00Z` (`-` when unknown).
pub fn utc(at_ms: Option<u64>) -> String {
    shown(at_ms, None)
}

/// `at_ms` on `zone`'s wall clock with UTC beside it: `2026-11-27T02:00:00+01:00
/// (2026-11-27T01:00:00Z)`; UTC alone when the zone is UTC, empty, or cannot be read.
pub fn shown(at_ms: Option<u64>, zone: Option<&str>) -> String {
    let Some(at_ms) = at_ms else { return "-".into() };
    let zone = zone.map(str::trim).filter(|z| !z.is_empty());
    match guard::show_time(at_ms, zone).or_else(|_| guard::show_time(at_ms, None)) {
        Ok(time) if time.local != time.utc => format!("{} ({})", time.local, time.utc),
        Ok(time) => time.utc,
        // Unreachable in practice (UTC always renders); the instant is still worth saying.
        Err(_) => format!("{at_ms} ms since the Unix epoch"),
    }
}

/// A span people read: `42 s`, `11 h 50 min`, `3 d 2 h`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{:.1} s", ms as f64 / 1000.0),
        1..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => match s / 60 % 60 {
            0 => format!("{} h", s / 3600),
            m => format!("{} h {m} min", s / 3600),
        },
        _ => match s / 3600 % 24 {
            0 => format!("{} d", s / 86_400),
            h => format!("{} d {h} h", s / 86_400),
        },
    }
}

/// A guard error in a sentence (its Debug is for programmers).
pub fn describe(error: &GuardError) -> String {
    match error {
        GuardError::BadOption(bad) => format!("bad option: {}: {}", bad.field, bad.message),
        GuardError::Lease(error) => lease_error(error),
        GuardError::LeaseRanOut(ran_out) => {
            format!("lease lost: its time ran out here: {}", ran_out.message)
        }
        GuardError::Contended(contended) => {
            format!("gave up after {} attempts: {}", contended.attempts, contended.message)
        }
        GuardError::UnexpectedAnswer(what) => format!("unexpected answer: {what}"),
        GuardError::LimitReached(what) => format!("limit reached: {what}"),
        GuardError::UnusableToken(token) => format!("unusable access token: {}", token.message),
    }
}

/// A raw verb's error in a sentence, in the lease component's own words (its `Display`).
pub fn lease_error(error: &LeaseError) -> String {
    match error {
        LeaseError::HeldByOther(e) => format!("lease is held by another holder: {}", service(e)),
        LeaseError::LeaseLost(e) => format!("lease lost or not ours: {}", service(e)),
        LeaseError::NotFound(e) => format!("not found: {}", service(e)),
        LeaseError::Unauthorized(e) => format!("unauthorized: {}", service(e)),
        LeaseError::InvalidConfig(m) => format!("invalid configuration: {m}"),
        LeaseError::InvalidArgument(m) => format!("invalid argument: {m}"),
        LeaseError::Throttled(e) => format!("throttled by the service: {}", service(e)),
        LeaseError::Transport(m) => format!("transport failure: {m}"),
        LeaseError::Service(e) => format!("service error: {}", service(e)),
    }
}

/// `HTTP 403 AuthenticationFailed: … (request id …)`; status 0 is a decision made here, not
/// an answer, so it is not shown as one.
fn service(e: &ServiceError) -> String {
    let mut said = if e.status == 0 { String::new() } else { format!("HTTP {}", e.status) };
    if let Some(code) = &e.code {
        said = if said.is_empty() { code.clone() } else { format!("{said} {code}") };
    }
    if !e.message.is_empty() {
        said = if said.is_empty() { e.message.clone() } else { format!("{said}: {}", e.message) };
    }
    if let Some(id) = &e.request_id {
        said.push_str(&format!(" (request id {id})"));
    }
    said
}

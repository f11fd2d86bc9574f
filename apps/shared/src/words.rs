//! How the board and the settings check show times (ISO 8601, on the job's wall clock beside
//! UTC) and spans. Decisions, runs and errors are said by the lease component. The apps carry no calendar and no zone data: the
//! lease component renders every time (`show-time`), from the same zone table its schedules
//! use.

use crate::guard;

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

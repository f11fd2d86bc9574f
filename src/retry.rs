//! Bounded exponential backoff with jitter, and the rule for what is worth retrying.
//!
//! Retried: 408, 429, 500, 502, 503, 504 and exchanges that did not complete. Never retried:
//! 409 and 412, which are the lease protocol's answers, and everything else.

use crate::transport::{Response, Runtime, TransportError};
use std::time::{Duration, SystemTime};

/// How hard to try. The defaults keep a whole call (4 attempts, each bounded by the transport
/// timeouts) well inside a 15-second lease: about 0.1 + 0.2 + 0.4 s of sleep in the worst case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts, including the first (at least 1).
    pub max_attempts: u32,
    /// Backoff before the second attempt; it doubles each time up to `max_delay`.
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// No retries: one attempt only.
    pub fn none() -> RetryPolicy {
        RetryPolicy { max_attempts: 1, ..RetryPolicy::default() }
    }

    /// The wait before attempt `attempt + 1` (`attempt` counts from 1): "equal jitter", half
    /// fixed and half random, so replicas that failed together do not retry together.
    pub fn delay(&self, attempt: u32, runtime: &dyn Runtime) -> Duration {
        let exponent = attempt.saturating_sub(1).min(16);
        let ceiling = self.base_delay.saturating_mul(1 << exponent).min(self.max_delay);
        let half = ceiling / 2;
        let jitter_ms = half.as_millis() as u64;
        let jitter = if jitter_ms == 0 { 0 } else { runtime.random_u64() % (jitter_ms + 1) };
        half + Duration::from_millis(jitter)
    }
}

/// Whether an answer is a passing failure worth another attempt.
pub fn is_transient_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
}

/// Whether this outcome of one attempt should be retried. Every verb may be retried: acquire
/// and change are idempotent on the service, and release resolves a repeat itself
/// ([`crate::ops::Op::interpret_after_ambiguous`]).
pub fn should_retry(outcome: &Result<Response, TransportError>) -> bool {
    match outcome {
        Ok(response) => is_transient_status(response.status().as_u16()),
        Err(error) => error.is_transient(),
    }
}

/// Whether a failed attempt may nevertheless have been carried out by the service.
pub fn was_ambiguous(outcome: &Result<Response, TransportError>) -> bool {
    match outcome {
        Ok(response) => response.status().is_server_error() || response.status().as_u16() == 408,
        Err(error) => error.kind != crate::transport::TransportErrorKind::Connect,
    }
}

/// The wait a throttled or busy service asked for in `Retry-After`: whole seconds, or an HTTP
/// date measured against `now`. Only on answers we retry.
pub fn retry_after(
    outcome: &Result<Response, TransportError>,
    now: SystemTime,
) -> Option<Duration> {
    let response = outcome.as_ref().ok()?;
    if !is_transient_status(response.status().as_u16()) {
        return None;
    }
    let value = response.headers().get(http::header::RETRY_AFTER)?.to_str().ok()?.trim();
    match value.parse::<u64>() {
        Ok(seconds) => Some(Duration::from_secs(seconds)),
        Err(_) => {
            let at = crate::http_date::parse(value)?;
            Some(at.duration_since(now).unwrap_or(Duration::ZERO))
        }
    }
}

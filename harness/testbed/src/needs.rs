//! What a test needs that may be missing on a developer's machine (a Spin CLI, a plugin line,
//! a built guest, a Python tool): [`require`] hands it over, or ends the test as skipped. The
//! runner ([`crate::runner`]) reports a skipped test as *ignored* with the reason, never as
//! passed; under CI (`CI=true`) a missing tool fails the test instead, since CI must run it.

/// The unwind payload of a skipped test: the reason.
pub struct Skip(pub String);

/// Whether this run is CI's (`CI=true` or `CI=1`), where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The value when found. When not, the test ends here: failed under CI, skipped elsewhere.
pub fn require<T>(what: &str, found: Result<T, String>) -> T {
    match found {
        Ok(value) => value,
        Err(why) => skip(&format!("{what}: {why}")),
    }
}

/// Ends the test: a failure under CI, a skip (reported as ignored) elsewhere.
pub fn skip(reason: &str) -> ! {
    if in_ci() {
        panic!("CI must run this test, but {reason}");
    }
    std::panic::resume_unwind(Box::new(Skip(reason.to_string())))
}

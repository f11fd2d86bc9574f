//! No error text or Debug output carries the account key, a signature or a SAS, even when the
//! server or the host echoes everything we sent.

use crate::support::*;
use traffic_cop::transport::{
    Request, Response, Timeouts, Transport, TransportError, TransportErrorKind,
};
use traffic_cop::{Error, LeaseClient, LeaseDuration, LeaseId, Lock};

/// base64("SENTINEL-ACCOUNT-KEY-0123456789abcdef"): easy to grep for in any output.
const SENTINEL_KEY: &str = "U0VOVElORUwtQUNDT1VOVC1LRVktMDEyMzQ1Njc4OWFiY2RlZg==";
const SENTINEL_SAS_SIG: &str = "SENTINELSASSIGNATURE";

/// A hostile peer: answers every request with an error whose message, and a transport failure
/// whose detail, repeat the request's Authorization header and URI.
struct Echo {
    fail_transport: bool,
    authorizations: Vec<String>,
}

impl Transport for Echo {
    fn send(&mut self, request: Request, _: Timeouts) -> Result<Response, TransportError> {
        let auth = request
            .headers()
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        self.authorizations.push(auth.clone());
        let echo = format!("you sent '{auth}' to {}", request.uri());
        if self.fail_transport {
            return Err(TransportError::new(TransportErrorKind::Interrupted, echo));
        }
        let body = format!("<Error><Code>AuthenticationFailed</Code><Message>{echo}</Message><AuthenticationErrorDetail>{echo}</AuthenticationErrorDetail></Error>");
        Ok(http::Response::builder()
            .status(403)
            .header("x-ms-error-code", "AuthenticationFailed")
            .body(body.into_bytes())
            .unwrap())
    }
}

fn assert_clean(text: &str, signatures: &[String]) {
    assert!(!text.contains(SENTINEL_KEY), "key leaked: {text}");
    assert!(!text.contains(SENTINEL_SAS_SIG), "SAS leaked: {text}");
    for auth in signatures.iter().filter(|a| !a.is_empty()) {
        let signature = auth.rsplit(':').next().unwrap();
        assert!(!text.contains(signature), "signature leaked: {text}");
    }
}

fn exercise(lock: &Lock, fail_transport: bool) {
    let mut client =
        LeaseClient::new(Echo { fail_transport, authorizations: vec![] }, VirtualRuntime::new());
    let id = LeaseId::parse("8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e").unwrap();
    let errors: Vec<Error> = vec![
        client.acquire(lock, LeaseDuration::Fixed(15), None).unwrap_err(),
        client.renew(lock, &id).unwrap_err(),
        client.release(lock, &id).unwrap_err(),
        client.inspect(lock).unwrap_err(),
    ];
    let sent = client.transport().authorizations.clone();
    assert!(client.round_trips() >= 4);
    for error in errors {
        if fail_transport {
            assert!(matches!(error, Error::Transport(_)), "{error:?}");
        } else {
            assert!(matches!(error, Error::Unauthorized(_)), "{error:?}");
        }
        assert_clean(&format!("{error} {error:?}"), &sent);
    }
}

#[test]
fn a_sentinel_key_never_appears_in_errors_from_service_or_transport() {
    let lock = Lock::parse(
        &format!("DefaultEndpointsProtocol=http;AccountName=sentinel1;AccountKey={SENTINEL_KEY};BlobEndpoint=http://127.0.0.1:9/sentinel1"),
        "locks",
        "x",
    )
    .unwrap();
    assert_clean(&format!("{lock:?}"), &[]);
    exercise(&lock, false);
    exercise(&lock, true);
}

#[test]
fn a_sentinel_sas_never_appears_in_errors() {
    let lock = Lock::parse(
        &format!("BlobEndpoint=http://127.0.0.1:9/sentinel1;SharedAccessSignature=sv=2025-11-05&sp=rw&sig={SENTINEL_SAS_SIG}"),
        "locks",
        "x",
    )
    .unwrap();
    assert_clean(&format!("{lock:?}"), &[]);
    exercise(&lock, false);
    exercise(&lock, true);
}

#[test]
fn invalid_keys_are_reported_without_echoing_them() {
    let bad = "AccountName=abc;AccountKey=SENTINEL-ACCOUNT-KEY-not-base64!";
    let error = Lock::parse(bad, "locks", "x").unwrap_err();
    assert!(matches!(error, Error::InvalidConfig(_)));
    assert!(!format!("{error} {error:?}").contains("SENTINEL"), "{error:?}");
}

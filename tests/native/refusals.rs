//! Refusals at the edges, through the client: a release whose first answer was lost, in Azure's
//! dialect (the lease is not present) as well as Azurite's, and refusals that name their real
//! cause after the retry policy has had its say.

use crate::support::scripted::*;
use crate::support::*;
use traffic_cop::transport::TransportErrorKind;
use traffic_cop::{Error, LeaseDuration};

#[test]
fn a_release_that_landed_unheard_is_released_in_either_service_dialect() {
    for code in ["LeaseIdMismatchWithLeaseOperation", "LeaseNotPresentWithLeaseOperation"] {
        let script = ScriptedTransport::new()
            .expect(lease_action("release"), transport_error(TransportErrorKind::Timeout))
            .expect(lease_action("release"), refusal(409, code));
        let mut client = client(script);
        assert_eq!(client.release(&lock(), &id()), Ok(()), "{code}");
        client.transport().assert_done();
    }
}

#[test]
fn after_an_ambiguous_release_a_broken_lease_is_still_lost() {
    // Breaking or broken by someone else: not what our release did, so not "released".
    for code in ["LeaseIsBrokenAndCannotBeRenewed", "LeaseIdMismatchWithBlobOperation"] {
        let script = ScriptedTransport::new()
            .expect(lease_action("release"), refusal(500, "InternalError"))
            .expect(lease_action("release"), refusal(409, code));
        assert!(matches!(client(script).release(&lock(), &id()), Err(Error::LeaseLost(_))));
    }
}

/// A 503 is retried whatever it says (retry.rs is unchanged); once retries run out, only the
/// service's `ServerBusy` is reported as throttling, not a bare 503 from a proxy.
#[test]
fn only_server_busy_is_throttling_after_retries() {
    let bare = || {
        let mut answer = response(503, &[("x-ms-request-id", "proxy")]);
        if let Ok(answer) = answer.as_mut() {
            *answer.body_mut() = b"<html><body>Service Unavailable</body></html>".to_vec();
        }
        answer
    };
    // Inspect (a HEAD): a verb with no follow-up of its own after an ambiguous failure.
    let mut script = ScriptedTransport::new();
    for _ in 0..4 {
        script = script.expect(any_request, bare());
    }
    let mut proxied = client(script);
    match proxied.inspect(&lock()) {
        Err(Error::Service(e)) => assert_eq!((e.status, e.code), (503, None)),
        other => panic!("a bare 503 is a service error, got {other:?}"),
    }
    assert_eq!(proxied.round_trips(), 4, "still retried");

    let mut script = ScriptedTransport::new();
    for _ in 0..4 {
        script = script.expect(any_request, refusal(503, "ServerBusy"));
    }
    let mut busy = client(script);
    assert!(matches!(busy.inspect(&lock()), Err(Error::Throttled(_))));
    assert_eq!(busy.round_trips(), 4);
}

#[test]
fn authorization_refusals_say_what_to_fix() {
    let cases = [
        ("KeyBasedAuthenticationNotPermitted", "user delegation SAS"),
        ("AuthorizationPermissionMismatch", "Storage Blob Data Contributor"),
        ("AuthorizationFailure", "firewall"),
        ("AuthenticationFailed", "clock"),
    ];
    for (code, cause) in cases {
        let script = ScriptedTransport::new().expect(lease_action("acquire"), refusal(403, code));
        match client(script).acquire(&lock(), LeaseDuration::Fixed(15), None) {
            Err(error @ Error::Unauthorized(_)) => {
                let text = error.to_string();
                assert!(text.contains(cause) && text.contains(code), "{text}");
            }
            other => panic!("{code}: {other:?}"),
        }
    }
}

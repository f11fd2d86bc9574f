use super::*;

fn service(status: u16, code: &str) -> ServiceError {
    ServiceError {
        status,
        code: Some(code.into()),
        request_id: Some("req-1".into()),
        message: "m".into(),
    }
}

#[test]
fn lease_protocol_codes_map_to_what_the_caller_should_do() {
    let cases: &[(u16, &str, &str)] = &[
        (409, "LeaseAlreadyPresent", "HeldByOther"),
        (409, "LeaseIsBreakingAndCannotBeAcquired", "HeldByOther"),
        (409, "LeaseIdMismatchWithLeaseOperation", "LeaseLost"),
        (409, "LeaseNotPresentWithLeaseOperation", "LeaseLost"),
        (409, "LeaseIsBrokenAndCannotBeRenewed", "LeaseLost"),
        (409, "LeaseIsBreakingAndCannotBeChanged", "LeaseLost"),
        (409, "LeaseAlreadyBroken", "LeaseLost"),
        (412, "LeaseLost", "LeaseLost"),
        (412, "LeaseIdMissing", "LeaseLost"),
        (412, "LeaseIdMismatchWithBlobOperation", "LeaseLost"),
        (412, "LeaseNotPresentWithBlobOperation", "LeaseLost"),
        (404, "BlobNotFound", "NotFound"),
        (404, "ContainerNotFound", "NotFound"),
        (403, "AuthenticationFailed", "Unauthorized"),
        (403, "AuthorizationFailure", "Unauthorized"),
        (403, "KeyBasedAuthenticationNotPermitted", "Unauthorized"),
        (403, "AuthorizationPermissionMismatch", "Unauthorized"),
        (429, "TooManyRequests", "Throttled"),
        (503, "ServerBusy", "Throttled"),
        (500, "ServerBusy", "Throttled"),
        (503, "ServiceUnavailable", "Service"),
        (500, "InternalError", "Service"),
        (500, "OperationTimedOut", "Service"),
        (400, "InvalidHeaderValue", "Service"),
        (412, "ConditionNotMet", "Service"),
        (409, "BlobAlreadyExists", "Service"),
    ];
    for (status, code, expected) in cases {
        let error = Error::from_service(service(*status, code));
        let name = format!("{error:?}");
        assert!(name.starts_with(expected), "{status} {code} became {name}");
        assert_eq!(error.service_error().unwrap().code.as_deref(), Some(*code));
    }
}

#[test]
fn unauthorized_names_the_usual_causes() {
    let text = Error::from_service(service(403, "AuthenticationFailed")).to_string();
    assert!(text.contains("account key") && text.contains("clock"), "{text}");
    assert!(text.contains("req-1"), "request id kept for support: {text}");
}

#[test]
fn display_carries_status_code_and_request_id() {
    let text = Error::from_service(service(409, "LeaseAlreadyPresent")).to_string();
    assert_eq!(
        text,
        "lease is held by another holder: HTTP 409 LeaseAlreadyPresent: m (request id req-1)"
    );
}

#[test]
fn a_bare_503_is_not_throttling() {
    // A proxy or gateway in front of the service says 503 without the service's code.
    let bare = ServiceError { code: None, ..service(503, "") };
    assert!(matches!(Error::from_service(bare), Error::Service(_)));
    let busy = ServiceError { code: Some("ServerBusy".into()), ..service(503, "") };
    assert!(matches!(Error::from_service(busy), Error::Throttled(_)));
}

/// Each authorization code with a cause of its own names that cause and what to do, and does
/// not send the reader after the key or the clock.
#[test]
fn authorization_codes_name_their_own_cause() {
    let cases: &[(&str, &[&str])] = &[
        ("KeyBasedAuthenticationNotPermitted", &["disallows Shared Key", "user delegation SAS"]),
        ("AuthorizationPermissionMismatch", &["Storage Blob Data Contributor", "sp=rwcl"]),
        ("AuthorizationFailure", &["firewall", "network rules", "Azurite"]),
    ];
    for (code, needles) in cases {
        let text = Error::from_service(service(403, code)).to_string();
        for needle in *needles {
            assert!(text.contains(needle), "{code}: {text}");
        }
        assert!(!text.contains(UNAUTHORIZED_HINT), "{code}: {text}");
        assert!(text.contains("req-1"), "{code}: {text}");
    }
    // Azurite's AuthorizationFailure also means a bad signature: the key stays a suspect.
    let text = Error::from_service(service(403, "AuthorizationFailure")).to_string();
    assert!(text.contains("account key"), "{text}");
}

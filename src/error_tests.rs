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
        (429, "TooManyRequests", "Throttled"),
        (503, "ServerBusy", "Throttled"),
        (500, "InternalError", "Service"),
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

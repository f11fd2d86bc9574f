use super::*;
use crate::config::{Account, Credential};
use crate::error::TokenProblem;

const SECRET: &str = "SENTINEL-client-secret-7f3a";
const ASSERTION: &str = "SENTINEL.assertion.jwt-91c2";
const HEADER: &str = "SENTINEL-identity-header-5d1e";

fn account(extra: &str) -> Result<Account, Error> {
    Account::from_connection_string(&format!(
        "BlobEndpoint=https://acct.blob.core.windows.net;AccountName=acct;{extra}"
    ))
}

fn entra(extra: &str) -> Entra {
    match account(extra).unwrap().credential {
        Credential::Bearer(entra) => *entra,
        other => panic!("not bearer: {other:?}"),
    }
}

fn answer(status: u16, body: &str) -> crate::transport::Response {
    http::Response::builder().status(status).body(body.as_bytes().to_vec()).unwrap()
}

/// A JWT with `claims` (unsigned: nothing here checks signatures).
fn jwt(claims: &str) -> String {
    let encode = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!("{}.{}.sig", encode(r#"{"alg":"none"}"#), encode(claims))
}

use base64::Engine as _;

#[test]
fn each_source_is_read_from_the_connection_string() {
    let secret = entra(&format!(
        "Authentication=ClientSecret;TenantId=contoso.onmicrosoft.com;ClientId=app;ClientSecret={SECRET}"
    ));
    assert!(
        matches!(&secret.source, TokenSource::ClientSecret { authority, .. } if authority == DEFAULT_AUTHORITY)
    );
    let federated = entra(&format!(
        "authentication=workloadidentity;tenantid=t1;clientid=app;clientassertion={ASSERTION};\
         AuthorityHost=https://login.microsoftonline.us/"
    ));
    assert!(
        matches!(&federated.source, TokenSource::WorkloadIdentity { authority, .. } if authority == "https://login.microsoftonline.us")
    );
    let imds = entra("Authentication=ManagedIdentity;ClientId=uami");
    assert!(
        matches!(&imds.source, TokenSource::ManagedIdentity { endpoint: ManagedEndpoint::Imds(url), client_id: Some(_) } if url == DEFAULT_IMDS)
    );
    let app_service = entra(&format!(
        "Authentication=ManagedIdentity;IdentityEndpoint=http://127.0.0.1:41234/msi/token;IdentityHeader={HEADER}"
    ));
    assert!(matches!(
        app_service.source,
        TokenSource::ManagedIdentity {
            endpoint: ManagedEndpoint::AppService { .. },
            client_id: None
        }
    ));
    let supplied = entra("Authentication=AccessToken;AccessToken=abc.def.ghi");
    assert_eq!(supplied.source, TokenSource::Supplied);
    let kept =
        entra("Authentication=ManagedIdentity;AccessToken=abc;AccessTokenExpiresOn=1700000000");
    assert_eq!(kept.supplied.unwrap().expires_on, 1_700_000_000);
}

#[test]
fn incomplete_or_unsafe_configuration_is_refused_before_any_request() {
    let refused = |extra: &str, needle: &str| match account(extra) {
        Err(Error::InvalidConfig(message)) => {
            assert!(message.contains(needle), "{extra}: {message}");
            assert!(!message.contains(SECRET), "{message}");
        }
        other => panic!("{extra}: {other:?}"),
    };
    refused(&format!("Authentication=ClientSecret;TenantId=t;ClientSecret={SECRET}"), "ClientId");
    refused("Authentication=WorkloadIdentity;TenantId=t;ClientId=c", "ClientAssertion");
    refused("Authentication=Password;TenantId=t", "not one of");
    refused("Authentication=AccessToken", "AccessToken");
    refused("Authentication=ManagedIdentity;IdentityEndpoint=https://x", "IdentityHeader");
    refused(
        &format!("Authentication=ClientSecret;TenantId=t/../x;ClientId=c;ClientSecret={SECRET}"),
        "TenantId",
    );
    refused(
        &format!("Authentication=ClientSecret;TenantId=t;ClientId=c;ClientSecret={SECRET};AuthorityHost=http://login.example"),
        "https",
    );
    refused(
        "Authentication=ManagedIdentity;AccessTokenExpiresOn=soon;AccessToken=x",
        "unix seconds",
    );
    let plain = Account::from_connection_string(
        "BlobEndpoint=http://acct.blob.core.windows.net;Authentication=ManagedIdentity",
    );
    assert!(matches!(plain, Err(Error::InvalidConfig(m)) if m.contains("https")));
}

#[test]
fn token_requests_are_what_each_endpoint_expects() {
    let request = token_request(
        &entra(&format!(
            "Authentication=ClientSecret;TenantId=t1;ClientId=app id;ClientSecret={SECRET}"
        ))
        .source,
    )
    .unwrap();
    assert_eq!(request.method(), http::Method::POST);
    assert_eq!(request.uri(), "https://login.microsoftonline.com/t1/oauth2/v2.0/token");
    assert_eq!(
        String::from_utf8_lossy(request.body()),
        format!("client_id=app%20id&scope=https%3A%2F%2Fstorage.azure.com%2F.default&client_secret={SECRET}&grant_type=client_credentials")
    );
    assert_eq!(request.headers()["content-type"], "application/x-www-form-urlencoded");
    let federated = token_request(
        &entra(&format!(
            "Authentication=WorkloadIdentity;TenantId=t1;ClientId=app;ClientAssertion={ASSERTION}"
        ))
        .source,
    )
    .unwrap();
    let body = String::from_utf8_lossy(federated.body()).into_owned();
    assert!(body.contains(
        "client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer"
    ));
    assert!(
        body.contains(&format!("client_assertion={ASSERTION}")) && !body.contains("client_secret")
    );
    let imds =
        token_request(&entra("Authentication=ManagedIdentity;ClientId=uami").source).unwrap();
    assert_eq!(imds.method(), http::Method::GET);
    assert_eq!(
        imds.uri(),
        "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https%3A%2F%2Fstorage.azure.com%2F&client_id=uami"
    );
    assert_eq!(imds.headers()["metadata"], "true");
    let app = token_request(&entra(&format!(
        "Authentication=ManagedIdentity;IdentityEndpoint=http://127.0.0.1:41234/msi/token;IdentityHeader={HEADER}"
    )).source)
    .unwrap();
    assert_eq!(
        app.uri(),
        "http://127.0.0.1:41234/msi/token?api-version=2019-08-01&resource=https%3A%2F%2Fstorage.azure.com%2F"
    );
    assert!(app.headers()["x-identity-header"].is_sensitive());
    assert!(token_request(&TokenSource::Supplied).is_none());
}

#[test]
fn answers_give_a_token_or_a_scrubbed_refusal_that_says_what_to_do() {
    let source = entra(&format!(
        "Authentication=ClientSecret;TenantId=t1;ClientId=app;ClientSecret={SECRET}"
    ));
    let token = interpret(&source, &answer(200, r#"{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"eyJ0.x.y"}"#), 1_000).unwrap();
    assert_eq!((token.token.as_str(), token.expires_on), ("eyJ0.x.y", 4_599));
    let imds = interpret(&source, &answer(200, r#"{"access_token":"a.b.c","expires_on":"1700003600","resource":"https://storage.azure.com/"}"#), 1).unwrap();
    assert_eq!(imds.expires_on, 1_700_003_600);
    let refusal = format!(
        r#"{{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided. Ensure the secret being sent is the client secret value ({SECRET}).","error_codes":[7000215]}}"#
    );
    let error = interpret(&source, &answer(401, &refusal), 1).unwrap_err();
    let text = format!("{error} {error:?}");
    assert!(
        matches!(&error, Error::Unauthorized(e) if e.code.as_deref() == Some("invalid_client") && e.status == 401)
    );
    assert!(text.contains("AADSTS7000215") && text.contains("ClientSecret"), "{text}");
    assert!(!text.contains(SECRET), "{text}");
    let no_identity = entra("Authentication=ManagedIdentity");
    let error = interpret(
        &no_identity,
        &answer(400, r#"{"error":"invalid_request","error_description":"Identity not found"}"#),
        1,
    )
    .unwrap_err();
    assert!(error.to_string().contains("assign one"), "{error}");
    assert!(matches!(
        interpret(&source, &answer(200, "<html>"), 1),
        Err(Error::UnexpectedAnswer(_))
    ));
}

#[test]
fn an_absent_identity_endpoint_is_named() {
    let imds = entra("Authentication=ManagedIdentity");
    let error = unreachable(
        &imds,
        crate::TransportError::new(crate::TransportErrorKind::Connect, "connection refused"),
    );
    let text = error.to_string();
    assert!(matches!(error, Error::Transport(_)));
    assert!(text.contains("169.254.169.254") && text.contains("managed identity"), "{text}");
}

#[test]
fn expired_and_foreign_tokens_are_refused_before_sending() {
    let now = 1_800_000_000;
    let good = AccessToken {
        token: jwt(r#"{"aud":"https://storage.azure.com","exp":1800003600}"#),
        expires_on: u64::MAX,
    };
    assert!(check_supplied(&good, now).is_ok());
    let expired = AccessToken {
        token: jwt(r#"{"aud":"https://storage.azure.com/","exp":1799999999}"#),
        expires_on: u64::MAX,
    };
    assert!(
        matches!(check_supplied(&expired, now), Err(Error::UnusableToken(t)) if t.problem == TokenProblem::Expired)
    );
    let vault = AccessToken {
        token: jwt(r#"{"aud":"https://vault.azure.net","exp":1800003600}"#),
        expires_on: u64::MAX,
    };
    let error = check_supplied(&vault, now).unwrap_err();
    assert!(
        matches!(&error, Error::UnusableToken(t) if t.problem == TokenProblem::WrongAudience),
        "{error:?}"
    );
    assert!(error.to_string().contains("https://storage.azure.com/"), "{error}");
    let account_audience = AccessToken {
        token: jwt(r#"{"aud":"https://acct.blob.core.windows.net"}"#),
        expires_on: u64::MAX,
    };
    assert!(check_supplied(&account_audience, now).is_ok());
    let opaque = AccessToken { token: "opaque-token".into(), expires_on: now + 10 };
    assert!(check_supplied(&opaque, now).is_ok());
    assert!(check_supplied(&AccessToken { expires_on: now, ..opaque }, now).is_err());
}

#[test]
fn debug_output_holds_no_secret() {
    for extra in [
        format!("Authentication=ClientSecret;TenantId=t;ClientId=c;ClientSecret={SECRET}"),
        format!("Authentication=WorkloadIdentity;TenantId=t;ClientId=c;ClientAssertion={ASSERTION}"),
        format!("Authentication=ManagedIdentity;IdentityEndpoint=https://x/token;IdentityHeader={HEADER}"),
        format!("Authentication=AccessToken;AccessToken={SECRET}"),
    ] {
        let text = format!("{:?}", account(&extra).unwrap());
        for secret in [SECRET, ASSERTION, HEADER] {
            assert!(!text.contains(secret), "{text}");
        }
    }
}

#[test]
fn the_json_reader_takes_flat_members_and_skips_the_rest() {
    let members = json::members(r#" { "a" : "x\"y\u0041", "n": -12, "nested": {"b": [1, {"c": "}"}]}, "t": true, "z": "last" } "#).unwrap();
    assert_eq!(
        members,
        vec![("a".into(), "x\"yA".into()), ("n".into(), "-12".into()), ("z".into(), "last".into())]
    );
    assert!(json::members("not json").is_none());
    assert!(json::members(r#"{"a": "unterminated}"#).is_none());
    assert_eq!(json::members("{}"), Some(vec![]));
}

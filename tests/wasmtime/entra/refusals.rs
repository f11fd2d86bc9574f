//! Refused and broken credentials through the built component: typed errors that say what to
//! do, never a trap, and no secret in any error text (sentinels, see env.rs).

use traffic_cop_testbed::runner::Test;

use super::env::*;
use super::sources::lock;
use traffic_cop_testbed::fake_idp::Issue;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::lease::LeaseDuration;
use traffic_cop_wasm_host::component::v1::lease::TokenProblem;
use traffic_cop_wasm_host::component::v1::Error;

/// acquire's error, checked for sentinels in its Debug text.
fn refused(env: &Env, connection_string: String) -> Error {
    let lock = lock(env, connection_string, "refused");
    let error = fresh().acquire(&lock, LeaseDuration::Fixed(15), None).expect_err("refused");
    assert_no_secret(&format!("{error:?}"));
    error
}

fn unauthorized_saying(error: &Error, needles: &[&str]) {
    let Error::Unauthorized(detail) = error else { panic!("not unauthorized: {error:?}") };
    let text = format!("{detail:?}").to_lowercase();
    for needle in needles {
        assert!(text.contains(&needle.to_lowercase()), "no {needle:?} in {error:?}");
    }
}

fn refused_credentials_are_unauthorized_with_the_aadsts_code_and_no_secret() {
    let env = Env::new();
    let wrong = "SENTINEL-CLIENT-SECRET-wrong-91";
    let secret = env.connection_string(Source::ClientSecret).replace(SECRET, wrong);
    let error = refused(&env, secret);
    unauthorized_saying(&error, &["AADSTS7000215", "Invalid client secret"]);
    assert!(!format!("{error:?}").contains(wrong));
    let assertion = env
        .connection_string(Source::WorkloadIdentity)
        .replace(ASSERTION, "eyJ0.SENTINEL-FEDERATED-ASSERTION-wrong.c2ln");
    unauthorized_saying(&refused(&env, assertion), &["AADSTS700211"]);
    let client = env.connection_string(Source::ClientSecret).replace(CLIENT_ID, "0000-unknown");
    let error = refused(&env, client);
    assert!(format!("{error:?}").contains("AADSTS700016"), "{error:?}");
    let header = env
        .connection_string(Source::AppService)
        .replace(IDENTITY_HEADER, "SENTINEL-IDENTITY-HEADER-wrong");
    let error = refused(&env, header);
    assert!(matches!(error, Error::Unauthorized(_)), "{error:?}");
    // Nothing reached storage with a refused credential.
    assert_eq!(env.storage_trips(), 0);
    assert_eq!(env.token_trips(), 4, "{:?}", env.idp.log());
}

fn an_absent_managed_identity_endpoint_is_a_typed_error_naming_it() {
    let env = Env::new();
    // A port that was just free: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let endpoint = format!("http://127.0.0.1:{closed}");
    let imds = format!("{};Authentication=ManagedIdentity;ImdsEndpoint={endpoint}", env.storage());
    let error = refused(&env, imds);
    let text = format!("{error:?}");
    assert!(matches!(error, Error::Transport(_)), "{error:?}");
    assert!(text.contains(&format!("127.0.0.1:{closed}")), "endpoint not named: {text}");
    let app = env
        .connection_string(Source::AppService)
        .replace(&env.idp.identity_endpoint(), &format!("{endpoint}/msi/token"));
    let text = format!("{:?}", refused(&env, app));
    assert!(text.contains(&format!("127.0.0.1:{closed}")), "endpoint not named: {text}");
    assert_eq!(env.storage_trips(), 0);
}

/// A token the identity endpoint issued expired or for another audience is refused by storage,
/// saying so; a supplied token past the expiry it carries is refused here, before anything is
/// sent, saying it expired and what to do, without the token.
fn expired_and_wrong_audience_tokens_are_refused_saying_so() {
    let env = Env::new();
    env.idp.set_issue(Issue::Expired);
    unauthorized_saying(&refused(&env, env.connection_string(Source::ClientSecret)), &["expired"]);
    env.idp.set_issue(Issue::WrongAudience);
    unauthorized_saying(&refused(&env, env.connection_string(Source::Imds)), &["audience"]);
    let now = traffic_cop_testbed::unix_secs();
    let stale = traffic_cop_testbed::fake_idp::mint(
        TENANT,
        traffic_cop_testbed::fake_idp::STORAGE_AUDIENCE,
        now - 7200,
        now - 3600,
    );
    let supplied = format!("{};Authentication=AccessToken;AccessToken={stale}", env.storage());
    let before = env.storage_trips();
    let error = refused(&env, supplied);
    assert!(!format!("{error:?}").contains(&stale), "the token leaked: {error:?}");
    let Error::UnusableToken(unusable) = &error else { panic!("not unusable: {error:?}") };
    assert_eq!(unusable.problem, TokenProblem::Expired, "{error:?}");
    assert!(unusable.message.contains("expired at "), "{error:?}");
    assert_eq!(env.storage_trips(), before, "the expired token was sent");
}

fn a_missing_data_role_is_unauthorized_naming_the_role_needed() {
    let env = Env::new();
    let storage = env.storage();
    let no_role = env.connection_string(Source::ClientSecret).replace(
        &storage,
        &format!("BlobEndpoint={};AccountName=devstoreaccount1", env.idp.no_role_blob_endpoint()),
    );
    let lock = lock(&env, no_role, "no-role");
    let error = fresh().acquire(&lock, LeaseDuration::Fixed(15), None).expect_err("no role");
    assert_no_secret(&format!("{error:?}"));
    unauthorized_saying(
        &error,
        &["AuthorizationPermissionMismatch", "Storage Blob Data Contributor"],
    );
    let log = env.idp.log();
    assert!(log.iter().any(|l| l.contains("/devstoreaccount1/")), "storage never asked: {log:?}");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        refused_credentials_are_unauthorized_with_the_aadsts_code_and_no_secret,
        an_absent_managed_identity_endpoint_is_a_typed_error_naming_it,
        expired_and_wrong_audience_tokens_are_refused_saying_so,
        a_missing_data_role_is_unauthorized_naming_the_role_needed,
    ]
}

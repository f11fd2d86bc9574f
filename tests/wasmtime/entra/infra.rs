//! The test infrastructure on its own, before any component: OAuth Azurite takes a token from
//! the fake IdP over a native HTTPS request (trusting only the throwaway CA), refuses expired,
//! wrong-audience and wrong-issuer tokens as its source says, and the fake IdP refuses bad
//! credentials the way Entra ID does.

use traffic_cop_testbed::runner::Test;

use super::env::*;
use traffic_cop_testbed::fake_idp::{mint, FakeIdp, Issue, IMDS_PATH, STORAGE_AUDIENCE};
use traffic_cop_testbed::tls;

const VERSION: &str = "2025-11-05";

fn token_from(idp: &FakeIdp, secret: &str) -> tls::Answer {
    let body = format!(
        "client_id={CLIENT_ID}&scope=https%3A%2F%2Fstorage.azure.com%2F.default\
         &client_secret={secret}&grant_type=client_credentials"
    );
    let headers = [("Content-Type", "application/x-www-form-urlencoded")];
    tls::request(idp.https_port, "POST", &idp.token_path(), &headers, body.as_bytes()).unwrap()
}

fn create_container(port: u16, name: &str, token: &str) -> tls::Answer {
    let auth = format!("Bearer {token}");
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let headers =
        [("Authorization", auth.as_str()), ("x-ms-version", VERSION), ("x-ms-date", &date)];
    let path = format!("/devstoreaccount1/{name}?restype=container");
    tls::request(port, "PUT", &path, &headers, b"").unwrap()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn oauth_azurite_accepts_a_token_from_the_fake_idp_over_native_https() {
    let env = Env::new();
    let answer = token_from(&env.idp, SECRET);
    assert_eq!(answer.status, 200, "{answer:?}");
    let token = json(&answer.body)["access_token"].as_str().unwrap().to_string();
    assert_eq!(env.idp.count(&env.idp.token_path()), 1);
    let created = create_container(env.azurite_port, &env.container, &token);
    assert_eq!(created.status, 201, "{created:?}");
    // The same token is refused without TLS trust: nothing else trusts the throwaway CA.
    let curl = std::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"])
        .arg(format!("https://127.0.0.1:{}/devstoreaccount1?comp=list", env.azurite_port))
        .output();
    if let Ok(out) = curl {
        assert!(!out.status.success(), "curl trusted the throwaway CA without --cacert");
    }
}

fn oauth_azurite_refuses_bad_tokens_with_the_reasons_its_source_gives() {
    let env = Env::new();
    let now = traffic_cop_testbed::unix_secs();
    let cases = [
        (mint(TENANT, STORAGE_AUDIENCE, now - 7200, now - 3600), "The token is expired."),
        (
            mint(TENANT, "https://management.azure.com/", now - 60, now + 600),
            "Invalid token audience.",
        ),
        (mint(TENANT, STORAGE_AUDIENCE, now + 600, now + 1200), "Lifetime validation failed."),
        (
            jwt(&format!(
                r#"{{"aud":"{STORAGE_AUDIENCE}","iss":"https://login.example.com/{TENANT}/","iat":{now},"nbf":{now},"exp":{}}}"#,
                now + 600
            )),
            "Invalid token issuer.",
        ),
    ];
    for (i, (token, detail)) in cases.iter().enumerate() {
        let answer = create_container(env.azurite_port, &format!("{}-{i}", env.container), token);
        assert_eq!(answer.status, 403, "{answer:?}");
        assert_eq!(answer.header("x-ms-error-code"), Some("AuthenticationFailed"), "{answer:?}");
        assert!(answer.body.contains(detail), "{detail}: {answer:?}");
    }
    // A token for the account's own blob audience passes.
    let own = mint(TENANT, "https://devstoreaccount1.blob.core.windows.net", now - 60, now + 600);
    let answer = create_container(env.azurite_port, &format!("{}-own", env.container), &own);
    assert_eq!(answer.status, 201, "{answer:?}");
}

/// A JWT with these claims and a dummy signature (Azurite never verifies signatures).
fn jwt(claims: &str) -> String {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!("{}.{}.{}", b64(r#"{"typ":"JWT","alg":"RS256"}"#), b64(claims), b64("sig"))
}

fn the_fake_idp_refuses_bad_credentials_like_entra_id_without_echoing_them() {
    let idp = FakeIdp::start(idp_config());
    let wrong = token_from(&idp, "SENTINEL-CLIENT-SECRET-wrong");
    assert_eq!(wrong.status, 401);
    let body = json(&wrong.body);
    assert_eq!(body["error"], "invalid_client");
    assert!(body["error_description"].as_str().unwrap().starts_with("AADSTS7000215"));
    assert_no_secret(&wrong.body);
    let imds = |headers: &[(&str, &str)], client: &str| {
        let path = format!(
            "{IMDS_PATH}?api-version=2018-02-01&resource=https%3A%2F%2Fstorage.azure.com%2F{client}"
        );
        tls::request(idp.https_port, "GET", &path, headers, b"").unwrap()
    };
    assert_eq!(imds(&[], "").status, 400, "IMDS wants Metadata: true");
    let ok = imds(&[("Metadata", "true")], "");
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(json(&ok.body)["expires_on"].is_string(), "IMDS numbers are strings");
    let other = imds(&[("Metadata", "true")], "&client_id=00000000-0000-0000-0000-000000000000");
    assert_eq!(other.status, 400);
    idp.set_issue(Issue::WrongAudience);
    let token = json(&token_from(&idp, SECRET).body)["access_token"].as_str().unwrap().to_string();
    let claims = token.split('.').nth(1).unwrap();
    use base64::Engine as _;
    let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(claims).unwrap();
    assert_eq!(json(&String::from_utf8(claims).unwrap())["aud"], "https://management.azure.com/");
    assert_eq!(idp.count(IMDS_PATH), 3);
    assert_eq!(idp.count(&idp.token_path()), 2);
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        oauth_azurite_accepts_a_token_from_the_fake_idp_over_native_https,
        oauth_azurite_refuses_bad_tokens_with_the_reasons_its_source_gives,
        the_fake_idp_refuses_bad_credentials_like_entra_id_without_echoing_them,
    ]
}

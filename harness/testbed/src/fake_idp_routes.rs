//! The fake identity endpoint's answers (fake_idp.rs serves them). Refusals use Entra ID's
//! shapes and AADSTS codes; none of them echoes a secret, so a secret found in a component's
//! error came from the component, not from here.

use crate::fake_idp_request::Request;
use crate::fake_idp_state::{
    mint, Issue, View, APP_SERVICE_PATH, IMDS_PATH, STORAGE_AUDIENCE, TOKEN_PATH_SUFFIX,
};

/// Azure Storage's answer to a valid token without a data role (sent as XML with
/// `x-ms-error-code: AuthorizationPermissionMismatch`, see fake_idp.rs).
pub(crate) const NO_ROLE: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>AuthorizationPermissionMismatch</Code><Message>This request is not authorized to perform this operation using this permission.\nRequestId:00000000-0000-0000-0000-00000000000a\nTime:2026-11-23T00:00:00.0000000Z</Message></Error>";

const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

pub(crate) fn answer(request: &Request, view: View<'_>) -> (u16, String) {
    view.record(request);
    let now = crate::unix_secs();
    let lifetime = view.config.lifetime_secs;
    let (audience, nbf, exp) = match view.issue {
        Issue::Valid => (STORAGE_AUDIENCE, now - 300, now + lifetime),
        Issue::Expired => (STORAGE_AUDIENCE, now - 7200, now - 3600),
        Issue::WrongAudience => ("https://management.azure.com/", now - 300, now + lifetime),
    };
    let token = mint(&view.config.tenant, audience, nbf, exp);
    let path = request.path.as_str();
    if path.starts_with("/devstoreaccount1") {
        // A storage account where this identity has no data role: what Azure Storage answers
        // (Azurite checks no roles, so this is the only place the tests can meet it).
        return (403, NO_ROLE.into());
    }
    if request.method == "POST" && path.ends_with(TOKEN_PATH_SUFFIX) {
        return client_credentials(request, &view, &token);
    }
    if request.method != "GET" {
        return (404, r#"{"error":"not_found"}"#.into());
    }
    let query = form(&request.query);
    let get = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let resource_ok = get("resource").is_some_and(|r| r.trim_end_matches('/') == STORAGE_AUDIENCE);
    let client_ok = get("client_id").is_none_or(|c| c == view.config.managed_client_id);
    let expires_on = now + lifetime;
    if path == IMDS_PATH {
        if request.header("metadata") != Some("true") {
            return refusal(400, "invalid_request", "Required metadata header not specified");
        }
        if get("api-version").is_none() || !resource_ok {
            return refusal(
                400,
                "invalid_resource",
                "AADSTS500011: The resource principal named was not found.",
            );
        }
        if !client_ok {
            return refusal(400, "invalid_request", "Identity not found");
        }
        // IMDS sends its numbers as strings.
        return (
            200,
            format!(
                r#"{{"access_token":"{token}","client_id":"{}","expires_in":"{lifetime}","expires_on":"{expires_on}","ext_expires_in":"{lifetime}","not_before":"{nbf}","resource":"https://storage.azure.com/","token_type":"Bearer"}}"#,
                view.config.managed_client_id
            ),
        );
    }
    if path == APP_SERVICE_PATH {
        if request.header("x-identity-header") != Some(view.config.identity_header.as_str()) {
            return refusal(
                401,
                "unauthorized_client",
                "The X-IDENTITY-HEADER is missing or does not match.",
            );
        }
        if get("api-version") != Some("2019-08-01") || !resource_ok {
            return refusal(
                400,
                "invalid_request",
                "api-version 2019-08-01 and resource are required",
            );
        }
        if !client_ok {
            return refusal(400, "invalid_request", "Identity not found");
        }
        // 2019-08-01 answers expires_on in Unix seconds, as a string, and no expires_in.
        return (
            200,
            format!(
                r#"{{"access_token":"{token}","expires_on":"{expires_on}","resource":"https://storage.azure.com/","token_type":"Bearer","client_id":"{}"}}"#,
                view.config.managed_client_id
            ),
        );
    }
    (404, r#"{"error":"not_found"}"#.into())
}

fn client_credentials(request: &Request, view: &View<'_>, token: &str) -> (u16, String) {
    let config = view.config;
    let tenant = request.path.trim_start_matches('/').split('/').next().unwrap_or("");
    if tenant != config.tenant {
        return refusal(400, "invalid_tenant", &format!("AADSTS90002: Tenant '{tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud."));
    }
    let body = form(&request.body);
    let get = |k: &str| body.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if get("grant_type") != Some("client_credentials") {
        return refusal(
            400,
            "unsupported_grant_type",
            "AADSTS70003: The app requested an unsupported grant type.",
        );
    }
    if get("scope") != Some("https://storage.azure.com/.default") {
        return refusal(400, "invalid_scope", "AADSTS1002012: The provided value for scope is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier.");
    }
    let client_id = get("client_id").unwrap_or("");
    if client_id != config.client_id {
        return refusal(400, "unauthorized_client", &format!("AADSTS700016: Application with identifier '{client_id}' was not found in the directory '{tenant}'."));
    }
    match (get("client_secret"), get("client_assertion_type"), get("client_assertion")) {
        (Some(secret), None, None) if secret == config.client_secret => {}
        (Some(_), None, None) => {
            return refusal(401, "invalid_client", &format!("AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '{client_id}'."));
        }
        (None, Some(JWT_BEARER), Some(assertion)) if assertion == config.assertion => {}
        (None, Some(JWT_BEARER), Some(_)) => {
            return refusal(401, "invalid_client", "AADSTS700211: No matching federated identity record found for presented assertion issuer. Please check your federated identity credential Subject, Audience and Issuer against the presented assertion.");
        }
        _ => {
            return refusal(401, "invalid_client", "AADSTS7000216: 'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type.");
        }
    }
    let lifetime = config.lifetime_secs;
    (
        200,
        format!(
            r#"{{"token_type":"Bearer","expires_in":{lifetime},"ext_expires_in":{lifetime},"access_token":"{token}"}}"#
        ),
    )
}

/// Entra ID's error body: code, description, and the extras real answers carry.
fn refusal(status: u16, error: &str, description: &str) -> (u16, String) {
    let code: String = description
        .strip_prefix("AADSTS")
        .map(|d| d.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_default();
    let body = format!(
        r#"{{"error":"{error}","error_description":"{}","error_codes":[{code}],"timestamp":"2026-11-23 00:00:00Z","trace_id":"00000000-0000-0000-0000-000000000001","correlation_id":"00000000-0000-0000-0000-000000000002"}}"#,
        description.replace('"', "\\\"")
    );
    (status, body)
}

/// `application/x-www-form-urlencoded` pairs, decoded.
pub fn form(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).to_string()
}

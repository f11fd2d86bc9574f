//! Reading what identity endpoints answer, and checking a token before it is sent. Every
//! error names what to do, and is scrubbed of the secrets the caller gave us.

use super::{json, AccessToken, Entra, ManagedEndpoint, TokenSource, STORAGE_RESOURCE};
use crate::error::{Error, ServiceError, TokenProblem, UnusableToken};
use crate::transport::{Response, TransportError};
use base64::Engine as _;

/// The token in a 2xx answer; a refusal as `Unauthorized` with the endpoint's own code and
/// description (AADSTS…), scrubbed.
pub fn interpret(entra: &Entra, response: &Response, now_secs: u64) -> Result<AccessToken, Error> {
    let status = response.status().as_u16();
    let body = String::from_utf8_lossy(response.body());
    let members = json::members(&body).unwrap_or_default();
    let get = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    if response.status().is_success() {
        let token = get("access_token").filter(|t| t.bytes().all(|b| b.is_ascii_graphic()));
        let expires_on = match (get("expires_on"), get("expires_in")) {
            (Some(on), _) => on.parse::<u64>().ok(),
            (None, Some(within)) => within.parse::<u64>().ok().map(|s| now_secs.saturating_add(s)),
            (None, None) => None,
        };
        return match (token, expires_on) {
            (Some(token), Some(expires_on)) if !token.is_empty() => {
                Ok(AccessToken { token: token.to_string(), expires_on })
            }
            _ => Err(Error::UnexpectedAnswer(format!(
                "{} answered {status} without an access_token and its expiry",
                describe(&entra.source)
            ))),
        };
    }
    let code = get("error").map(str::to_string);
    let description = get("error_description").or_else(|| get("message")).unwrap_or("");
    let advice = match (&entra.source, status) {
        (TokenSource::ManagedIdentity { .. }, 400 | 404) => {
            "no managed identity answered for this app: assign one to it (system-assigned), or \
             set ClientId to the client id of its user-assigned identity"
        }
        (TokenSource::ManagedIdentity { .. }, _) => {
            "the managed identity endpoint refused the request; check IdentityEndpoint and \
             IdentityHeader (App Service: the IDENTITY_ENDPOINT and IDENTITY_HEADER variables)"
        }
        (TokenSource::WorkloadIdentity { .. }, _) => {
            "check TenantId and ClientId, that the federated credential on the app registration \
             matches this token's issuer and subject, and that ClientAssertion is the current \
             content of the federated token file"
        }
        _ => "check TenantId, ClientId and ClientSecret (an expired secret is refused too)",
    };
    let message = format!(
        "{} refused the credential ({}{description}): {advice}",
        describe(&entra.source),
        code.as_deref().map(|c| format!("{c}: ")).unwrap_or_default(),
    );
    Err(Error::Unauthorized(ServiceError {
        status,
        code,
        request_id: None,
        message: scrub(message, entra),
    }))
}

/// No answer from the identity endpoint.
pub fn unreachable(entra: &Entra, error: TransportError) -> Error {
    let detail = error.detail.to_ascii_lowercase();
    let tls = detail.contains("tls") || detail.contains("certificate");
    let hint = match &entra.source {
        _ if tls => {
            "; its TLS certificate was refused: the host must trust the endpoint's CA (Spin: a \
             [[client_tls]] entry with ca_roots_file in the runtime config)"
        }
        TokenSource::ManagedIdentity { endpoint: ManagedEndpoint::Imds(_), .. } => {
            "; is this running on Azure with a managed identity? Elsewhere use ClientSecret or \
             WorkloadIdentity (and allow the identity endpoint in allowed_outbound_hosts)"
        }
        _ => "; allow the identity endpoint in the host's outbound rules (Spin: allowed_outbound_hosts)",
    };
    let detail = format!("{} did not answer: {}{hint}", describe(&entra.source), error.detail);
    Error::Transport(TransportError::new(error.kind, scrub(detail, entra)))
}

/// Refuses, before anything is sent, a token that has expired or is for another audience,
/// when it is a JWT that says so (an opaque token is sent as it is).
pub fn check_supplied(token: &AccessToken, now_secs: u64) -> Result<(), Error> {
    let refuse = |problem, message| Err(Error::UnusableToken(UnusableToken { problem, message }));
    if token.expires_on <= now_secs {
        return refuse(TokenProblem::Expired, expired(token.expires_on));
    }
    let Some(claims) = token.token.split('.').nth(1).and_then(|payload| {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .ok()?;
        json::members(&String::from_utf8(bytes).ok()?)
    }) else {
        return Ok(());
    };
    let get = |key: &str| claims.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    if let Some(exp) = get("exp").and_then(|e| e.parse::<u64>().ok()) {
        if exp <= now_secs {
            return refuse(TokenProblem::Expired, expired(exp));
        }
    }
    if let Some(audience) = get("aud") {
        let storage = audience.trim_end_matches('/') == STORAGE_RESOURCE.trim_end_matches('/')
            || (audience.starts_with("https://") && audience.contains(".blob."));
        if !storage {
            return refuse(
                TokenProblem::WrongAudience,
                format!(
                    "the access token is for audience {audience:?}, not Azure Storage: request \
                     it for the resource {STORAGE_RESOURCE} (scope {STORAGE_RESOURCE}.default)"
                ),
            );
        }
    }
    Ok(())
}

fn expired(at: u64) -> String {
    format!(
        "the access token expired at {} (unix {at}): fetch a new one (`get-token`) and \
         pass it with AccessTokenExpiresOn, or drop AccessToken to let traffic-cop fetch one",
        crate::http_date::format(std::time::UNIX_EPOCH + std::time::Duration::from_secs(at))
    )
}

fn describe(source: &TokenSource) -> String {
    match source {
        TokenSource::ClientSecret { authority, tenant, client_id, .. } => {
            format!("Entra ID ({authority}, tenant {tenant}, client {client_id}, client secret)")
        }
        TokenSource::WorkloadIdentity { authority, tenant, client_id, .. } => format!(
            "Entra ID ({authority}, tenant {tenant}, client {client_id}, workload identity)"
        ),
        TokenSource::ManagedIdentity { endpoint: ManagedEndpoint::Imds(url), .. } => {
            format!("the managed identity endpoint (IMDS, {url})")
        }
        TokenSource::ManagedIdentity {
            endpoint: ManagedEndpoint::AppService { endpoint, .. },
            ..
        } => {
            format!("the managed identity endpoint ({endpoint})")
        }
        TokenSource::Supplied => "the supplied access token".into(),
    }
}

fn scrub(mut text: String, entra: &Entra) -> String {
    for secret in super::secrets(entra).iter().filter(|s| s.len() >= 4) {
        text = text.replace(secret.as_str(), "<redacted>");
    }
    text
}

//! Entra ID (Azure AD) bearer tokens for storage accounts where Shared Key is disabled. Pure:
//! the sources are parsed from the connection string, token requests are built and answers
//! read here; [`LeaseClient`](crate::LeaseClient) sends them and keeps the token.
//!
//! Connection-string keys (names case-insensitive), beside `BlobEndpoint`/`AccountName`:
//! - `Authentication=ClientSecret;TenantId=…;ClientId=…;ClientSecret=…[;AuthorityHost=…]`
//! - `Authentication=WorkloadIdentity;TenantId=…;ClientId=…;ClientAssertion=<federated token>`
//! - `Authentication=ManagedIdentity[;ClientId=…]`: IMDS (`ImdsEndpoint=` overrides its
//!   address), or with `IdentityEndpoint=…;IdentityHeader=…` the App Service/Functions endpoint
//! - `Authentication=AccessToken;AccessToken=…`: a token the caller already has
//!
//! Any source may also carry `AccessToken=…;AccessTokenExpiresOn=<unix seconds>`: a token kept
//! from an earlier invocation (see `lease.get-token`), used while it has five minutes left.

mod answer;
mod cache;
mod json;
mod request;

pub use answer::{check_supplied, interpret, unreachable};
pub use cache::TokenCache;
pub use request::token_request;

use crate::error::Error;
use std::fmt;

/// The audience every storage token is for.
pub const STORAGE_RESOURCE: &str = "https://storage.azure.com/";
/// Where client-secret and workload-identity tokens come from unless `AuthorityHost` says.
pub const DEFAULT_AUTHORITY: &str = "https://login.microsoftonline.com";
/// The Azure Instance Metadata Service, unless `ImdsEndpoint` says.
pub const DEFAULT_IMDS: &str = "http://169.254.169.254";
/// A token with less than this left is fetched anew rather than sent.
pub const REFRESH_MARGIN_SECS: u64 = 300;

/// Where tokens come from.
#[derive(Clone, PartialEq, Eq)]
pub enum TokenSource {
    ClientSecret {
        authority: String,
        tenant: String,
        client_id: String,
        secret: String,
    },
    WorkloadIdentity {
        authority: String,
        tenant: String,
        client_id: String,
        assertion: String,
    },
    ManagedIdentity {
        client_id: Option<String>,
        endpoint: ManagedEndpoint,
    },
    /// Only the token the connection string carries; nothing to fetch one with.
    Supplied,
}

/// No `Debug`: the App Service header is a secret (see `TokenSource`'s).
#[derive(Clone, PartialEq, Eq)]
pub enum ManagedEndpoint {
    Imds(String),
    AppService { endpoint: String, header: String },
}

/// A bearer token and when it expires (unix seconds).
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    pub token: String,
    pub expires_on: u64,
}

impl AccessToken {
    pub fn fresh_at(&self, now_secs: u64) -> bool {
        self.expires_on > now_secs.saturating_add(REFRESH_MARGIN_SECS)
    }
}

/// The credential of a bearer-token account: its source and any token the caller passed in.
#[derive(Clone, PartialEq, Eq)]
pub struct Entra {
    pub source: TokenSource,
    pub supplied: Option<AccessToken>,
}

impl Entra {
    /// Reads the keys above; `None` when `Authentication` is absent (a key or SAS account).
    pub fn from_fields(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<Entra>, Error> {
        let Some(kind) = get("Authentication") else { return Ok(None) };
        let need = |key: &str| get(key).ok_or_else(|| missing(&kind, key));
        let authority = || -> Result<String, Error> {
            let host = get("AuthorityHost").unwrap_or_else(|| DEFAULT_AUTHORITY.to_string());
            endpoint_url("AuthorityHost", &host)
        };
        let source = match kind.to_ascii_lowercase().as_str() {
            "clientsecret" => TokenSource::ClientSecret {
                authority: authority()?,
                tenant: tenant(need("TenantId")?)?,
                client_id: need("ClientId")?,
                secret: need("ClientSecret")?,
            },
            "workloadidentity" => TokenSource::WorkloadIdentity {
                authority: authority()?,
                tenant: tenant(need("TenantId")?)?,
                client_id: need("ClientId")?,
                assertion: need("ClientAssertion")?,
            },
            "managedidentity" => TokenSource::ManagedIdentity {
                client_id: get("ClientId"),
                endpoint: match (get("IdentityEndpoint"), get("IdentityHeader")) {
                    (Some(endpoint), Some(header)) => ManagedEndpoint::AppService {
                        endpoint: endpoint_url("IdentityEndpoint", &endpoint)?,
                        header,
                    },
                    (Some(_), None) => return Err(missing(&kind, "IdentityHeader")),
                    _ => ManagedEndpoint::Imds(endpoint_url(
                        "ImdsEndpoint",
                        &get("ImdsEndpoint").unwrap_or_else(|| DEFAULT_IMDS.to_string()),
                    )?),
                },
            },
            "accesstoken" => TokenSource::Supplied,
            _ => {
                return Err(Error::InvalidConfig(format!(
                    "Authentication={kind} is not one of ClientSecret, WorkloadIdentity, \
                     ManagedIdentity, AccessToken"
                )))
            }
        };
        let supplied = match (get("AccessToken"), get("AccessTokenExpiresOn")) {
            (Some(token), expires) => Some(AccessToken {
                token: bearer_text(token)?,
                expires_on: match expires {
                    Some(at) => at.parse().map_err(|_| {
                        Error::InvalidConfig("AccessTokenExpiresOn must be unix seconds".into())
                    })?,
                    // Unknown: the token's own `exp`, read when it is used.
                    None => u64::MAX,
                },
            }),
            (None, Some(_)) => return Err(missing(&kind, "AccessToken")),
            (None, None) if source == TokenSource::Supplied => {
                return Err(missing(&kind, "AccessToken"))
            }
            (None, None) => None,
        };
        Ok(Some(Entra { source, supplied }))
    }
}

/// Every secret a source or a token holds, so errors can be scrubbed of them.
pub fn secrets(entra: &Entra) -> Vec<String> {
    let mut out: Vec<String> = entra.supplied.iter().map(|t| t.token.clone()).collect();
    match &entra.source {
        TokenSource::ClientSecret { secret, .. } => out.push(secret.clone()),
        TokenSource::WorkloadIdentity { assertion, .. } => out.push(assertion.clone()),
        TokenSource::ManagedIdentity {
            endpoint: ManagedEndpoint::AppService { header, .. },
            ..
        } => out.push(header.clone()),
        _ => {}
    }
    out
}

fn missing(kind: &str, key: &str) -> Error {
    Error::InvalidConfig(format!("Authentication={kind} needs {key}"))
}

fn tenant(tenant: String) -> Result<String, Error> {
    let ok = !tenant.is_empty()
        && tenant.len() <= 100
        && tenant.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    ok.then_some(tenant)
        .ok_or_else(|| Error::InvalidConfig("TenantId must be a GUID or a domain name".into()))
}

/// An endpoint URL without a trailing `/`: https, or http on loopback (emulators, tests) and
/// for IMDS, which is plain http on a link-local address by design.
fn endpoint_url(key: &str, url: &str) -> Result<String, Error> {
    let uri: http::Uri = url.parse().map_err(|_| config_error(key, "is not a URL"))?;
    let host = uri.host().unwrap_or_default();
    let plain_ok = matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "169.254.169.254");
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") if plain_ok => {}
        _ => return Err(config_error(key, "must be an https:// URL")),
    }
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Err(config_error(key, "must not carry user info"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

fn config_error(key: &str, what: &str) -> Error {
    Error::InvalidConfig(format!("{key} {what}"))
}

/// A token as it may go into an `Authorization` header.
fn bearer_text(token: String) -> Result<String, Error> {
    let ok = !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic());
    ok.then_some(token)
        .ok_or_else(|| Error::InvalidConfig("AccessToken must be printable ASCII".into()))
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::ClientSecret { tenant, client_id, .. } => {
                write!(f, "ClientSecret(tenant {tenant}, client {client_id}, <redacted>)")
            }
            TokenSource::WorkloadIdentity { tenant, client_id, .. } => {
                write!(f, "WorkloadIdentity(tenant {tenant}, client {client_id}, <redacted>)")
            }
            TokenSource::ManagedIdentity { client_id, endpoint } => match endpoint {
                ManagedEndpoint::Imds(url) => {
                    write!(f, "ManagedIdentity(IMDS {url}, {client_id:?})")
                }
                ManagedEndpoint::AppService { endpoint, .. } => {
                    write!(f, "ManagedIdentity({endpoint}, {client_id:?}, <redacted>)")
                }
            },
            TokenSource::Supplied => f.write_str("Supplied"),
        }
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AccessToken(<redacted>, expires_on {})", self.expires_on)
    }
}

impl fmt::Debug for Entra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entra({:?}, supplied token: {})", self.source, self.supplied.is_some())
    }
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;

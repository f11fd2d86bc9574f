//! The token request each source makes: the v2 client-credentials grant (with a secret or a
//! federated assertion), or a managed identity GET (IMDS, App Service).

use super::{ManagedEndpoint, TokenSource, STORAGE_RESOURCE};
use crate::percent;
use crate::transport::Request;

/// The token request for `source`: the v2 client-credentials grant, or a managed identity GET.
pub fn token_request(source: &TokenSource) -> Option<Request> {
    let form = |pairs: &[(&str, &str)]| -> String {
        let encode = |v: &str| percent::encode(v, percent::unreserved);
        pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect::<Vec<_>>().join("&")
    };
    let scope = format!("{STORAGE_RESOURCE}.default");
    let (uri, body, headers): (String, String, Vec<(&str, String)>) = match source {
        TokenSource::ClientSecret { authority, tenant, client_id, secret } => (
            format!("{authority}/{tenant}/oauth2/v2.0/token"),
            form(&[
                ("client_id", client_id),
                ("scope", &scope),
                ("client_secret", secret),
                ("grant_type", "client_credentials"),
            ]),
            vec![("content-type", "application/x-www-form-urlencoded".into())],
        ),
        TokenSource::WorkloadIdentity { authority, tenant, client_id, assertion } => (
            format!("{authority}/{tenant}/oauth2/v2.0/token"),
            form(&[
                ("client_id", client_id),
                ("scope", &scope),
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                ("client_assertion", assertion),
                ("grant_type", "client_credentials"),
            ]),
            vec![("content-type", "application/x-www-form-urlencoded".into())],
        ),
        TokenSource::ManagedIdentity { client_id, endpoint } => {
            let (base, version, header) = match endpoint {
                ManagedEndpoint::Imds(base) => (
                    format!("{base}/metadata/identity/oauth2/token"),
                    "2018-02-01",
                    ("metadata", "true".to_string()),
                ),
                ManagedEndpoint::AppService { endpoint, header } => {
                    (endpoint.clone(), "2019-08-01", ("x-identity-header", header.clone()))
                }
            };
            let mut query = form(&[("api-version", version), ("resource", STORAGE_RESOURCE)]);
            if let Some(id) = client_id {
                query.push('&');
                query.push_str(&form(&[("client_id", id)]));
            }
            let separator = if base.contains('?') { '&' } else { '?' };
            (format!("{base}{separator}{query}"), String::new(), vec![header])
        }
        TokenSource::Supplied => return None,
    };
    let mut request = Request::new(body.into_bytes());
    *request.method_mut() =
        if request.body().is_empty() { http::Method::GET } else { http::Method::POST };
    *request.uri_mut() = uri.parse().ok()?;
    let length = request.body().len().to_string();
    for (name, value) in headers
        .iter()
        .map(|(n, v)| (*n, v.as_str()))
        .chain([("accept", "application/json"), ("content-length", length.as_str())])
    {
        let mut value = http::HeaderValue::from_str(value).ok()?;
        value.set_sensitive(name == "x-identity-header");
        request.headers_mut().insert(name, value);
    }
    Some(request)
}

//! SharedKey signing as pure functions over an `http::Request`.
//!
//! Spec: <https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key>.
//! Nothing here reads the clock: the caller stamps `x-ms-date` first, which is what lets the
//! golden vectors pin exact signatures.

use crate::config::{Account, Credential};
use crate::percent;
use crate::transport::Request;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The standard headers, in the order the string-to-sign lists them (version 2009-09-19+).
const SIGNED_STANDARD_HEADERS: [&str; 11] = [
    "content-encoding",
    "content-language",
    "content-length",
    "content-md5",
    "content-type",
    "date",
    "if-modified-since",
    "if-match",
    "if-none-match",
    "if-unmodified-since",
    "range",
];

/// Authorizes `request` for `account`: SharedKey adds `Authorization`, a SAS is appended to the
/// query. Returns the signature so callers can scrub it from anything the server echoes. A
/// bearer token is not this function's to add: the client fetches it (see
/// [`LeaseClient::access_token`](crate::LeaseClient::access_token)) and sets the header.
pub fn authorize(request: &mut Request, account: &Account) -> Option<String> {
    match &account.credential {
        Credential::SharedKey(key) => {
            let signature = signature(key, &string_to_sign(request, &account.name));
            let value = format!("SharedKey {}:{}", account.name, signature);
            let mut value = http::HeaderValue::from_str(&value).ok()?;
            value.set_sensitive(true);
            request.headers_mut().insert(http::header::AUTHORIZATION, value);
            Some(signature)
        }
        Credential::Sas(sas) => {
            let uri = request.uri();
            let joined = match uri.query() {
                Some(q) => format!("{}?{q}&{sas}", uri.path()),
                None => format!("{}?{sas}", uri.path()),
            };
            let mut parts = uri.clone().into_parts();
            parts.path_and_query = joined.parse().ok();
            *request.uri_mut() = http::Uri::from_parts(parts).ok()?;
            None
        }
        Credential::Bearer(_) => None,
    }
}

/// Base64 HMAC-SHA256 of `string_to_sign` under the decoded account key.
pub fn signature(key: &[u8], string_to_sign: &str) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(string_to_sign.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// The exact text that SharedKey signs for `request`.
pub fn string_to_sign(request: &Request, account_name: &str) -> String {
    let mut out = String::with_capacity(256);
    out.push_str(request.method().as_str());
    out.push('\n');
    for name in SIGNED_STANDARD_HEADERS {
        let value = header_str(request, name);
        // A zero Content-Length is signed as empty (required since version 2015-02-21).
        let value = if name == "content-length" && value == "0" { "" } else { value };
        // With x-ms-date present, the Date slot stays empty.
        let value =
            if name == "date" && request.headers().contains_key("x-ms-date") { "" } else { value };
        out.push_str(value);
        out.push('\n');
    }
    out.push_str(&canonical_headers(request));
    out.push_str(&canonical_resource(request, account_name));
    out
}

/// `x-ms-*` headers, lowercased, sorted, one `name:value\n` each.
pub fn canonical_headers(request: &Request) -> String {
    // Owned names: `(String, String)` is the one pair type the crate sorts, so the component
    // carries one sort routine for it (see http_date.rs for why bytes count).
    let mut headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("x-ms-"))
        .map(|(name, value)| {
            (name.as_str().to_string(), fold_whitespace(value.to_str().unwrap_or("")))
        })
        .collect();
    headers.sort();
    headers.iter().map(|(name, value)| format!("{name}:{value}\n")).collect()
}

/// `/account` + the encoded path, then each query parameter as `\nname:v1,v2` with names
/// lowercased and sorted and values decoded and sorted. Path-style emulator URLs therefore name
/// the account twice (`/devstoreaccount1/devstoreaccount1/container`), which is what Azurite
/// and the Azure SDKs compute.
pub fn canonical_resource(request: &Request, account_name: &str) -> String {
    let mut out = format!("/{account_name}{}", request.uri().path());
    // Sorted as (name, value) pairs: names in order, and each name's values in order after it.
    let mut params: Vec<(String, String)> = request
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent::decode(name, true).to_ascii_lowercase(), percent::decode(value, true))
        })
        .collect();
    params.sort();
    let mut previous: Option<&str> = None;
    for (name, value) in &params {
        if previous == Some(name.as_str()) {
            out.push(',');
        } else {
            out.push('\n');
            out.push_str(name);
            out.push(':');
        }
        out.push_str(value);
        previous = Some(name);
    }
    out
}

fn header_str<'a>(request: &'a Request, name: &str) -> &'a str {
    request.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

fn fold_whitespace(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "signing_tests.rs"]
mod tests;

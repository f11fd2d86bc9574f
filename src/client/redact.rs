//! Keeping secrets out of errors: a server or a host may echo what we sent, so every error's
//! free text is scrubbed of the account's secrets and this call's signatures before it leaves
//! the client.

use crate::config::{Credential, Lock};
use crate::error::{Error, LeaseLoss, ServiceError};
use crate::identity;
use crate::transport::TransportError;

/// Removes every secret we know of from an error's free text: the text came from a server or a
/// host, and either may echo what we sent.
pub(super) fn redact(error: Error, lock: &Lock, signatures: &[String]) -> Error {
    let mut secrets: Vec<String> = signatures.to_vec();
    match &lock.account.credential {
        Credential::SharedKey(key) => {
            use base64::Engine as _;
            secrets.push(base64::engine::general_purpose::STANDARD.encode(key));
        }
        Credential::Sas(sas) => secrets.push(sas.clone()),
        Credential::Bearer(entra) => secrets.extend(identity::secrets(entra)),
    }
    let scrub = |text: &str| scrub_text(text, &secrets);
    let scrub_service = |e: ServiceError| ServiceError { message: scrub(&e.message), ..e };
    match error {
        Error::HeldByOther(e) => Error::HeldByOther(scrub_service(e)),
        Error::LeaseLost(LeaseLoss::Service(e)) => {
            Error::LeaseLost(LeaseLoss::Service(scrub_service(e)))
        }
        Error::NotFound(e) => Error::NotFound(scrub_service(e)),
        Error::Unauthorized(e) => Error::Unauthorized(scrub_service(e)),
        Error::Throttled(e) => Error::Throttled(scrub_service(e)),
        Error::Service(e) => Error::Service(scrub_service(e)),
        Error::Transport(e) => Error::Transport(TransportError { detail: scrub(&e.detail), ..e }),
        other => other,
    }
}

/// Replaces each secret, and any `sig=` value or SharedKey or Bearer credential, with
/// `<redacted>`.
pub fn scrub_text(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| s.len() >= 8) {
        out = out.replace(secret.as_str(), "<redacted>");
    }
    for marker in ["sig=", "SharedKey ", "Bearer "] {
        let mut from = 0;
        while let Some(found) = out[from..].find(marker) {
            let start = from + found + marker.len();
            let end = out[start..]
                .find(|c: char| c == '&' || c == '\'' || c == '"' || c.is_whitespace())
                .map_or(out.len(), |e| start + e);
            out.replace_range(start..end, "<redacted>");
            from = start + "<redacted>".len();
        }
    }
    out
}

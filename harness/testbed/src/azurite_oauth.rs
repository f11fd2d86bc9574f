//! Azurite in OAuth mode: `--oauth basic` over HTTPS with this process's throwaway certificate
//! (tls.rs), in memory, strict API versions (the launcher never passes --skipApiVersionCheck).
//!
//! What Azurite 3.35.0 checks of a bearer token (dist/src/blob/authentication/
//! BlobTokenAuthenticator.js, common/utils/constants.js, blob/utils/constants.js):
//! - only over https ("Authentication scheme Bearer is not allowed with HTTP.");
//! - the JWT is decoded, never verified: any signature passes;
//! - `nbf`, `exp` and `iat` must be present; now < nbf → "Lifetime validation failed.",
//!   now > exp → "Lifetime validation failed. The token is expired.";
//! - `iss` must start with https://sts.windows.net/, https://sts.microsoftonline.de/,
//!   https://sts.chinacloudapi.cn/ or https://sts.windows-ppe.net ("Invalid token issuer.");
//! - `aud` must be https://storage.azure.com[/], e406a681-f3d4-42a8-90b6-c2b029497af1 or
//!   https://<account>.blob.core.{windows.net,chinacloudapi.cn,usgovcloudapi.net,cloudapi.de}[/]
//!   with <account> the request's account ("Invalid token audience.");
//! - no roles, scopes or tenant are checked, so a 403 for a missing RBAC role cannot be
//!   produced by Azurite;
//! - every refusal above is 403 `AuthenticationFailed` with the reason in
//!   `<AuthenticationErrorDetail>`; a non-Bearer scheme it cannot parse is 400
//!   `InvalidAuthenticationInfo`; no credential at all is 403 `AuthorizationFailure`;
//! - SharedKey keeps working beside OAuth; Get/Set Container ACL skip token checks.

use crate::azurite::Azurite;
use std::sync::OnceLock;

/// The account Azurite serves.
pub const ACCOUNT: &str = "devstoreaccount1";

/// A fresh OAuth-mode emulator on an ephemeral https port.
pub fn start() -> Azurite {
    let tls = crate::tls::shared();
    let path = |p: &std::path::Path| p.to_string_lossy().to_string();
    Azurite::start_with(&[
        "--oauth".into(),
        "basic".into(),
        "--cert".into(),
        path(&tls.cert_pem),
        "--key".into(),
        path(&tls.key_pem),
    ])
}

/// The OAuth emulator shared by every test in this process, started on first use.
pub fn shared() -> &'static Azurite {
    static SHARED: OnceLock<Azurite> = OnceLock::new();
    SHARED.get_or_init(start)
}

/// The storage part of a bearer connection string: endpoint and account, no key.
pub fn storage_part(port: u16) -> String {
    format!("BlobEndpoint=https://127.0.0.1:{port}/{ACCOUNT};AccountName={ACCOUNT}")
}

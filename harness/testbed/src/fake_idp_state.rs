//! What the fake identity endpoint's server (fake_idp.rs) and its answers (fake_idp_routes.rs)
//! share: its paths, the credentials it accepts, what the next tokens look like, the view of its
//! counters the answers record into, and the tokens it mints.

use base64::Engine as _;
use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::fake_idp_request::Request;

pub const STORAGE_AUDIENCE: &str = "https://storage.azure.com";
pub const TOKEN_PATH_SUFFIX: &str = "/oauth2/v2.0/token";
pub const IMDS_PATH: &str = "/metadata/identity/oauth2/token";
pub const APP_SERVICE_PATH: &str = "/msi/token";

/// The credentials the endpoint accepts.
#[derive(Clone, Debug)]
pub struct IdpConfig {
    pub tenant: String,
    pub client_id: String,
    pub client_secret: String,
    /// The federated token text a workload identity presents as `client_assertion`.
    pub assertion: String,
    /// A user-assigned managed identity's client id (IMDS and App Service accept it, or none).
    pub managed_client_id: String,
    /// The App Service `X-IDENTITY-HEADER` secret.
    pub identity_header: String,
    /// Seconds a token lives.
    pub lifetime_secs: u64,
}

/// What the next tokens look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issue {
    Valid,
    /// `exp` an hour in the past, while `expires_in` still promises a full lifetime (a broken
    /// clock or a stale cache): only the storage service can notice.
    Expired,
    /// Audience Azure Resource Manager, not storage.
    WrongAudience,
}

/// What the routes see of the shared state.
pub(crate) struct View<'a> {
    pub config: &'a IdpConfig,
    pub issue: Issue,
    pub(crate) counts: &'a Mutex<BTreeMap<String, u32>>,
    pub(crate) log: &'a Mutex<Vec<String>>,
}

impl View<'_> {
    pub fn record(&self, request: &Request) {
        *self.counts.lock().unwrap().entry(request.path.clone()).or_default() += 1;
        let target = if request.query.is_empty() {
            request.path.clone()
        } else {
            format!("{}?{}", request.path, request.query)
        };
        self.log.lock().unwrap().push(format!("{} {target}", request.method));
    }
}

/// A storage access token as Entra ID's v1 endpoint shapes them, with a dummy signature.
/// `nbf` is backdated five minutes, as Entra ID does for clock skew.
pub fn mint(tenant: &str, audience: &str, not_before: u64, expires_on: u64) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    let header = r#"{"typ":"JWT","alg":"RS256","kid":"traffic-cop-fake-idp"}"#;
    let claims = format!(
        r#"{{"aud":"{audience}","iss":"https://sts.windows.net/{tenant}/","iat":{not_before},"nbf":{not_before},"exp":{expires_on},"appid":"fake-app","oid":"00000000-0000-0000-0000-0000000000f1","sub":"fake-subject","tid":"{tenant}","ver":"1.0"}}"#
    );
    format!("{}.{}.{}", b64(header), b64(&claims), b64("not-a-real-signature"))
}

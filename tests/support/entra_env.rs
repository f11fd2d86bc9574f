//! One Entra ID test world: the shared OAuth Azurite, a fake identity endpoint of its own, a
//! container of its own, and a connection string per token source. Storage round trips are
//! counted client-side (traffic_cop_wasm_host::outbound) by this world's container path, token
//! round trips at its fake IdP.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use traffic_cop_testbed::azurite_oauth;
use traffic_cop_testbed::fake_idp::{FakeIdp, IdpConfig, APP_SERVICE_PATH, IMDS_PATH};
use traffic_cop_wasm_host::outbound;

/// Sentinels: easy to grep for in any error text; none may ever appear there.
pub const SECRET: &str = "SENTINEL-CLIENT-SECRET-5e1d";
pub const ASSERTION: &str = "eyJhbGciOiJSUzI1NiJ9.SENTINEL-FEDERATED-ASSERTION-77a2.c2ln";
pub const IDENTITY_HEADER: &str = "SENTINEL-IDENTITY-HEADER-0c4b";
pub const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
pub const CLIENT_ID: &str = "5f0e3c7a-1b2d-4e6f-8a9b-0c1d2e3f4a5b";
pub const MANAGED_CLIENT_ID: &str = "9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5a";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    ClientSecret,
    WorkloadIdentity,
    Imds,
    AppService,
    AccessToken,
}

pub const SOURCES: [Source; 5] = [
    Source::ClientSecret,
    Source::WorkloadIdentity,
    Source::Imds,
    Source::AppService,
    Source::AccessToken,
];

pub fn idp_config() -> IdpConfig {
    IdpConfig {
        tenant: TENANT.into(),
        client_id: CLIENT_ID.into(),
        client_secret: SECRET.into(),
        assertion: ASSERTION.into(),
        managed_client_id: MANAGED_CLIENT_ID.into(),
        identity_header: IDENTITY_HEADER.into(),
        lifetime_secs: 3599,
    }
}

pub struct Env {
    pub idp: FakeIdp,
    pub azurite_port: u16,
    pub container: String,
}

impl Env {
    pub fn new() -> Env {
        Env::with(idp_config())
    }

    pub fn with(config: IdpConfig) -> Env {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        outbound::trust_test_ca();
        let azurite_port = azurite_oauth::shared().port;
        let container =
            format!("entra{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        Env { idp: FakeIdp::start(config), azurite_port, container }
    }

    pub fn storage(&self) -> String {
        azurite_oauth::storage_part(self.azurite_port)
    }

    /// A valid storage token, minted as the fake IdP would (for `AccessToken=`).
    pub fn token(&self, lifetime_secs: u64) -> (String, u64) {
        let now = traffic_cop_testbed::unix_secs();
        let exp = now + lifetime_secs;
        let audience = traffic_cop_testbed::fake_idp::STORAGE_AUDIENCE;
        (traffic_cop_testbed::fake_idp::mint(TENANT, audience, now - 300, exp), exp)
    }

    /// The connection string for one source, with the given credential text.
    pub fn connection_string(&self, source: Source) -> String {
        let storage = self.storage();
        let authority = self.idp.authority();
        match source {
            Source::ClientSecret => format!(
                "{storage};Authentication=ClientSecret;TenantId={TENANT};ClientId={CLIENT_ID};\
                 ClientSecret={SECRET};AuthorityHost={authority}"
            ),
            Source::WorkloadIdentity => format!(
                "{storage};Authentication=WorkloadIdentity;TenantId={TENANT};\
                 ClientId={CLIENT_ID};ClientAssertion={ASSERTION};AuthorityHost={authority}"
            ),
            Source::Imds => format!(
                "{storage};Authentication=ManagedIdentity;ClientId={MANAGED_CLIENT_ID};\
                 ImdsEndpoint={}",
                self.idp.imds_endpoint()
            ),
            Source::AppService => format!(
                "{storage};Authentication=ManagedIdentity;ClientId={MANAGED_CLIENT_ID};\
                 IdentityEndpoint={};IdentityHeader={IDENTITY_HEADER}",
                self.idp.identity_endpoint()
            ),
            Source::AccessToken => {
                format!("{storage};Authentication=AccessToken;AccessToken={}", self.token(3600).0)
            }
        }
    }

    /// The identity endpoint path a source asks, if any.
    pub fn token_path(&self, source: Source) -> Option<String> {
        match source {
            Source::ClientSecret | Source::WorkloadIdentity => Some(self.idp.token_path()),
            Source::Imds => Some(IMDS_PATH.into()),
            Source::AppService => Some(APP_SERVICE_PATH.into()),
            Source::AccessToken => None,
        }
    }

    /// Storage requests so far to this world's container (client-side count).
    pub fn storage_trips(&self) -> usize {
        outbound::count(&format!(":{}/devstoreaccount1/{}", self.azurite_port, self.container))
    }

    /// Token requests so far at this world's fake IdP.
    pub fn token_trips(&self) -> u32 {
        self.idp.total()
    }
}

/// Fails if any sentinel appears in `text`.
pub fn assert_no_secret(text: &str) {
    for sentinel in
        ["SENTINEL-CLIENT-SECRET", "SENTINEL-FEDERATED-ASSERTION", "SENTINEL-IDENTITY-HEADER"]
    {
        assert!(!text.contains(sentinel), "{sentinel} leaked: {text}");
    }
}

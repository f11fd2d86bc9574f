//! Entra ID bearer tokens on virtual time: each token source against a fake identity endpoint
//! and the fake lease service, with the round trips of a follower tick and a leader run
//! counted per source, with and without a token kept from an earlier invocation; a refused
//! secret and an expired kept token. (Against Azurite in OAuth mode: tests/wasmtime/entra.)

use crate::support;

use crate::support::fake_service::FakeService;
use crate::support::VirtualRuntime;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome};
use traffic_cop::identity::TokenCache;
use traffic_cop::transport::{Request, Response, Timeouts, Transport, TransportError};
use traffic_cop::{Error, LeaseClient, Lock, TokenProblem};

const SECRET: &str = "SENTINEL-secret-0b7e";
const ENDPOINT: &str =
    "BlobEndpoint=https://127.0.0.1:10000/devstoreaccount1;AccountName=devstoreaccount1";

/// Storage requests go to the fake service; anything else is the identity endpoint, which
/// grants a token (3600 s) unless the request carries the wrong secret.
#[derive(Clone)]
struct World {
    storage: FakeService,
    identity_requests: Rc<RefCell<Vec<Request>>>,
    storage_requests: Rc<Cell<u64>>,
}

impl Transport for World {
    fn send(&mut self, request: Request, timeouts: Timeouts) -> Result<Response, TransportError> {
        if request.uri().path().starts_with("/devstoreaccount1") {
            let bearer = request.headers().get("authorization").and_then(|v| v.to_str().ok());
            assert_eq!(bearer, Some("Bearer token-1"), "storage request without the token");
            self.storage_requests.set(self.storage_requests.get() + 1);
            return self.storage.send(request, timeouts);
        }
        let body = String::from_utf8_lossy(request.body()).into_owned();
        self.identity_requests.borrow_mut().push(request);
        let (status, answer) = if body.contains("wrong") {
            (
                401,
                format!(
                    r#"{{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided: {body}"}}"#
                ),
            )
        } else {
            (
                200,
                r#"{"token_type":"Bearer","expires_in":3600,"access_token":"token-1"}"#.to_string(),
            )
        };
        Ok(http::Response::builder().status(status).body(answer.into_bytes()).unwrap())
    }
}

struct Fixture {
    world: World,
    clock: Rc<Cell<std::time::SystemTime>>,
}

impl Fixture {
    fn new() -> Fixture {
        let clock = Rc::new(Cell::new(support::epoch()));
        let world = World {
            storage: FakeService::new(clock.clone()),
            identity_requests: Rc::default(),
            storage_requests: Rc::default(),
        };
        Fixture { world, clock }
    }

    /// One invocation's client: its calls share one token store, as the component's do.
    fn client(&self, tokens: &TokenCache) -> LeaseClient<World, VirtualRuntime> {
        LeaseClient::new(self.world.clone(), VirtualRuntime::on_clock(self.clock.clone(), 3))
            .with_token_cache(tokens.clone())
    }

    /// (token requests, storage requests) made by `f`.
    fn count(&self, f: impl FnOnce()) -> (usize, u64) {
        let (tokens, storage) =
            (self.world.identity_requests.borrow().len(), self.world.storage_requests.get());
        f();
        (
            self.world.identity_requests.borrow().len() - tokens,
            self.world.storage_requests.get() - storage,
        )
    }
}

fn sources() -> Vec<(&'static str, String)> {
    vec![
        ("client secret", format!("Authentication=ClientSecret;TenantId=t1;ClientId=app;ClientSecret={SECRET};AuthorityHost=https://127.0.0.1:9443")),
        ("workload identity", "Authentication=WorkloadIdentity;TenantId=t1;ClientId=app;ClientAssertion=federated.jwt.text;AuthorityHost=https://127.0.0.1:9443".into()),
        ("managed identity (IMDS)", "Authentication=ManagedIdentity;ImdsEndpoint=http://127.0.0.1:9444".into()),
        ("managed identity (App Service)", "Authentication=ManagedIdentity;IdentityEndpoint=http://127.0.0.1:9445/msi/token;IdentityHeader=hdr-secret".into()),
    ]
}

#[test]
fn round_trips_per_tick_for_each_source_with_and_without_a_kept_token() {
    println!(
        "{:<32} {:>16} {:>16} {:>18}",
        "source", "follower tick", "leader run", "with kept token"
    );
    for (name, auth) in sources() {
        let fixture = Fixture::new();
        let lock = Lock::parse(&format!("{ENDPOINT};{auth}"), "jobs", "nightly").unwrap();
        let options = |holder: &str| GuardOptions::every_interval(holder, 15, 60, None).unwrap();
        // First use creates the container and blob; not a steady tick.
        let setup = TokenCache::default();
        let Decision::Run(first) =
            guard::guarded_invoke(&mut fixture.client(&setup), &lock, &options("a"))
        else {
            panic!("{name}: first run")
        };
        guard::complete(&mut fixture.client(&setup), &first, &Outcome::Success).unwrap();
        fixture.clock.set(fixture.clock.get() + std::time::Duration::from_secs(60));

        let leader = fixture.count(|| {
            let event = TokenCache::default();
            let Decision::Run(ticket) =
                guard::guarded_invoke(&mut fixture.client(&event), &lock, &options("a"))
            else {
                panic!("{name}: leader")
            };
            guard::complete(&mut fixture.client(&event), &ticket, &Outcome::Success).unwrap();
        });
        let follower = fixture.count(|| {
            let decision = guard::guarded_invoke(
                &mut fixture.client(&TokenCache::default()),
                &lock,
                &options("b"),
            );
            assert!(matches!(decision, Decision::Skip(_)), "{name}: {decision:?}");
        });
        // The host kept the token (get-token) and passes it back: no token request.
        let kept =
            fixture.client(&TokenCache::default()).access_token(&lock.account).unwrap().unwrap();
        let with_kept = Lock::parse(
            &format!(
                "{ENDPOINT};{auth};AccessToken={};AccessTokenExpiresOn={}",
                kept.token, kept.expires_on
            ),
            "jobs",
            "nightly",
        )
        .unwrap();
        let kept_follower = fixture.count(|| {
            let decision = guard::guarded_invoke(
                &mut fixture.client(&TokenCache::default()),
                &with_kept,
                &options("b"),
            );
            assert!(matches!(decision, Decision::Skip(_)), "{name}: {decision:?}");
        });
        println!(
            "{name:<32} {:>7} + {:<6} {:>7} + {:<6} {:>9} + {:<6}  (token + storage)",
            follower.0, follower.1, leader.0, leader.1, kept_follower.0, kept_follower.1
        );
        assert_eq!(follower, (1, 1), "{name}: a follower fetches one token and looks once");
        assert_eq!(leader, (1, 5), "{name}: one token serves the whole run");
        assert_eq!(
            kept_follower,
            (0, 1),
            "{name}: with a kept token a follower decides in one round trip"
        );
    }
}

#[test]
fn a_refused_secret_is_a_typed_error_without_the_secret() {
    let fixture = Fixture::new();
    let wrong = "SENTINEL-wrong-secret-66a1";
    let lock = Lock::parse(
        &format!(
            "{ENDPOINT};Authentication=ClientSecret;TenantId=t1;ClientId=app;ClientSecret={wrong}"
        ),
        "jobs",
        "nightly",
    )
    .unwrap();
    let options = GuardOptions::every_interval("a", 15, 60, None).unwrap();
    let decision =
        guard::guarded_invoke(&mut fixture.client(&TokenCache::default()), &lock, &options);
    let Decision::Skip(guard::SkipReason::Error(error)) = &decision else { panic!("{decision:?}") };
    let text = format!("{error} {error:?} {decision:?}");
    assert!(
        matches!(error, Error::Unauthorized(e) if e.code.as_deref() == Some("invalid_client")),
        "{text}"
    );
    assert!(text.contains("AADSTS7000215"), "{text}");
    assert!(!text.contains(wrong), "{text}");
    assert_eq!(fixture.world.storage_requests.get(), 0, "nothing reached storage");
}

#[test]
fn an_expired_kept_token_is_refetched_and_an_expired_supplied_one_refused() {
    let fixture = Fixture::new();
    let now = traffic_cop::guard::unix_ms(support::epoch()) / 1000;
    let stale = format!("AccessToken=old-token;AccessTokenExpiresOn={}", now + 60);
    let lock = Lock::parse(
        &format!(
            "{ENDPOINT};Authentication=ManagedIdentity;ImdsEndpoint=http://127.0.0.1:9444;{stale}"
        ),
        "jobs",
        "n",
    )
    .unwrap();
    let token =
        fixture.client(&TokenCache::default()).access_token(&lock.account).unwrap().unwrap();
    assert_eq!(token.token, "token-1", "less than five minutes left: fetched anew");
    let supplied = Lock::parse(
        &format!(
            "{ENDPOINT};Authentication=AccessToken;AccessToken=old-token;AccessTokenExpiresOn={}",
            now - 1
        ),
        "jobs",
        "n",
    )
    .unwrap();
    let refused = fixture.client(&TokenCache::default()).inspect(&supplied);
    assert!(
        matches!(&refused, Err(Error::UnusableToken(t)) if t.problem == TokenProblem::Expired),
        "{refused:?}"
    );
    assert_eq!(fixture.world.storage_requests.get(), 0);
}

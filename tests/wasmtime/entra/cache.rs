//! A token kept across invocations (`AccessToken=…;AccessTokenExpiresOn=…` beside any source):
//! with five minutes or more left, a follower decides in exactly one storage round trip and no
//! token request; with less, the source is asked again, once.

use traffic_cop_testbed::runner::Test;

use super::env::*;
use super::sources::{align, already_ran, leader_run, lock, settings, trips};
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1;
use traffic_cop_wasm_host::component::v1::lease::{AccessToken, LeaseDuration, Lock};

/// A lock that ran in this interval, so the next guarded invoke is a follower's.
fn ran_lock(env: &Env, source: Source) -> Lock {
    let job = lock(env, env.connection_string(source), "kept");
    let grant = fresh().acquire(&job, LeaseDuration::Fixed(15), None).expect("acquire");
    fresh().release(&job, &grant.lease_id).expect("release");
    align();
    let finished = leader_run(&job);
    assert!(finished.error.is_none(), "complete: {}", finished.text);
    job
}

fn with_a_kept_token_a_follower_decides_in_one_storage_round_trip_and_no_token_request() {
    for source in [Source::ClientSecret, Source::Imds, Source::AppService] {
        let env = Env::new();
        let job = ran_lock(&env, source);
        // The kept token is the one get-token hands out: one token request.
        let (kept, (storage, tokens)) = trips(&env, || fresh().get_token(&job.connection_string));
        let AccessToken { token, expires_on } = kept.expect("get-token");
        assert_eq!((storage, tokens), (0, 1), "{source:?} get-token");
        let now = traffic_cop_testbed::unix_secs();
        let lifetime = env.idp.config().lifetime_secs;
        assert!(expires_on.abs_diff(now + lifetime) <= 5, "{source:?}: {expires_on} vs {now}");
        assert_eq!(token.split('.').count(), 3, "a JWT");
        let kept = lock(
            &env,
            format!(
                "{};AccessToken={token};AccessTokenExpiresOn={expires_on}",
                job.connection_string
            ),
            "kept",
        );
        let (decision, (storage, tokens)) =
            trips(&env, || fresh().guarded_invoke(&settings(&kept, "follower")));
        assert!(already_ran(&decision), "{decision:?}");
        eprintln!("{source:?} follower tick with a kept token: {storage} storage + {tokens} token");
        assert_eq!((storage, tokens), (1, 0), "{source:?}");

        // Four minutes left is too little: the source is asked once more.
        let soon = traffic_cop_testbed::unix_secs() + 240;
        let stale = lock(
            &env,
            format!("{};AccessToken={token};AccessTokenExpiresOn={soon}", job.connection_string),
            "kept",
        );
        let (decision, (storage, tokens)) =
            trips(&env, || fresh().guarded_invoke(&settings(&stale, "follower")));
        assert!(already_ran(&decision), "{decision:?}");
        assert_eq!((storage, tokens), (1, 1), "{source:?} with a token about to expire");
    }
}

fn get_token_reuses_a_kept_token_and_refuses_what_it_cannot_use() {
    let env = Env::new();
    let (token, expires_on) = env.token(3600);
    let source = env.connection_string(Source::WorkloadIdentity);
    let kept = format!("{source};AccessToken={token};AccessTokenExpiresOn={expires_on}");
    let (again, trips) = trips(&env, || fresh().get_token(&kept));
    assert_eq!(trips, (0, 0), "a kept token with an hour left is handed back as is");
    let again = again.expect("get-token");
    assert_eq!((again.token.as_str(), again.expires_on), (token.as_str(), expires_on));
    let shared_key = traffic_cop_testbed::azurite::connection_string_for_port(
        env.azurite_port,
        traffic_cop_testbed::EMULATOR_KEY_B64,
    );
    let error = fresh().get_token(&shared_key).expect_err("no token source");
    assert!(matches!(error, v1::Error::InvalidConfig(_)), "{error:?}");
    let wrong = source.replace(ASSERTION, "eyJ0.SENTINEL-FEDERATED-ASSERTION-bad.c2ln");
    let error = fresh().get_token(&wrong).expect_err("refused");
    assert!(matches!(error, v1::Error::Unauthorized(_)), "{error:?}");
    assert!(format!("{error:?}").contains("AADSTS700211"), "{error:?}");
    assert_no_secret(&format!("{error:?}"));
    assert_eq!(env.token_trips(), 1, "{:?}", env.idp.log());
}

fn with_a_kept_token_a_leader_run_asks_for_no_token() {
    let env = Env::new();
    let source = env.connection_string(Source::ClientSecret);
    let AccessToken { token, expires_on } = fresh().get_token(&source).expect("get-token");
    let kept = format!("{source};AccessToken={token};AccessTokenExpiresOn={expires_on}");
    let job = lock(&env, kept, "kept-leader");
    let grant = fresh().acquire(&job, LeaseDuration::Fixed(15), None).expect("acquire");
    fresh().release(&job, &grant.lease_id).expect("release");
    align();
    let (done, (storage, tokens)) = trips(&env, || leader_run(&job));
    assert!(done.error.is_none(), "complete: {}", done.text);
    eprintln!("leader run with a kept token: {storage} storage + {tokens} token");
    assert_eq!(tokens, 0);
    assert_eq!(env.token_trips(), 1, "only get-token asked: {:?}", env.idp.log());
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        with_a_kept_token_a_follower_decides_in_one_storage_round_trip_and_no_token_request,
        get_token_reuses_a_kept_token_and_refuses_what_it_cannot_use,
        with_a_kept_token_a_leader_run_asks_for_no_token,
    ]
}

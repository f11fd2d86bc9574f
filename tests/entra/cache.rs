//! A token kept across invocations (`AccessToken=…;AccessTokenExpiresOn=…` beside any source):
//! with five minutes or more left, a follower decides in exactly one storage round trip and no
//! token request; with less, the source is asked again, once.

use super::env::*;
use super::sources::{align, lock, options, trips};
use traffic_cop_host::component::{fresh, Decision, LeaseDuration, Outcome, SkipReason};

/// A lock that ran in this interval, so the next guarded invoke is a follower's.
fn ran_lock(env: &Env, source: Source) -> traffic_cop_host::component::Lock {
    let job = lock(env, env.connection_string(source), "kept");
    let grant = fresh().acquire(&job, LeaseDuration::Fixed(15), None).expect("acquire");
    fresh().release(&job, &grant.lease_id).expect("release");
    align();
    let Decision::Run(ticket) = fresh().guarded_invoke(&job, &options("leader")) else {
        panic!("no leader run")
    };
    fresh().complete(&ticket, &Outcome::Success).expect("complete");
    job
}

#[test]
fn with_a_kept_token_a_follower_decides_in_one_storage_round_trip_and_no_token_request() {
    for source in [Source::ClientSecret, Source::Imds, Source::AppService] {
        let env = Env::new();
        let job = ran_lock(&env, source);
        let (token, expires_on) = env.token(3600);
        let kept = lock(
            &env,
            format!(
                "{};AccessToken={token};AccessTokenExpiresOn={expires_on}",
                job.connection_string
            ),
            "kept",
        );
        let (decision, (storage, tokens)) =
            trips(&env, || fresh().guarded_invoke(&kept, &options("follower")));
        assert!(matches!(decision, Decision::Skip(SkipReason::AlreadyRan(_))), "{decision:?}");
        eprintln!("{source:?} follower tick with a kept token: {storage} storage + {tokens} token");
        assert_eq!((storage, tokens), (1, 0), "{source:?}");

        // Four minutes left is too little: the source is asked once more.
        let soon = traffic_cop_host::unix_secs() + 240;
        let stale = lock(
            &env,
            format!("{};AccessToken={token};AccessTokenExpiresOn={soon}", job.connection_string),
            "kept",
        );
        let (decision, (storage, tokens)) =
            trips(&env, || fresh().guarded_invoke(&stale, &options("follower")));
        assert!(matches!(decision, Decision::Skip(SkipReason::AlreadyRan(_))), "{decision:?}");
        assert_eq!((storage, tokens), (1, 1), "{source:?} with a token about to expire");
    }
}

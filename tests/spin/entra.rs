//! The project's Spin app under the real Spin CLI with bearer authorization: `spin up -c
//! http-job` on spin.toml, a client-secret connection string against OAuth Azurite and the fake
//! IdP, both allowed through the manifest's `storage_endpoint` / `identity_endpoint`
//! variables. Spin trusts the throwaway CA through its runtime config (`[[client_tls]]` with
//! `ca_roots_file`, for the http-job component and those two hosts only); without it the same
//! run must fail on the certificate, which shows Spin really verifies it.

use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

use crate::env::*;
use std::path::{Path, PathBuf};
use std::time::Duration;
use traffic_cop_testbed::spin::{assert_built, find_spin, http, Launch, SpinReplica};

/// Spin 4.0.2 refuses ports in `hosts` ("ports not currently supported"), so the entry names
/// 127.0.0.1: every https port there, for this component only.
/// `spin up` passes trigger options through; Launch has no slot for one, so a two-line
/// wrapper adds `--runtime-config-file` (it `exec`s, so the replica's process group is Spin's).
fn spin_with_runtime_config(dir: &Path, spin: &Path, config: &Path) -> PathBuf {
    let wrapper = dir.join("spin-with-runtime-config");
    let script = format!(
        "#!/bin/sh\nexec '{}' \"$@\" --runtime-config-file '{}'\n",
        spin.display(),
        config.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    let mut permissions = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrapper, permissions).unwrap();
    wrapper
}

fn replica(
    env: &Env,
    spin: PathBuf,
    dir: &Path,
    holder: &str,
    extra: &[(&str, String)],
) -> SpinReplica {
    let launch = Launch {
        spin,
        data_dir: Some(dir.join("data")),
        manifest: traffic_cop_testbed::repo_root().join("spin.toml"),
        component: Some("http-job".into()),
        lifetime: Duration::from_secs(120),
        env: Vec::new(),
    };
    let mut variables = vec![
        ("connection_string", env.connection_string(Source::ClientSecret)),
        ("storage_endpoint", format!("https://127.0.0.1:{}", env.azurite_port)),
        ("identity_endpoint", env.idp.authority()),
        ("container", env.container.clone()),
        ("holder", holder.to_string()),
        ("lease_seconds", "15".into()),
        // Every minute: the first tick after the lock is created runs (see room_in_minute).
        ("schedule", "0 * * * * *".into()),
        ("work_ms", "0".into()),
    ];
    variables.extend(extra.iter().cloned());
    let mut replica = launch.start(holder, &dir.join(holder), &variables);
    replica.wait_ready(Duration::from_secs(90)).unwrap();
    replica
}

fn run(replica: &SpinReplica) -> (u16, String) {
    http(replica.port, "POST", "/run", Duration::from_secs(60)).expect("an answer")
}

fn the_spin_app_runs_with_bearer_tokens_under_real_spin() {
    let spin = require("real spin (entra)", find_spin());
    assert_built();
    let env = Env::new();
    let dir = traffic_cop_testbed::repo_root().join("target/entra-spin").join(format!(
        "{}-{}",
        std::process::id(),
        env.container
    ));
    std::fs::create_dir_all(&dir).unwrap();

    // Without the CA Spin must refuse the certificate: nothing reaches the IdP's handler.
    let untrusting = replica(&env, spin.clone(), &dir, "untrusting", &[]);
    let (status, body) = run(&untrusting);
    drop(untrusting);
    assert!(!body.contains("\"decision\":\"run\""), "ran without trusting the CA: {body}");
    assert_eq!(env.token_trips(), 0, "a TLS handshake failed, so no request was served");
    eprintln!("spin without the CA: HTTP {status}: {body}");
    assert_no_secret(&body);

    let config = dir.join("runtime-config.toml");
    let ca = traffic_cop_testbed::tls::shared().ca_pem.clone();
    std::fs::write(
        &config,
        format!(
            "[[client_tls]]\ncomponent_ids = [\"http-job\"]\n\
             hosts = [\"127.0.0.1\"]\nca_roots_file = '{}'\n",
            ca.display()
        ),
    )
    .unwrap();
    let spin_trusting = spin_with_runtime_config(&dir, &spin, &config);
    let trusting = replica(&env, spin_trusting.clone(), &dir, "trusting", &[]);
    traffic_cop_testbed::room_in_minute(30);
    let (status, leader) = run(&trusting);
    assert_eq!(status, 200, "{leader}\n{}", trusting.output());
    assert!(leader.contains("\"decision\":\"run\""), "{leader}");
    let tokens_after_leader = env.token_trips();
    // Follower ticks, each a new Spin instance: the token kept in key-value is passed back to
    // the component, so none of them asks the IdP.
    let mut followers = Vec::new();
    for _ in 0..3 {
        let (status, follower) = run(&trusting);
        assert_eq!(status, 200, "{follower}");
        assert!(follower.contains("\"decision\":\"skip\""), "{follower}");
        assert_no_secret(&follower);
        followers.push(follower);
    }
    let follower_tokens = env.token_trips() - tokens_after_leader;
    eprintln!(
        "measured: spin with the CA and keep_token on: {tokens_after_leader} token request(s) for \
         the leader run, {follower_tokens} for 3 follower ticks\nleader {leader}\nfollower {}",
        followers[0]
    );
    assert!(tokens_after_leader >= 1, "the leader run fetched a token");
    assert_eq!(follower_tokens, 0, "a follower fetched a token although one was kept");
    assert_no_secret(&leader);
    let log = trusting.output() + &trusting.log("http-job");
    assert_no_secret(&log);
    // Where it rests: the default key-value store's file under the replica's state dir.
    let store = dir.join("trusting/state/sqlite_key_value.db");
    let bytes = std::fs::read(&store).unwrap_or_else(|e| panic!("{}: {e}", store.display()));
    let key = b"traffic-cop/token/";
    assert!(bytes.windows(key.len()).any(|w| w == key), "no kept token in {}", store.display());
    drop(trusting);

    // keep_token = "false": every event fetches its own token.
    let before = env.token_trips();
    let fetching =
        // Every tick asks storage (no memory of the last look), so each event needs a token.
        replica(&env, spin_trusting, &dir, "fetching", &[
            ("keep_token", "false".into()),
            ("refresh_seconds", "0".into()),
        ]);
    for _ in 0..2 {
        let (status, body) = run(&fetching);
        assert_eq!(status, 200, "{body}");
    }
    let per_event = env.token_trips() - before;
    eprintln!("measured: keep_token off: {per_event} token requests for 2 events");
    assert!(per_event >= 2, "keep_token=false still kept the token ({per_event} for 2 events)");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![the_spin_app_runs_with_bearer_tokens_under_real_spin,]
}

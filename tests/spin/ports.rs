//! A replica's port is picked free, then bound by Spin a moment later; another process can take
//! it in between (the tests run side by side, each with proxies and receivers on 127.0.0.1).
//! Spin then exits with "already in use" while the other listener answers: `wait_ready` must
//! start the replica again on a new port, and only call it ready once Spin says it serves there.

use crate::run::Background;
use std::net::TcpListener;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::docs;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{
    assert_built, cron_line, find_spin, free_port, http, manifest_copy, Launch,
};

fn a_replica_whose_port_was_taken_is_started_again_on_another() {
    let spin = require("real spin (ports)", find_spin());
    assert_built();
    let dir = crate::story::story_dir("ports");
    let launch = Launch {
        spin,
        data_dir: None,
        manifest: manifest_copy(&dir.join("app"), "0 * * * * *"),
        component: Some("http-job".into()),
        lifetime: Duration::from_secs(60),
        env: Vec::new(),
    };
    let mut replica = launch.start("taken", &dir.join("taken"), &[]);
    // Spin needs about a second to load the app before it binds: take its port first.
    let squatter = TcpListener::bind(("127.0.0.1", replica.port));
    let taken = replica.port;
    replica.wait_ready(Duration::from_secs(90)).unwrap();
    if squatter.is_ok() {
        assert_ne!(replica.port, taken, "ready on a port another process holds");
    }
    // Whoever answers is Spin: the app's routes (404 lists them).
    let (status, body) = http(replica.port, "GET", "/nowhere", Duration::from_secs(10)).unwrap();
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("routes: POST /run"), "{body}");
    drop(squatter);
}

/// docs/spin-and-spinkube.md's two replicas of the app, started as written in the app's folder
/// (its ports moved to free ones; storage, the container and the plugin the test's), and its
/// curls: each `POST /run` is a tick answered as JSON, at most one of them a run, the board
/// answers, and each replica kept its state and logs apart.
fn the_docs_two_replicas_keep_their_own_state_and_answer_its_curls() {
    let spin = require("real spin (the docs' two replicas)", find_spin());
    let data = require("real spin (the docs' two replicas, cron 0.3.0)", cron_line("0.3.0"));
    assert_built();
    let dir = crate::story::story_dir("docs-replicas");
    let manifest = manifest_copy(&dir.join("app"), "0 0 2 * * *");
    let app = manifest.parent().unwrap();
    let ports = [free_port(), free_port()];
    let text = docs::replaced(
        &docs::example("two-replicas"),
        &[
            ("127.0.0.1:3001", &format!("127.0.0.1:{}", ports[0])),
            ("127.0.0.1:3002", &format!("127.0.0.1:{}", ports[1])),
        ],
    );
    let commands = docs::shell_commands(&text);
    let azurite = Azurite::shared();
    let container = format!("docsreplicas{}", std::process::id());
    let env: Vec<(String, String)> = [
        ("SPIN_DATA_DIR", data.display().to_string()),
        ("SPIN_VARIABLE_CONNECTION_STRING", azurite.connection_string()),
        ("SPIN_VARIABLE_STORAGE_ENDPOINT", format!("http://127.0.0.1:{}", azurite.port)),
        ("SPIN_VARIABLE_CONTAINER", container),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .to_vec();
    let replicas: Vec<Background> = commands
        .iter()
        .filter(|c| c.background)
        .enumerate()
        .map(|(i, up)| {
            assert_eq!((up.program.as_str(), up.args[0].as_str()), ("spin", "up"), "{up:#?}");
            let env = [env.clone(), up.env.clone()].concat();
            let args: Vec<&str> = up.args.iter().map(String::as_str).collect();
            let out = dir.join(format!("replica-{i}.out"));
            Background::start_in(app, &spin, &args, &env, &out, Duration::from_secs(90))
        })
        .collect();
    assert_eq!(replicas.len(), 2, "{commands:#?}");
    let said = || {
        (0..2)
            .map(|i| {
                std::fs::read_to_string(dir.join(format!("replica-{i}.out"))).unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for port in ports {
        let deadline = Instant::now() + Duration::from_secs(60);
        while http(port, "GET", "/status", Duration::from_secs(5)).is_err() {
            assert!(Instant::now() < deadline, "127.0.0.1:{port} never answered: {}", said());
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    let curls: Vec<docs::Curl> = commands
        .iter()
        .filter(|c| c.program == "curl")
        .map(|c| docs::curl(c).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert_eq!(curls.len(), 3, "{commands:#?}");
    let mut runs = 0;
    for curl in &curls {
        let (status, body) = http(curl.port, &curl.method, &curl.path, Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("{curl:?}: {e}: {}", said()));
        assert_eq!(status, 200, "{curl:?}: {body}");
        let answer: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{curl:?}: {e}: {body}"));
        if curl.path == "/run" {
            assert!(answer["decision"].is_string(), "{curl:?}: {answer}");
            runs += usize::from(answer["decision"] == "run");
        }
    }
    assert!(runs <= 1, "two runs of one due time: {}", said());
    drop(replicas);
    for state in [".spin-1", ".spin-2"] {
        assert!(app.join(state).join("logs").is_dir(), "{state}/logs: {}", said());
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_replica_whose_port_was_taken_is_started_again_on_another,
        the_docs_two_replicas_keep_their_own_state_and_answer_its_curls,
    ]
}

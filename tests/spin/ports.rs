//! A replica's port is picked free, then bound by Spin a moment later; another process can take
//! it in between (the tests run side by side, each with proxies and receivers on 127.0.0.1).
//! Spin then exits with "already in use" while the other listener answers: `wait_ready` must
//! start the replica again on a new port, and only call it ready once Spin says it serves there.

use std::net::TcpListener;
use std::time::Duration;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{assert_built, find_spin, http, manifest_copy, Launch};

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

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![a_replica_whose_port_was_taken_is_started_again_on_another,]
}

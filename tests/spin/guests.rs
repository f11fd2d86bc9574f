//! Guest jobs in Python and JavaScript on the real Spin (HTTP trigger): three `spin up`
//! replicas of a guest's own spin.toml (guests/<language>/spin.toml: the guest with
//! `traffic-cop:lease` as a component dependency by path), each behind its own counting proxy
//! to Azurite. The holder's whole process group is SIGKILLed mid-run; the story and its checker
//! are the test host's (tests/wasmtime/guests/).

use crate::drive::{self, summary, Fire, INTERVAL, WORK_MS};
use crate::story::{self, Killed, Node, Tick};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use traffic_cop_testbed::built::guest_wasm;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{find_spin, http, Launch};

struct SpinStory {
    pub ticks: Vec<Tick>,
    pub killed: Killed,
    pub printed: Vec<String>,
    /// Kept until the story is judged; they stop on drop.
    pub nodes: Vec<Node>,
}

fn run(language: &str, spin: PathBuf) -> SpinStory {
    let dir = story::story_dir(&format!("guest-{language}"));
    let component = format!("{language}-job");
    let launch = Launch {
        spin,
        // An empty data dir: the HTTP trigger needs no plugin.
        data_dir: Some(dir.join("data")),
        manifest: traffic_cop_testbed::repo_root().join("guests").join(language).join("spin.toml"),
        component: None,
        lifetime: Duration::from_secs(240),
        env: Vec::new(),
    };
    let container = format!("{language}spin{}", std::process::id());
    let mut nodes = story::start_nodes(&launch, &dir, &container, language, INTERVAL, WORK_MS);
    let ports: Vec<u16> = nodes.iter().map(|n| n.replica.port).collect();
    let fire: Fire =
        Arc::new(move |node| match http(ports[node], "POST", "/run", Duration::from_secs(30))? {
            (200, body) => Ok(body),
            (status, body) => Err(format!("HTTP {status}: {body}")),
        });
    let (ticks, killed) =
        drive::run(fire, || story::kill_running(&mut nodes, &container, 3, INTERVAL));
    // Spin writes each component's stdout to `<log dir>/<component>_stdout.txt`.
    let printed = nodes
        .iter()
        .flat_map(|n| n.replica.stdout(&component).lines().map(String::from).collect::<Vec<_>>())
        .collect();
    SpinStory { ticks, killed, printed, nodes }
}

fn on_real_spin(language: &str) {
    let what = format!("guest {language} (real spin)");
    require(&what, guest_wasm(language));
    let spin = require(&what, find_spin());
    traffic_cop_testbed::built::lease_component();
    let started = Instant::now();
    let story = run(language, spin);
    let takeover = story::check_story(&story.ticks, &story.killed, drive::INTERVAL);
    drive::check_printed(&story.ticks, &story.printed);
    assert!(!story.nodes.is_empty());
    summary(&format!("{language} guest, real spin"), &story.ticks, &takeover, started);
}

fn python_guest_on_real_spin_runs_once_per_interval_and_takes_over_after_a_kill() {
    on_real_spin("python");
}

fn js_guest_on_real_spin_runs_once_per_interval_and_takes_over_after_a_kill() {
    on_real_spin("js");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        python_guest_on_real_spin_runs_once_per_interval_and_takes_over_after_a_kill,
        js_guest_on_real_spin_runs_once_per_interval_and_takes_over_after_a_kill,
    ]
}

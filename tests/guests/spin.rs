//! Three `spin up` replicas of a guest's own spin.toml (guests/<language>/spin.toml: the guest
//! with `traffic-cop:lease` as a component dependency by path), each behind its own counting
//! proxy to Azurite. The holder's whole process group is SIGKILLed mid-run.

use crate::drive::{self, Fire, INTERVAL, WORK_MS};
use crate::story::{self, Killed, Node, Tick};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use traffic_cop_host::spin::{http, Launch};

pub struct SpinStory {
    pub ticks: Vec<Tick>,
    pub killed: Killed,
    pub printed: Vec<String>,
    /// Kept until the story is judged; they stop on drop.
    pub nodes: Vec<Node>,
}

pub fn run(language: &str, spin: PathBuf) -> SpinStory {
    let dir = story::story_dir(&format!("guest-{language}"));
    let component = format!("{language}-job");
    let launch = Launch {
        spin,
        // An empty data dir: the HTTP trigger needs no plugin.
        data_dir: Some(dir.join("data")),
        manifest: traffic_cop_host::repo_root().join("guests").join(language).join("spin.toml"),
        component: None,
        lifetime: Duration::from_secs(240),
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
        .flat_map(|n| n.replica.log(&component).lines().map(String::from).collect::<Vec<_>>())
        .collect();
    SpinStory { ticks, killed, printed, nodes }
}

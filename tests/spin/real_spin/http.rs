//! Three `spin up -c http-job` replicas of the project's own spin.toml; the test is their
//! scheduler (what a Kubernetes CronJob is on SpinKube): every interval it POSTs /run to all
//! of them at once.

use crate::story::{self, Killed, Node, Tick};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use traffic_cop_testbed::spin::{http, Launch};
use traffic_cop_testbed::{sleep_until_unix, unix_secs};

const INTERVAL: u64 = 3;
/// Long enough to be killed in the middle of, short enough to finish inside its interval.
const WORK_MS: u64 = 2000;
const MAX_INTERVALS: u64 = 20;

/// Answers received, and the takeover when there is one.
pub struct HttpStory {
    pub ticks: Vec<Tick>,
    pub killed: Killed,
    pub overlap: String,
    pub nodes: Vec<Node>,
    pub container: String,
}

/// `spin` is the CLI; `label` names this run's directory and container (one per Spin version).
pub fn run(spin: std::path::PathBuf, label: &str) -> HttpStory {
    let dir = story::story_dir(&format!("http-{label}"));
    let launch = Launch {
        spin,
        // An empty data dir: running only the HTTP component needs no plugin.
        data_dir: Some(dir.join("data")),
        manifest: traffic_cop_testbed::repo_root().join("spin.toml"),
        component: Some("http-job".into()),
        lifetime: Duration::from_secs(240),
        env: Vec::new(),
    };
    let container = format!("spinhttp{label}x{}", std::process::id());
    let mut nodes = story::start_nodes(&launch, &dir, &container, "web", INTERVAL, WORK_MS);
    // Bumped at every request's start and end on a replica: a request whose window saw no
    // other change had the replica's proxy to itself, so its count is its own.
    let activity: Vec<Arc<AtomicU64>> = (0..3).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let (sent, answers) = mpsc::channel::<Tick>();
    let mut ticks: Vec<Tick> = Vec::new();
    let (mut killed, mut overlap, mut fired) = (None::<Killed>, String::new(), 0);
    let first = (unix_secs() + 2).div_ceil(INTERVAL) * INTERVAL;
    for k in 0..MAX_INTERVALS {
        let at = first + k * INTERVAL;
        sleep_until_unix(at, 300);
        for (i, node) in nodes.iter().enumerate().filter(|(_, n)| !n.replica.is_killed()) {
            let (port, proxy, mine) = (node.replica.port, node.proxy.clone(), activity[i].clone());
            let sent = sent.clone();
            fired += 1;
            std::thread::spawn(move || {
                let window = mine.fetch_add(1, Ordering::SeqCst) + 1;
                let before = proxy.requests();
                let started = Instant::now();
                let answer = http(port, "POST", "/run", Duration::from_secs(30));
                let wall_ms = started.elapsed().as_millis() as u64;
                let trips = proxy.requests() - before;
                let clean = mine.fetch_add(1, Ordering::SeqCst) == window;
                let tick = match answer {
                    Ok((200, body)) => report_tick(at, i, &body),
                    Ok((status, body)) => error_tick(at, i, format!("HTTP {status}: {body}")),
                    Err(e) => error_tick(at, i, e),
                };
                let _ = sent.send(Tick {
                    wall_ms: Some(wall_ms),
                    trips: clean.then_some(trips),
                    ..tick
                });
            });
        }
        ticks.extend(answers.try_iter());
        if killed.is_none() && k >= 3 {
            sleep_until_unix(at, 1000);
            if let Some(entry) = story::lock_entry(&container).filter(|e| e.running) {
                // The holder's own replica gets a second tick while the first still works.
                if let Some(node) = nodes.iter().find(|n| Some(&n.holder) == entry.holder.as_ref())
                {
                    activity[nodes.iter().position(|n| n.holder == node.holder).unwrap()]
                        .fetch_add(2, Ordering::SeqCst);
                    overlap = http(node.replica.port, "POST", "/run", Duration::from_secs(10))
                        .map(|(_, body)| body)
                        .unwrap_or_else(|e| e);
                }
            }
            killed = story::kill_running(&mut nodes, &container, 3, INTERVAL);
        }
        let took_over = ticks.iter().find(|t| t.took_over).map(|t| t.at);
        if took_over.is_some_and(|t| at >= t + 2 * INTERVAL) {
            break;
        }
    }
    let killed = killed.expect("a running replica was found and killed");
    let ticks = crate::story::settle(ticks, &answers, fired, &killed);
    HttpStory { ticks, killed, overlap, nodes, container }
}

fn report_tick(at: u64, node: usize, body: &str) -> Tick {
    story::json_tick(at, node, body)
        .unwrap_or_else(|| error_tick(at, node, format!("not JSON: {body}")))
}

fn error_tick(at: u64, node: usize, why: String) -> Tick {
    let detail = format!("no answer: {why}");
    Tick {
        at,
        node,
        holder: format!("web-{node}"),
        token: None,
        took_over: false,
        detail,
        wall_ms: None,
        trips: None,
    }
}

/// `GET /status` and `/status.html` on every live replica agree with the lock blob's metadata.
pub fn check_status(story: &HttpStory) {
    let (state, meta) = story::blob_metadata(&story.container);
    let field = |key: &str| meta.get(key).cloned().unwrap_or_default();
    for node in story.nodes.iter().filter(|n| !n.replica.is_killed()) {
        let (status, body) =
            http(node.replica.port, "GET", "/status", Duration::from_secs(10)).unwrap();
        assert_eq!(status, 200, "{body}");
        let board: serde_json::Value = serde_json::from_str(&body).unwrap();
        let row =
            board["locks"].as_array().unwrap().iter().find(|r| r["name"] == story::LOCK).unwrap();
        let shown = |key: &str| match &row[key] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
        assert_eq!(shown("fencing_token"), field("tc_fence"), "{body} vs {meta:?}");
        assert_eq!(shown("holder"), field("tc_holder"), "{body} vs {meta:?}");
        assert_eq!(shown("running"), field("tc_running"), "{body} vs {meta:?}");
        assert_eq!(shown("last_start_ms"), field("tc_start"), "{body} vs {meta:?}");
        assert_eq!(shown("last_stop_ms"), field("tc_stop"), "{body} vs {meta:?}");
        assert_eq!(shown("last_outcome"), field("tc_outcome"), "{body} vs {meta:?}");
        let state_name = format!("{state:?}").rsplit("::").next().unwrap().to_lowercase();
        assert_eq!(shown("state"), state_name, "{body}");
        let (status, html) =
            http(node.replica.port, "GET", "/status.html", Duration::from_secs(10)).unwrap();
        assert_eq!(status, 200);
        for cell in [story::LOCK.to_string(), field("tc_fence")] {
            assert!(html.contains(&format!("<td>{cell}</td>")), "{cell} missing from {html}");
        }
        assert!(html.contains(&format!("<small>{state_name}</small>")), "{state_name}: {html}");
        if !field("tc_start").is_empty() {
            // `started <time> by <holder>`, then the due time it was for, when it has finished.
            let by = format!(" by {}", field("tc_holder"));
            let ends = [format!("{by}</small>"), format!("{by}; for the due time")];
            assert!(ends.iter().any(|end| html.contains(end)), "{by} missing from {html}");
        }
    }
}

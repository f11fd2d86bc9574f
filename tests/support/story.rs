//! What the real-Spin stories share: replicas behind their own counting proxies, the parsed
//! ticks, and the checker that judges them by the trigger's scheduled tick (the cron event's
//! timestamp, or the interval the test fired), never by the due time the run reports itself.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{Launch, SpinReplica};
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::v1::lease::{LeaseState, Lock};
use traffic_cop_wasm_host::component::{fresh, v1};

pub const LOCK: &str = "nightly-cleanup";
pub const LEASE_SECONDS: u64 = 15;

/// One replica: its `spin up` group and the proxy between it and Azurite, so every request
/// it sends is counted as its own.
pub struct Node {
    pub replica: SpinReplica,
    pub proxy: Arc<CountingProxy>,
    pub holder: String,
}

/// A fresh directory under target/ for one story's manifests, logs and state; earlier runs'
/// are removed (a failed run's logs stay until the next run).
pub fn story_dir(name: &str) -> PathBuf {
    let parent = traffic_cop_testbed::repo_root().join("target/real-spin");
    for old in std::fs::read_dir(&parent).into_iter().flatten().flatten() {
        if old.file_name().to_string_lossy().starts_with(&format!("{name}-")) {
            let _ = std::fs::remove_dir_all(old.path());
        }
    }
    let dir = parent.join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Three replicas named `<prefix>-0..2`, each with its own holder (Spin makes an instance
/// per event, so an empty `holder` would be a new random name every tick).
pub fn start_nodes(
    launch: &Launch,
    dir: &std::path::Path,
    container: &str,
    prefix: &str,
    interval: u64,
    work_ms: u64,
) -> Vec<Node> {
    let schedule = [
        ("schedule", traffic_cop_testbed::spin::every(interval)),
        ("work_ms", work_ms.to_string()),
    ];
    start_nodes_with(launch, dir, container, prefix, 3, &schedule)
}

/// `count` replicas named `<prefix>-<i>` on one container; `variables` (schedule, time zone,
/// work) come after the storage settings and override them.
pub fn start_nodes_with(
    launch: &Launch,
    dir: &std::path::Path,
    container: &str,
    prefix: &str,
    count: usize,
    variables: &[(&str, String)],
) -> Vec<Node> {
    let azurite = Azurite::shared();
    let mut nodes: Vec<Node> = Vec::new();
    for i in 0..count {
        // The first replica compiles the composed app alone and the others find it in
        // wasmtime's cache: on a clean machine every replica compiling at once (with the async
        // line's own composition beside it) made first runs outlast a tick in a CI run.
        if i == 1 {
            warm(&mut nodes[0]);
        }
        nodes.push({
            let proxy = Arc::new(CountingProxy::start(azurite.port));
            let holder = format!("{prefix}-{i}");
            let mut all = vec![
                ("connection_string", connection_string_for_port(proxy.port, EMULATOR_KEY_B64)),
                // Templated into allowed_outbound_hosts: must name the proxy, or Spin refuses.
                ("storage_endpoint", format!("http://127.0.0.1:{}", proxy.port)),
                ("container", container.to_string()),
                ("holder", holder.clone()),
                ("lease_seconds", LEASE_SECONDS.to_string()),
            ];
            all.extend(variables.iter().cloned());
            let replica = launch.start(&holder, &dir.join(&holder), &all);
            Node { replica, proxy, holder }
        });
    }
    for node in &mut nodes {
        node.replica.wait_ready(Duration::from_secs(90)).unwrap();
    }
    nodes
}

/// Until the replica serves and, running both triggers, its cron component has answered a
/// tick (the cron trigger loads the app in a process of its own).
fn warm(node: &mut Node) {
    node.replica.wait_ready(Duration::from_secs(90)).unwrap();
    if node.replica.launch_component().is_none() {
        let until = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < until && node.replica.log("cron-job").is_empty() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Where a story's locks live, reached straight at Azurite (not through a proxy).
#[derive(Clone, Debug)]
pub struct Location {
    pub connection_string: String,
    pub container: String,
}

impl Location {
    /// The job's settings there, as the test host's own calls (the board, the operator's
    /// verbs) use them.
    pub fn settings(&self) -> v1::Settings {
        v1::settings(&self.connection_string, &self.container, LOCK, "test-host")
    }
}

pub fn location(container: &str) -> Location {
    Location {
        connection_string: Azurite::shared().connection_string(),
        container: container.into(),
    }
}

/// The job's lock as the board shows it, read straight from Azurite (not through a proxy).
pub fn lock_entry(container: &str) -> Option<v1::BoardEntry> {
    let board = fresh().board(&location(container).settings()).ok()?;
    board.locks.into_iter().find(|e| e.name == LOCK)
}

/// The run the test killed.
#[derive(Clone, Debug)]
pub struct Killed {
    pub node: usize,
    pub holder: String,
    pub token: u64,
    pub start_ms: u64,
    /// The scheduled tick whose run it was.
    pub at: u64,
}

/// Kills the replica in the middle of its run when the board shows one with a token of at
/// least `min_token`; `None` when nobody is running right now.
pub fn kill_running(
    nodes: &mut [Node],
    container: &str,
    min_token: u64,
    interval: u64,
) -> Option<Killed> {
    let entry = lock_entry(container)?;
    let running = entry.running && entry.state == LeaseState::Leased;
    if !running || entry.fencing_token < min_token {
        return None;
    }
    let holder = entry.holder?;
    let node = nodes.iter().position(|n| n.holder == holder)?;
    let start_ms = entry.last_start_ms?;
    nodes[node].replica.kill();
    assert!(
        !nodes[node].replica.group_alive(Duration::from_secs(5)),
        "{holder}: a process of its group survived SIGKILL"
    );
    let at = start_ms / 1000 / interval * interval;
    Some(Killed { node, holder, token: entry.fencing_token, start_ms, at })
}

/// One replica's answer to one scheduled tick.
#[derive(Clone, Debug)]
pub struct Tick {
    pub at: u64,
    pub node: usize,
    pub holder: String,
    pub token: Option<u64>,
    pub took_over: bool,
    pub detail: String,
    /// From the scheduled moment (cron) or the request (HTTP) to the answer.
    pub wall_ms: Option<u64>,
    /// Requests this replica sent for this tick alone, when that could be told apart.
    pub trips: Option<u64>,
}

/// Parses what `TickReport::line` prints: `[holder] ran for the due time <ISO 8601> with
/// fencing token N (took over an abandoned run): detail`, `[holder] skipped the due time <ISO
/// 8601>: detail` or `[holder] skipped: detail`.
pub fn parse_report(at: u64, node: usize, line: &str) -> Option<Tick> {
    let (holder, rest) = line.strip_prefix('[')?.split_once("] ")?;
    let (token, took_over, detail) = if let Some(ran) = rest.strip_prefix("ran") {
        let (_, ran) = ran.split_once("with fencing token ")?;
        let (head, detail) = ran.split_once(": ")?;
        let token = head.split(' ').next()?.parse().ok()?;
        (Some(token), head.contains("took over an abandoned run"), detail)
    } else {
        let skipped = rest.strip_prefix("skipped")?;
        let detail = match skipped.strip_prefix(" the due time ") {
            Some(rest) => rest.split_once(": ")?.1,
            None => skipped.strip_prefix(": ")?,
        };
        (None, false, detail)
    };
    let (holder, detail) = (holder.to_string(), detail.to_string());
    Some(Tick { at, node, holder, token, took_over, detail, wall_ms: None, trips: None })
}

/// The story's end: waits (at most 35 s) for the `fired` requests still unanswered, drops the
/// killed replica's request that died with it (not an answer to judge), and orders the rest.
pub fn settle(
    mut ticks: Vec<Tick>,
    answers: &std::sync::mpsc::Receiver<Tick>,
    fired: usize,
    killed: &Killed,
) -> Vec<Tick> {
    let deadline = std::time::Instant::now() + Duration::from_secs(35);
    while ticks.len() < fired && std::time::Instant::now() < deadline {
        if let Ok(tick) = answers.recv_timeout(Duration::from_millis(200)) {
            ticks.push(tick);
        }
    }
    ticks.retain(|t| {
        !(t.node == killed.node && t.at >= killed.at && t.detail.starts_with("no answer"))
    });
    ticks.sort_by_key(|t| (t.at, t.node));
    ticks
}

/// A tick from the JSON report `POST /run` answers (the Rust app's `TickReport` fields, which
/// the guests answer too); `None` when the body is not JSON.
pub fn json_tick(at: u64, node: usize, body: &str) -> Option<Tick> {
    let report = serde_json::from_str::<serde_json::Value>(body).ok()?;
    Some(Tick {
        at,
        node,
        holder: report["holder"].as_str().unwrap_or("?").to_string(),
        token: report["fencing_token"].as_u64(),
        took_over: report["previous_abandoned"].as_bool() == Some(true),
        detail: report["detail"].as_str().unwrap_or(body).to_string(),
        wall_ms: None,
        trips: None,
    })
}

pub fn dump(ticks: &[Tick]) -> String {
    ticks
        .iter()
        .map(|t| format!("{} {} {:?} {} {}", t.at, t.holder, t.token, t.took_over, t.detail))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Judges a story: at most one run per scheduled tick, tokens unique and increasing in tick
/// order (the killed run's token included), exactly one run per tick while nothing blocks,
/// every live replica skipping "held by" the killed one until its lease expired, then one
/// takeover reporting the abandoned run. Returns the takeover.
pub fn check_story(ticks: &[Tick], killed: &Killed, interval: u64) -> Tick {
    let all = dump(ticks);
    let mut by_tick: BTreeMap<u64, Vec<&Tick>> = BTreeMap::new();
    ticks.iter().for_each(|t| by_tick.entry(t.at).or_default().push(t));
    let runs: Vec<&Tick> = ticks.iter().filter(|t| t.token.is_some()).collect();
    for (at, answers) in &by_tick {
        let ran = answers.iter().filter(|t| t.token.is_some()).count();
        assert!(ran <= 1, "tick {at}: {ran} runs\n{all}");
    }
    let mut tokens: Vec<(u64, u64)> = runs.iter().map(|t| (t.at, t.token.unwrap())).collect();
    tokens.push((killed.at, killed.token));
    tokens.sort();
    for pair in tokens.windows(2) {
        assert_eq!(
            pair[1].1,
            pair[0].1 + 1,
            "tokens must rise by one per run in tick order\n{all}"
        );
    }
    let takeover = runs
        .iter()
        .find(|t| t.at > killed.at)
        .unwrap_or_else(|| panic!("nobody took over from {}\n{all}", killed.holder));
    assert!(
        takeover.took_over
            && takeover.holder != killed.holder
            && takeover.token == Some(killed.token + 1),
        "the first run after the kill must take over the abandoned run: {takeover:?}\n{all}"
    );
    let expiry_ms = killed.start_ms + LEASE_SECONDS * 1000;
    assert!(
        takeover.at * 1000 + 1000 >= expiry_ms,
        "took over at {} before the lease (from {} ms) could expire\n{all}",
        takeover.at,
        killed.start_ms
    );
    assert!(
        takeover.at * 1000 <= expiry_ms + (interval + 2) * 1000,
        "took over at {} long after the lease expired\n{all}",
        takeover.at
    );
    let held_by = format!("held by {}", killed.holder);
    for t in ticks.iter().filter(|t| t.at > killed.at && t.at < takeover.at) {
        assert!(
            t.token.is_none() && t.detail.contains(&held_by),
            "{t:?} should skip {held_by}\n{all}"
        );
    }
    for t in runs.iter().filter(|t| t.at != takeover.at) {
        assert!(!t.took_over, "only the takeover follows an abandoned run: {t:?}\n{all}");
    }
    // Liveness: every tick all replicas answered outside the blocked stretch had its run. A
    // tick may find the run before still working: it came less than an interval after that
    // one (which fired late, as the first event after start-up can), or that run outlasted the
    // interval (a takeover catching up, on a loaded machine). Every answer naming that run's
    // holder, and the others saying it is running since its due time, is overlap refused, not
    // a lost tick: the next run catches the tick up.
    let mut before: Option<(u64, &str)> = None;
    for (at, answers) in &by_tick {
        let blocked = *at >= killed.at && *at < takeover.at;
        let live = if *at > killed.at { 2 } else { 3 };
        let overlapped = before.is_some_and(|(earlier, holder)| {
            let since = format!("running since {}", iso(earlier));
            let still_running =
                answers.iter().filter(|t| t.holder != holder).all(|t| t.detail.contains(&since));
            answers.iter().all(|t| t.detail.contains(holder))
                && (at - earlier < interval || still_running)
        });
        if !blocked && !overlapped && answers.len() >= live {
            assert!(answers.iter().any(|t| t.token.is_some()), "tick {at} had no run\n{all}");
        }
        before = answers.iter().find(|t| t.token.is_some()).map(|t| (*at, t.holder.as_str()));
    }
    (*takeover).clone()
}

/// `lock-status` metadata of the job's lock, read straight from Azurite.
pub fn blob_metadata(container: &str) -> (LeaseState, BTreeMap<String, String>) {
    let lock = Lock {
        connection_string: Azurite::shared().connection_string(),
        container: container.into(),
        blob: LOCK.into(),
    };
    let status = fresh().inspect(&lock).unwrap();
    (status.state, status.metadata.into_iter().collect())
}

/// Every `woken by the cron tick of <at>: <report>` line the replicas have logged so far,
/// parsed.
pub fn logged_ticks(nodes: &[Node]) -> Vec<Tick> {
    let mut ticks: Vec<Tick> = nodes
        .iter()
        .enumerate()
        .flat_map(|(i, node)| {
            let log = node.replica.log("cron-job");
            log.lines()
                .filter_map(traffic_cop_testbed::tick_line)
                .filter_map(|(at, report)| parse_report(at, i, report))
                .collect::<Vec<_>>()
        })
        .collect();
    ticks.sort_by_key(|t| (t.at, t.node));
    ticks
}

/// Waits until `done` holds for the ticks logged so far (at most `limit`), and returns them.
pub fn wait_for_ticks(
    nodes: &[Node],
    limit: Duration,
    done: impl Fn(&[Tick]) -> bool,
) -> Vec<Tick> {
    let until = Instant::now() + limit;
    loop {
        let seen = logged_ticks(nodes);
        if done(&seen) || Instant::now() > until {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A unix time as the component's sentences write it (`2026-03-29T01:00:00Z`).
pub fn iso(unix: u64) -> String {
    chrono::DateTime::from_timestamp(unix as i64, 0)
        .expect("a time within chrono's range")
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

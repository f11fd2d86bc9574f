//! Three plain `spin up` replicas (both triggers, as users run the app) of a copy of
//! spin.toml whose cron schedule is shortened to every 3 s, under one trigger-cron plugin line.

use crate::story::{self, Killed, Node, Tick};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::spin::{manifest_copy, Launch};

const INTERVAL: u64 = 3;
const SCHEDULE: &str = "*/3 * * * * *";
const WORK_MS: u64 = 1500;
/// Proxy counts are sampled this long after each tick: after a run (1.5 s of work) has
/// completed, before the next tick.
const SAMPLE_AFTER_MS: u64 = 2700;

pub struct CronStory {
    pub line: String,
    pub ticks: Vec<Tick>,
    pub killed: Killed,
    /// The replicas stay up until the story has been judged, then stop on drop.
    pub nodes: Vec<Node>,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Trigger-cron `line` from `data`, under the Spin CLI `spin` (`label` names it: one directory
/// and container per CLI and line).
pub fn run(line: &str, spin: PathBuf, data: PathBuf, label: &str) -> CronStory {
    let short = format!("{}{label}", line.replace('.', ""));
    let dir = story::story_dir(&format!("cron-{line}-{label}"));
    let launch = Launch {
        spin,
        data_dir: Some(data),
        // The same cron component under every line (0.5.0 runs the WASI 0.2 one too).
        manifest: manifest_copy(&dir.join("app"), SCHEDULE),
        component: None,
        lifetime: Duration::from_secs(240),
        env: Vec::new(),
    };
    let container = format!("spincron{short}x{}", std::process::id());
    let mut nodes =
        story::start_nodes(&launch, &dir, &container, &format!("cron{short}"), INTERVAL, WORK_MS);
    let deadline = Instant::now() + Duration::from_secs(120);
    // (node, scheduled tick) -> when its log line was written, in ms since the epoch.
    let mut arrived: HashMap<(usize, u64), u64> = HashMap::new();
    let mut samples: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let (mut killed, mut last_look) = (None::<Killed>, Instant::now());
    while Instant::now() < deadline {
        let now = now_ms();
        for (i, node) in nodes.iter().enumerate() {
            // A replica logs one line per tick, seconds apart, so the file's modification
            // time is when its newest line was written, however late this loop looks.
            let log = node.replica.log("cron-job");
            let written = std::fs::metadata(node.replica.log_path("cron-job"))
                .and_then(|m| m.modified())
                .map_or(now, |t| {
                    t.duration_since(UNIX_EPOCH).map_or(now, |d| d.as_millis() as u64)
                });
            for (at, _) in log_lines(&log) {
                arrived.entry((i, at)).or_insert(written);
            }
        }
        let at = now / 1000 / INTERVAL * INTERVAL;
        if now >= at * 1000 + SAMPLE_AFTER_MS && !samples.contains_key(&at) {
            samples.insert(at, nodes.iter().map(|n| n.proxy.requests()).collect());
        }
        if killed.is_none() && last_look.elapsed() >= Duration::from_millis(200) {
            last_look = Instant::now();
            killed = story::kill_running(&mut nodes, &container, 3, INTERVAL);
        }
        let ticks = parse(&nodes, &arrived, &samples);
        if ticks.iter().any(|t| t.took_over && now / 1000 > t.at + 2 * INTERVAL) {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let ticks = parse(&nodes, &arrived, &samples);
    let outputs: Vec<String> = nodes.iter().map(|n| n.replica.output()).collect();
    let killed = killed.unwrap_or_else(|| {
        panic!("{line}: no running replica to kill\n{}\n{outputs:?}", story::dump(&ticks))
    });
    CronStory { line: line.to_string(), ticks, killed, nodes }
}

/// `woken by the cron tick of <timestamp>: <report>` lines of one replica's cron-job log.
fn log_lines(log: &str) -> Vec<(u64, &str)> {
    log.lines().filter_map(traffic_cop_testbed::tick_line).collect()
}

fn parse(
    nodes: &[Node],
    arrived: &HashMap<(usize, u64), u64>,
    samples: &BTreeMap<u64, Vec<u64>>,
) -> Vec<Tick> {
    let mut ticks = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        for (at, report) in log_lines(&node.replica.log("cron-job")) {
            let tick = story::parse_report(at, i, report)
                .unwrap_or_else(|| panic!("{}: unreadable log line {report:?}", node.holder));
            let wall_ms = arrived.get(&(i, at)).map(|ms| ms.saturating_sub(at * 1000));
            let trips = samples
                .get(&at)
                .zip(samples.get(&(at - INTERVAL)))
                .map(|(after, before)| after[i] - before[i]);
            ticks.push(Tick { wall_ms, trips, ..tick });
        }
    }
    ticks.sort_by_key(|t| (t.at, t.node));
    ticks
}

pub fn check(story: &CronStory) -> Tick {
    let takeover = story::check_story(&story.ticks, &story.killed, INTERVAL);
    for node in story.nodes.iter().filter(|n| !n.replica.is_killed()) {
        assert!(
            story.ticks.iter().any(|t| t.holder == node.holder && t.at > takeover.at),
            "{}: {} did not tick after the takeover\n{}",
            story.line,
            node.holder,
            story::dump(&story.ticks)
        );
    }
    takeover
}

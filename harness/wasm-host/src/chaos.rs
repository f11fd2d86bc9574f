//! Chaos on real processes: N `spin up` cron replicas of the app, each behind a seeded fault
//! proxy of its own between it and Azurite, while a schedule SIGKILLs, SIGTERMs and restarts
//! them, SIGSTOPs and SIGCONTs them (past their lease or not) and partitions them; then the
//! replicas' own reports and the fenced result store are judged ([`check`]).
//!
//! Used by `scripts/chaos` (the long, seeded run) and `tests/spin/chaos.rs` (a short script).
//! Everything it starts is stopped when it returns or unwinds: replicas by process group
//! (their `Drop`), proxies by theirs.

mod check;
mod node;
pub mod plan;
pub mod report;
mod summary;

pub use check::{check, parse_history, Store};
pub use node::{Node, RESULT_PREFIX};
pub use summary::Summary;

use plan::{Action, Event, Target};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use traffic_cop_testbed::faults::{Fault, FaultPlan};

pub struct ChaosConfig {
    pub spin: PathBuf,
    /// trigger-cron lines as (version, Spin data dir); replica i runs under `lines[i % n]`.
    pub lines: Vec<(String, PathBuf)>,
    pub replicas: usize,
    pub seed: u64,
    /// The cron schedule fires every `interval` seconds (and the guard is told so).
    pub interval: u64,
    pub lease_seconds: u64,
    pub work_ms: u64,
    /// Per mille of each replica's requests that get a fault.
    pub fault_per_mille: u64,
    /// Whether stalls (20 s without an answer) are among the faults.
    pub stalls: bool,
    pub events: Vec<Event>,
    /// Ends once the replicas have logged this many ticks in all and every event has ended...
    pub ticks: usize,
    /// ...and not before this long...
    pub min_length: Duration,
    /// ...or after this long, whichever comes first.
    pub max_length: Duration,
    pub dir: PathBuf,
    pub container: String,
    pub azurite_port: u16,
}

/// A running replica an event struck, as the board showed its run; `after`: the lock's lease
/// state and running flag read right after the event was applied.
#[derive(Clone, Debug)]
pub struct Struck {
    pub holder: String,
    pub action: Action,
    pub token: u64,
    pub start_ms: u64,
    pub after: Option<(crate::component::v1::lease::LeaseState, bool)>,
}

/// Everything a run saw, judged.
pub struct ChaosRun {
    pub reports: Vec<report::Report>,
    pub store: Option<Store>,
    pub violations: Vec<String>,
    pub summary: Summary,
    /// Every event as it was applied, with the time: for the printout and the tests.
    pub timeline: Vec<String>,
}

impl ChaosConfig {
    fn fault_plan(&self, replica: usize) -> FaultPlan {
        let mut plan =
            FaultPlan::quick(self.seed.wrapping_add(replica as u64 * 7919), self.fault_per_mille);
        if self.stalls {
            plan.faults.push(Fault::Stall);
        }
        plan
    }
}

/// How long, beyond a job's length and a lease period, the runs are waited for once the last
/// disruption ends: a loaded machine's slowest resume, with room to spare.
const SETTLE: Duration = Duration::from_secs(30);

pub fn run(config: &ChaosConfig) -> ChaosRun {
    let mut nodes: Vec<Node> =
        (0..config.replicas).map(|i| Node::new(config, i, config.fault_plan(i))).collect();
    for node in &mut nodes {
        node.start(config);
    }
    for node in &mut nodes {
        node.wait_ready();
    }
    let started = Instant::now();
    let mut summary = Summary::default();
    let mut timeline = Vec::new();
    let mut pending: VecDeque<Event> = config.events.iter().copied().collect();
    // Per replica, when each of its log lines was first read (see `Report::seen`).
    let mut seen: Vec<Vec<u64>> = vec![Vec::new(); nodes.len()];
    // The replica the board shows running, with its run's token and start.
    let runner = |nodes: &[Node]| -> Option<(usize, u64, u64)> {
        let entry = node::lock_entry(config)?;
        let running =
            entry.running && entry.state == crate::component::v1::lease::LeaseState::Leased;
        let holder = entry.holder.filter(|_| running)?;
        let i = nodes.iter().position(|n| n.name == holder && n.is_up())?;
        // The board can lag the run's end (a `complete` whose answer was lost): wait for a run
        // its holder has not reported yet, so the strike lands on work in progress.
        if report::ended(&nodes[i].reports(), entry.fencing_token) {
            return None;
        }
        Some((i, entry.fencing_token, entry.last_start_ms?))
    };
    // A runner in the first half of its work: a strike then lands before its result is written,
    // however late a loaded machine got there (Azurite shares this machine's clock).
    let fresh_runner = |nodes: &[Node]| {
        runner(nodes).filter(|(_, _, start_ms)| {
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            now_ms.saturating_sub(*start_ms) < config.work_ms / 2
        })
    };
    loop {
        let now = started.elapsed();
        for node in &mut nodes {
            if let Some(line) = node.end_disruptions(config) {
                timeline.push(format!("[{:6.1}s] {line}", started.elapsed().as_secs_f64()));
            }
        }
        if let Some(event) = pending.front().copied().filter(|e| now >= e.at) {
            let disrupted = nodes.iter().filter(|n| n.disrupted()).count();
            let (target, run) = match event.target {
                Target::Replica(i) => {
                    let n = nodes.len();
                    ((0..n).map(|k| (i + k) % n).find(|j| !nodes[*j].disrupted()), None)
                }
                Target::Runner => match fresh_runner(&nodes).filter(|r| !nodes[r.0].disrupted()) {
                    Some((i, token, start_ms)) => (Some(i), Some((token, start_ms))),
                    None => (None, None),
                },
            };
            let waited_out = now > event.at + Duration::from_secs(10);
            // Keep at least one replica untouched, so the job always has somewhere to run.
            match target.filter(|_| disrupted + 1 < nodes.len()) {
                Some(i) => {
                    let line = nodes[i].apply(event.action, config, &mut summary);
                    if let Some((token, start_ms)) = run {
                        let after = node::lock_entry(config).map(|e| (e.state, e.running));
                        let (holder, action) = (nodes[i].name.clone(), event.action);
                        summary.struck.push(Struck { holder, action, token, start_ms, after });
                    }
                    timeline.push(format!("[{:6.1}s] {line}", started.elapsed().as_secs_f64()));
                    pending.pop_front();
                }
                None if waited_out => {
                    summary.events_dropped += 1;
                    timeline
                        .push(format!("[{:6.1}s] dropped {event:?}: no target", now.as_secs_f64()));
                    pending.pop_front();
                }
                None => {}
            }
        }
        note_seen(&nodes, &mut seen);
        let logged = seen.iter().map(Vec::len).sum::<usize>();
        let settled = pending.is_empty() && !nodes.iter().any(Node::disrupted);
        let done = settled && logged >= config.ticks && now >= config.min_length;
        if done || now >= config.max_length {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // Let every replica come back and finish what it was doing, then stop them all. Judged by
    // what the runs report, not by fixed sleeps (a loaded machine is late to everything): the
    // run the board shows open now, each run a pause or a partition struck, and the run after
    // each struck one (its takeover, once the lease ran out) must have reported.
    // (A struck run is left to the rules below: a killed or stopped one never reports.)
    let mut awaited: Vec<(Option<usize>, u64)> = runner(&nodes)
        .filter(|(_, token, _)| summary.struck.iter().all(|s| s.token != *token))
        .map(|(i, token, _)| (Some(i), token))
        .into_iter()
        .collect();
    for struck in &summary.struck {
        if matches!(struck.action, Action::Pause(_) | Action::Partition(_)) {
            awaited.push((nodes.iter().position(|n| n.name == struck.holder), struck.token));
        }
        awaited.push((None, struck.token + 1));
    }
    for node in &mut nodes {
        node.end_all(config);
    }
    let deadline = Instant::now()
        + Duration::from_millis(config.work_ms)
        + Duration::from_secs(config.lease_seconds)
        + SETTLE;
    let reported = |nodes: &[Node], (node, token): &(Option<usize>, u64)| match node {
        Some(i) => report::ended(&nodes[*i].reports(), *token),
        None => nodes.iter().any(|n| report::ended(&n.reports(), *token)),
    };
    while Instant::now() < deadline && !awaited.iter().all(|a| reported(&nodes, a)) {
        std::thread::sleep(Duration::from_millis(200));
    }
    note_seen(&nodes, &mut seen);
    for node in &mut nodes {
        node.stop();
    }
    let mut reports: Vec<report::Report> = nodes
        .iter()
        .zip(&seen)
        .flat_map(|(node, seen)| {
            let mut reports = node.reports();
            reports.iter_mut().zip(seen).for_each(|(report, at)| report.seen = Some(*at));
            reports
        })
        .collect();
    reports.sort_by(|a, b| (a.at, &a.holder).cmp(&(b.at, &b.holder)));
    let store = node::read_store(config);
    let violations = check(&reports, store.as_ref());
    summary.fill(&reports, nodes.iter().map(|node| &node.proxy), started.elapsed());
    ChaosRun { reports, store, violations, summary, timeline }
}

/// Stamps the log lines read for the first time with the current second, rounded up.
fn note_seen(nodes: &[Node], seen: &mut [Vec<u64>]) {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let second = now.as_secs() + u64::from(now.subsec_nanos() > 0);
    for (node, seen) in nodes.iter().zip(seen.iter_mut()) {
        let lines = node.reports().len();
        seen.resize(lines.max(seen.len()), second);
    }
}

/// The short script `tests/spin/chaos.rs` runs: a SIGKILL of the running replica, a partition
/// of another, and a SIGSTOP of the running replica past its lease (then SIGCONT).
pub fn short_script(lease_seconds: u64) -> Vec<Event> {
    let s = Duration::from_secs;
    vec![
        Event { at: s(3), target: Target::Runner, action: Action::Kill { down: s(4) } },
        Event { at: s(5), target: Target::Replica(2), action: Action::Partition(s(10)) },
        Event { at: s(22), target: Target::Runner, action: Action::Pause(s(lease_seconds + 5)) },
    ]
}

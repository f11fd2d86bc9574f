//! One chaos replica: a fault proxy that outlives its `spin up` incarnations (so a restarted
//! replica keeps its place in the network), the current incarnation if any, and the
//! disruption it is under.

use super::plan::Action;
use super::report::{parse_log, Report};
use super::summary::Summary;
use super::{ChaosConfig, Store};
use crate::component::{fresh, v1};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::faults::{FaultPlan, FaultProxy};
use traffic_cop_testbed::spin::{manifest_copy, Launch, SpinReplica};
use traffic_cop_testbed::EMULATOR_KEY_B64;

/// The app writes its result to the fenced blob `results/<lock>` (see apps/shared/src/janitor.rs).
pub const RESULT_PREFIX: &str = "results/";
pub const LOCK: &str = "nightly-cleanup";

pub struct Node {
    pub name: String,
    line: usize,
    pub proxy: FaultProxy,
    current: Option<SpinReplica>,
    /// One directory per `spin up` incarnation; their logs together are the replica's story.
    incarnations: Vec<PathBuf>,
    paused_until: Option<Instant>,
    cut_until: Option<Instant>,
    down_until: Option<Instant>,
}

impl Node {
    pub fn new(config: &ChaosConfig, index: usize, plan: FaultPlan) -> Node {
        Node {
            name: format!("chaos-{index}"),
            line: index % config.lines.len().max(1),
            proxy: FaultProxy::start(config.azurite_port, plan),
            current: None,
            incarnations: Vec::new(),
            paused_until: None,
            cut_until: None,
            down_until: None,
        }
    }

    pub fn start(&mut self, config: &ChaosConfig) {
        let (version, data) = &config.lines[self.line];
        let dir = config.dir.join(&self.name).join(self.incarnations.len().to_string());
        let launch = Launch {
            spin: config.spin.clone(),
            data_dir: Some(data.clone()),
            // The same cron component under both trigger-cron lines, as spin.toml has it.
            manifest: manifest_copy(
                &config.dir.join(format!("app-{version}")),
                &format!("*/{} * * * * *", config.interval),
            ),
            component: None,
            lifetime: config.max_length + Duration::from_secs(300),
            env: Vec::new(),
        };
        let variables = [
            ("connection_string", connection_string_for_port(self.proxy.port, EMULATOR_KEY_B64)),
            // Templated into allowed_outbound_hosts: must name the proxy, or Spin refuses.
            ("storage_endpoint", format!("http://127.0.0.1:{}", self.proxy.port)),
            ("container", config.container.clone()),
            ("holder", self.name.clone()),
            ("lease_seconds", config.lease_seconds.to_string()),
            ("schedule", traffic_cop_testbed::spin::every(config.interval)),
            ("work_ms", config.work_ms.to_string()),
        ];
        self.current = Some(launch.start(&self.name, &dir, &variables));
        self.incarnations.push(dir);
    }

    pub fn wait_ready(&mut self) {
        if let Some(replica) = &mut self.current {
            replica.wait_ready(Duration::from_secs(90)).unwrap();
        }
    }

    pub fn is_up(&self) -> bool {
        self.current.is_some() && self.paused_until.is_none()
    }

    pub fn disrupted(&self) -> bool {
        self.current.is_none() || self.paused_until.is_some() || self.cut_until.is_some()
    }

    pub fn apply(&mut self, action: Action, config: &ChaosConfig, summary: &mut Summary) -> String {
        let name = self.name.clone();
        match action {
            Action::Kill { down } => {
                if let Some(mut replica) = self.current.take() {
                    replica.kill();
                }
                self.down_until = Some(Instant::now() + down);
                summary.kills += 1;
                format!("SIGKILL {name}'s process group; restart in {down:?}")
            }
            Action::Terminate { interrupt, down } => {
                let Some(mut replica) = self.current.take() else { return String::new() };
                let signal = if interrupt { "INT" } else { "TERM" };
                let sent = Instant::now();
                replica.signal(signal);
                let exited = replica.wait_exit(Duration::from_secs(10));
                let took = sent.elapsed();
                // Whatever it left behind (it should be nothing) goes with the group.
                let lingering = replica.spin_alive(Duration::from_millis(500));
                replica.kill();
                self.down_until = Some(Instant::now() + down);
                summary.terminations += 1;
                summary.stop_times.push(took);
                summary.lingering += usize::from(lingering);
                format!(
                    "SIG{signal} {name}: spin up exited ({exited:?}) after {took:?}{}; restart in {down:?}",
                    if lingering { ", some of its group still there" } else { "" }
                )
            }
            Action::Pause(length) => {
                if let Some(replica) = &mut self.current {
                    replica.pause();
                }
                self.paused_until = Some(Instant::now() + length);
                summary.pauses += 1;
                if length.as_secs() > config.lease_seconds {
                    summary.pauses_past_lease += 1;
                }
                format!("SIGSTOP {name} for {length:?}")
            }
            Action::Partition(length) => {
                self.proxy.partition(true);
                self.cut_until = Some(Instant::now() + length);
                summary.partitions += 1;
                format!("partition {name} for {length:?}")
            }
        }
    }

    /// Ends whichever disruption is due to end; says what it did.
    pub fn end_disruptions(&mut self, config: &ChaosConfig) -> Option<String> {
        let due = |until: Option<Instant>| until.is_some_and(|t| Instant::now() >= t);
        if due(self.paused_until) {
            self.paused_until = None;
            self.current.as_mut()?.resume();
            return Some(format!("SIGCONT {}", self.name));
        }
        if due(self.cut_until) {
            self.cut_until = None;
            self.proxy.partition(false);
            return Some(format!("reconnect {}", self.name));
        }
        if due(self.down_until) {
            self.down_until = None;
            self.start(config);
            self.wait_ready();
            return Some(format!("restarted {}", self.name));
        }
        None
    }

    /// Ends every disruption now (the run is over).
    pub fn end_all(&mut self, config: &ChaosConfig) {
        for until in [&mut self.paused_until, &mut self.cut_until, &mut self.down_until] {
            if until.is_some() {
                *until = Some(Instant::now());
            }
        }
        while self.end_disruptions(config).is_some() {}
    }

    pub fn stop(&mut self) {
        if let Some(mut replica) = self.current.take() {
            replica.kill();
        }
    }

    /// Every tick this replica logged, all incarnations.
    pub fn reports(&self) -> Vec<Report> {
        self.incarnations
            .iter()
            .flat_map(|dir| {
                let log = std::fs::read_to_string(dir.join("logs/cron-job_stderr.txt"));
                parse_log(&log.unwrap_or_default())
            })
            .collect()
    }
}

/// The settings that read the job's container straight from Azurite (no proxy, no faults).
fn settings(config: &ChaosConfig) -> v1::Settings {
    let connection_string = Azurite::shared().connection_string();
    v1::Settings { lock: None, ..v1::settings(&connection_string, &config.container, "", "chaos") }
}

/// The job's lock as the board shows it.
pub fn lock_entry(config: &ChaosConfig) -> Option<v1::BoardEntry> {
    fresh().board(&settings(config)).ok()?.locks.into_iter().find(|e| e.name == LOCK)
}

/// The fenced result blob, read back with `read-fenced`.
pub fn read_store(config: &ChaosConfig) -> Option<Store> {
    let name = format!("{RESULT_PREFIX}{LOCK}");
    let data = fresh().read_fenced(&settings(config), &name).expect("read-fenced")?;
    Some(Store {
        fencing_token: data.fencing_token,
        history: super::parse_history(&String::from_utf8_lossy(&data.contents)),
    })
}

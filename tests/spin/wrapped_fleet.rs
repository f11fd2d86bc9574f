//! Replicas of one wrapped app (wrapped_app.rs) on real Spin: behind one counting proxy in front
//! of Azurite, their logs read back, and for the HTTP wrapper a scheduler that calls the guarded
//! route on every live replica at each due time, as a CronJob's `curl` would.

use super::wrapped_app::{spin_toml, Trigger, Wrapping, EVERY_SECONDS};
use crate::run::scratch;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{http_sending, Launch, SpinReplica};
use traffic_cop_testbed::EMULATOR_KEY_B64;

/// A run header the scheduler forges on every call (the real one carries the granted token).
const FORGED_HEADER: &str = "traffic-cop-fencing-token";

/// The body the scheduler sends with each call: a first line naming the replica and due time,
/// then padding, so that it reaches a job only if it was streamed through whole.
pub fn scheduler_body(replica: usize, due: u64) -> Vec<u8> {
    let mut body = format!("replica-{replica} due {due}\n").into_bytes();
    body.resize(body.len() + 100_000, b'x');
    body
}

/// Replicas of one wrapped app behind one counting proxy in front of Azurite.
pub struct Fleet {
    replicas: Vec<Option<SpinReplica>>,
    dirs: Vec<PathBuf>,
    /// The HTTP replicas' ports (`None` once a replica is killed), shared with the scheduler.
    ports: Arc<Mutex<Vec<Option<u16>>>>,
    scheduler: Option<Scheduler>,
    pub proxy: CountingProxy,
    pub azurite: Azurite,
    pub started: Instant,
}

/// One JSON decision line of the wrapper.
#[derive(Debug)]
pub struct Decision {
    pub replica: usize,
    pub run: bool,
    pub due_s: Option<u64>,
    pub token: Option<u64>,
    pub missed: Option<u64>,
    pub abandoned: bool,
    pub detail: String,
    /// The run's instance could not renew its lease when due.
    pub blocked: bool,
}

/// What the scheduler's call to a replica's guarded route got back.
#[derive(Debug, Clone)]
pub struct Answer {
    pub replica: usize,
    pub at_s: u64,
    pub reply: Result<(u16, String), String>,
}

impl Fleet {
    /// `handler`: the handler's environment, as TOML inline-table entries; `variables`: more
    /// `SPIN_VARIABLE_`s for every replica.
    pub fn start(
        name: &str,
        how: Wrapping,
        replicas: usize,
        handler: &str,
        variables: &[(&str, &str)],
    ) -> Fleet {
        let azurite = Azurite::start();
        let proxy = CountingProxy::start(azurite.port);
        let dir = scratch(name);
        let storage = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
        let manifest = dir.join("spin.toml");
        std::fs::write(&manifest, spin_toml(&how, &storage, handler)).unwrap();
        let mut fleet = Fleet {
            replicas: Vec::new(),
            dirs: Vec::new(),
            ports: Arc::new(Mutex::new(Vec::new())),
            scheduler: None,
            proxy,
            azurite,
            started: Instant::now(),
        };
        // Every wrapped app serves its board, so every replica listens (Launch picks the port,
        // and starts again on another if the port was taken before Spin bound it).
        let launch = Launch {
            spin: how.spin.clone(),
            data_dir: how.data.clone(),
            manifest,
            component: None,
            lifetime: Duration::from_secs(300),
            env: Vec::new(),
        };
        let endpoint = format!("http://127.0.0.1:{}", fleet.proxy.port);
        for i in 0..replicas {
            let name = format!("replica-{i}");
            let mut settings =
                vec![("holder", name.clone()), ("storage_endpoint", endpoint.clone())];
            settings.extend(variables.iter().map(|(k, v)| (*k, v.to_string())));
            let at = dir.join(&name);
            let mut replica = launch.start(&name, &at, &settings);
            // A 19 MB JavaScript job compiles for over a minute on a loaded 2-core machine
            // (seen in a full run, beside the other fleets).
            let ready = replica.wait_ready(Duration::from_secs(150));
            assert!(ready.is_ok(), "{name} did not start: {ready:?}");
            fleet.ports.lock().unwrap().push(Some(replica.port));
            fleet.replicas.push(Some(replica));
            fleet.dirs.push(at);
            // The first replica's cron trigger composes and compiles the app alone; the others
            // find wasmtime's cache warm (nine compiling at once starved the real-time stories
            // beside them).
            if i == 0 && how.trigger == Trigger::Cron {
                let until = Instant::now() + Duration::from_secs(60);
                while Instant::now() < until && fleet.stdout(0).is_empty() {
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
        if how.trigger == Trigger::Http {
            fleet.scheduler = Some(Scheduler::start(fleet.ports.clone()));
        }
        fleet.started = Instant::now();
        fleet
    }

    /// SIGKILLs a replica's process group; the scheduler stops calling it.
    pub fn kill(&mut self, replica: usize) {
        self.replicas[replica] = None;
        self.ports.lock().unwrap()[replica] = None;
    }

    /// SIGSTOPs a replica's process group: it freezes mid-work, as a paused VM would.
    pub fn pause(&mut self, replica: usize) {
        self.replicas[replica].as_mut().expect("a live replica").pause();
    }

    /// SIGCONTs a frozen replica: it carries on, unaware that time passed.
    pub fn resume(&mut self, replica: usize) {
        self.replicas[replica].as_mut().expect("a live replica").resume();
    }

    /// Stops the HTTP scheduler's calls; what they got back stays readable.
    pub fn stop_calling(&mut self) {
        if let Some(scheduler) = &mut self.scheduler {
            scheduler.halt();
        }
    }

    /// Waits (up to a minute from the start) for a replica to be mid-run, its handler called
    /// more often than it reported runs after at least one, and SIGKILLs it. Returns it, how
    /// often its handler was called, and when it was killed (from the start).
    pub fn kill_mid_run(&mut self) -> (usize, usize, Duration) {
        let running = |fleet: &Fleet| {
            let decisions = fleet.decisions();
            (0..fleet.dirs.len()).find(|&i| {
                let ran = decisions.iter().filter(|d| d.replica == i && d.run).count();
                ran >= 1 && fleet.called()[i].len() > ran
            })
        };
        let warmed = self.wait(Duration::from_secs(60), |f| running(f).is_some());
        assert!(warmed, "no second run began: {}", self.said());
        let victim = running(self).unwrap();
        let calls = self.called()[victim].len();
        self.kill(victim);
        (victim, calls, self.started.elapsed())
    }

    /// A live HTTP replica's port.
    pub fn port(&self, replica: usize) -> Option<u16> {
        self.ports.lock().unwrap()[replica]
    }

    /// Everything the HTTP scheduler's calls got back so far.
    pub fn answers(&self) -> Vec<Answer> {
        self.scheduler.as_ref().map(|s| s.answers.lock().unwrap().clone()).unwrap_or_default()
    }

    pub fn spin_out(&self, replica: usize) -> String {
        std::fs::read_to_string(self.dirs[replica].join("spin.out")).unwrap_or_default()
    }

    /// A component's stdout (`nightly` is the wrapper, and the job it wraps).
    pub fn log(&self, replica: usize, component: &str) -> String {
        let log = format!("logs/{component}_stdout.txt");
        std::fs::read_to_string(self.dirs[replica].join(log)).unwrap_or_default()
    }

    pub fn stdout(&self, replica: usize) -> String {
        self.log(replica, "nightly")
    }

    pub fn stderr(&self, replica: usize) -> String {
        std::fs::read_to_string(self.dirs[replica].join("logs/nightly_stderr.txt"))
            .unwrap_or_default()
    }

    /// Every replica's handler calls: what follows `handler called for ` in the job's lines.
    pub fn called(&self) -> Vec<Vec<String>> {
        (0..self.dirs.len())
            .map(|i| {
                self.stdout(i)
                    .lines()
                    .filter_map(|l| l.strip_prefix("handler called for "))
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    }

    /// Every replica's cron handler calls: the due times (s) it was called for.
    pub fn calls(&self) -> Vec<Vec<u64>> {
        let due =
            |called: Vec<String>| called.iter().filter_map(|t| t.trim().parse().ok()).collect();
        self.called().into_iter().map(due).collect()
    }

    /// The fencing tokens a replica's job printed it was given (`handler given fencing token
    /// <token> for the due time <ms> …`), in order.
    pub fn given_tokens(&self, replica: usize) -> Vec<u64> {
        self.stdout(replica)
            .lines()
            .filter_map(|l| l.strip_prefix("handler given fencing token "))
            .filter_map(|rest| rest.split(' ').next()?.parse().ok())
            .collect()
    }

    /// The request bodies a replica's job printed it read (`handler read <n> bytes: <first
    /// line>`), in order: each one's length and first line.
    pub fn bodies_read(&self, replica: usize) -> Vec<(usize, String)> {
        let stdout = self.stdout(replica);
        let read = stdout.lines().filter_map(|l| l.strip_prefix("handler read "));
        read.filter_map(|rest| {
            let (length, first) = rest.split_once(" bytes: ")?;
            Some((length.parse().ok()?, first.to_string()))
        })
        .collect()
    }

    pub fn decisions(&self) -> Vec<Decision> {
        let mut all = Vec::new();
        for replica in 0..self.dirs.len() {
            all.extend(self.stdout(replica).lines().filter_map(|l| decision(replica, l)));
        }
        all
    }

    /// Waits up to `within` (from the start) until `done` holds.
    pub fn wait(&self, within: Duration, done: impl Fn(&Fleet) -> bool) -> bool {
        while self.started.elapsed() < within {
            if done(self) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        done(self)
    }

    pub fn said(&self) -> String {
        let logs: Vec<String> = (0..self.dirs.len())
            .map(|i| format!("{}{}{}", self.stdout(i), self.stderr(i), self.spin_out(i)))
            .collect();
        format!("{logs:#?}\nanswers: {:#?}", self.answers())
    }

    pub fn stop(mut self) {
        self.scheduler = None;
        self.replicas.clear();
        self.azurite.stop();
    }
}

/// The decision log's line as the lease component writes it (src/guard/decision_log.rs): these
/// fields, in this order, and no other.
#[derive(serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct ComponentLine {
    lock: String,
    holder: String,
    decision: String,
    reason: Option<String>,
    variable: Option<String>,
    fencing_token: Option<u64>,
    due_at_ms: Option<u64>,
    due_at: Option<String>,
    late_by_ms: Option<u64>,
    missed: Option<u64>,
    manual_by: Option<String>,
    previous_abandoned: bool,
    detail: String,
    blocked: bool,
}

impl Fleet {
    /// Every decision line a replica printed is the lease component's, byte for byte (an
    /// adapter that wrote its own, with other fields, order, spacing or numbers, fails here),
    /// and its stderr carries the same `detail` after its prefix. Returns how many lines.
    pub fn lines_are_the_components(&self) -> usize {
        let mut checked = 0;
        for replica in 0..self.dirs.len() {
            let stderr = self.stderr(replica);
            for line in self.stdout(replica).lines().filter(|l| l.starts_with('{')) {
                let parsed: ComponentLine = serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!("replica {replica}: not the component's ({e}): {line}")
                });
                let again = serde_json::to_string(&parsed).unwrap();
                assert_eq!(line, again, "replica {replica}: the line was rewritten");
                let tail = format!(": {}", parsed.detail);
                assert!(
                    stderr.lines().any(|l| l.ends_with(&tail)),
                    "replica {replica}: stderr lacks {tail:?}:\n{stderr}"
                );
                checked += 1;
            }
        }
        checked
    }
}

/// A decision line (`{"decision": …}`) of the wrapper's stdout.
pub fn decision(replica: usize, line: &str) -> Option<Decision> {
    if !line.starts_with('{') {
        return None;
    }
    let json = serde_json::from_str::<serde_json::Value>(line).ok()?;
    let said = json["detail"].as_str().unwrap_or_default();
    // A run's line is `[holder] ran … with fencing token N (…): <the run's own words>`.
    let detail = match said.split_once(" with fencing token ") {
        Some((_, rest)) if json["decision"] == "run" => rest.split_once(": ").map_or(rest, |w| w.1),
        _ => said,
    };
    Some(Decision {
        replica,
        run: json["decision"] == "run",
        due_s: json["due_at_ms"].as_u64().map(|ms| ms / 1000),
        token: json["fencing_token"].as_u64(),
        missed: json["missed"].as_u64(),
        abandoned: json["previous_abandoned"] == true,
        detail: detail.to_string(),
        blocked: json["blocked"] == true,
    })
}

/// Every due time's handler calls, across the fleet.
pub fn calls_by_due(calls: &[Vec<u64>]) -> BTreeMap<u64, usize> {
    let mut by_due = BTreeMap::new();
    for due in calls.iter().flatten() {
        *by_due.entry(*due).or_default() += 1;
    }
    by_due
}

/// A CronJob for every replica: at each due time (a multiple of 3 s, 200 ms after it, so the
/// tick is not early on a clock a little behind), `POST /run` on every live replica at once,
/// each call with a forged run header the wrapper must not pass on.
struct Scheduler {
    answers: Arc<Mutex<Vec<Answer>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Scheduler {
    fn start(ports: Arc<Mutex<Vec<Option<u16>>>>) -> Scheduler {
        let answers = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (into, stopped) = (answers.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
                let due = (now.as_secs() / EVERY_SECONDS + 1) * EVERY_SECONDS;
                let at = Duration::from_secs(due) + Duration::from_millis(200);
                std::thread::sleep(at.saturating_sub(now));
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                let live: Vec<(usize, u16)> = ports
                    .lock()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, port)| port.map(|p| (i, p)))
                    .collect();
                for (replica, port) in live {
                    let into = into.clone();
                    std::thread::spawn(move || {
                        let forged = [(FORGED_HEADER, "999999")];
                        let timeout = Duration::from_secs(60);
                        let body = scheduler_body(replica, due);
                        let reply = http_sending(port, "POST", "/run", &forged, &body, timeout);
                        into.lock().unwrap().push(Answer { replica, at_s: due, reply });
                    });
                }
            }
        });
        Scheduler { answers, stop, thread: Some(thread) }
    }
}

impl Scheduler {
    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.halt();
    }
}

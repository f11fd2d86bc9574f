//! The cron wrappers on real Spin: a plain cron handler (harness/cron-handler, no traffic-cop
//! call; it prints a line for every call) made a guarded singleton by spin.toml alone, the
//! wrapper as the trigger's component and the handler as its `handle-cron-event` dependency
//! (`{ component = "job" }`). The async wrapper on Spin 4.0.2 with trigger-cron 0.5.0: three
//! replicas call the handler once per due time and never on a skip, and take over after the
//! holder is SIGKILLed; a failing handler is recorded as a failure and a trapping one as
//! abandoned; a handler that awaits longer than three lease periods runs once, its lease
//! renewed by `hold`. The sync wrapper with trigger-cron 0.3.0 on Spin 4.0.2 and 3.6.3: the same
//! kill story; a stated job longer than the lease refused; and what a job longer than its lease
//! does without renewal.

use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

use crate::run::{scratch, Background};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{cron_line, cron_line_in, find_spin, spin_3};
use traffic_cop_testbed::EMULATOR_KEY_B64;

const LEASE_SECONDS: u64 = 15;

/// A wrapped app as a user writes it: the wrapper on the trigger, the lease component and the
/// user's unchanged job as its dependencies, settings as variables.
fn spin_toml(wrapper: &str, lease: &str, job: &str, storage: &str, handler: &str) -> String {
    format!(
        r#"spin_manifest_version = 2

[application]
name = "wrapped-job"
version = "0.1.0"

[variables]
connection_string = {{ default = "{storage}", secret = true }}
storage_endpoint = {{ default = "http://127.0.0.1:10000" }}
container = {{ default = "wrapped" }}
lock = {{ default = "nightly" }}
holder = {{ default = "" }}
lease_seconds = {{ default = "{LEASE_SECONDS}" }}
schedule = {{ default = "*/3 * * * * *" }}
time_zone = {{ default = "UTC" }}
max_job_seconds = {{ default = "" }}

[[trigger.cron]]
component = "nightly"
cron_expression = "*/3 * * * * *"

[component.nightly]
source = "{wrapper}"
allowed_outbound_hosts = ["{{{{ storage_endpoint }}}}"]
dependencies_inherit_configuration = true
environment = {{ {handler} }}
[component.nightly.variables]
connection_string = "{{{{ connection_string }}}}"
container = "{{{{ container }}}}"
lock = "{{{{ lock }}}}"
holder = "{{{{ holder }}}}"
lease_seconds = "{{{{ lease_seconds }}}}"
schedule = "{{{{ schedule }}}}"
time_zone = "{{{{ time_zone }}}}"
max_job_seconds = "{{{{ max_job_seconds }}}}"
[component.nightly.dependencies]
"traffic-cop:lease" = {{ path = "{lease}" }}
"handle-cron-event" = {{ component = "job" }}

[component.job]
source = "{job}"
"#
    )
}

/// Replicas of one wrapped app behind one counting proxy in front of Azurite.
struct Fleet {
    replicas: Vec<Option<Background>>,
    dirs: Vec<PathBuf>,
    proxy: CountingProxy,
    azurite: Azurite,
    started: Instant,
}

/// One JSON decision line of the wrapper.
#[derive(Debug)]
struct Decision {
    replica: usize,
    run: bool,
    due_s: Option<u64>,
    abandoned: bool,
    detail: String,
}

/// What a fleet runs: the Spin CLI and plugin line, the wrapper, its lease component and the
/// wrapped job.
struct Wrapping {
    spin: PathBuf,
    data: PathBuf,
    wrapper: PathBuf,
    lease: PathBuf,
    job: PathBuf,
}

impl Wrapping {
    /// The async wrapper on Spin 4 with trigger-cron 0.5.0.
    fn async_on_spin_4() -> Wrapping {
        let spin = require("real spin (wrapper)", find_spin());
        let data = require("real spin (wrapper, cron 0.5.0)", cron_line("0.5.0"));
        traffic_cop_testbed::built::assert_app_built();
        let (lease, _) = traffic_cop_testbed::built::async_components();
        Wrapping {
            spin,
            data,
            wrapper: traffic_cop_testbed::built::app_wasm("cron_wrapper_async"),
            lease,
            job: traffic_cop_testbed::built::cron_handler("async"),
        }
    }

    /// The sync wrapper under `spin` with trigger-cron 0.3.0 in `data`.
    fn sync_on(spin: PathBuf, data: PathBuf) -> Wrapping {
        traffic_cop_testbed::built::assert_app_built();
        Wrapping {
            spin,
            data,
            wrapper: traffic_cop_testbed::built::app_wasm("cron_wrapper"),
            lease: traffic_cop_testbed::built::lease_component(),
            job: traffic_cop_testbed::built::cron_handler("sync"),
        }
    }

    fn sync_on_spin_4() -> Wrapping {
        let spin = require("real spin (sync wrapper)", find_spin());
        let data = require("real spin (sync wrapper, cron 0.3.0)", cron_line("0.3.0"));
        Wrapping::sync_on(spin, data)
    }
}

impl Fleet {
    /// `handler`: the handler's environment, as TOML inline-table entries; `variables`: more
    /// `SPIN_VARIABLE_`s for every replica.
    fn start(
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
        let path = |p: &PathBuf| p.display().to_string();
        let (wrapper, lease, job) = (path(&how.wrapper), path(&how.lease), path(&how.job));
        std::fs::write(&manifest, spin_toml(&wrapper, &lease, &job, &storage, handler)).unwrap();
        let mut fleet = Fleet {
            replicas: Vec::new(),
            dirs: Vec::new(),
            proxy,
            azurite,
            started: Instant::now(),
        };
        for i in 0..replicas {
            let replica = dir.join(format!("replica-{i}"));
            std::fs::create_dir_all(&replica).unwrap();
            let logs = replica.join("logs");
            let args =
                ["up", "-f", manifest.to_str().unwrap(), "--log-dir", logs.to_str().unwrap()];
            let endpoint = format!("http://127.0.0.1:{}", fleet.proxy.port);
            let mut env = vec![
                ("SPIN_DATA_DIR".to_string(), how.data.display().to_string()),
                ("SPIN_VARIABLE_HOLDER".to_string(), format!("replica-{i}")),
                ("SPIN_VARIABLE_STORAGE_ENDPOINT".to_string(), endpoint),
            ];
            for (name, value) in variables {
                env.push((format!("SPIN_VARIABLE_{}", name.to_uppercase()), value.to_string()));
            }
            let life = Duration::from_secs(180);
            let out = replica.join("spin.out");
            fleet.replicas.push(Some(Background::start(&how.spin, &args, &env, &out, life)));
            fleet.dirs.push(replica);
            // The first replica compiles the composed app alone; the others find wasmtime's
            // cache warm (nine compiling at once starved the real-time stories beside them).
            if i == 0 {
                let until = Instant::now() + Duration::from_secs(60);
                while Instant::now() < until && fleet.stdout(0).is_empty() {
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
        fleet.started = Instant::now();
        fleet
    }

    fn spin_out(&self, replica: usize) -> String {
        std::fs::read_to_string(self.dirs[replica].join("spin.out")).unwrap_or_default()
    }

    fn stdout(&self, replica: usize) -> String {
        std::fs::read_to_string(self.dirs[replica].join("logs/nightly_stdout.txt"))
            .unwrap_or_default()
    }

    fn stderr(&self, replica: usize) -> String {
        std::fs::read_to_string(self.dirs[replica].join("logs/nightly_stderr.txt"))
            .unwrap_or_default()
    }

    /// Every replica's handler calls: the due times (s) it was called for.
    fn calls(&self) -> Vec<Vec<u64>> {
        (0..self.dirs.len())
            .map(|i| {
                self.stdout(i)
                    .lines()
                    .filter_map(|l| l.strip_prefix("handler called for "))
                    .filter_map(|t| t.trim().parse().ok())
                    .collect()
            })
            .collect()
    }

    fn decisions(&self) -> Vec<Decision> {
        let mut all = Vec::new();
        for replica in 0..self.dirs.len() {
            for line in self.stdout(replica).lines().filter(|l| l.starts_with('{')) {
                let Ok(json) = serde_json::from_str::<serde_json::Value>(line) else { continue };
                all.push(Decision {
                    replica,
                    run: json["decision"] == "run",
                    due_s: json["due_at_ms"].as_u64().map(|ms| ms / 1000),
                    abandoned: json["previous_abandoned"] == true,
                    detail: json["detail"].as_str().unwrap_or_default().to_string(),
                });
            }
        }
        all
    }

    /// Waits up to `within` (from the start) until `done` holds.
    fn wait(&self, within: Duration, done: impl Fn(&Fleet) -> bool) -> bool {
        while self.started.elapsed() < within {
            if done(self) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        done(self)
    }

    fn said(&self) -> String {
        let logs: Vec<String> = (0..self.dirs.len())
            .map(|i| format!("{}{}{}", self.stdout(i), self.stderr(i), self.spin_out(i)))
            .collect();
        format!("{logs:#?}")
    }

    fn stop(mut self) {
        self.replicas.clear();
        self.azurite.stop();
    }
}

/// Every due time's handler calls, across the fleet.
fn calls_by_due(calls: &[Vec<u64>]) -> BTreeMap<u64, usize> {
    let mut by_due = BTreeMap::new();
    for due in calls.iter().flatten() {
        *by_due.entry(*due).or_default() += 1;
    }
    by_due
}

/// Three replicas, a 1.5 s job, a SIGKILL of the holder mid-run and the takeover.
fn kill_story(name: &str, how: Wrapping, what: &str) {
    let handler = r#"HANDLER_MODE = "ok", HANDLER_MS = "1500""#;
    let mut fleet = Fleet::start(name, how, 3, handler, &[]);
    // A replica whose handler was called more often than it reported runs: it is mid-run.
    let running = |fleet: &Fleet| {
        let decisions = fleet.decisions();
        (0..3).find(|&i| {
            let ran = decisions.iter().filter(|d| d.replica == i && d.run).count();
            ran >= 1 && fleet.calls()[i].len() > ran
        })
    };
    let warmed = fleet.wait(Duration::from_secs(60), |f| running(f).is_some());
    assert!(warmed, "no second run began: {}", fleet.said());
    let victim = running(&fleet).unwrap();
    let killed_calls = fleet.calls()[victim].len();
    fleet.replicas[victim] = None; // SIGKILL of its process group, mid-run
    let killed_at = fleet.started.elapsed();
    let took_over = fleet.wait(killed_at + Duration::from_secs(LEASE_SECONDS + 15), |f| {
        f.decisions().iter().any(|d| d.run && d.abandoned)
    });
    let said = fleet.said();
    let (calls, decisions) = (fleet.calls(), fleet.decisions());
    fleet.stop();
    assert!(took_over, "nobody took over after the kill: {said}");
    // One handler call per due time, across the fleet.
    let by_due = calls_by_due(&calls);
    assert!(by_due.values().all(|&n| n == 1), "a due time ran twice: {by_due:?}\n{said}");
    // The handler is called for runs only: a survivor's calls are its runs; the killed one
    // was called once more than it could report.
    for (i, called) in calls.iter().enumerate() {
        let runs: Vec<u64> =
            decisions.iter().filter(|d| d.replica == i && d.run).filter_map(|d| d.due_s).collect();
        if i == victim {
            assert_eq!(called.len(), killed_calls, "{said}");
            assert_eq!(called.len(), runs.len() + 1, "{said}");
        } else {
            assert_eq!(called, &runs, "replica {i}: calls and runs differ: {said}");
        }
    }
    let skips = decisions.iter().filter(|d| !d.run).count();
    assert!(skips >= 5, "the followers skipped only {skips} times: {said}");
    eprintln!(
        "measured, {what}: {} handler calls, one per due time; {skips} skips; replica-{victim} \
         killed mid-run at {:.0} s, taken over after its lease",
        by_due.len(),
        killed_at.as_secs_f64()
    );
}

fn wrapped_replicas_call_the_handler_once_per_due_time_and_take_over_after_a_kill() {
    kill_story("wrapper-kill", Wrapping::async_on_spin_4(), "async wrapper, trigger-cron 0.5.0");
}

fn sync_wrapped_replicas_on_trigger_cron_0_3_0_do_the_same() {
    let what = "sync wrapper, Spin 4.0.2, trigger-cron 0.3.0";
    kill_story("wrapper-sync-kill", Wrapping::sync_on_spin_4(), what);
}

fn sync_wrapped_replicas_on_spin_3_6_3_do_the_same() {
    let (spin, data) = require("real spin 3.6.3 (sync wrapper)", spin_3());
    let data = require("real spin 3.6.3 (sync wrapper, cron 0.3.0)", cron_line_in(&data, "0.3.0"));
    let what = "sync wrapper, Spin 3.6.3, trigger-cron 0.3.0";
    kill_story("wrapper-sync-kill-3", Wrapping::sync_on(spin, data), what);
}

/// A stated job longer than the lease is refused before anything is asked of storage.
fn the_sync_wrapper_refuses_a_lease_shorter_than_the_stated_job() {
    let vars = [("max_job_seconds", "30")];
    let fleet = Fleet::start("wrapper-sync-refuses", Wrapping::sync_on_spin_4(), 1, "", &vars);
    let refused = fleet.wait(Duration::from_secs(20), |f| {
        f.stderr(0).contains("set the `max_job_seconds` variable: 30 s is longer than the lease")
    });
    let said = fleet.said();
    let (calls, requests) = (fleet.calls(), fleet.proxy.requests());
    fleet.stop();
    assert!(refused, "{said}");
    assert!(calls[0].is_empty(), "the handler was called: {said}");
    assert_eq!(requests, 0, "storage was asked: {said}");
}

/// What the limit means: a sync job longer than its lease (20 s under 15 s) is not renewed, so
/// another run takes over while it still runs. Its report says it outlived its lease, and
/// its `complete` is refused.
fn a_sync_wrapped_job_longer_than_its_lease_says_so_when_taken_over() {
    let handler = r#"HANDLER_MODE = "ok", HANDLER_MS = "20000""#;
    let fleet = Fleet::start("wrapper-sync-long", Wrapping::sync_on_spin_4(), 2, handler, &[]);
    let done = fleet.wait(Duration::from_secs(60), |f| {
        f.decisions().iter().any(|d| d.run && d.detail.contains("outlived its lease"))
    });
    let said = fleet.said();
    let (calls, decisions) = (fleet.calls(), fleet.decisions());
    fleet.stop();
    assert!(done, "no run said it outlived its lease: {said}");
    let long = decisions.iter().find(|d| d.detail.contains("outlived its lease")).unwrap();
    assert!(long.detail.contains("complete failed"), "{long:?}");
    // The job was called again, for a later due time, while the long run still worked: by
    // either replica (the long run's own replica takes over too, on a new instance).
    let due = long.due_s.unwrap();
    let again: Vec<u64> = calls.iter().flatten().copied().filter(|&d| d > due).collect();
    assert!(!again.is_empty(), "nobody took over while it ran: {said}");
    eprintln!("measured: {}", long.detail);
}

fn a_wrapped_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned() {
    let how = Wrapping::async_on_spin_4();
    let fleet = Fleet::start("wrapper-outcomes", how, 1, r#"HANDLER_MODE = "cycle""#, &[]);
    // `cycle` answers by the due time: ok, fail, trap in turn (timestamp / 3 % 3).
    let mode = |due: u64| ["ok", "fail", "trap"][(due / 3 % 3) as usize];
    let trapped = |f: &Fleet| f.calls()[0].iter().copied().find(|&due| mode(due) == "trap");
    let done = fleet.wait(Duration::from_secs(90), |f| {
        let decisions = f.decisions();
        decisions.iter().any(|d| d.run && d.detail.starts_with("the handler failed"))
            && trapped(f).is_some_and(|t| {
                decisions.iter().any(|d| d.run && d.abandoned && d.due_s > Some(t))
            })
    });
    let said = fleet.said();
    let (calls, decisions, stderr) = (fleet.calls(), fleet.decisions(), fleet.stderr(0));
    fleet.stop();
    assert!(done, "no failure and abandoned trap seen: {said}");
    for d in decisions.iter().filter(|d| d.run) {
        let due = d.due_s.unwrap();
        match mode(due) {
            "ok" => assert!(d.detail.starts_with("the handler succeeded"), "{d:?}"),
            "fail" => assert_eq!(d.detail, format!("the handler failed: the job failed for {due}")),
            _ => panic!("a trapped run reported: {d:?}\n{said}"),
        }
    }
    let trap = calls[0].iter().copied().find(|&due| mode(due) == "trap").unwrap();
    assert!(stderr.contains(&format!("the job trapped for {trap}")), "{said}");
    // The next run comes once the trapped run's lease has run out, and names it abandoned.
    let next = decisions.iter().find(|d| d.run && d.due_s > Some(trap)).unwrap();
    assert!(next.abandoned, "{next:?}");
    assert!(next.due_s.unwrap() >= trap + LEASE_SECONDS - 1, "taken over too early: {next:?}");
    eprintln!("measured: the trap for {trap} was taken over at {:?}", next.due_s);
}

fn a_wrapped_handler_awaiting_three_lease_periods_runs_once_and_keeps_its_lease() {
    let handler = r#"HANDLER_MODE = "ok", HANDLER_MS = "50000""#;
    let fleet = Fleet::start("wrapper-long", Wrapping::async_on_spin_4(), 3, handler, &[]);
    let done = fleet.wait(Duration::from_secs(100), |f| f.decisions().iter().any(|d| d.run));
    let said = fleet.said();
    let (calls, decisions, heads) = (fleet.calls(), fleet.decisions(), fleet.proxy.heads());
    fleet.stop();
    assert!(done, "the long run never reported: {said}");
    let run = decisions.iter().find(|d| d.run).unwrap();
    assert_eq!(run.detail, "the handler succeeded", "{said}");
    // No other call while it ran: every other tick skipped.
    let due = run.due_s.unwrap();
    let during: Vec<u64> =
        calls.iter().flatten().copied().filter(|&d| d != due && d < due + 50).collect();
    assert!(during.is_empty(), "the handler was called during the run for {during:?}: {said}");
    let action = |head: &str, what: &str| {
        head.lines()
            .any(|l| l.to_ascii_lowercase().replace(' ', "") == format!("x-ms-lease-action:{what}"))
    };
    let acquires = heads.iter().filter(|(_, h)| action(h, "acquire")).count();
    let renewals = heads.iter().filter(|(_, h)| action(h, "renew")).count();
    assert_eq!(acquires, 1, "a second acquire during the run: {said}");
    assert!(renewals >= 8, "{renewals} renewals in 50 s under a 15 s lease: {said}");
    eprintln!(
        "measured: one 50 s run under a {LEASE_SECONDS} s lease, {renewals} renewals, no takeover"
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        wrapped_replicas_call_the_handler_once_per_due_time_and_take_over_after_a_kill,
        sync_wrapped_replicas_on_trigger_cron_0_3_0_do_the_same,
        sync_wrapped_replicas_on_spin_3_6_3_do_the_same,
        the_sync_wrapper_refuses_a_lease_shorter_than_the_stated_job,
        a_sync_wrapped_job_longer_than_its_lease_says_so_when_taken_over,
        a_wrapped_handler_that_fails_is_recorded_and_one_that_traps_is_abandoned,
        a_wrapped_handler_awaiting_three_lease_periods_runs_once_and_keeps_its_lease,
    ]
}

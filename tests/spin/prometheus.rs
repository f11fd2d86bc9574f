//! The shipped alert rules (deploy/prometheus/alerts.yml) on a real Prometheus (Debian's
//! package, on 127.0.0.1, 1 s scrape and evaluation, every `for:` shortened to 2 s; `promtool
//! test rules` covers the shipped durations) scraping real `spin up` replicas with the board
//! token: two job replicas (cron and HTTP, Spin 4.0.2 with trigger-cron 0.3.0) and a monitor
//! that serves only the HTTP component, on Spin 3.6.3 (what SpinKube's shim embeds).
//!
//! The story: the job runs, nothing fires. Both job replicas are killed while the monitor keeps
//! serving /metrics: `TrafficCopJobOverdue` fires; a job replica comes back: it resolves. A
//! replica whose runs fail three times in a row fires `TrafficCopJobFailing`. Every replica
//! down fires `TrafficCopNotScraped`.

use crate::run::Background;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{
    cron_line, find_spin, free_port, http, manifest_copy, spin_3, Launch, SpinReplica,
};
use traffic_cop_wasm_host::component::{fresh, v1};

const TOKEN: &str = "prometheus-test-token";
const LOCK: &str = "nightly-cleanup";
/// The job's schedule and its trigger: every 2 s.
const EVERY_2S: &str = "*/2 * * * * *";
/// How long any one step may take before the test fails.
const STEP: Duration = Duration::from_secs(60);

fn job_variables(container: &str, holder: &str) -> Vec<(&'static str, String)> {
    let azurite = Azurite::shared();
    vec![
        ("connection_string", azurite.connection_string()),
        ("storage_endpoint", format!("http://127.0.0.1:{}", azurite.port)),
        ("container", container.to_string()),
        ("holder", holder.to_string()),
        ("lease_seconds", "15".into()),
        ("schedule", EVERY_2S.into()),
        ("work_ms", "0".into()),
        ("board_token", TOKEN.into()),
        ("board_cache_seconds", "1".into()),
    ]
}

/// alerts.yml with every `for:` at 2 s: the rules themselves as shipped.
fn rules_for_the_test(dir: &Path) -> std::path::PathBuf {
    let shipped = traffic_cop_testbed::repo_root().join("deploy/prometheus/alerts.yml");
    let text = std::fs::read_to_string(shipped).unwrap();
    let short: Vec<String> = text
        .lines()
        .map(|l| match l.split_once("for: ") {
            Some((indent, _)) if indent.trim().is_empty() => format!("{indent}for: 2s"),
            _ => l.to_string(),
        })
        .collect();
    let path = dir.join("alerts.yml");
    std::fs::write(&path, short.join("\n")).unwrap();
    path
}

fn start_prometheus(dir: &Path, targets: &[u16]) -> (Background, u16) {
    let prometheus = require("prometheus", crate::run::on_path("prometheus"));
    let rules = rules_for_the_test(dir);
    std::fs::write(dir.join("token"), TOKEN).unwrap();
    let targets: Vec<String> = targets.iter().map(|p| format!("\"127.0.0.1:{p}\"")).collect();
    let config = format!(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n  scrape_timeout: 1s\n\
         rule_files: [\"{}\"]\nscrape_configs:\n  - job_name: traffic-cop\n    \
         authorization:\n      type: Bearer\n      credentials_file: \"{}\"\n    \
         static_configs:\n      - targets: [{}]\n",
        rules.display(),
        dir.join("token").display(),
        targets.join(", ")
    );
    std::fs::write(dir.join("prometheus.yml"), config).unwrap();
    let port = free_port();
    let args = [
        format!("--config.file={}", dir.join("prometheus.yml").display()),
        format!("--storage.tsdb.path={}", dir.join("tsdb").display()),
        format!("--web.listen-address=127.0.0.1:{port}"),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let background = Background::start(
        &prometheus,
        &args,
        &[],
        &dir.join("prometheus.out"),
        Duration::from_secs(600),
    );
    (background, port)
}

/// Prometheus' answer; None until it listens and is ready (the steps wait for it). It listens
/// before its storage has started, and answers 503 until then (seen on a loaded host).
fn api(port: u16, path: &str) -> Option<Value> {
    let (status, body) = http(port, "GET", path, Duration::from_secs(5)).ok()?;
    if status == 503 {
        return None;
    }
    assert_eq!(status, 200, "{path}: {body}");
    Some(serde_json::from_str(&body).unwrap())
}

fn encode(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value of an instant query with one result, if it has one.
fn query(port: u16, promql: &str) -> Option<f64> {
    let answer = api(port, &format!("/api/v1/query?query={}", encode(promql)))?;
    let value = &answer["data"]["result"][0]["value"][1];
    value.as_str()?.parse().ok()
}

/// Whether `alert` is firing (for `lock`, when given).
fn firing(port: u16, alert: &str, lock: Option<&str>) -> bool {
    let Some(alerts) = api(port, "/api/v1/alerts") else { return false };
    alerts["data"]["alerts"].as_array().unwrap().iter().any(|a| {
        a["labels"]["alertname"] == alert
            && a["state"] == "firing"
            && lock.is_none_or(|l| a["labels"]["lock"] == l)
    })
}

fn wait_for(what: &str, dir: &Path, done: impl FnMut() -> bool) -> Duration {
    wait_up_to(STEP, what, dir, done)
}

fn wait_up_to(limit: Duration, what: &str, dir: &Path, mut done: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        if started.elapsed() > limit {
            let said = std::fs::read_to_string(dir.join("prometheus.out")).unwrap_or_default();
            panic!("{what}: not within {limit:?}; prometheus said:\n{said}");
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    started.elapsed()
}

/// A run of another replica of the job whose work fails, through the lease component.
fn failed_run(container: &str) {
    let connection_string = Azurite::shared().connection_string();
    let settings = v1::Settings {
        lease_seconds: Some("15".into()),
        schedule: Some(EVERY_2S.into()),
        ..v1::settings(&connection_string, container, LOCK, "failing-worker")
    };
    let deadline = Instant::now() + STEP;
    let mut instance = fresh();
    loop {
        assert!(Instant::now() < deadline, "failing-worker was never granted");
        match instance.guarded_invoke(&settings) {
            v1::Decision::Run(run) => {
                let outcome = v1::Outcome::Failure("upstream answered 503".into());
                let finished = instance.run_complete(run, &outcome);
                assert!(finished.error.is_none(), "complete: {}", finished.text);
                return;
            }
            v1::Decision::Skip(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

fn alerts_fire_and_resolve_on_a_real_prometheus_scraping_spin_replicas() {
    let spin = require("spin (prometheus story)", find_spin());
    let data = require("trigger-cron 0.3.0", cron_line("0.3.0"));
    let (spin_3, spin_3_data) = require("spin 3.6.3 (prometheus story)", spin_3());
    traffic_cop_testbed::spin::assert_built();
    let dir = crate::story::story_dir("prometheus");
    let container = format!("prom{}", std::process::id());
    let manifest = manifest_copy(&dir, EVERY_2S);
    let job = Launch {
        spin,
        data_dir: Some(data),
        manifest: manifest.clone(),
        component: None,
        lifetime: Duration::from_secs(600),
        env: Vec::new(),
    };
    let monitor = Launch {
        spin: spin_3,
        data_dir: Some(spin_3_data),
        manifest,
        component: Some("http-job".into()),
        lifetime: Duration::from_secs(600),
        env: Vec::new(),
    };
    let start = |launch: &Launch, name: &str| -> SpinReplica {
        let mut replica = launch.start(name, &dir.join(name), &job_variables(&container, name));
        replica.wait_ready(Duration::from_secs(90)).unwrap();
        replica
    };
    let mut jobs = vec![start(&job, "job-0"), start(&job, "job-1")];
    let mut watcher = start(&monitor, "monitor");
    let ports = [jobs[0].port, jobs[1].port, watcher.port];
    let (prometheus, port) = start_prometheus(&dir, &ports);
    let story = Instant::now();

    let running = wait_for("the job runs and every replica is scraped", &dir, || {
        query(port, "count(up{job=\"traffic-cop\"} == 1)") == Some(3.0)
            && query(port, "max(traffic_cop_runs_total{outcome=\"success\"})").unwrap_or(0.0) >= 2.0
    });
    assert!(!firing(port, "TrafficCopJobOverdue", None), "overdue while running");

    for replica in &mut jobs {
        replica.kill();
    }
    // A cron job is overdue a minute after a due time with no run (its grace), plus `for:`.
    let overdue = wait_up_to(STEP * 3, "TrafficCopJobOverdue fires", &dir, || {
        firing(port, "TrafficCopJobOverdue", Some(LOCK))
    });
    let back = start(&job, "job-2");
    let resolved = wait_for("TrafficCopJobOverdue resolves", &dir, || {
        !firing(port, "TrafficCopJobOverdue", Some(LOCK))
    });
    drop(back);

    for _ in 0..3 {
        failed_run(&container);
    }
    let failing = wait_for("TrafficCopJobFailing fires", &dir, || {
        firing(port, "TrafficCopJobFailing", Some(LOCK))
    });

    watcher.kill();
    let unscraped =
        wait_for("TrafficCopNotScraped fires", &dir, || firing(port, "TrafficCopNotScraped", None));
    drop(prometheus);
    eprintln!(
        "prometheus story: running and scraped after {running:?}; overdue fired {overdue:?} after \
         the job replicas died, resolved {resolved:?} after one came back; failing fired \
         {failing:?} after the third failure; not-scraped fired {unscraped:?} after the last \
         replica died; {:.1} s in all",
        story.elapsed().as_secs_f64()
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![alerts_fire_and_resolve_on_a_real_prometheus_scraping_spin_replicas,]
}

//! guard@0.4.0's `hold` on real Spin 4.0.2 with trigger-cron 0.5.0: three replicas of a job
//! (harness/hold-job) whose run awaits one slow answer (90 s, from a server in this test) beside
//! `hold`, with a 15 s lease, against the async lease component. Judged through the counting
//! proxy in front of Azurite: every renewal names the run's lease id, no two lease requests of
//! the run are a lease period apart, nobody acquires while it runs, and the release comes last;
//! and from the replicas' logs: one run, every other tick skipped as held.

use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

use crate::run::{scratch, Background};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{cron_line, find_spin};

/// How long the job's one operation takes: six lease periods.
const SLOW: Duration = Duration::from_secs(90);
const LEASE: Duration = Duration::from_secs(15);

/// Answers every GET after [`SLOW`]; stops when dropped.
struct SlowServer {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl SlowServer {
    fn start() -> SlowServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut client) = client else { continue };
                let stopped = stopped.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let _ = client.read(&mut buf);
                    let until = Instant::now() + SLOW;
                    while Instant::now() < until && !stopped.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    let _ = client.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
                });
            }
        });
        SlowServer { port, stop }
    }
}

impl Drop for SlowServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn manifest(job: &std::path::Path, lease: &std::path::Path, storage: String, slow: u16) -> String {
    format!(
        r#"spin_manifest_version = 2

[application]
name = "hold-job"
version = "0.1.0"

[[trigger.cron]]
component = "hold-job"
cron_expression = "*/5 * * * * *"

[component.hold-job]
source = "{job}"
allowed_outbound_hosts = ["http://127.0.0.1:*"]
dependencies_inherit_configuration = true
environment = {{ CONNECTION_STRING = "{storage}", CONTAINER = "hold", SLOW_URL = "http://127.0.0.1:{slow}/slow" }}

[component.hold-job.dependencies]
"traffic-cop:lease" = {{ path = "{lease}" }}
"#,
        job = job.display(),
        lease = lease.display(),
    )
}

/// A request head's header, by name.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim())
}

fn a_job_awaiting_one_slow_operation_keeps_its_lease_the_whole_time() {
    let spin = require("real spin (hold)", find_spin());
    let data = require("real spin (hold, cron 0.5.0)", cron_line("0.5.0"));
    let (lease, job) = traffic_cop_testbed::built::async_components();
    let azurite = Azurite::start();
    let proxy = CountingProxy::start(azurite.port);
    let slow = SlowServer::start();
    let dir = scratch("hold");
    let storage = traffic_cop_testbed::azurite::connection_string_for_port(
        proxy.port,
        traffic_cop_testbed::EMULATOR_KEY_B64,
    );
    std::fs::write(dir.join("spin.toml"), manifest(&job, &lease, storage, slow.port)).unwrap();
    let started = Instant::now();
    let replicas: Vec<(Background, std::path::PathBuf)> = (0..3)
        .map(|i| {
            let replica = dir.join(format!("replica-{i}"));
            std::fs::create_dir_all(&replica).unwrap();
            let (manifest, logs) = (dir.join("spin.toml"), replica.join("logs"));
            let args =
                ["up", "-f", manifest.to_str().unwrap(), "--log-dir", logs.to_str().unwrap()];
            let env = [("SPIN_DATA_DIR".to_string(), data.display().to_string())];
            let life = SLOW + Duration::from_secs(60);
            (Background::start(&spin, &args, &env, &replica.join("spin.out"), life), replica)
        })
        .collect();
    let logs = || -> Vec<String> {
        replicas
            .iter()
            .map(|(_, dir)| {
                std::fs::read_to_string(dir.join("logs/hold-job_stdout.txt")).unwrap_or_default()
            })
            .collect()
    };
    let deadline = started + SLOW + Duration::from_secs(45);
    while Instant::now() < deadline && !logs().concat().contains(": completed: ") {
        std::thread::sleep(Duration::from_millis(500));
    }
    let seen = logs();
    let heads = proxy.heads();
    let outputs: Vec<String> = replicas
        .iter()
        .map(|(_, dir)| std::fs::read_to_string(dir.join("spin.out")).unwrap_or_default())
        .collect();
    drop(replicas);
    drop(slow);
    azurite.stop();
    let all = format!("{seen:#?}\nspin said: {outputs:#?}");
    let lines: Vec<&str> = seen.iter().flat_map(|l| l.lines()).collect();
    let runs: Vec<&&str> = lines.iter().filter(|l| l.contains(": run: ")).collect();
    assert!(
        lines.iter().any(|l| l.contains(": work done: Ok(200)")),
        "the work never ended: {all}"
    );
    assert!(lines.iter().any(|l| l.contains(": completed: Ok(())")), "{all}");
    assert!(!lines.iter().any(|l| l.contains("hold ended first")), "{all}");
    // Any run after the first starts once it completed; before that, every tick was held.
    let first_done = lines.iter().position(|l| l.contains(": completed: ")).unwrap();
    let during: Vec<&&str> = lines[..first_done].iter().filter(|l| l.contains(": run: ")).collect();
    assert!(!runs.is_empty());
    assert!(during.len() <= 1, "two runs while the first held its lease: {all}");
    let skips = lines.iter().filter(|l| l.contains(": skipped: held by")).count();
    assert!(skips >= 20, "fewer held skips than ticks during the run ({skips}): {all}");

    // What storage saw. The run's lease id is the one its renewals name.
    let lease_calls: Vec<(Duration, &str, Option<&str>)> = heads
        .iter()
        .filter_map(|(at, head)| {
            let action = header(head, "x-ms-lease-action")?;
            Some((*at, action, header(head, "x-ms-lease-id")))
        })
        .collect();
    let said = format!("lease requests: {lease_calls:#?}\n{all}");
    let first_renewal = lease_calls.iter().find(|(_, action, _)| *action == "renew");
    let id = first_renewal.and_then(|(_, _, id)| *id).unwrap_or_else(|| panic!("{said}"));
    let release = lease_calls
        .iter()
        .position(|(_, action, named)| *action == "release" && *named == Some(id))
        .unwrap_or_else(|| panic!("the run's lease was never released: {said}"));
    let renewals: Vec<&(Duration, &str, Option<&str>)> =
        lease_calls[..release].iter().filter(|(_, action, _)| *action == "renew").collect();
    assert!(renewals.iter().all(|(_, _, named)| *named == Some(id)), "{said}");
    let grant = lease_calls[..release]
        .iter()
        .rposition(|(_, action, _)| *action == "acquire")
        .unwrap_or_else(|| panic!("{said}"));
    let run = &lease_calls[grant..=release];
    assert!(run.iter().skip(1).all(|(_, action, _)| *action != "acquire"), "a takeover: {said}");
    let gaps: Vec<Duration> = run.windows(2).map(|pair| pair[1].0 - pair[0].0).collect();
    let longest = gaps.iter().max().copied().unwrap_or_default();
    assert!(longest < LEASE, "{longest:?} between two lease requests of the run: {said}");
    let held = run.last().unwrap().0 - run[0].0;
    assert!(held >= SLOW, "the run held its lease {held:?}: {said}");
    assert!(
        !lease_calls[release..]
            .iter()
            .any(|(_, action, named)| *action == "renew" && *named == Some(id)),
        "renewed after the release: {said}"
    );
    println!(
        "hold on real Spin: one {SLOW:?} operation, {} renewals, the longest gap {longest:?} \
         (lease {LEASE:?}), {skips} held skips by the other ticks, {:?} in all",
        renewals.len(),
        started.elapsed()
    );
    let _ = std::fs::remove_dir_all(dir);
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![a_job_awaiting_one_slow_operation_keeps_its_lease_the_whole_time]
}

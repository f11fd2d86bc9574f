//! `hold` (traffic-cop:lease/hold@0.5.0) on real Spin 4.0.2 with trigger-cron 0.5.0: three replicas of a job
//! (harness/hold-job) whose run awaits one slow answer (90 s, from a server in this test) beside
//! `hold`, with a 15 s lease, against the async lease component. Judged through the counting
//! proxy in front of Azurite: every renewal names the run's lease id, no two lease requests of
//! the run are a lease period apart, nobody acquires while it runs, and the release comes last;
//! and from the replicas' logs: one run, every other tick skipped as held. Then the holder is
//! frozen (SIGSTOP) until another replica has taken over, and continued: it is told to stop,
//! sends nothing more under its lease, and its fenced write is refused. And the holder is cut
//! off from storage: it is told to stop before its lease could expire and before a takeover.

use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

use crate::run::{scratch, Background};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::faults::{FaultPlan, FaultProxy};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{cron_line, find_spin};
use traffic_cop_testbed::EMULATOR_KEY_B64;

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

fn spin_toml(job: &std::path::Path, lease: &std::path::Path, storage: String, slow: u16) -> String {
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

/// Whether a fleet has started, so wasmtime's cache holds the composed app (see `Fleet::start`).
static WARM: std::sync::Mutex<bool> = std::sync::Mutex::new(false);

/// A request head's header, by name.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim())
}

/// Three replicas of the hold job, each behind a fault proxy of its own (passing everything
/// until partitioned), then the counting proxy, then Azurite.
struct Fleet {
    replicas: Vec<(Background, PathBuf)>,
    links: Vec<FaultProxy>,
    proxy: CountingProxy,
    azurite: Azurite,
    slow: SlowServer,
    dir: PathBuf,
    started: Instant,
}

impl Fleet {
    fn start(name: &str) -> Fleet {
        let spin = require("real spin (hold)", find_spin());
        let data = require("real spin (hold, cron 0.5.0)", cron_line("0.5.0"));
        let (lease, job) = traffic_cop_testbed::built::async_components();
        let azurite = Azurite::start();
        let proxy = CountingProxy::start(azurite.port);
        let slow = SlowServer::start();
        let dir = scratch(name);
        let mut links = Vec::new();
        // Spin compiles the composed app when it starts and keeps the result in wasmtime's
        // cache. Nine replicas (three tests) compiling at once starved the real-time stories
        // running beside them in a CI run, so the first replica of the first fleet compiles
        // alone, and every other replica finds the cache warm.
        let warming = WARM.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let warm = *warming;
        let mut warming = Some(warming);
        let replicas = (0..3)
            .map(|i| {
                let replica = dir.join(format!("replica-{i}"));
                std::fs::create_dir_all(&replica).unwrap();
                let link = FaultProxy::start(proxy.port, FaultPlan::quick(0, 0));
                let storage = connection_string_for_port(link.port, EMULATOR_KEY_B64);
                links.push(link);
                let manifest = replica.join("spin.toml");
                std::fs::write(&manifest, spin_toml(&job, &lease, storage, slow.port)).unwrap();
                let logs = replica.join("logs");
                let args =
                    ["up", "-f", manifest.to_str().unwrap(), "--log-dir", logs.to_str().unwrap()];
                let env = [("SPIN_DATA_DIR".to_string(), data.display().to_string())];
                let life = SLOW + Duration::from_secs(60);
                let spin_up =
                    Background::start(&spin, &args, &env, &replica.join("spin.out"), life);
                if !warm && i == 0 {
                    let log = replica.join("logs/hold-job_stdout.txt");
                    let until = Instant::now() + Duration::from_secs(60);
                    while Instant::now() < until && !log.is_file() {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
                if let Some(mut warming) = warming.take().filter(|_| i == 0) {
                    *warming = true;
                }
                (spin_up, replica)
            })
            .collect();
        let started = Instant::now();
        Fleet { replicas, links, proxy, azurite, slow, dir, started }
    }

    /// Each replica's job stdout.
    fn logs(&self) -> Vec<String> {
        self.replicas
            .iter()
            .map(|(_, dir)| {
                std::fs::read_to_string(dir.join("logs/hold-job_stdout.txt")).unwrap_or_default()
            })
            .collect()
    }

    /// Waits up to `within` (from the start) until `done` holds for the logs; the logs then.
    fn wait(&self, within: Duration, done: impl Fn(&[String]) -> bool) -> Vec<String> {
        while self.started.elapsed() < within && !done(&self.logs()) {
            std::thread::sleep(Duration::from_millis(300));
        }
        self.logs()
    }

    /// The logs, what Spin said, every lease request storage saw and when each look (a HEAD)
    /// came; everything stopped.
    fn stop(self) -> (Vec<String>, String, Vec<LeaseCall>, Vec<Duration>) {
        let logs = self.logs();
        let heads = self.proxy.heads();
        let outputs: Vec<String> = self
            .replicas
            .iter()
            .map(|(_, dir)| std::fs::read_to_string(dir.join("spin.out")).unwrap_or_default())
            .collect();
        drop(self.replicas);
        drop(self.links);
        drop(self.slow);
        self.azurite.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
        let calls = heads
            .iter()
            .filter_map(|(at, head)| {
                let action = header(head, "x-ms-lease-action")?.to_string();
                Some((*at, action, header(head, "x-ms-lease-id").map(str::to_string)))
            })
            .collect();
        let looks = heads.iter().filter(|(_, head)| head.starts_with("HEAD ")).map(|(at, _)| *at);
        let all = format!("{logs:#?}\nspin said: {outputs:#?}");
        (logs, all, calls, looks.collect())
    }
}

/// A lease request storage saw: when, its action, the lease id it named.
type LeaseCall = (Duration, String, Option<String>);

fn lines(logs: &[String]) -> Vec<&str> {
    logs.iter().flat_map(|l| l.lines()).collect()
}

fn a_job_awaiting_one_slow_operation_keeps_its_lease_the_whole_time() {
    let fleet = Fleet::start("hold");
    let started = fleet.started;
    fleet.wait(SLOW + Duration::from_secs(45), |logs| logs.concat().contains(": completed: "));
    let (seen, all, lease_calls, looks) = fleet.stop();
    let lines = lines(&seen);
    let runs: Vec<&&str> = lines.iter().filter(|l| l.contains(": run: ")).collect();
    assert!(
        lines.iter().any(|l| l.contains(": work done: Ok(200)")),
        "the work never ended: {all}"
    );
    assert!(lines.iter().any(|l| l.contains(": fenced write: Ok(")), "{all}");
    assert!(lines.iter().any(|l| l.contains(": completed: Ok(())")), "{all}");
    assert!(!lines.iter().any(|l| l.contains("hold ended first")), "{all}");
    // Any run after the first starts once it completed; before that, every tick was held.
    let first_done = lines.iter().position(|l| l.contains(": completed: ")).unwrap();
    let during: Vec<&&str> = lines[..first_done].iter().filter(|l| l.contains(": run: ")).collect();
    assert!(!runs.is_empty());
    assert!(during.len() <= 1, "two runs while the first held its lease: {all}");
    let skips = lines.iter().filter(|l| l.contains("] skipped: held by")).count();
    assert!(skips >= 20, "fewer held skips than ticks during the run ({skips}): {all}");

    // What storage saw. The run's lease id is the one its renewals name.
    let said = format!("lease requests: {lease_calls:#?}\n{all}");
    let first_renewal = lease_calls.iter().find(|(_, action, _)| action == "renew");
    let id = first_renewal.and_then(|(_, _, id)| id.clone()).unwrap_or_else(|| panic!("{said}"));
    let named = |call: &LeaseCall| call.2.as_deref() == Some(id.as_str());
    let release = lease_calls
        .iter()
        .position(|call| call.1 == "release" && named(call))
        .unwrap_or_else(|| panic!("the run's lease was never released: {said}"));
    let renewals = lease_calls[..release].iter().filter(|call| call.1 == "renew").count();
    assert!(lease_calls[..release].iter().filter(|c| c.1 == "renew").all(named), "{said}");
    let grant = lease_calls[..release]
        .iter()
        .rposition(|call| call.1 == "acquire")
        .unwrap_or_else(|| panic!("{said}"));
    let run = &lease_calls[grant..=release];
    assert!(run.iter().skip(1).all(|call| call.1 != "acquire"), "a takeover: {said}");
    let gaps: Vec<Duration> = run.windows(2).map(|pair| pair[1].0 - pair[0].0).collect();
    let longest = gaps.iter().max().copied().unwrap_or_default();
    assert!(longest < LEASE, "{longest:?} between two lease requests of the run: {said}");
    let held = run.last().unwrap().0 - run[0].0;
    assert!(held >= SLOW, "the run held its lease {held:?}: {said}");
    assert!(
        !lease_calls[release..].iter().any(|call| call.1 == "renew" && named(call)),
        "renewed after the release: {said}"
    );
    // What a follower's tick cost while the run held the lock: its look, nothing more (up to
    // the last renewal: the run's own fenced write then looks at the lock too).
    let last_renewal = run.iter().rev().find(|call| call.1 == "renew").unwrap().0;
    let (from, to) = (run[0].0, last_renewal);
    let looks_during = looks.iter().filter(|at| (from..to).contains(at)).count();
    assert!(looks_during <= skips, "{looks_during} looks for {skips} held ticks: {said}");
    println!(
        "hold on real Spin: one {SLOW:?} operation, {renewals} renewals (one per {:.1} s), the \
         longest gap {longest:?} (lease {LEASE:?}), {skips} held skips by the other ticks, \
         {looks_during} looks at the lock while it ran, {:?} in all",
        held.as_secs_f64() / renewals.max(1) as f64,
        started.elapsed()
    );
}

/// The holder frozen (SIGSTOP) mid-run until another replica has taken the lease over, then
/// continued: its `hold` says the lease ran out at once, with nothing more sent under it, and
/// its fenced write is refused.
fn a_holder_frozen_past_its_lease_is_told_to_stop_and_its_fenced_write_is_refused() {
    let fleet = Fleet::start("hold-stop");
    let run_by = |logs: &[String]| logs.iter().position(|l| l.contains(": run: "));
    let logs = fleet.wait(Duration::from_secs(40), |logs| run_by(logs).is_some());
    let holder = run_by(&logs).unwrap_or_else(|| panic!("no run: {logs:#?}"));
    // A renewal or two first, then frozen.
    std::thread::sleep(Duration::from_secs(7));
    fleet.replicas[holder].0.pause();
    let frozen_at = fleet.started.elapsed();
    let taken = |logs: &[String]| {
        logs.iter().enumerate().any(|(i, l)| i != holder && l.contains(": run: "))
    };
    let seen = fleet.wait(frozen_at + Duration::from_secs(40), taken);
    let took_over = taken(&seen);
    fleet.replicas[holder].0.resume();
    let told = |logs: &[String]| logs[holder].contains(": fenced write: ");
    if took_over {
        fleet.wait(fleet.started.elapsed() + Duration::from_secs(15), told);
    }
    let (seen, all, lease_calls, _) = fleet.stop();
    assert!(took_over, "no replica took the lease over while the holder was frozen: {all}");
    let stopped = &seen[holder];
    let ended = stopped.lines().find(|l| l.contains(": hold ended first, the work stopped: "));
    let ended = ended.unwrap_or_else(|| panic!("the frozen holder was never told: {all}"));
    // Blocked: the instance did not run when a renewal was due, and says from when to when.
    assert!(
        ended.contains("LeaseRanOut")
            && ended.contains("Blocked")
            && ended.contains("this instance did not run from"),
        "{ended}\n{all}"
    );
    let fenced = stopped.lines().find(|l| l.contains(": fenced write: ")).unwrap();
    assert!(
        fenced.contains("Err(FencedError::StaleFencingToken"),
        "its fenced write went through: {fenced}\n{all}"
    );
    // Storage never heard from the frozen run's lease after the takeover's grant.
    let said = format!("lease requests: {lease_calls:#?}\n{all}");
    let takeover = lease_calls
        .iter()
        .rposition(|call| call.1 == "acquire")
        .unwrap_or_else(|| panic!("{said}"));
    let first_id = lease_calls.iter().find(|c| c.1 == "renew").and_then(|c| c.2.clone());
    assert!(first_id.is_some(), "the holder renewed before it was frozen: {said}");
    assert!(
        !lease_calls[takeover..].iter().any(|c| c.1 == "renew" && c.2 == first_id),
        "the frozen run renewed after the takeover: {said}"
    );
    println!("hold on real Spin: frozen holder told {ended:?}; {fenced:?}");
}

/// The holder cut off from storage mid-run (its own proxy blackholes every request, as a cut
/// network looks from inside): `hold` tells it to stop before its lease could expire on the
/// service, and before another replica takes over. (The margin itself is judged on virtual
/// time: tests/native/hold.rs.)
fn a_holder_cut_off_from_storage_is_told_to_stop_before_its_lease_expires() {
    let fleet = Fleet::start("hold-cut");
    let run_by = |logs: &[String]| logs.iter().position(|l| l.contains(": run: "));
    let logs = fleet.wait(Duration::from_secs(40), |logs| run_by(logs).is_some());
    let holder = run_by(&logs).unwrap_or_else(|| panic!("no run: {logs:#?}"));
    std::thread::sleep(Duration::from_secs(7));
    fleet.links[holder].partition(true);
    let cut_at = fleet.proxy.started.elapsed();
    let told = |logs: &[String]| logs[holder].contains(": hold ended first");
    let mut told_at = None;
    while told_at.is_none() && fleet.proxy.started.elapsed() < cut_at + Duration::from_secs(30) {
        if told(&fleet.logs()) {
            told_at = Some(fleet.proxy.started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let taken = |logs: &[String]| {
        logs.iter().enumerate().any(|(i, l)| i != holder && l.contains(": run: "))
    };
    fleet.wait(fleet.started.elapsed() + Duration::from_secs(30), taken);
    let (seen, all, lease_calls, _) = fleet.stop();
    let said = format!(
        "cut off at {cut_at:?}, told at {told_at:?}\nlease requests: {lease_calls:#?}\n{all}"
    );
    let told_at = told_at.unwrap_or_else(|| panic!("the cut-off holder was never told: {said}"));
    let ended = seen[holder].lines().find(|l| l.contains(": hold ended first")).unwrap();
    assert!(ended.contains("LeaseRanOut") && ended.contains("WhileHolding"), "{ended}\n{said}");
    let id = lease_calls.iter().find(|c| c.1 == "renew").and_then(|c| c.2.clone());
    let last_renewal = lease_calls
        .iter()
        .filter(|c| c.1 == "renew" && c.2 == id)
        .map(|c| c.0)
        .max()
        .unwrap_or_else(|| panic!("the holder never renewed: {said}"));
    let expires = last_renewal + LEASE;
    assert!(told_at < expires, "told after the lease could expire ({expires:?}): {said}");
    let takeover = lease_calls.iter().find(|c| c.1 == "acquire" && c.0 > last_renewal);
    let takeover = takeover.unwrap_or_else(|| panic!("no takeover: {said}"));
    assert!(told_at < takeover.0, "told after another replica took over: {said}");
    assert!(taken(&seen), "{said}");
    println!(
        "hold on real Spin: cut off from storage, told to stop {:?} after its last renewal, {:?} \
         before the lease could expire, {:?} before the takeover",
        told_at - last_renewal,
        expires - told_at,
        takeover.0 - told_at
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_job_awaiting_one_slow_operation_keeps_its_lease_the_whole_time,
        a_holder_frozen_past_its_lease_is_told_to_stop_and_its_fenced_write_is_refused,
        a_holder_cut_off_from_storage_is_told_to_stop_before_its_lease_expires,
    ]
}

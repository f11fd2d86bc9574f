//! The operator's verbs on real Spin (issue 22): three `spin up` replicas of the app (cron
//! trigger every 2 s, the guard's schedule every 5 s, 3 s of work), driven through the HTTP
//! component's protected routes. A deploy done the documented way: pause with a drain while a
//! run is in progress (the answer comes once it has completed), stop every replica, start the
//! new ones; the job stays paused for three due times on every replica; two run-now calls
//! while paused change nothing; resume, and one manual run follows, then the schedule. No run
//! is abandoned by the deploy.

use crate::spin::decisions::{decisions, Decision};
use crate::story::{self, Node};
use serde_json::Value;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::docs;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{
    assert_built, cron_line, find_spin, http_with, manifest_copy, Launch,
};
use traffic_cop_wasm_host::component::{fresh, v1};

const TOKEN: &str = "operator-story-token";
const DUE_EVERY_S: u64 = 5;

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The `curl` of docs/operations.md's `example` sent to `node`: its method, its header (`$auth`
/// with this story's token) and its path and query; the JSON answer.
fn operate(node: &Node, example: &str) -> Value {
    let auth = format!("Authorization: Bearer {TOKEN}");
    let text = docs::replaced(&docs::example(example), &[("$auth", &auth)]);
    let curl = docs::shell_commands(&text).into_iter().find(|c| c.program == "curl");
    let curl = docs::curl(&curl.unwrap_or_else(|| panic!("no curl in {example}: {text}")));
    let curl = curl.unwrap_or_else(|e| panic!("{example}: {e}"));
    let headers: Vec<(&str, &str)> =
        curl.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let path_and_query = &curl.path;
    let (status, body) = http_with(
        node.replica.port,
        &curl.method,
        path_and_query,
        &headers,
        Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("{path_and_query}: {e}"));
    assert_eq!(status, 200, "{path_and_query}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path_and_query}: {e}: {body}"))
}

/// With `board_token` set, a browser (headless Chromium) that opens `/status.html` is asked
/// for the token (HTTP Basic: any user name, the token as the password) and, given it, shows
/// the board; given a wrong one, or none, it gets the 401.
fn the_board_asks_a_browser_for_the_token(node: &Node, dir: &std::path::Path) {
    let chromium = require("chromium", crate::run::on_path("chromium"));
    let page = |credentials: &str, name: &str| {
        let url = format!("http://{credentials}127.0.0.1:{}/status.html", node.replica.port);
        crate::run::run(
            std::process::Command::new(&chromium)
                .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
                .args(["--disable-background-networking", "--disable-component-update"])
                .arg(format!("--user-data-dir={}", dir.join(format!("chromium-{name}")).display()))
                .arg("--dump-dom")
                .arg(url),
            Duration::from_secs(60),
        )
    };
    let signed_in = page(&format!("ops:{TOKEN}@"), "token");
    assert!(
        signed_in.stdout.contains("<title>") && signed_in.stdout.contains(story::LOCK),
        "the browser given the token did not show the board: {}",
        signed_in.said()
    );
    let wrong = page("ops:not-the-token@", "wrong");
    assert!(
        !wrong.stdout.contains(story::LOCK),
        "a wrong token showed the board: {}",
        wrong.said()
    );
    // What the browser was answered without the token, or with a wrong one: a 401 that asks.
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode("ops:not-the-token");
    for authorization in [None, Some(format!("Basic {basic}"))] {
        let head = raw_get(node.replica.port, "/status.html", authorization.as_deref());
        assert!(
            head.starts_with("HTTP/1.1 401")
                && head
                    .to_ascii_lowercase()
                    .contains("www-authenticate: basic realm=\"traffic-cop\""),
            "{authorization:?}: {head}"
        );
    }
}

/// The status line and headers of `GET path` on a replica, as a browser would first see them.
fn raw_get(port: u16, path: &str, authorization: Option<&str>) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = authorization.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.split("\r\n\r\n").next().unwrap_or_default().to_string()
}

fn runs<'a>(nodes: impl IntoIterator<Item = &'a Node>) -> Vec<Decision> {
    let mut runs: Vec<Decision> = nodes.into_iter().flat_map(decisions).filter(|d| d.run).collect();
    runs.sort_by_key(|d| d.token);
    runs
}

fn pause_drain_deploy_run_now_and_resume_on_real_spin() {
    let spin = require("real spin (operator)", find_spin());
    let data = require("real spin (cron 0.5.0)", cron_line("0.5.0"));
    assert_built();
    let started = Instant::now();
    let dir = story::story_dir("operator");
    let launch = Launch {
        spin,
        data_dir: Some(data),
        manifest: manifest_copy(&dir.join("app"), "*/2 * * * * *"),
        component: None,
        lifetime: Duration::from_secs(240),
        env: Vec::new(),
    };
    let container = format!("operator{}", std::process::id());
    let variables = [
        ("schedule", format!("*/{DUE_EVERY_S} * * * * *")),
        ("work_ms", "3000".to_string()),
        ("board_token", TOKEN.to_string()),
        ("board_cache_seconds", "0".to_string()),
    ];
    let mut old = story::start_nodes_with(&launch, &dir, &container, "old", 3, &variables);
    wait_until(Duration::from_secs(30), "the lock on the board", || {
        story::lock_entry(&container).is_some()
    });
    the_board_asks_a_browser_for_the_token(&old[0], &dir);

    // A run in progress, after at least one completed.
    wait_until(Duration::from_secs(60), "a second run in progress", || {
        story::lock_entry(&container).is_some_and(|e| e.running && e.fencing_token >= 2)
    });
    let draining = story::lock_entry(&container).unwrap().fencing_token;
    let asked_ms = now_ms();
    let paused = operate(&old[0], "operator-pause");
    let paused_ms = now_ms();
    assert_eq!(paused["paused_by"], "alice", "{paused}");
    assert_eq!(paused["running"], false, "the drain returned with a run in progress: {paused}");
    let drained = runs(&old);
    assert!(
        drained.iter().any(|d| d.token == Some(draining)),
        "the run in progress (token {draining}) did not complete before the drain answered: \
         {drained:#?}"
    );

    // The deploy: every old replica stops (SIGTERM, as Kubernetes sends), new ones start.
    for node in &mut old {
        node.replica.signal("TERM");
    }
    for node in &mut old {
        let _ = node.replica.wait_exit(Duration::from_secs(20));
        node.replica.kill();
    }
    let new = story::start_nodes_with(&launch, &dir, &container, "new", 3, &variables);
    // Three due times on the new replicas, all paused.
    let first_new_tick = now_ms();
    std::thread::sleep(Duration::from_millis(3 * DUE_EVERY_S * 1000 + 1000));
    for node in &new {
        let skips: Vec<Decision> = decisions(node);
        assert!(
            skips.iter().filter(|d| d.reason.as_deref() == Some("paused")).count() >= 3,
            "{} did not skip paused: {skips:#?}",
            node.holder
        );
    }
    // Two run-now calls while paused: the job stays paused.
    let asked = operate(&new[0], "operator-run-now");
    assert_eq!((&asked["run_now_by"], &asked["paused_by"]), (&"alice".into(), &"alice".into()));
    operate(&new[1], "operator-run-now");
    std::thread::sleep(Duration::from_millis(4_500));
    let while_paused: Vec<Decision> = runs(old.iter().chain(&new))
        .into_iter()
        .filter(|d| d.tick_s.is_some_and(|t| t * 1000 > asked_ms))
        .collect();
    assert!(while_paused.is_empty(), "runs while paused: {while_paused:#?}");

    let resumed = operate(&new[2], "operator-resume");
    let resumed_ms = now_ms();
    assert!(resumed["paused_by"].is_null(), "{resumed}");
    assert_eq!(resumed["run_now_by"], "alice", "the run-now waits for the next tick: {resumed}");
    // No run since the drained one (checked above): every later token came after the resume.
    // (A tick's scheduled second can precede the resume's answer: the record is written first.)
    // A run's line is printed when its 3 s of work are done: wait for three of them.
    let after_resume = || -> Vec<Decision> {
        runs(&new).into_iter().filter(|d| d.token.is_some_and(|t| t > draining)).collect()
    };
    let deadline = Instant::now() + Duration::from_secs(6 * DUE_EVERY_S);
    while after_resume().len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
    }
    let after = after_resume();
    let all = format!("{after:#?}");
    let manual: Vec<&Decision> = after.iter().filter(|d| d.manual_by.is_some()).collect();
    assert_eq!(manual.len(), 1, "two run-now calls make one manual run: {all}");
    assert_eq!(manual[0].manual_by.as_deref(), Some("alice"));
    assert_eq!(after.first().map(|d| d.token), Some(manual[0].token), "manual run first: {all}");
    let scheduled: Vec<&Decision> = after.iter().filter(|d| d.manual_by.is_none()).collect();
    assert!(scheduled.len() >= 2, "the schedule did not go on after resume: {all}");
    let mut dues: Vec<u64> = scheduled.iter().map(|d| d.due_s.unwrap()).collect();
    dues.dedup();
    assert_eq!(dues.len(), scheduled.len(), "one run per due time: {all}");
    // The first scheduled run catches up once for the due times the pause skipped.
    let skipped = (resumed_ms - paused_ms) / 1000 / DUE_EVERY_S;
    assert!(scheduled[0].missed.unwrap() + 1 >= skipped, "missed {skipped}: {all}");

    // No run was abandoned by the deploy, and the board says so.
    let connection_string = story::location(&container).connection_string;
    let settings =
        v1::Settings { lock: None, ..v1::settings(&connection_string, &container, "", "board") };
    let board = fresh().board(&settings).unwrap();
    let entry = board.locks.iter().find(|e| e.name == story::LOCK).expect("the job's lock");
    assert_eq!(entry.totals.abandoned, 0, "a run was abandoned: {:#?}", entry.history);
    assert!(entry.paused.is_none() && entry.run_now_by.is_none(), "{entry:#?}");
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "measured: operator story: drain answered in {} ms; {} runs after resume; took {:.1} s \
         (the new replicas were up {} ms after the pause answered)",
        paused_ms - asked_ms,
        after.len(),
        started.elapsed().as_secs_f64(),
        first_new_tick - paused_ms
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![pause_drain_deploy_run_now_and_resume_on_real_spin,]
}

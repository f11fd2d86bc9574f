//! `GET /metrics` of the HTTP component in the test host against Azurite: the series follow the
//! lock's runs (a success through `/run`, failures of another replica through the lease
//! component), Prometheus' own `promtool check metrics` accepts the text format, OpenMetrics is
//! served when asked for, answers are cached in Spin key-value for `board_cache_seconds`, and
//! the routes are exact and guarded by `board_token`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;
use traffic_cop_wasm_host::apps::{App, HttpAnswer};
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome};
use traffic_cop_wasm_host::component::{fresh, Host};

const TOKEN: &str = "metrics-test-token";
const LOCK: &str = "billing";
/// Due every second: each tick below is for a due time of its own.
const EVERY_SECOND: &str = "* * * * * *";

fn app() -> App {
    App::load(&Host::shared().engine, "http_job").unwrap()
}

fn variables(container: &str, cache_seconds: u64) -> BTreeMap<String, String> {
    [
        ("connection_string", Azurite::shared().connection_string()),
        ("container", container.to_string()),
        ("lock", LOCK.to_string()),
        ("holder", "web-0".to_string()),
        ("lease_seconds", "15".to_string()),
        ("schedule", EVERY_SECOND.to_string()),
        ("board_token", TOKEN.to_string()),
        ("board_cache_seconds", cache_seconds.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn get(app: &App, vars: &BTreeMap<String, String>, path: &str, accept: &str) -> HttpAnswer {
    let bearer = format!("Bearer {TOKEN}");
    let headers = [("authorization", bearer.as_str()), ("accept", accept)];
    app.serve_with(vars, "GET", path, &headers, None).unwrap()
}

fn post(app: &App, vars: &BTreeMap<String, String>, path: &str) -> HttpAnswer {
    let bearer = format!("Bearer {TOKEN}");
    app.serve_with(vars, "POST", path, &[("authorization", bearer.as_str())], None).unwrap()
}

/// One run of `lock` by another replica of the job, through the lease component, ended with
/// `outcome`.
pub fn run_elsewhere(container: &str, lock: &str, outcome: Outcome) {
    let settings = v1::Settings {
        lease_seconds: Some("15".into()),
        schedule: Some(EVERY_SECOND.into()),
        ..v1::settings(&Azurite::shared().connection_string(), container, lock, "worker-9")
    };
    // The next second is a due time of its own.
    let next = traffic_cop_testbed::unix_secs() + 1;
    traffic_cop_testbed::sleep_until_unix(next, 100);
    let mut instance = fresh();
    match instance.guarded_invoke(&settings) {
        Decision::Run(run) => {
            let finished = instance.run_complete(run, &outcome);
            assert!(finished.error.is_none(), "{finished:?}");
        }
        Decision::Skip(skipped) => panic!("worker-9 was not granted: {skipped:?}"),
    }
}

/// The value of the sample `name{labels…}` whose labels contain `with`.
fn sample(text: &str, name: &str, with: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with(&format!("{name}{{")) && l.contains(with))
        .find_map(|l| l.rsplit(' ').next()?.parse().ok())
}

fn promtool_check_metrics(text: &str) -> Result<(), String> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("promtool not found ({e}); apt-get install prometheus"))?;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(())
    } else {
        Err(said)
    }
}

fn metrics_follow_the_runs_and_promtool_accepts_them() {
    // Found before anything is run, so a machine without it reports the test as skipped.
    require(
        "promtool",
        Command::new("promtool").arg("--version").output().map_err(|e| e.to_string()),
    );
    let (app, container) = (app(), format!("metrics{}", std::process::id()));
    let vars = variables(&container, 0);
    let ran = post(&app, &vars, "/run");
    assert!(ran.body.contains("\"decision\":\"run\""), "{}", ran.body);
    for _ in 0..3 {
        run_elsewhere(&container, LOCK, Outcome::Failure("upstream said 503".into()));
    }
    let text = get(&app, &vars, "/metrics", "text/plain").body;
    let lock = format!("lock=\"{LOCK}\"");
    let value = |name: &str| sample(&text, name, &lock);
    assert_eq!(value("traffic_cop_storage_up"), None, "storage_up has no lock label");
    assert_eq!(sample(&text, "traffic_cop_storage_up", &container), Some(1.0), "{text}");
    let runs =
        |outcome: &str| sample(&text, "traffic_cop_runs_total", &format!("outcome=\"{outcome}\""));
    assert_eq!(
        (runs("success"), runs("failure"), runs("abandoned")),
        (Some(1.0), Some(3.0), Some(0.0)),
        "{text}"
    );
    assert_eq!(value("traffic_cop_consecutive_failures"), Some(3.0), "{text}");
    assert_eq!(value("traffic_cop_fencing_token"), Some(4.0), "{text}");
    assert_eq!((value("traffic_cop_running"), value("traffic_cop_held")), (Some(0.0), Some(0.0)));
    assert_eq!(value("traffic_cop_paused"), Some(0.0), "{text}");
    let success = value("traffic_cop_last_success_timestamp_seconds").expect("a success");
    let failure = value("traffic_cop_last_failure_timestamp_seconds").expect("a failure");
    assert!(success < failure, "the success came first: {text}");
    let now = traffic_cop_testbed::unix_secs() as f64;
    assert!((now - 60.0..=now + 5.0).contains(&failure), "{failure} is not a recent time");
    let next = value("traffic_cop_next_due_timestamp_seconds").expect("a next due time");
    assert!(next > failure && next.fract() == 0.0, "next due {next} after {failure}");
    promtool_check_metrics(&text).unwrap_or_else(|e| panic!("promtool: {e}\n{text}"));

    // A pause shows at once; the operator's answer says it.
    let paused = post(&app, &vars, "/pause?by=ops&reason=deploy");
    assert_eq!(paused.status, 200, "{}", paused.body);
    let text = get(&app, &vars, "/metrics", "text/plain").body;
    assert_eq!(sample(&text, "traffic_cop_paused", &lock), Some(1.0), "{text}");
    assert_eq!(sample(&text, "traffic_cop_overdue", &lock), Some(0.0), "paused is not overdue");
    promtool_check_metrics(&text).unwrap_or_else(|e| panic!("promtool: {e}\n{text}"));

    // OpenMetrics when asked for, as Prometheus asks: families without `_total`, units, EOF.
    let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let open = get(&app, &vars, "/metrics", accept);
    assert!(open.content_type.starts_with("application/openmetrics-text"), "{}", open.content_type);
    assert!(open.body.ends_with("# EOF\n"), "{}", open.body);
    assert!(open.body.contains("# TYPE traffic_cop_runs counter\n"), "{}", open.body);
    assert!(open.body.contains("# UNIT traffic_cop_last_duration_seconds seconds\n"));
    assert!(open.body.contains("traffic_cop_runs_total{"), "{}", open.body);
    assert!(!open.body.contains(TOKEN) && !open.body.contains("AccountKey"), "no secret");
}

fn a_metrics_answer_is_served_from_key_value_for_board_cache_seconds() {
    let (app, container) = (app(), format!("cached{}", std::process::id()));
    let token = |answer: HttpAnswer| {
        sample(&answer.body, "traffic_cop_fencing_token", LOCK)
            .unwrap_or_else(|| panic!("{}", answer.body))
    };
    // Cached for 30 s: no test step takes that long, so the second answer must be the cached one.
    let long = variables(&container, 30);
    let ran = post(&app, &long, "/run");
    assert!(ran.body.contains("\"decision\":\"run\""), "{}", ran.body);
    assert_eq!(token(get(&app, &long, "/metrics", "")), 1.0);
    run_elsewhere(&container, LOCK, Outcome::Success(String::new()));
    assert_eq!(token(get(&app, &long, "/metrics", "")), 1.0, "served from the cache");
    // A fresh replica (its own key-value store) lists at once; with a 2 s cache it lists again
    // once its answer is stale.
    let (other, short) = (self::app(), variables(&container, 2));
    assert_eq!(token(get(&other, &short, "/metrics", "")), 2.0);
    run_elsewhere(&container, LOCK, Outcome::Success(String::new()));
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(token(get(&other, &short, "/metrics", "")), 3.0, "listed again once stale");
}

fn routes_are_exact_and_need_the_board_token_when_it_is_set() {
    let app = app();
    let container = format!("routes{}", std::process::id());
    let protected = variables(&container, 0);
    let send = |vars: &BTreeMap<String, String>, method: &str, path: &str, auth: Option<&str>| {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
        app.serve_with(vars, method, path, &headers, None).unwrap()
    };
    let bearer = format!("Bearer {TOKEN}");
    for (method, path) in
        [("GET", "/metrics"), ("GET", "/status"), ("POST", "/run"), ("POST", "/pause?by=x")]
    {
        assert_eq!(
            send(&protected, method, path, None).status,
            401,
            "{method} {path} without a token"
        );
        let wrong = send(&protected, method, path, Some("Bearer metrics-test-tokeX"));
        assert_eq!(wrong.status, 401, "{method} {path} with a wrong token");
        assert!(!wrong.body.contains(TOKEN), "the token is never echoed");
    }
    assert_eq!(send(&protected, "GET", "/metrics", Some(&bearer)).status, 200);
    for path in ["/x/metrics", "/metricsx", "/x/run"] {
        assert_eq!(send(&protected, "GET", path, Some(&bearer)).status, 404, "{path}");
    }
    // Without a token: the board and /metrics are open, the operator's routes do not exist,
    // and /run on a job without a schedule is refused (anyone could run it at will).
    let mut open = protected.clone();
    open.insert("board_token".into(), String::new());
    assert_eq!(send(&open, "GET", "/metrics", None).status, 200);
    assert_eq!(send(&open, "POST", "/pause?by=x", None).status, 404);
    open.insert("schedule".into(), String::new());
    let refused = send(&open, "POST", "/run", None);
    assert_eq!(refused.status, 403, "{}", refused.body);
    // A container nothing created is an empty board.
    let settings = v1::settings(&Azurite::shared().connection_string(), &container, LOCK, "web-0");
    let board = fresh().board(&settings).expect("a board");
    assert!(board.locks.is_empty(), "no refused request touched a lock: {board:?}");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        metrics_follow_the_runs_and_promtool_accepts_them,
        a_metrics_answer_is_served_from_key_value_for_board_cache_seconds,
        routes_are_exact_and_need_the_board_token_when_it_is_set,
    ]
}

//! The settings check and misconfiguration, through the Spin app's components in the test host
//! against Azurite: `GET /check` names each variable to fix, shows the next due times in the
//! job's zone and in UTC, and reaches storage without creating the lock; a misconfigured tick
//! is an error that names the variable (the cron event fails, `POST /run` answers 500), and
//! `/metrics` carries `traffic_cop_misconfigured{variable=…}` for the alert rule.

use std::collections::BTreeMap;
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::runner::Test;
use traffic_cop_wasm_host::apps::App;
use traffic_cop_wasm_host::component::Host;

/// The emulator's account with the key's first letter changed: it decodes, and signs wrongly.
const WRONG_KEY: &str =
    "Xby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

fn vars(container: &str, changes: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut vars: BTreeMap<String, String> = [
        ("connection_string", Azurite::shared().connection_string()),
        ("container", container.to_string()),
        ("lock", "nightly-cleanup".to_string()),
        ("holder", "web-0".to_string()),
        ("lease_seconds", "15".to_string()),
        ("schedule", "0 0 2 * * Mon-Fri".to_string()),
        ("time_zone", "Europe/Berlin".to_string()),
        ("board_cache_seconds", "0".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (name, value) in changes {
        vars.insert(name.to_string(), value.to_string());
    }
    vars
}

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

fn good_settings_check_reaches_storage_and_creates_nothing() {
    let http = App::load(&Host::shared().engine, "http_job").unwrap();
    let container = format!("check{}", std::process::id());
    let vars = vars(&container, &[]);
    let (status, _, body) = http.http(&vars, "GET", "/check").unwrap();
    assert_eq!(status, 200, "{body}");
    let answer = json(&body);
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["time_zone"], "Europe/Berlin");
    let due = answer["next_due"].as_array().unwrap();
    assert_eq!(due.len(), 5, "{body}");
    for time in due {
        let (local, utc) = (time["local"].as_str().unwrap(), time["utc"].as_str().unwrap());
        // 02:00 on the Berlin wall clock, 01:00 or 00:00 UTC by the season.
        assert!(local.contains("T02:00:00+0"), "{local}");
        assert!(
            utc.ends_with(":00:00Z") && (utc.contains("T01:") || utc.contains("T00:")),
            "{utc}"
        );
    }
    assert_eq!(answer["storage"]["reached"], true, "{body}");
    assert!(answer["storage"]["lock"].as_str().unwrap().starts_with("missing"), "{body}");
    assert!(!body.contains("Eby8vdM02x"), "the key stays out of the answer: {body}");
    // Nothing was created: the board of that container is still empty.
    let (_, _, board) = http.http(&vars, "GET", "/status").unwrap();
    assert_eq!(json(&board)["locks"].as_array().map(Vec::len), Some(0), "{board}");
}

fn a_bad_setting_is_named_by_its_variable() {
    let http = App::load(&Host::shared().engine, "http_job").unwrap();
    let container = format!("checkbad{}", std::process::id());
    for (changes, variable) in [
        (vec![("time_zone", "Europe/Berln")], "time_zone"),
        (vec![("lease_seconds", "5")], "lease_seconds"),
        (vec![("schedule", "0 0 25 * * *")], "schedule"),
        (vec![("lock", "a//b")], "lock"),
        (vec![("lease_seconds", "fifteen")], "lease_seconds"),
    ] {
        let (status, _, body) = http.http(&vars(&container, &changes), "GET", "/check").unwrap();
        assert_eq!(status, 422, "{changes:?}: {body}");
        let answer = json(&body);
        assert_eq!(answer["ok"], false);
        assert_eq!(answer["problems"][0]["variable"], variable, "{changes:?}: {body}");
    }
    let port = Azurite::shared().port;
    let wrong = vars(&container, &[]).into_iter().map(|(k, v)| match k.as_str() {
        "connection_string" => (k, connection_string_for_port(port, WRONG_KEY)),
        _ => (k, v),
    });
    let (status, _, body) = http.http(&wrong.collect(), "GET", "/check").unwrap();
    assert_eq!(status, 422, "{body}");
    let answer = json(&body);
    assert_eq!(answer["problems"].as_array().map(Vec::len), Some(0), "{body}");
    assert_eq!(answer["storage"]["reached"], false);
    let error = answer["storage"]["error"].as_str().unwrap();
    assert!(error.contains("wrong account key"), "{error}");
    assert!(!body.contains(WRONG_KEY), "the key stays out of the answer: {body}");
}

fn a_misconfigured_tick_is_an_error_naming_the_variable_and_a_metric() {
    let host = Host::shared();
    let (cron, http) = (
        App::load(&host.engine, "cron_job").unwrap(),
        App::load(&host.engine, "http_job").unwrap(),
    );
    let container = format!("misconf{}", std::process::id());
    let berln = vars(&container, &[("time_zone", "Europe/Berln")]);
    let error = cron.cron_tick(&berln, 1_795_697_220, None).expect_err("the event fails");
    assert!(error.ends_with("] error: set the `time_zone` variable: unknown time zone \"Europe/Berln\": expected an IANA name such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\" (tzdata 2026f)"), "{error}");

    let answer = http.serve(&berln, "POST", "/run", None).unwrap();
    assert_eq!(answer.status, 500, "{}", answer.body);
    let report = json(&answer.body);
    assert_eq!(report["decision"], "error");
    assert_eq!(report["variable"], "time_zone");
    assert!(
        answer.stdout.contains("[web-0] error: set the `time_zone` variable"),
        "{}",
        answer.stdout
    );

    let sample = "traffic_cop_misconfigured{variable=\"time_zone\"} 1";
    let (_, _, metrics) = http.http(&berln, "GET", "/metrics").unwrap();
    assert!(metrics.contains(sample), "{metrics}");
    // Variables that cannot even be read still answer /metrics, naming the variable.
    let unreadable = vars(&container, &[("lease_seconds", "fifteen")]);
    let (status, _, metrics) = http.http(&unreadable, "GET", "/metrics").unwrap();
    assert_eq!(status, 200);
    assert!(
        metrics.contains("traffic_cop_misconfigured{variable=\"lease_seconds\"} 1"),
        "{metrics}"
    );
    let (status, _, said) = http.http(&unreadable, "POST", "/run").unwrap();
    assert_eq!((status, said.contains("`lease_seconds`")), (500, true), "{said}");
    // Fixed, the sample is gone.
    let (_, _, metrics) = http.http(&vars(&container, &[]), "GET", "/metrics").unwrap();
    assert!(!metrics.contains("traffic_cop_misconfigured{"), "{metrics}");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        good_settings_check_reaches_storage_and_creates_nothing,
        a_bad_setting_is_named_by_its_variable,
        a_misconfigured_tick_is_an_error_naming_the_variable_and_a_metric,
    ]
}

//! The board beside a wrapped app (the app's `http-job` on `/status` and `/metrics`) judged by
//! the lock blob as the Azure SDK for Python reads it (tests/oracles/blob_metadata.py).

use super::wrapped_fleet::Fleet;
use std::collections::BTreeMap;
use std::time::Duration;
use traffic_cop_testbed::oracle::Session;
use traffic_cop_testbed::spin::http;

/// The lock blobs of the fleet's container as the Azure SDK for Python reads them.
fn blobs_by_the_sdk(sdk: &mut Session, fleet: &Fleet) -> serde_json::Value {
    let question = serde_json::json!({
        "connection_string": fleet.azurite.connection_string(),
        "container": "wrapped",
    });
    serde_json::from_str(&sdk.ask(&question.to_string())).unwrap()
}

/// `GET /status` and `GET /metrics` on `port` agree with the `nightly` lock blob as the Azure SDK
/// reads it. Runs may go on meanwhile (a cron trigger does not stop): the blob is read before
/// and after the board, and the board judged only against a blob that did not change between:
/// the SDK stays loaded, so that the reads take milliseconds, not a run's length.
pub fn check_board(fleet: &Fleet, port: u16) {
    let python = traffic_cop_testbed::needs::require(
        "the Azure SDK for Python (scripts/oracle-tools)",
        traffic_cop_testbed::oracle::python(),
    );
    let mut sdk = Session::start(&python, "blob_metadata.py");
    for _ in 0..10 {
        let before = blobs_by_the_sdk(&mut sdk, fleet);
        let status = http(port, "GET", "/status", Duration::from_secs(10)).unwrap();
        let metrics = http(port, "GET", "/metrics", Duration::from_secs(10)).unwrap();
        if blobs_by_the_sdk(&mut sdk, fleet) == before {
            return board_agrees(&before["nightly"], status, metrics);
        }
    }
    panic!("the lock blob changed during each of ten board reads");
}

fn board_agrees(blob: &serde_json::Value, status: (u16, String), metrics: (u16, String)) {
    let meta = |key: &str| blob["metadata"][key].as_str().unwrap_or_default().to_string();
    let (status, body) = status;
    assert_eq!(status, 200, "{body}");
    let board: serde_json::Value = serde_json::from_str(&body).unwrap();
    let row = board["locks"].as_array().unwrap().iter().find(|r| r["name"] == "nightly");
    let row = row.unwrap_or_else(|| panic!("no nightly row: {body}"));
    let shown = |key: &str| match &row[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    for (field, key) in [
        ("fencing_token", "tc_fence"),
        ("holder", "tc_holder"),
        ("running", "tc_running"),
        ("last_start_ms", "tc_start"),
        ("last_stop_ms", "tc_stop"),
        ("last_outcome", "tc_outcome"),
    ] {
        assert_eq!(shown(field), meta(key), "{field}: {body}\nthe SDK read {blob}");
    }
    assert_eq!(shown("state"), blob["state"].as_str().unwrap(), "{body}\n{blob}");
    let (status, metrics) = metrics;
    assert_eq!(status, 200, "{metrics}");
    let sample = |name: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && l.contains("lock=\"nightly\""))
            .and_then(|l| l.rsplit(' ').next())
            .unwrap_or_else(|| panic!("no {name} for nightly: {metrics}"))
            .to_string()
    };
    assert_eq!(sample("traffic_cop_fencing_token"), meta("tc_fence"), "{metrics}");
    let running = if meta("tc_running") == "true" { "1" } else { "0" };
    assert_eq!(sample("traffic_cop_running"), running, "{metrics}");
}

/// The runs the board's `/status` on `port` lists for the `nightly` lock: each fencing token's
/// outcome (`success`, `failure`, `abandoned`, `replaced`) and a failure's text.
pub fn recorded_outcomes(port: u16) -> BTreeMap<u64, (String, Option<String>)> {
    let (status, body) = http(port, "GET", "/status", Duration::from_secs(10)).unwrap();
    assert_eq!(status, 200, "{body}");
    let board: serde_json::Value = serde_json::from_str(&body).unwrap();
    let row = board["locks"].as_array().unwrap().iter().find(|r| r["name"] == "nightly");
    let row = row.unwrap_or_else(|| panic!("no nightly row: {body}"));
    let runs = row["history"].as_array().unwrap().iter();
    runs.map(|run| {
        let outcome = run["outcome"].as_str().unwrap().to_string();
        let failure = run["failure"].as_str().map(str::to_string);
        (run["fencing_token"].as_u64().unwrap(), (outcome, failure))
    })
    .collect()
}

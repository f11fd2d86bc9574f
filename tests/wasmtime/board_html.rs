//! The status board's HTML (`GET /status.html` of the http-job component, in the test host
//! against Azurite) with hostile lock names, holders and outcomes: everything that came from
//! storage is escaped, so a lock name or holder label cannot inject markup into the page.

use traffic_cop_testbed::runner::Test;

use std::collections::BTreeMap;
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_wasm_host::apps::App;
use traffic_cop_wasm_host::component::Host;

const HOSTILE_LOCK: &str = "<img src=x onerror=alert(1)>";
const HOSTILE_HOLDER: &str = "<script>alert(\"x\")</script>&'";

fn hostile_names_and_holders_are_escaped_on_the_html_board() {
    let http = App::load(&Host::shared().engine, "http_job").unwrap();
    let container = format!("html{}", std::process::id());
    let vars: BTreeMap<String, String> = [
        ("connection_string", Azurite::shared().connection_string()),
        ("container", container),
        ("lock", HOSTILE_LOCK.to_string()),
        ("holder", HOSTILE_HOLDER.to_string()),
        ("lease_seconds", "15".to_string()),
        ("interval_seconds", "3600".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let (status, _, report) = http.http(&vars, "POST", "/run").unwrap();
    assert_eq!(status, 200, "{report}");
    assert!(report.contains("\"decision\":\"run\""), "{report}");

    let (status, _, html) = http.http(&vars, "GET", "/status.html").unwrap();
    assert_eq!(status, 200);
    for raw in ["<img", "<script", "onerror=alert(1)>", "\"x\"", "&'"] {
        assert!(!html.contains(raw), "{raw:?} reached the page unescaped:\n{html}");
    }
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"), "{html}");

    // The JSON board is data, not markup: it carries the names exactly, JSON-escaped.
    let (_, content_type, json) = http.http(&vars, "GET", "/status").unwrap();
    assert_eq!(content_type, "application/json");
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(rows[0]["name"].as_str(), Some(HOSTILE_LOCK));
    assert_eq!(rows[0]["holder"].as_str(), Some(HOSTILE_HOLDER));
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![hostile_names_and_holders_are_escaped_on_the_html_board,]
}

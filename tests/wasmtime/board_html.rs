//! The status board's HTML (`GET /status.html` of the http-job component, in the test host
//! against Azurite) with hostile lock names, holders and outcomes: everything that came from
//! storage is escaped, so a lock name or holder label cannot inject markup into the page. And
//! the page as a person sees it: a real headless Chromium's screenshot shows each lock's recent
//! runs as coloured marks (no external assets to load).

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
        // Due every second, so this first tick runs.
        ("schedule", "* * * * * *".to_string()),
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
    let board: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = &board["locks"];
    assert_eq!(rows[0]["name"].as_str(), Some(HOSTILE_LOCK));
    assert_eq!(rows[0]["holder"].as_str(), Some(HOSTILE_HOLDER));
}

/// Pixels of `rgb` (within a small tolerance, for anti-aliasing) in Chromium's screenshot of
/// `html`, and the screenshot's size.
fn screenshot_pixels(html: &str, dir: &std::path::Path, name: &str, rgb: [u8; 3]) -> (u64, u32) {
    let chromium = traffic_cop_testbed::needs::require("chromium", crate::run::on_path("chromium"));
    let page = dir.join(format!("{name}.html"));
    let shot = dir.join(format!("{name}.png"));
    std::fs::write(&page, html).unwrap();
    let ran = crate::run::run(
        std::process::Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
            .arg("--window-size=1200,400")
            .arg(format!("--user-data-dir={}", dir.join("chromium-profile").display()))
            .arg(format!("--screenshot={}", shot.display()))
            .arg(format!("file://{}", page.display())),
        std::time::Duration::from_secs(60),
    );
    assert!(shot.is_file(), "no screenshot {}", ran.said());
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    let channels = frame.color_type.samples();
    let near = |a: u8, b: u8| a.abs_diff(b) <= 6;
    let count = buffer[..frame.buffer_size()]
        .chunks(channels)
        .filter(|p| near(p[0], rgb[0]) && near(p[1], rgb[1]) && near(p[2], rgb[2]))
        .count();
    (count as u64, frame.width)
}

fn the_html_board_draws_each_locks_recent_runs_in_a_real_browser() {
    let http = App::load(&Host::shared().engine, "http_job").unwrap();
    let container = format!("shot{}", std::process::id());
    let vars: BTreeMap<String, String> = [
        ("connection_string", Azurite::shared().connection_string()),
        ("container", container.clone()),
        ("lock", "nightly-cleanup".to_string()),
        ("holder", "web-0".to_string()),
        ("lease_seconds", "15".to_string()),
        ("schedule", "* * * * * *".to_string()),
        ("board_cache_seconds", "0".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let dir = traffic_cop_testbed::repo_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    const FAILURE_RED: [u8; 3] = [0xd1, 0x34, 0x38];
    let (status, _, _) = http.http(&vars, "POST", "/run").unwrap();
    assert_eq!(status, 200);
    let (_, _, before) = http.http(&vars, "GET", "/status.html").unwrap();
    let (red_before, width) = screenshot_pixels(&before, &dir, "one-success", FAILURE_RED);
    assert_eq!(width, 1200);
    // Three failed runs of another replica, each for a due time of its own.
    for _ in 0..3 {
        crate::wasmtime::metrics::run_elsewhere(&container, "nightly-cleanup", failed());
    }
    let (_, _, after) = http.http(&vars, "GET", "/status.html").unwrap();
    let (red_after, _) = screenshot_pixels(&after, &dir, "three-failures", FAILURE_RED);
    // Each mark is 14 x 22 CSS pixels: three of them, drawn, are at least 3 x 250 more red
    // pixels (the "failed in a row" badge adds more).
    assert!(
        red_after >= red_before + 750,
        "the failures are not drawn: {red_before} red pixels before, {red_after} after \
         (target/screenshots/*.png)"
    );
    eprintln!("html board screenshot: {red_before} -> {red_after} failure-red pixels");
}

fn failed() -> traffic_cop_wasm_host::component::v3::Outcome {
    traffic_cop_wasm_host::component::v3::Outcome::Failure("upstream said 503".into())
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        hostile_names_and_holders_are_escaped_on_the_html_board,
        the_html_board_draws_each_locks_recent_runs_in_a_real_browser,
    ]
}

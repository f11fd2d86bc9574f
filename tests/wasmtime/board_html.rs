//! The status board's HTML (`GET /status.html` of the http-job component, in the test host
//! against Azurite) with hostile lock names, holders and outcomes: everything that came from
//! storage is escaped, so a lock name or holder label cannot inject markup into the page. And
//! the page as a person sees it: a real headless Chromium's screenshot shows each lock's recent
//! runs as coloured marks (no external assets to load).

use traffic_cop_testbed::runner::Test;

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::clock_proxy::ServiceClockProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
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
            // A profile per screenshot: two tests shooting at once on one profile made the
            // second Chromium exit with 21 (profile in use), seen in a CI run.
            .arg(format!("--user-data-dir={}", dir.join(format!("chromium-{name}")).display()))
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

/// A job due at 02:00 in Berlin whose second run came 11 h 50 min late, with the service's
/// clock moved by a proxy: the board's title names the app, its times stand on the Berlin wall
/// clock beside UTC, and the lateness is written where the last run is shown and drawn (an
/// amber badge and mark) in a real browser, not only in a tooltip.
fn the_html_board_names_the_app_shows_the_jobs_zone_and_a_late_run() {
    let http = App::load(&Host::shared().engine, "http_job").unwrap();
    let clock = ServiceClockProxy::start(Azurite::shared().port);
    let container = format!("late{}", std::process::id());
    let vars: BTreeMap<String, String> = [
        ("connection_string", connection_string_for_port(clock.port, EMULATOR_KEY_B64)),
        ("container", container),
        ("lock", "nightly-cleanup".to_string()),
        ("holder", "web-0".to_string()),
        ("lease_seconds", "15".to_string()),
        ("schedule", "0 0 2 * * *".to_string()),
        ("time_zone", "Europe/Berlin".to_string()),
        ("board_cache_seconds", "0".to_string()),
        ("app_name", "nightly-reports".to_string()),
        // The proxy moves the service's clock by days between ticks, which a replica's memory
        // of its last look cannot foresee (a real service's clock does not jump).
        ("refresh_seconds", "0".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    // The next two 02:00s in Berlin after now, from the app's own settings check.
    let (_, _, check) = http.http(&vars, "GET", "/check").unwrap();
    let check: serde_json::Value = serde_json::from_str(&check).unwrap();
    let due = |i: usize| check["next_due"][i]["at_ms"].as_u64().unwrap() / 1000;
    let run_at = |at: u64| {
        clock.set(UNIX_EPOCH + Duration::from_secs(at) + Duration::from_millis(1_000));
        let (status, _, report) = http.http(&vars, "POST", "/run").unwrap();
        assert_eq!(status, 200, "{report}");
        assert!(report.contains("\"decision\":\"run\""), "{report}");
        http.http(&vars, "GET", "/status.html").unwrap().2
    };
    let dir = traffic_cop_testbed::repo_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    const LATE_AMBER: [u8; 3] = [0xb3, 0x5c, 0x00];
    let on_time = run_at(due(0) + 2);
    let late_by = 11 * 3600 + 50 * 60;
    let late = run_at(due(1) + late_by);
    for page in [&on_time, &late] {
        assert!(
            page.contains("<title>nightly-reports \u{2014} traffic-cop board</title>"),
            "{page}"
        );
        assert!(!page.contains("traffic-cop: "), "{page}");
    }
    assert!(!on_time.contains("late</span>"), "an on-time run is not flagged: {on_time}");
    assert!(late.contains("last run 11 h 50 min late"), "{late}");
    let local_due = check["next_due"][1]["local"].as_str().unwrap();
    let utc_due = check["next_due"][1]["utc"].as_str().unwrap();
    assert!(local_due.contains("T02:00:00+0"), "{local_due}");
    assert!(
        late.contains(&format!("for the due time {local_due} ({utc_due}), 11 h 50 min late")),
        "the Berlin due time beside UTC: {late}"
    );
    let next = check["next_due"][2]["local"].as_str().unwrap();
    assert!(late.contains(next), "next due on the Berlin clock ({next}): {late}");
    let (amber_before, _) = screenshot_pixels(&on_time, &dir, "on-time", LATE_AMBER);
    let (amber_after, _) = screenshot_pixels(&late, &dir, "late", LATE_AMBER);
    assert!(
        amber_after >= amber_before + 500,
        "the late run is not drawn: {amber_before} amber pixels before, {amber_after} after \
         (target/screenshots/late.png)"
    );
    eprintln!("html board screenshot: {amber_before} -> {amber_after} late-amber pixels");
}

fn failed() -> traffic_cop_wasm_host::component::v1::Outcome {
    traffic_cop_wasm_host::component::v1::Outcome::Failure("upstream said 503".into())
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        hostile_names_and_holders_are_escaped_on_the_html_board,
        the_html_board_draws_each_locks_recent_runs_in_a_real_browser,
        the_html_board_names_the_app_shows_the_jobs_zone_and_a_late_run,
    ]
}

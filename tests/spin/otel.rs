//! Spin's own OpenTelemetry export, checked once: `spin up -c http-job` with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a small OTLP/HTTP receiver on 127.0.0.1. Each
//! tick (`POST /run`) is one trace, and it holds one client span per storage request the lease
//! component sent: as many as the counting proxy between the replica and Azurite saw for that
//! tick. The export is decoded by PyPI's opentelemetry-proto (tests/spin/otlp_spans.py), not by
//! code of ours.

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::spin::{assert_built, find_spin, http, manifest_copy, Launch};
use traffic_cop_testbed::EMULATOR_KEY_B64;

/// Accepts OTLP/HTTP exports and writes each trace export's body to `dir/export-<n>.pb`
/// (`.pb.gz` when gzip-encoded); answers 200 to each request, keeping the connection open as
/// exporters expect.
fn receive(dir: PathBuf) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (dir, count) = (dir.clone(), count.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut writer = stream;
                while let Some((head, body, gzip)) = one_request(&mut reader) {
                    // Spin exports logs (`/v1/logs`, the guests' output) and metrics beside
                    // traces; only traces are judged here.
                    if !head.starts_with("POST /v1/traces ") {
                        let answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
                        if writer.write_all(answer.as_bytes()).is_err() {
                            return;
                        }
                        continue;
                    }
                    let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    std::fs::write(dir.join(format!("export-{n}.head")), head).expect("head");
                    let name = format!("export-{n}.pb{}", if gzip { ".gz" } else { "" });
                    // Whole files only: the decoder may list the directory at any moment.
                    let partial = dir.join(format!("{name}.partial"));
                    std::fs::write(&partial, body).expect("write export");
                    std::fs::rename(&partial, dir.join(name)).expect("export in place");
                    let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n\
                                  Content-Length: 0\r\n\r\n";
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// One request's head, body and whether it is gzip-encoded; `None` when the connection ends.
fn one_request(reader: &mut impl BufRead) -> Option<(String, Vec<u8>, bool)> {
    let (mut length, mut gzip, mut chunked) = (0usize, false, false);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        head.push_str(&line);
        let line = line.trim_end().to_ascii_lowercase();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
        gzip |= line.starts_with("content-encoding:") && line.contains("gzip");
        chunked |= line.starts_with("transfer-encoding:") && line.contains("chunked");
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((head, body, gzip))
}

/// Every span exported so far, decoded by opentelemetry-proto.
fn spans(python: &Path, dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.to_string_lossy().contains(".pb") && !p.to_string_lossy().ends_with(".partial")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Vec::new();
    }
    let script = traffic_cop_testbed::repo_root().join("tests/spin/otlp_spans.py");
    let out = Command::new(python).arg(script).args(&files).output().expect("python runs");
    let heads: Vec<String> = files
        .iter()
        .map(|f| {
            let stem =
                f.file_name().unwrap().to_string_lossy().split('.').next().unwrap().to_string();
            std::fs::read_to_string(dir.join(stem + ".head")).unwrap_or_default()
        })
        .collect();
    assert!(
        out.status.success(),
        "otlp_spans.py: {}\nrequests: {heads:#?}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The client spans of the trace whose root is the inbound request, sent to `port`.
fn storage_spans_per_trace(spans: &[Value], port: u16) -> BTreeMap<String, usize> {
    let mut per_trace = BTreeMap::new();
    for span in spans {
        let text = span["attributes"].to_string();
        // OTLP span kind 3: client.
        if span["kind"] == 3 && text.contains(&format!("127.0.0.1:{port}")) {
            *per_trace.entry(span["trace"].as_str().unwrap().to_string()).or_insert(0) += 1;
        }
    }
    per_trace
}

fn spin_exports_a_span_for_each_storage_request_of_a_tick() {
    let spin = require("real spin (otel)", find_spin());
    let python = require("opentelemetry-proto (scripts/oracle-tools)", {
        traffic_cop_testbed::oracle::python().and_then(|p| {
            let ok = Command::new(&p).args(["-c", "import opentelemetry.proto"]).status();
            if ok.is_ok_and(|s| s.success()) {
                Ok(p)
            } else {
                Err("opentelemetry-proto missing: run scripts/oracle-tools".into())
            }
        })
    });
    assert_built();
    let dir = crate::story::story_dir("otel");
    let exports = dir.join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    let receiver = receive(exports.clone());
    let proxy = CountingProxy::start(Azurite::shared().port);
    // The http-job alone: its shell wrapper passes the OTel variables through to Spin.
    let launch = Launch {
        spin: wrapped(&dir, &spin, receiver),
        data_dir: None,
        manifest: manifest_copy(&dir.join("app"), "0 * * * * *"),
        component: Some("http-job".into()),
        lifetime: Duration::from_secs(120),
        env: Vec::new(),
    };
    let variables = [
        ("connection_string", connection_string_for_port(proxy.port, EMULATOR_KEY_B64)),
        ("storage_endpoint", format!("http://127.0.0.1:{}", proxy.port)),
        ("container", format!("otel{}", std::process::id())),
        ("holder", "traced".to_string()),
        ("schedule", "0 * * * * *".to_string()),
        // Every tick asks storage, so that each has storage spans to count.
        ("refresh_seconds", "0".to_string()),
    ];
    let mut replica = launch.start("traced", &dir.join("traced"), &variables);
    replica.wait_ready(Duration::from_secs(90)).unwrap();
    traffic_cop_testbed::room_in_minute(20);
    let mut ticks = Vec::new();
    for _ in 0..2 {
        let before = proxy.requests();
        let (status, body) = http(replica.port, "POST", "/run", Duration::from_secs(30)).unwrap();
        assert_eq!(status, 200, "{body}");
        ticks.push((proxy.requests() - before, body));
    }
    // The batch exporter sends within seconds; wait for both ticks' traces.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut per_trace = BTreeMap::new();
    while Instant::now() < deadline {
        per_trace = storage_spans_per_trace(&spans(&python, &exports), proxy.port);
        if per_trace.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(replica);
    let all = spans(&python, &exports);
    let names: Vec<&str> = all.iter().filter_map(|s| s["name"].as_str()).collect();
    let counts: Vec<u64> = ticks.iter().map(|(n, _)| *n).collect();
    let mut traced: Vec<u64> = per_trace.values().map(|n| *n as u64).collect();
    let mut expected = counts.clone();
    traced.sort_unstable();
    expected.sort_unstable();
    assert_eq!(
        traced, expected,
        "storage spans per trace vs requests per tick; spans {names:?}; ticks {ticks:?}"
    );
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "measured: OpenTelemetry: one trace per tick, one client span per storage request: \
         leader tick {} requests, follower tick {}; {} spans exported in all",
        counts[0],
        counts[1],
        all.len()
    );
}

/// `spin` with the exporter's variables set, as a user would export them before `spin up`.
fn wrapped(dir: &Path, spin: &Path, port: u16) -> PathBuf {
    let wrapper = dir.join("spin-with-otel");
    let script = format!(
        "#!/bin/sh\nexport OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:{port}\n\
         export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\nexport OTEL_BSP_SCHEDULE_DELAY=500\n\
         exec '{}' \"$@\"\n",
        spin.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    let mut permissions = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrapper, permissions).unwrap();
    wrapper
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![spin_exports_a_span_for_each_storage_request_of_a_tick,]
}

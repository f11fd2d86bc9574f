//! The floor: the same two signed requests the component sends for an acquire + release cycle,
//! signed by hand (nothing of traffic-cop's code is used), a new connection per request as
//! wasi:http makes, sent two ways: by a minimal native client (std TCP, hand-written HTTP/1.1),
//! and by the wasmtime host's own wasi:http sender (`default_send_request`, hyper on tokio)
//! with no component in between. The first ratio is what the component and its host add; the
//! second splits it into the host's share and the component's.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{Read, Write};
use std::net::TcpStream;

const ACCOUNT: &str = "devstoreaccount1";
/// The version the component sends (traffic_cop::STORAGE_VERSION), so Azurite does the same work.
const VERSION: &str = "2025-11-05";

#[derive(Clone, Copy)]
pub enum Via {
    Socket,
    WasiHttpHost,
    /// As `WasiHttpHost`, but the send runs as `outgoing-handler.handle` runs it: spawned on
    /// the host's tokio runtime while the calling thread waits for it, as a guest's thread
    /// waits in `poll`.
    WasiHttpHostSpawned,
}

/// One acquire + release of `container/blob` through 127.0.0.1:`port`. Panics on any refusal:
/// the bench's setup guarantees the blob exists and is free.
pub fn cycle(via: Via, port: u16, key: &[u8], container: &str, blob: &str, n: u64) {
    let lease_id = format!("00000000-0000-4000-8000-{n:012x}");
    let acquire = [
        ("x-ms-lease-action", "acquire"),
        ("x-ms-lease-duration", "15"),
        ("x-ms-proposed-lease-id", lease_id.as_str()),
    ];
    let release = [("x-ms-lease-action", "release"), ("x-ms-lease-id", lease_id.as_str())];
    for (lease, want) in [(&acquire[..], 201), (&release[..], 200)] {
        let (path, headers) = signed(key, container, blob, lease);
        let status = match via {
            Via::Socket => send_socket(port, &path, &headers),
            Via::WasiHttpHost => send_wasi_http(port, &path, &headers, false),
            Via::WasiHttpHostSpawned => send_wasi_http(port, &path, &headers, true),
        };
        assert_eq!(status, want, "floor client: {lease:?}");
    }
}

/// The request's path and headers, `Authorization` included.
fn signed(
    key: &[u8],
    container: &str,
    blob: &str,
    lease: &[(&str, &str)],
) -> (String, Vec<(String, String)>) {
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let mut headers: Vec<(&str, &str)> = lease.to_vec();
    headers.push(("x-ms-date", &date));
    headers.push(("x-ms-version", VERSION));
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    let path = format!("/{ACCOUNT}/{container}/{blob}");
    // Verb, then eleven standard headers, all empty (a zero Content-Length is signed empty).
    let empty_standard_headers = "\n".repeat(11);
    let to_sign =
        format!("PUT\n{empty_standard_headers}{canonical_headers}/{ACCOUNT}{path}\ncomp:lease");
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    mac.update(to_sign.as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    let mut headers: Vec<(String, String)> =
        headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    headers.push(("content-length".into(), "0".into()));
    headers.push(("authorization".into(), format!("SharedKey {ACCOUNT}:{signature}")));
    (format!("{path}?comp=lease"), headers)
}

fn send_socket(port: u16, path: &str, headers: &[(String, String)]) -> u16 {
    let mut request = format!("PUT {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream.write_all(request.as_bytes()).expect("write");
    read_answer(&mut stream).0
}

/// Through wasmtime-wasi-http's sender on wasmtime-wasi's tokio runtime: what the component's
/// `outgoing-handler.handle` runs on the host side, minus the component.
fn send_wasi_http(port: u16, path: &str, headers: &[(String, String)], spawned: bool) -> u16 {
    use http_body_util::{BodyExt, Empty};
    let mut request =
        hyper::Request::builder().method("PUT").uri(format!("http://127.0.0.1:{port}{path}"));
    // The host sets `Host` itself before it sends a guest's request (wasmtime-wasi-http's
    // `set_host_header`): so here.
    request = request.header("host", format!("127.0.0.1:{port}"));
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let body = Empty::<bytes::Bytes>::new().map_err(|never| match never {});
    let request = request.body(body).expect("request");
    wasmtime_wasi::runtime::in_tokio(async move {
        let send = wasmtime_wasi_http::default_send_request(request, None);
        let (response, worker) =
            if spawned { wasmtime_wasi::runtime::spawn(send).await } else { send.await }
                .expect("send");
        let worker = tokio::spawn(worker);
        let status = response.status().as_u16();
        response.into_body().collect().await.expect("answer body");
        let _ = worker.await;
        status
    })
}

/// Reads one answer (head, then `Content-Length` bytes): its status and text.
fn read_answer(stream: &mut TcpStream) -> (u16, String) {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).expect("read");
        answer.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&answer);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase().strip_prefix("content-length:").map(str::to_owned)
                })
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if n == 0 || answer.len() >= end + 4 + length {
                return (text[9..12].parse().expect("status"), text.into_owned());
            }
        } else if n == 0 {
            panic!("connection closed before the answer's head");
        }
    }
}

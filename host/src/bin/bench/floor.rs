//! The floor: the same two signed requests the component sends for an acquire + release cycle,
//! written by a minimal native client (std TCP, hand-built HTTP/1.1, SharedKey by hand), a new
//! connection per request as wasi:http makes. Nothing of traffic-cop's code is used, so the
//! ratio to it is what the component and its host add.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{Read, Write};
use std::net::TcpStream;

const ACCOUNT: &str = "devstoreaccount1";
/// The version the component sends (traffic_cop::STORAGE_VERSION), so Azurite does the same work.
const VERSION: &str = "2025-11-05";

/// One acquire + release of `container/blob` through 127.0.0.1:`port`. Panics on any refusal:
/// the bench's setup guarantees the blob exists and is free.
pub fn cycle(port: u16, key: &[u8], container: &str, blob: &str, n: u64) {
    let lease_id = format!("00000000-0000-4000-8000-{n:012x}");
    let acquire = [
        ("x-ms-lease-action", "acquire"),
        ("x-ms-lease-duration", "15"),
        ("x-ms-proposed-lease-id", lease_id.as_str()),
    ];
    send(port, key, container, blob, &acquire, 201);
    let release = [("x-ms-lease-action", "release"), ("x-ms-lease-id", lease_id.as_str())];
    send(port, key, container, blob, &release, 200);
}

fn send(port: u16, key: &[u8], container: &str, blob: &str, lease: &[(&str, &str)], want: u16) {
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
    let mut request = format!("PUT {path}?comp=lease HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n");
    for (name, value) in &headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "content-length: 0\r\nauthorization: SharedKey {ACCOUNT}:{signature}\r\n\r\n"
    ));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream.write_all(request.as_bytes()).expect("write");
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, want, "floor client: {lease:?}: {answer}");
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

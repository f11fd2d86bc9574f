//! A plain blocking HTTP/1.1 transport for the native crate against Azurite on 127.0.0.1: one
//! connection per request, closed by the answer. For the few writes no exported call makes
//! (metadata a newer build would have written).

use std::io::{Read, Write};
use std::net::TcpStream;
use traffic_cop::transport::{
    Request, Response, Timeouts, Transport, TransportError, TransportErrorKind,
};

pub struct Loopback;

fn broke(what: impl std::fmt::Display) -> TransportError {
    TransportError::new(TransportErrorKind::Interrupted, what.to_string())
}

impl Transport for Loopback {
    fn send(&mut self, request: Request, timeouts: Timeouts) -> Result<Response, TransportError> {
        let authority = request.uri().authority().map(|a| a.to_string()).unwrap_or_default();
        let mut stream = TcpStream::connect(&authority)
            .map_err(|e| TransportError::new(TransportErrorKind::Connect, e.to_string()))?;
        stream.set_read_timeout(Some(timeouts.response)).map_err(broke)?;
        let path = request.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
        let mut head = format!(
            "{} {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n",
            request.method()
        );
        for (name, value) in request.headers() {
            head.push_str(&format!("{name}: {}\r\n", value.to_str().map_err(broke)?));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).map_err(broke)?;
        stream.write_all(request.body()).map_err(broke)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).map_err(broke)?;
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| broke("no head"))?;
        let text = String::from_utf8_lossy(&raw[..end]).into_owned();
        let mut lines = text.split("\r\n");
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| broke("no status"))?;
        let mut response = http::Response::builder().status(status);
        for line in lines {
            if let Some((name, value)) = line.split_once(':') {
                response = response.header(name.trim(), value.trim());
            }
        }
        response.body(raw[end + 4..].to_vec()).map_err(broke)
    }
}

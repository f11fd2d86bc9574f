//! A loopback TCP proxy in front of Azurite that counts HTTP requests, so tests can assert how
//! many round trips a call through the component really took, and answers by status, so the
//! benchmark can count wasted (409/412) requests.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Request heads as they passed, with when (since the proxy started).
type Heads = Arc<Mutex<Vec<(Duration, String)>>>;

pub struct CountingProxy {
    pub port: u16,
    requests: Arc<AtomicU64>,
    /// Answers by status code, 100..=599.
    statuses: Arc<Vec<AtomicU64>>,
    heads: Heads,
    /// What [`CountingProxy::heads`]' times count from.
    pub started: Instant,
    stop: Arc<AtomicBool>,
}

impl CountingProxy {
    pub fn start(target_port: u16) -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicU64::new(0));
        let statuses: Arc<Vec<AtomicU64>> = Arc::new((0..600).map(|_| AtomicU64::new(0)).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let heads = Heads::default();
        let started = Instant::now();
        let (count, by_status, stopped) = (requests.clone(), statuses.clone(), stop.clone());
        let all_heads = heads.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)) else {
                    continue;
                };
                let (count, by_status) = (count.clone(), by_status.clone());
                let (client_read, server_write) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                let heads = (all_heads.clone(), started);
                std::thread::spawn(move || {
                    pipe(client_read, server_write, Tally::Requests(count, heads))
                });
                std::thread::spawn(move || pipe(server, client, Tally::Statuses(by_status)));
            }
        });
        CountingProxy { port, requests, statuses, heads, started, stop }
    }

    /// Every request head so far (request line and headers), with when it passed.
    pub fn heads(&self) -> Vec<(Duration, String)> {
        self.heads.lock().unwrap().clone()
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Answers so far whose status is one of `codes`.
    pub fn answered(&self, codes: &[u16]) -> u64 {
        codes.iter().map(|c| self.statuses[usize::from(*c)].load(Ordering::SeqCst)).sum()
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag and exits.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

enum Tally {
    Requests(Arc<AtomicU64>, (Heads, Instant)),
    Statuses(Arc<Vec<AtomicU64>>),
}

/// Copies until either side closes. Request heads are counted by their `HTTP/1.1` request line
/// ending, answers by their status line's start; our bodies (empty requests, XML answers)
/// cannot contain either.
fn pipe(mut from: TcpStream, mut to: TcpStream, tally: Tally) {
    const REQUEST: &[u8] = b" HTTP/1.1\r\n";
    const ANSWER: &[u8] = b"HTTP/1.1 ";
    let mut buf = [0u8; 16 * 1024];
    let mut carry: Vec<u8> = Vec::new();
    // The request stream as heads and bodies: a head ends at a blank line, its body is
    // `content-length` bytes long.
    let mut stream: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        carry.extend_from_slice(&buf[..n]);
        // Matches are counted once they are whole; what might be the start of one is kept.
        let keep = match &tally {
            Tally::Requests(count, (heads, started)) => {
                stream.extend_from_slice(&buf[..n]);
                record_heads(&mut stream, heads, *started);
                let found = carry.windows(REQUEST.len()).filter(|w| *w == REQUEST).count();
                count.fetch_add(found as u64, Ordering::SeqCst);
                REQUEST.len() - 1
            }
            Tally::Statuses(statuses) => {
                let whole = ANSWER.len() + 3;
                for window in carry.windows(whole).filter(|w| w.starts_with(ANSWER)) {
                    let code = std::str::from_utf8(&window[ANSWER.len()..]).ok();
                    if let Some(code) = code.and_then(|c| c.parse::<usize>().ok()) {
                        statuses[code.min(599)].fetch_add(1, Ordering::SeqCst);
                    }
                }
                whole - 1
            }
        };
        carry.drain(..carry.len() - carry.len().min(keep));
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

fn record_heads(stream: &mut Vec<u8>, heads: &Heads, started: Instant) {
    while let Some(end) = stream.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&stream[..end]).to_string();
        let body = head
            .lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, value)| value.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if stream.len() < end + 4 + body {
            return;
        }
        heads.lock().unwrap().push((started.elapsed(), head));
        stream.drain(..end + 4 + body);
    }
}

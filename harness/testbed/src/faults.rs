//! A loopback fault-injecting HTTP proxy between the component and Azurite. Each request is
//! answered by one outcome drawn from a seeded generator: forwarded untouched, refused with
//! 500/503/408/429, cut off (connection closed with no answer), delayed, stalled past the
//! component's timeouts, or forwarded and then dropped so the caller never hears that it
//! succeeded. One request per connection: the proxy asks Azurite to close after answering.
//!
//! It can also be partitioned: while it is, every connection is accepted and its request read,
//! and nothing is ever answered or forwarded (a blackhole, as a cut network looks from inside),
//! so one replica can be cut off from storage while the others, behind their own proxies,
//! carry on.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    Status(u16),
    /// Connection closed before any answer.
    Reset,
    /// Answer delayed by this many ms (below the component's timeouts).
    Delay(u64),
    /// No answer for longer than the component's 15 s deadline.
    Stall,
    /// Forwarded to Azurite (so it took effect), answer thrown away.
    DropResponse,
    /// Forwarded, then answered with this status instead of Azurite's (a gateway that timed
    /// out on a service that acted).
    StatusAfterLanding(u16),
    /// Forwarded; the answer is held until the caller gives up waiting for it.
    Late,
    /// Forwarded; the first half of the answer is sent, then the connection is closed.
    CutAnswer,
}

/// What fraction of requests get a fault, and which faults may be drawn.
#[derive(Clone, Debug)]
pub struct FaultPlan {
    pub seed: u64,
    /// Per mille of requests that get a fault.
    pub per_mille: u64,
    pub faults: Vec<Fault>,
    /// Stop injecting after this many faults.
    pub limit: Option<usize>,
    /// Only the request with this index (from 0) gets the fault.
    pub at: Option<u64>,
}

impl FaultPlan {
    /// The first `count` requests get `fault`, the rest pass.
    pub fn first(fault: Fault, count: usize) -> FaultPlan {
        FaultPlan { seed: 0, per_mille: 1000, faults: vec![fault], limit: Some(count), at: None }
    }

    /// Request `index` (counted from 0) gets `fault`, every other one passes.
    pub fn at(index: u64, fault: Fault) -> FaultPlan {
        FaultPlan { at: Some(index), ..FaultPlan::first(fault, 1) }
    }

    /// Every fault kind but stalls (which cost 15 s each).
    pub fn quick(seed: u64, per_mille: u64) -> FaultPlan {
        let faults = vec![
            Fault::Status(500),
            Fault::Status(503),
            Fault::Status(408),
            Fault::Status(429),
            Fault::Reset,
            Fault::Delay(300),
            Fault::DropResponse,
        ];
        FaultPlan { seed, per_mille, faults, limit: None, at: None }
    }
}

pub struct FaultProxy {
    pub port: u16,
    requests: Arc<AtomicU64>,
    injected: Arc<Mutex<Vec<Fault>>>,
    stop: Arc<AtomicBool>,
    partitioned: Arc<AtomicBool>,
    blackholed: Arc<AtomicU64>,
}

impl FaultProxy {
    pub fn start(target_port: u16, plan: FaultPlan) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests: Arc<AtomicU64> = Arc::default();
        let injected: Arc<Mutex<Vec<Fault>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (count, log, stopped) = (Arc::clone(&requests), Arc::clone(&injected), stop.clone());
        let partitioned = Arc::new(AtomicBool::new(false));
        let blackholed: Arc<AtomicU64> = Arc::default();
        let (cut, lost) = (partitioned.clone(), blackholed.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if cut.load(Ordering::SeqCst) {
                    lost.fetch_add(1, Ordering::SeqCst);
                    std::thread::spawn(move || blackhole(client));
                    continue;
                }
                let n = count.fetch_add(1, Ordering::SeqCst);
                let fault = {
                    let mut log = log.lock().unwrap();
                    let fault =
                        draw(&plan, n).filter(|_| plan.limit.is_none_or(|limit| log.len() < limit));
                    log.extend(fault);
                    fault
                };
                std::thread::spawn(move || serve(client, target_port, fault));
            }
        });
        FaultProxy { port, requests, injected, stop, partitioned, blackholed }
    }

    /// Cuts the replica behind this proxy off (`true`) or reconnects it (`false`). Exchanges
    /// already under way finish; every connection made while cut off is blackholed.
    pub fn partition(&self, cut: bool) {
        self.partitioned.store(cut, Ordering::SeqCst);
    }

    /// Connections blackholed by a partition so far (not counted in `requests`).
    pub fn blackholed(&self) -> u64 {
        self.blackholed.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// The faults injected so far, in order.
    pub fn injected(&self) -> Vec<Fault> {
        self.injected.lock().unwrap().clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// The n-th request's fate: a pure function of the seed and n (splitmix64).
fn draw(plan: &FaultPlan, n: u64) -> Option<Fault> {
    if let Some(at) = plan.at {
        return (n == at).then(|| plan.faults[0]);
    }
    let mut z = plan.seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    if plan.faults.is_empty() || z % 1000 >= plan.per_mille {
        return None;
    }
    Some(plan.faults[((z >> 20) % plan.faults.len() as u64) as usize])
}

fn serve(mut client: TcpStream, target_port: u16, fault: Option<Fault>) {
    let _ = client.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(request) = read_request(&mut client) else { return };
    match fault {
        Some(Fault::Status(status)) => {
            let _ = client.write_all(injected(status).as_bytes());
        }
        Some(Fault::StatusAfterLanding(status)) => {
            forward(&request, target_port, None);
            let _ = client.write_all(injected(status).as_bytes());
        }
        Some(Fault::Late) => {
            forward(&request, target_port, None);
            // Until the caller hangs up (its time limit), or 30 s.
            let _ = client.set_read_timeout(Some(Duration::from_secs(30)));
            let _ = client.read(&mut [0u8; 1]);
        }
        Some(Fault::CutAnswer) => {
            let mut answer = Vec::new();
            forward_into(&request, target_port, &mut answer);
            let _ = client.write_all(&answer[..answer.len() / 2]);
        }
        Some(Fault::Reset) => {}
        Some(Fault::Stall) => std::thread::sleep(Duration::from_secs(20)),
        Some(Fault::Delay(ms)) => {
            std::thread::sleep(Duration::from_millis(ms));
            forward(&request, target_port, Some(&mut client));
        }
        Some(Fault::DropResponse) => forward(&request, target_port, None),
        None => forward(&request, target_port, Some(&mut client)),
    }
    let _ = client.shutdown(Shutdown::Both);
}

/// Reads whatever comes and never answers, until the caller gives up or 30 s pass; then the
/// connection is dropped, answerless, whether or not the partition has ended meanwhile.
fn blackhole(mut client: TcpStream) {
    let _ = client.set_read_timeout(Some(Duration::from_millis(500)));
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let mut buf = [0u8; 8192];
    while std::time::Instant::now() < until {
        match client.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

/// The request head (and body, by `content-length`), with `connection: close` so the upstream
/// answer ends at EOF.
fn read_request(client: &mut TcpStream) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        let n = client.read(&mut buf).ok().filter(|n| *n > 0)?;
        data.extend_from_slice(&buf[..n]);
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = client.read(&mut buf).ok().filter(|n| *n > 0)?;
        data.extend_from_slice(&buf[..n]);
    }
    let mut lines: Vec<&str> = head
        .trim_end()
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    lines.push("connection: close");
    let mut request = format!("{}\r\n\r\n", lines.join("\r\n")).into_bytes();
    request.extend_from_slice(&data[head_end..]);
    Some(request)
}

/// An error answer the proxy makes up, in the service's shape; a 429 says when to come back.
fn injected(status: u16) -> String {
    let code = match status {
        503 => "ServerBusy",
        500 => "InternalError",
        408 => "RequestTimeout",
        _ => "TooManyRequests",
    };
    let retry = if status == 429 { "retry-after: 1\r\n" } else { "" };
    format!(
        "HTTP/1.1 {status} Injected\r\nx-ms-error-code: {code}\r\n{retry}content-length: 0\r\nconnection: close\r\n\r\n"
    )
}

fn forward(request: &[u8], target_port: u16, client: Option<&mut TcpStream>) {
    let mut answer = Vec::new();
    forward_into(request, target_port, &mut answer);
    if let Some(client) = client {
        let _ = client.write_all(&answer);
    }
}

/// Sends the request to Azurite and reads its whole answer.
fn forward_into(request: &[u8], target_port: u16, answer: &mut Vec<u8>) {
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", target_port)) else { return };
    if upstream.write_all(request).is_ok() {
        let _ = upstream.read_to_end(answer);
    }
}

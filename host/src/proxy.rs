//! A loopback TCP proxy in front of Azurite that counts HTTP requests, so tests can assert how
//! many round trips a call through the component really took.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

pub struct CountingProxy {
    pub port: u16,
    requests: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl CountingProxy {
    pub fn start(target_port: u16) -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, stopped) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)) else {
                    continue;
                };
                let count = count.clone();
                let (client_read, server_write) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pipe(client_read, server_write, Some(count)));
                std::thread::spawn(move || pipe(server, client, None));
            }
        });
        CountingProxy { port, requests, stop }
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag and exits.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies until either side closes. Request heads are counted by their `HTTP/1.1` request line
/// ending; our request bodies are empty, so nothing else can match.
fn pipe(mut from: TcpStream, mut to: TcpStream, count: Option<Arc<AtomicU64>>) {
    const MARK: &[u8] = b" HTTP/1.1\r\n";
    let mut buf = [0u8; 16 * 1024];
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some(count) = &count {
            carry.extend_from_slice(&buf[..n]);
            let found = carry.windows(MARK.len()).filter(|w| *w == MARK).count();
            count.fetch_add(found as u64, Ordering::SeqCst);
            let keep = carry.len().min(MARK.len() - 1);
            carry.drain(..carry.len() - keep);
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

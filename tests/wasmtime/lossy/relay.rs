//! A loopback TCP relay whose target can be moved. A 1.0 `run` keeps the connection string it
//! was granted under, so the calls on a run reach storage through whatever that names: the
//! relay lets one port reach Azurite directly while the run is set up and judged, and the fault
//! proxy for the call itself. Each connection goes to the target it was accepted under and
//! carries bytes both ways until each side has closed, so a proxy's dropped or held answer, and
//! a caller that gives up, pass through as they would directly.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::Arc;

pub struct Relay {
    pub port: u16,
    target: Arc<AtomicU16>,
    stop: Arc<AtomicBool>,
}

impl Relay {
    pub fn start(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = Arc::new(AtomicU16::new(target));
        let stop = Arc::new(AtomicBool::new(false));
        let (to, stopped) = (target.clone(), stop.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", to.load(Ordering::SeqCst)))
                else {
                    continue;
                };
                let (client_in, server_out) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pipe(client_in, server_out));
                std::thread::spawn(move || pipe(server, client));
            }
        });
        Relay { port, target, stop }
    }

    /// Connections accepted from now on go to `port`.
    pub fn point_at(&self, port: u16) {
        self.target.store(port, Ordering::SeqCst);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies until `from` ends (or breaks), then ends `to`'s sending side.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

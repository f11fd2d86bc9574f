//! A loopback TCP proxy in front of Azurite that moves the storage service's clock: every
//! answer's `Date` header is rewritten to read the service's time as set here. Due times are
//! judged by that header alone, so a test can put the service at any instant (a Thursday at
//! 13:47 in Berlin, the next morning at 02:00) while Azurite's leases run on real time.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `\r\nDate: ` then an IMF-fixdate, which is always 29 bytes long: the rewrite keeps every
/// answer's length, so the bytes can be passed on as they stream.
const DATE_LINE: &[u8] = b"\r\nDate: ";
const FIXDATE_LEN: usize = 29;

pub struct ServiceClockProxy {
    pub port: u16,
    /// Milliseconds to add to the real time in every `Date`.
    offset_ms: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
}

impl ServiceClockProxy {
    pub fn start(target_port: u16) -> ServiceClockProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let offset_ms = Arc::new(AtomicI64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (offset, stopped) = (offset_ms.clone(), stop.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)) else {
                    continue;
                };
                let (client_read, server_write) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || copy(client_read, server_write));
                let offset = offset.clone();
                std::thread::spawn(move || rewrite_dates(server, client, &offset));
            }
        });
        ServiceClockProxy { port, offset_ms, stop }
    }

    /// From now on the service's clock reads `at` (and runs on from there in real time).
    pub fn set(&self, at: SystemTime) {
        let ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
        self.offset_ms.store(ms(at) - ms(SystemTime::now()), Ordering::SeqCst);
    }

    /// [`set`](Self::set) to the Unix second `at`.
    pub fn set_unix(&self, at: u64) {
        self.set(UNIX_EPOCH + Duration::from_secs(at));
    }
}

impl Drop for ServiceClockProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag and exits.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn copy(mut from: TcpStream, mut to: TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

/// Passes the answers on with each `Date` moved by the offset. A header split across reads is
/// held back until it is whole.
fn rewrite_dates(mut from: TcpStream, mut to: TcpStream, offset_ms: &AtomicI64) {
    let whole = DATE_LINE.len() + FIXDATE_LEN;
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        // Bytes held back (the end of an answer can look like a `Date` line's start) wait for
        // more only briefly: an answer's last bytes must not wait for a read that never comes.
        let wait = (!pending.is_empty()).then_some(Duration::from_millis(20));
        let _ = from.set_read_timeout(wait);
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if to.write_all(&pending).is_err() {
                    break;
                }
                pending.clear();
                continue;
            }
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        let mut at = 0;
        while let Some(found) = find(&pending[at..], DATE_LINE) {
            let start = at + found + DATE_LINE.len();
            if start + FIXDATE_LEN > pending.len() {
                break;
            }
            moved(&mut pending[start..start + FIXDATE_LEN], offset_ms.load(Ordering::SeqCst));
            at = start + FIXDATE_LEN;
        }
        // Hold back only what may be an unfinished `Date` line; pass the rest on at once.
        let send = unfinished_date_line(&pending[at..], whole).map_or(pending.len(), |i| at + i);
        if to.write_all(&pending[..send]).is_err() {
            break;
        }
        pending.drain(..send);
    }
    let _ = to.write_all(&pending);
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

/// Where in `tail` a `Date` line starts that is not yet whole, if one does.
fn unfinished_date_line(tail: &[u8], whole: usize) -> Option<usize> {
    let from = tail.len().saturating_sub(whole - 1);
    (from..tail.len()).find(|&i| {
        let rest = &tail[i..];
        let n = rest.len().min(DATE_LINE.len());
        rest[..n].eq_ignore_ascii_case(&DATE_LINE[..n])
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    // Header names are case-insensitive: Azurite's own answers say `date:`, Node's `Date:`.
    haystack.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// Rewrites one IMF-fixdate in place, `offset_ms` later (a date it cannot read is left alone).
fn moved(fixdate: &mut [u8], offset_ms: i64) {
    let Some(date) =
        std::str::from_utf8(fixdate).ok().and_then(|d| httpdate::parse_http_date(d).ok())
    else {
        return;
    };
    let ms = date.duration_since(UNIX_EPOCH).unwrap().as_millis() as i64 + offset_ms;
    let shifted = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    let text = httpdate::fmt_http_date(shifted);
    if text.len() == FIXDATE_LEN {
        fixdate.copy_from_slice(text.as_bytes());
    }
}

//! Listings of any size through the built component against Azurite 3.35: more locks than one
//! page, and far more than the 64 KiB a single answer was once cut to (Azurite lists about
//! 950 bytes per lock with a run record), so `board` and `claim` must page and see them all.
//! And an answer longer than the component buffers is an error, never a shorter listing.

use traffic_cop_testbed::runner::Test;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1;

/// The component's page size (`traffic_cop::ops::LIST_PAGE_SIZE`).
const PAGE: usize = 200;

/// A worker's settings on `container` (claim and board do not read `lock`): a 60 s lease, due
/// every minute. A lock is owed only the due times from its creation on (the last one within a
/// minute before it), so an item created by a claim is due at once under a one-minute period,
/// where an hourly one would leave it not due until the next hour.
fn settings(connection_string: &str, container: &str, holder: &str) -> v1::Settings {
    v1::Settings {
        lock: None,
        lease_seconds: Some("60".into()),
        schedule: Some("@every 60s".into()),
        ..v1::settings(connection_string, container, "", holder)
    }
}

fn board_and_claim_page_through_hundreds_of_locks() {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let proxy = CountingProxy::start(Azurite::shared().port);
    let connection_string = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
    let container = format!("list{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
    let count = PAGE * 2 + 50;
    let items: Vec<String> = (0..count).map(|i| format!("jobs/item-{i:04}")).collect();

    // Claimed in batches, as workers would over several ticks; each claim lists what exists.
    // The runs stay open: their instances are dropped without completing them. Each lock's
    // latest grant: when its batch was asked for (its lease was granted after that instant)
    // and its fencing token.
    let mut granted: BTreeMap<String, (Instant, u64)> = BTreeMap::new();
    for _ in 0..count {
        if granted.len() == count {
            break;
        }
        let mut worker = fresh();
        let asked = Instant::now();
        let claimed =
            worker.claim(&settings(&connection_string, &container, "w1"), &items, 50).unwrap();
        assert!(claimed.stopped.is_none(), "{:?}", claimed.stopped);
        assert!(!claimed.runs.is_empty(), "claim made no progress at {}", granted.len());
        for run in claimed.runs {
            let details = worker.run_details(run);
            // On a loaded machine the claims can outlast the 60 s lease: a lock whose lease ran
            // out is rightly granted again, as the takeover of an abandoned run with the next
            // token. Granted again while its last lease may still hold is two holders.
            if let Some((last_asked, token)) = granted.get(&details.lock) {
                let since = last_asked.elapsed();
                assert!(
                    since >= Duration::from_secs(60)
                        && details.previous_abandoned
                        && details.fencing_token > *token,
                    "granted twice: {} ({since:?} after the last grant was asked for, token \
                     {} after {token}, previous abandoned: {})",
                    details.lock,
                    details.fencing_token,
                    details.previous_abandoned
                );
            }
            granted.insert(details.lock, (asked, details.fencing_token));
        }
    }
    assert_eq!(granted.len(), count);

    let before = proxy.requests();
    let board = fresh().board(&settings(&connection_string, &container, "w1")).unwrap().locks;
    let listings = proxy.requests() - before;
    let names: BTreeSet<&str> = board.iter().map(|e| e.name.as_str()).collect();
    let missing: Vec<&String> = items.iter().filter(|i| !names.contains(i.as_str())).collect();
    assert!(
        missing.is_empty() && board.len() == count,
        "{} of {count} locks missing from a board of {}, the first {:?}",
        missing.len(),
        board.len(),
        missing.first()
    );
    assert!(
        board.iter().all(|e| e.running && granted[&e.name].1 == e.fencing_token),
        "records read"
    );
    assert_eq!(listings as usize, count.div_ceil(PAGE), "one listing per page of {PAGE}");

    // Everything still held is refused to a second worker. Held means leased less than the 60 s
    // a lease lasts: on a loaded machine the claims and the board above can take longer, and a
    // lock whose lease ran out is rightly granted again (its run abandoned), so only the locks
    // leased within the last 45 s are asked for (all of them when the test ran at its pace).
    let held: Vec<String> = granted
        .into_iter()
        .filter(|(_, (asked, _))| asked.elapsed() < Duration::from_secs(45))
        .map(|(lock, _)| lock)
        .collect();
    assert!(!held.is_empty(), "no lock was leased within the last 45 s");
    let again = fresh().claim(&settings(&connection_string, &container, "w2"), &held, 10).unwrap();
    assert!(
        again.runs.is_empty(),
        "{} of {} held locks granted again",
        again.runs.len(),
        held.len()
    );
}

/// A server that answers every request with one well-formed listing page of about 9 MiB, with
/// or without `Content-Length`, so the cap is met both up front and while streaming.
fn oversized_listing_server(chunked: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let blob = "<Blob><Name>jobs/x</Name><Properties><LeaseState>available</LeaseState>\
                </Properties><Metadata><tc_fence>1</tc_fence></Metadata></Blob>";
    let mut body = String::from("<?xml version=\"1.0\"?><EnumerationResults><Blobs>");
    while body.len() < 9 * 1024 * 1024 {
        body.push_str(blob);
    }
    body.push_str("</Blobs><NextMarker /></EnumerationResults>");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 8192];
            let _ = stream.read(&mut request);
            let head = if chunked {
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nx-ms-request-id: big\r\n\r\n"
                    .to_string()
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nx-ms-request-id: big\r\n\r\n",
                    body.len()
                )
            };
            // The client may stop reading and hang up: write errors are expected.
            let _ = stream.write_all(head.as_bytes());
            for piece in body.as_bytes().chunks(64 * 1024) {
                let sent = if chunked {
                    stream
                        .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                        .and_then(|()| stream.write_all(piece))
                        .and_then(|()| stream.write_all(b"\r\n"))
                } else {
                    stream.write_all(piece)
                };
                if sent.is_err() {
                    break;
                }
            }
            if chunked {
                let _ = stream.write_all(b"0\r\n\r\n");
            }
        }
    });
    port
}

fn an_answer_longer_than_the_cap_is_an_error_not_a_shorter_board() {
    for chunked in [false, true] {
        let port = oversized_listing_server(chunked);
        let connection_string = connection_string_for_port(port, EMULATOR_KEY_B64);
        match fresh().board(&settings(&connection_string, "big", "w1")) {
            Err(v1::Error::Transport(detail)) => {
                assert!(detail.contains("longer than the 8 MiB"), "{detail}");
                assert!(detail.contains("request id big"), "{detail}");
            }
            Ok(board) => {
                panic!("chunked={chunked}: a board of {} from a cut answer", board.locks.len())
            }
            Err(other) => panic!("chunked={chunked}: {other:?}"),
        }
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        board_and_claim_page_through_hundreds_of_locks,
        an_answer_longer_than_the_cap_is_an_error_not_a_shorter_board,
    ]
}

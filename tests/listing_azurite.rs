//! Listings of any size through the built component against Azurite 3.35: more locks than one
//! page, and far more than the 64 KiB a single answer was once cut to (Azurite lists about
//! 950 bytes per lock with a run record), so `board` and `claim` must page and see them all.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use traffic_cop_host::azurite::{connection_string_for_port, Azurite};
use traffic_cop_host::component::{fresh, GuardOptions, Location};
use traffic_cop_host::proxy::CountingProxy;
use traffic_cop_host::EMULATOR_KEY_B64;

/// The component's page size (`traffic_cop::ops::LIST_PAGE_SIZE`).
const PAGE: usize = 200;

fn options(holder: &str) -> GuardOptions {
    GuardOptions {
        holder: holder.into(),
        lease_seconds: 60,
        interval_seconds: 3600,
        keep_alive_seconds: None,
    }
}

#[test]
fn board_and_claim_page_through_hundreds_of_locks() {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let proxy = CountingProxy::start(Azurite::shared().port);
    let location = Location {
        connection_string: connection_string_for_port(proxy.port, EMULATOR_KEY_B64),
        container: format!("list{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst)),
    };
    let count = PAGE * 2 + 50;
    let items: Vec<String> = (0..count).map(|i| format!("jobs/item-{i:04}")).collect();

    // Claimed in batches, as workers would over several ticks; each claim lists what exists.
    let mut granted = BTreeSet::new();
    for _ in 0..count {
        if granted.len() == count {
            break;
        }
        let tickets = fresh().claim(&location, &items, &options("w1"), 50).unwrap();
        assert!(!tickets.is_empty(), "claim made no progress at {}", granted.len());
        for ticket in tickets {
            assert!(
                granted.insert(ticket.lock.blob.clone()),
                "granted twice: {}",
                ticket.lock.blob
            );
        }
    }
    assert_eq!(granted.len(), count);

    let before = proxy.requests();
    let board = fresh().board(&location).unwrap();
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
    assert!(board.iter().all(|e| e.fencing_token == 1 && e.running), "records read");
    assert_eq!(listings as usize, count.div_ceil(PAGE), "one listing per page of {PAGE}");

    // Everything is held and ran this interval: a second worker is granted nothing.
    let again = fresh().claim(&location, &items, &options("w2"), 10).unwrap();
    assert!(again.is_empty(), "{} granted again", again.len());
}

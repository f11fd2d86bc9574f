//! Listings of any size: `board` and `claim` over the paging fake service (more locks than one
//! page, names and metadata keys that read like the schema, encoded names), and a service that
//! repeats its marker.

use crate::support;

use crate::support::fake_service::FakeService;
use crate::support::{response, ScriptedTransport, VirtualRuntime, EMULATOR};
use std::cell::Cell;
use std::rc::Rc;
use traffic_cop::guard::{self, GuardOptions, Outcome};
use traffic_cop::ops::{ListBlobs, LIST_PAGE_SIZE};
use traffic_cop::transport::{Request, Response, Timeouts, Transport};
use traffic_cop::{Account, Error, LeaseClient, Lock};
use traffic_cop::{TransportError, TransportErrorKind};

struct Fake {
    clock: Rc<Cell<std::time::SystemTime>>,
    service: FakeService,
}

impl Fake {
    fn new() -> Fake {
        let clock = Rc::new(Cell::new(support::epoch()));
        Fake { service: FakeService::new(clock.clone()), clock }
    }

    fn client(&self) -> LeaseClient<FakeService, VirtualRuntime> {
        LeaseClient::new(self.service.clone(), VirtualRuntime::on_clock(self.clock.clone(), 7))
    }
}

fn account() -> Account {
    Account::from_connection_string(EMULATOR).unwrap()
}

fn options(holder: &str) -> GuardOptions {
    GuardOptions::every_interval(holder, 15, 60, None).unwrap()
}

/// Two and a half pages of locks, each with a run record: claim grants every one (the first
/// listing of an empty container, then one guarded invoke per item), the board shows every one
/// with its record, and every listing asked for a bounded page.
#[test]
fn board_and_claim_see_every_lock_across_pages() {
    let fake = Fake::new();
    let count = LIST_PAGE_SIZE as usize * 5 / 2;
    let items: Vec<String> = (0..count).map(|i| format!("jobs/item-{i:04}")).collect();
    let tickets =
        guard::claim(&mut fake.client(), &account(), "many", &items, &options("w1"), count as u32)
            .unwrap()
            .tickets;
    assert_eq!(tickets.len(), count);
    for ticket in &tickets[..3] {
        guard::complete(&mut fake.client(), ticket, &Outcome::Success).unwrap();
    }

    let before = fake.service.list_requests().len();
    let board = guard::board(&mut fake.client(), &account(), "many").unwrap();
    let pages = fake.service.list_requests().len() - before;
    assert_eq!(board.len(), count);
    let mut names: Vec<&str> = board.iter().map(|e| e.name.as_str()).collect();
    names.sort();
    assert_eq!(names, items.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(board.iter().all(|e| e.record.fence == 1), "every record was read");
    assert_eq!(board.iter().filter(|e| e.record.outcome == Some(Outcome::Success)).count(), 3);
    assert_eq!(pages, count.div_ceil(LIST_PAGE_SIZE as usize), "one listing per page");
    // The claim: the empty container, then its second pass over the blobs it created (the
    // page after one with nothing due is widened); the board: pages of the normal size.
    let asked = fake.service.list_requests();
    assert_eq!(asked, [200, 200, 800, 200, 200, 200].map(Some), "{asked:?}");

    // Everything listed and held: a second worker is granted nothing and asks only listings,
    // the page after one with nothing due four times as wide.
    let (before, asked_before) = (fake.service.requests(), fake.service.list_requests().len());
    let second = guard::claim(&mut fake.client(), &account(), "many", &items, &options("w2"), 10)
        .unwrap()
        .tickets;
    assert!(second.is_empty());
    assert_eq!(fake.service.list_requests()[asked_before..], [Some(200), Some(800)]);
    assert_eq!(fake.service.requests() - before, 2);

    // An interval later every lock is due again. The conditional acquires go by the ETags of
    // the listing, so a claim across all the pages grants every lock once more.
    fake.clock.set(fake.clock.get() + std::time::Duration::from_secs(61));
    let again =
        guard::claim(&mut fake.client(), &account(), "many", &items, &options("w3"), count as u32)
            .unwrap()
            .tickets;
    assert_eq!(again.len(), count);
    assert!(again.iter().all(|t| t.fencing_token == 2));
}

/// Blobs the client never writes, put there by someone else: metadata keys named like the
/// listing's elements, blobs named like them, a name XML cannot carry (sent `Encoded`), and a
/// value with characters that travel as references.
#[test]
fn names_and_keys_that_read_like_the_schema_are_data() {
    let fake = Fake::new();
    let evil = [("NextMarker", "2!8!bm9wZQ=="), ("Blob", "x"), ("Name", "y"), ("tc_fence", "5")];
    fake.service.seed_blob("odd", "a-first", &evil);
    fake.service.seed_blob("odd", "Blob", &[("tc_fence", "6")]);
    fake.service.seed_blob("odd", "NextMarker", &[("tc_holder", "r&d <ops>")]);
    fake.service.seed_blob("odd", "ctl\u{1}char", &[]);
    fake.service.seed_blob("odd", "z-last", &[]);

    let board = guard::board(&mut fake.client(), &account(), "odd").unwrap();
    let seen: Vec<(&str, u64)> = board.iter().map(|e| (e.name.as_str(), e.record.fence)).collect();
    // The control-character name is listed (decoded) but is not a valid lock name.
    assert_eq!(seen, [("Blob", 6), ("NextMarker", 0), ("a-first", 5), ("z-last", 0)]);
    assert_eq!(board[1].record.holder.as_deref(), Some("r&d <ops>"));

    let lock = Lock::new(account(), "odd", "-").unwrap();
    let page = fake.client().execute(&lock, &ListBlobs::default()).unwrap();
    let names: Vec<&str> = page.blobs.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["Blob", "NextMarker", "a-first", "ctl\u{1}char", "z-last"]);
    assert_eq!(page.next_marker, None);
}

/// A claim after most items ran this interval: the pages of worked items widen (by four each
/// time, up to the service's 5000), so they cost a few listings instead of one per 200 blobs;
/// the first page with due items narrows the next again. Every due item is still granted.
#[test]
fn pages_of_worked_items_widen_the_next() {
    let fake = Fake::new();
    let items: Vec<String> = (0..6000).map(|i| format!("jobs/{i:05}")).collect();
    let ran = 5400;
    // Run this interval (started now), by someone: not due.
    let now_ms = guard::unix_ms(fake.clock.get()).to_string();
    for item in &items[..ran] {
        fake.service.seed_blob("wide", item, &[("tc_fence", "1"), ("tc_start", &now_ms)]);
    }
    for item in &items[ran..] {
        fake.service.seed_blob("wide", item, &[]);
    }
    let asked_before = fake.service.list_requests().len();
    let tickets = guard::claim(&mut fake.client(), &account(), "wide", &items, &options("w"), 1000)
        .unwrap()
        .tickets;
    assert_eq!(tickets.len(), items.len() - ran);
    let asked: Vec<_> =
        fake.service.list_requests()[asked_before..].iter().map(|m| m.unwrap()).collect();
    // 200 + 800 + 3200 worked blobs, then 1200 worked and 600 due; the listing ends there.
    assert_eq!(asked, [200, 800, 3200, 5000]);

    // Nothing due at all: the whole listing in four round trips instead of thirty.
    let asked_before = fake.service.list_requests().len();
    let none = guard::claim(&mut fake.client(), &account(), "wide", &items, &options("x"), 10)
        .unwrap()
        .tickets;
    assert!(none.is_empty());
    assert_eq!(fake.service.list_requests().len() - asked_before, 4);
}

/// A widened page refused by the transport (as the wasi transport refuses an answer over its
/// 8 MiB limit) is listed again at the normal size, and the listing stays at that size.
#[test]
fn a_refused_widened_page_is_listed_again_at_the_normal_size() {
    struct Refusing(FakeService);
    impl Transport for Refusing {
        fn send(
            &mut self,
            request: Request,
            timeouts: Timeouts,
        ) -> Result<Response, TransportError> {
            let query = request.uri().query().unwrap_or_default();
            if query.split('&').any(|p| p.starts_with("maxresults=") && p != "maxresults=200") {
                return Err(TransportError::new(TransportErrorKind::Other, "answer too long"));
            }
            self.0.send(request, timeouts)
        }
    }
    let fake = Fake::new();
    let count = LIST_PAGE_SIZE as usize * 3;
    let items: Vec<String> = (0..count).map(|i| format!("jobs/item-{i:04}")).collect();
    let all = count as u32;
    guard::claim(&mut fake.client(), &account(), "big", &items, &options("w1"), all).unwrap();

    let runtime = VirtualRuntime::on_clock(fake.clock.clone(), 9);
    let mut client = LeaseClient::new(Refusing(fake.service.clone()), runtime);
    let asked_before = fake.service.list_requests().len();
    let none =
        guard::claim(&mut client, &account(), "big", &items, &options("w2"), 10).unwrap().tickets;
    assert!(none.is_empty());
    // The refused 800 never reached the service: 200, then 200 again, and 200 after.
    assert_eq!(fake.service.list_requests()[asked_before..], [Some(200); 3]);
}

/// The fake's markers hold `!`, `+`, `/` and `=`: the client must hand each back exactly.
#[test]
fn opaque_markers_survive_the_round_trip() {
    let fake = Fake::new();
    // Names chosen so the base64 markers contain `+` and `/`.
    for i in 0..(LIST_PAGE_SIZE as usize + 3) {
        fake.service.seed_blob("markers", &format!("~?>{i:05}\u{fb}"), &[]);
    }
    let lock = Lock::new(account(), "markers", "-").unwrap();
    let first = fake.client().execute(&lock, &ListBlobs::default()).unwrap();
    let marker = first.next_marker.clone().expect("a second page");
    assert!(marker.contains(['+', '/', '=', '!']), "{marker}");
    let second = fake
        .client()
        .execute(&lock, &ListBlobs { marker: Some(marker), max_results: None })
        .unwrap();
    assert_eq!(first.blobs.len() + second.blobs.len(), LIST_PAGE_SIZE as usize + 3);
    assert_eq!(second.next_marker, None);
}

fn page(marker: &str) -> Result<traffic_cop::transport::Response, traffic_cop::TransportError> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults><Blobs><Blob><Name>a</Name>\
         </Blob></Blobs><NextMarker>{marker}</NextMarker></EnumerationResults>"
    );
    let mut answer = response(200, &[("date", "Wed, 01 Jan 2025 00:00:00 GMT")])?;
    *answer.body_mut() = body.into_bytes();
    Ok(answer)
}

/// A service that hands back a marker it already gave would make paging loop forever; the
/// board stops at the repeat with an error instead.
#[test]
fn a_repeated_marker_stops_the_listing() {
    let listing = |marker: Option<&'static str>| {
        move |request: &traffic_cop::transport::Request| {
            let query = request.uri().query().unwrap_or_default();
            let sent = query.split('&').find_map(|pair| pair.strip_prefix("marker="));
            assert_eq!(sent, marker, "{query}");
        }
    };
    let script = ScriptedTransport::new()
        .expect(listing(None), page("m1"))
        .expect(listing(Some("m1")), page("m2"))
        .expect(listing(Some("m2")), page("m1"));
    let mut client = LeaseClient::new(script, VirtualRuntime::new());
    match guard::board(&mut client, &account(), "loops") {
        Err(Error::UnexpectedAnswer(what)) => assert!(what.contains("twice"), "{what}"),
        other => panic!("expected an unexpected answer, got {other:?}"),
    }
    client.transport().assert_done();
}

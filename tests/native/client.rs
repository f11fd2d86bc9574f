//! The lease client against a scripted transport: exact requests, exact round-trip counts,
//! retries on a virtual clock, first-use creation, and error mapping.

use crate::support::scripted::*;
use crate::support::*;
use traffic_cop::{BreakPeriod, Error, LeaseDuration, LeaseId, LeaseState, Lock};

#[test]
fn steady_state_acquire_is_one_signed_round_trip_with_a_proposed_id() {
    let script =
        ScriptedTransport::new().expect(
            |r| {
                lease_action("acquire")(r);
                assert_eq!(
                    r.uri().to_string(),
                    "http://127.0.0.1:10000/devstoreaccount1/locks/nightly?comp=lease"
                );
                assert_eq!(r.headers()["x-ms-lease-duration"], "15");
                assert!(
                    LeaseId::parse(r.headers()["x-ms-proposed-lease-id"].to_str().unwrap()).is_ok()
                );
                assert_eq!(r.headers()["x-ms-version"], "2025-11-05");
                assert_eq!(r.headers()["x-ms-date"], "Wed, 01 Jan 2025 00:00:00 GMT");
                assert_eq!(r.headers()["content-length"], "0");
                assert!(r.headers()["authorization"]
                    .to_str()
                    .unwrap()
                    .starts_with("SharedKey devstoreaccount1:"));
            },
            granted(201),
        );
    let mut client = client(script);
    let grant = client.acquire(&lock(), LeaseDuration::Fixed(15), None).unwrap();
    assert_eq!(grant.lease_id.as_str(), ID);
    assert_eq!(grant.etag.as_deref(), Some("\"0x1\""));
    assert_eq!(client.round_trips(), 1);
}

/// The native example of docs/guests-and-node.md, line for line (the docs check holds it to
/// these lines), with the real clock and randomness, against a transport that grants.
#[test]
fn the_docs_native_example_acquires() -> Result<(), Box<dyn std::error::Error>> {
    let connection_string = "UseDevelopmentStorage=true".to_string();
    let my_transport = ScriptedTransport::new().expect(lease_action("acquire"), granted(201));
    let lock = traffic_cop::Lock::parse(&connection_string, "locks", "nightly")?;
    let mut client = traffic_cop::LeaseClient::new(my_transport, traffic_cop::StdRuntime);
    let grant = client.acquire(&lock, traffic_cop::LeaseDuration::Fixed(15), None)?;
    assert_eq!(grant.lease_id.as_str(), ID);
    Ok(())
}

#[test]
fn acquire_creates_a_missing_blob_then_retries_once() {
    let script = ScriptedTransport::new()
        .expect(lease_action("acquire"), refusal(404, "BlobNotFound"))
        .expect(
            |r| {
                assert_eq!(r.method(), "PUT");
                assert_eq!(r.uri().path(), "/devstoreaccount1/locks/nightly");
                assert_eq!(r.headers()["if-none-match"], "*");
                assert_eq!(r.headers()["x-ms-blob-type"], "BlockBlob");
            },
            response(201, &[]),
        )
        .expect(lease_action("acquire"), granted(201));
    let mut client = client(script);
    client.acquire(&lock(), LeaseDuration::Fixed(30), Some(id())).unwrap();
    assert_eq!(client.round_trips(), 3);
}

#[test]
fn acquire_creates_a_missing_container_and_tolerates_losing_creation_races() {
    let script = ScriptedTransport::new()
        .expect(lease_action("acquire"), refusal(404, "ContainerNotFound"))
        .expect(
            |r| assert_eq!(r.uri().query(), Some("restype=container")),
            refusal(409, "ContainerAlreadyExists"),
        )
        .expect(
            |r| assert_eq!(r.headers()["if-none-match"], "*"),
            refusal(409, "BlobAlreadyExists"),
        )
        .expect(lease_action("acquire"), granted(201));
    let mut client = client(script);
    client.acquire(&lock(), LeaseDuration::Infinite, Some(id())).unwrap();
    assert_eq!(client.round_trips(), 4);
    assert_eq!(client.runtime().sleeps.borrow().len(), 0);
}

#[test]
fn held_by_other_is_an_answer_and_not_retried() {
    let script = ScriptedTransport::new()
        .expect(lease_action("acquire"), refusal(409, "LeaseAlreadyPresent"));
    let mut client = client(script);
    let error = client.acquire(&lock(), LeaseDuration::Fixed(15), None).unwrap_err();
    assert!(
        matches!(&error, Error::HeldByOther(e) if e.request_id.as_deref() == Some("req-42")),
        "{error:?}"
    );
    assert_eq!(client.round_trips(), 1);
}

#[test]
fn invalid_arguments_fail_before_anything_is_sent() {
    let mut client = client(ScriptedTransport::new());
    for seconds in [0, 14, 61, u32::MAX] {
        let error = client.acquire(&lock(), LeaseDuration::Fixed(seconds), None).unwrap_err();
        assert!(
            matches!(error, Error::InvalidArgument(ref m) if m.contains("15..=60")),
            "{error:?}"
        );
    }
    assert!(matches!(
        client.break_lease(&lock(), BreakPeriod(Some(61))),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(client.round_trips(), 0);
    for bad in [
        "",
        "not-a-guid",
        "8b8a5d3e2f4b4c2a9d0e1f2a3b4c5d6e",
        "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6g",
        "../../x",
    ] {
        assert!(matches!(LeaseId::parse(bad), Err(Error::InvalidArgument(_))), "{bad:?}");
    }
}

#[test]
fn renew_change_release_break_and_inspect_send_their_headers_and_read_their_answers() {
    const NEW: &str = "11111111-2222-4333-8444-555555555555";
    let script = ScriptedTransport::new()
        .expect(
            |r| {
                lease_action("renew")(r);
                assert_eq!(r.headers()["x-ms-lease-id"], ID)
            },
            granted(200),
        )
        .expect(
            |r| {
                lease_action("change")(r);
                assert_eq!(r.headers()["x-ms-lease-id"], ID);
                assert_eq!(r.headers()["x-ms-proposed-lease-id"], NEW);
            },
            response(200, &[("x-ms-lease-id", NEW)]),
        )
        .expect(
            |r| {
                lease_action("release")(r);
                assert_eq!(r.headers()["x-ms-lease-id"], NEW)
            },
            response(200, &[]),
        )
        .expect(
            |r| {
                lease_action("break")(r);
                assert_eq!(r.headers()["x-ms-lease-break-period"], "5")
            },
            response(202, &[("x-ms-lease-time", "5")]),
        )
        .expect(
            |r| {
                lease_action("break")(r);
                assert!(r.headers().get("x-ms-lease-break-period").is_none())
            },
            response(202, &[("x-ms-lease-time", "0")]),
        )
        .expect(
            |r| {
                assert_eq!(r.method(), "HEAD");
                assert_eq!(r.uri().query(), None);
                assert!(r.headers().get("content-length").is_none())
            },
            response(
                200,
                &[
                    ("x-ms-lease-state", "leased"),
                    ("x-ms-lease-status", "locked"),
                    ("x-ms-lease-duration", "fixed"),
                    ("x-ms-meta-zeta", "2"),
                    ("x-ms-meta-holder", "node-1"),
                ],
            ),
        );
    let mut client = client(script);
    let lock = lock();
    assert_eq!(client.renew(&lock, &id()).unwrap().lease_id, id());
    let new = LeaseId::parse(NEW).unwrap();
    assert_eq!(client.change(&lock, &id(), &new).unwrap().lease_id, new);
    client.release(&lock, &new).unwrap();
    assert_eq!(client.break_lease(&lock, BreakPeriod(Some(5))).unwrap(), 5);
    assert_eq!(client.break_lease(&lock, BreakPeriod(None)).unwrap(), 0);
    let status = client.inspect(&lock).unwrap();
    assert_eq!(
        (status.state, status.locked, status.infinite),
        (LeaseState::Leased, true, Some(false))
    );
    assert_eq!(
        status.metadata,
        vec![("holder".into(), "node-1".into()), ("zeta".into(), "2".into())]
    );
    assert_eq!(client.round_trips(), 6);
}

#[test]
fn malformed_success_answers_become_typed_errors() {
    let script = ScriptedTransport::new()
        .expect(any_request, response(201, &[("x-ms-request-id", "req-1")]))
        .expect(any_request, response(200, &[("x-ms-lease-id", "garbage")]))
        .expect(any_request, response(202, &[("x-ms-lease-time", "soon")]))
        .expect(any_request, response(200, &[("x-ms-lease-state", "confused")]))
        .expect(
            any_request,
            Ok(http::Response::builder().status(418).body(b"<Error><Code>".to_vec()).unwrap()),
        );
    let mut client = client(script);
    let lock = lock();
    // A success that lacks what the protocol promises is the answer's fault, not a refusal:
    // named with its real status and request id, never as a service error.
    let unexpected = |result: Result<_, Error>, what: &str, status: &str| match result {
        Err(Error::UnexpectedAnswer(m)) => {
            assert!(m.contains(what) && m.contains(&format!("HTTP {status}")), "{m}")
        }
        other => panic!("{other:?}"),
    };
    let acquired = client.acquire(&lock, LeaseDuration::Fixed(15), None).map(|_| ());
    unexpected(acquired, "no x-ms-lease-id (HTTP 201, x-ms-request-id req-1)", "201");
    unexpected(client.renew(&lock, &id()).map(|_| ()), "not a GUID", "200");
    unexpected(client.break_lease(&lock, BreakPeriod(None)).map(|_| ()), "lease-time", "202");
    unexpected(client.inspect(&lock).map(|_| ()), "lease-state", "200");
    let teapot = client.renew(&lock, &id()).unwrap_err();
    assert!(
        matches!(&teapot, Error::Service(e) if e.status == 418 && e.code.is_none()),
        "{teapot:?}"
    );
}

#[test]
fn sas_requests_carry_the_token_and_no_authorization() {
    let sas_lock = Lock::parse("BlobEndpoint=https://acct1.blob.core.windows.net;SharedAccessSignature=sv=2025-11-05&sig=SIG", "locks", "x").unwrap();
    let script = ScriptedTransport::new().expect(
        |r| {
            assert_eq!(
                r.uri().to_string(),
                "https://acct1.blob.core.windows.net/locks/x?comp=lease&sv=2025-11-05&sig=SIG"
            );
            assert!(r.headers().get("authorization").is_none());
        },
        granted(201),
    );
    client(script).acquire(&sas_lock, LeaseDuration::Fixed(15), None).unwrap();
}

//! Retries on a virtual clock: what is retried, how long between attempts, that each attempt
//! is re-signed, and how a release whose answer was lost is resolved.

use crate::support::scripted::*;
use crate::support::*;
use traffic_cop::transport::TransportErrorKind;
use traffic_cop::{Error, LeaseClient, LeaseDuration};

#[test]
fn transient_failures_are_retried_with_backoff_and_re_signed() {
    let script = ScriptedTransport::new()
        .expect(lease_action("acquire"), refusal(503, "ServerBusy"))
        .expect(lease_action("acquire"), transport_error(TransportErrorKind::Timeout))
        .expect(lease_action("acquire"), refusal(500, "InternalError"))
        .expect(lease_action("acquire"), granted(201));
    let mut client = client(script);
    client.acquire(&lock(), LeaseDuration::Fixed(15), None).unwrap();
    assert_eq!(client.round_trips(), 4);
    let sleeps = client.runtime().sleeps.borrow().clone();
    assert_eq!(sleeps.len(), 3);
    for (attempt, sleep) in sleeps.iter().enumerate() {
        let ceiling = std::time::Duration::from_millis(100 << attempt);
        assert!(*sleep >= ceiling / 2 && *sleep <= ceiling, "attempt {attempt}: {sleep:?}");
    }
}

#[test]
fn each_retry_keeps_the_proposed_id_and_carries_a_fresh_signature() {
    let mut client = client(
        ScriptedTransport::new()
            .expect(any_request, refusal(500, "InternalError"))
            .expect(any_request, granted(201)),
    );
    // Move the virtual clock far enough that the two attempts carry different dates.
    client.runtime().now.set(client.runtime().now.get() + std::time::Duration::from_millis(999));
    client.acquire(&lock(), LeaseDuration::Fixed(15), None).unwrap();
    let [first, second] = &client.transport().sent[..] else { panic!("two attempts expected") };
    let header = |r: &traffic_cop::transport::Request, name: &str| r.headers()[name].clone();
    assert_eq!(header(first, "x-ms-proposed-lease-id"), header(second, "x-ms-proposed-lease-id"));
    assert_ne!(header(first, "x-ms-date"), header(second, "x-ms-date"));
    assert_ne!(header(first, "authorization"), header(second, "authorization"));
}

#[test]
fn retries_are_bounded_and_name_the_last_failure() {
    let script = (0..4)
        .fold(ScriptedTransport::new(), |s, _| s.expect(any_request, refusal(503, "ServerBusy")));
    let mut client = client(script);
    assert!(matches!(client.renew(&lock(), &id()), Err(Error::Throttled(_))));
    assert_eq!(client.round_trips(), 4);

    let script = (0..4).fold(ScriptedTransport::new(), |s, _| {
        s.expect(any_request, transport_error(TransportErrorKind::Connect))
    });
    let mut client = LeaseClient::new(script, VirtualRuntime::new());
    let error = client.inspect(&lock()).unwrap_err();
    assert!(
        matches!(&error, Error::Transport(e) if e.kind == TransportErrorKind::Connect),
        "{error:?}"
    );
}

#[test]
fn conflicts_and_preconditions_are_never_retried() {
    for (status, code) in [
        (409, "LeaseIdMismatchWithLeaseOperation"),
        (412, "LeaseLost"),
        (400, "InvalidHeaderValue"),
        (403, "AuthorizationFailure"),
    ] {
        let mut client =
            client(ScriptedTransport::new().expect(any_request, refusal(status, code)));
        assert!(client.renew(&lock(), &id()).is_err());
        assert_eq!(client.round_trips(), 1, "{status} {code}");
    }
}

#[test]
fn a_denied_outbound_request_is_not_retried() {
    let mut client = client(
        ScriptedTransport::new().expect(any_request, transport_error(TransportErrorKind::Denied)),
    );
    assert!(matches!(client.inspect(&lock()), Err(Error::Transport(_))));
    assert_eq!(client.round_trips(), 1);
}

#[test]
fn release_after_an_unheard_success_counts_as_released() {
    let script = ScriptedTransport::new()
        .expect(lease_action("release"), transport_error(TransportErrorKind::Timeout))
        .expect(lease_action("release"), refusal(409, "LeaseIdMismatchWithLeaseOperation"));
    let mut client = client(script);
    client.release(&lock(), &id()).unwrap();

    // Without an ambiguous attempt the same refusal means the lease was not ours.
    let mut client = LeaseClient::new(
        ScriptedTransport::new()
            .expect(lease_action("release"), refusal(409, "LeaseIdMismatchWithLeaseOperation")),
        VirtualRuntime::new(),
    );
    assert!(matches!(client.release(&lock(), &id()), Err(Error::LeaseLost(_))));
}

#[test]
fn a_connect_failure_is_not_ambiguous() {
    let script = ScriptedTransport::new()
        .expect(lease_action("release"), transport_error(TransportErrorKind::Connect))
        .expect(lease_action("release"), refusal(409, "LeaseIdMismatchWithLeaseOperation"));
    assert!(matches!(client(script).release(&lock(), &id()), Err(Error::LeaseLost(_))));
}

#[test]
fn retry_after_is_honoured_and_a_wait_longer_than_a_call_may_take_ends_it() {
    let busy = |after: &str| {
        let mut answer = refusal(503, "ServerBusy").unwrap();
        answer.headers_mut().insert("retry-after", after.parse().unwrap());
        Ok(answer)
    };
    let mut client = client(
        ScriptedTransport::new()
            .expect(lease_action("renew"), busy("3"))
            .expect(lease_action("renew"), granted(200)),
    );
    client.renew(&lock(), &id()).unwrap();
    assert_eq!(*client.runtime().sleeps.borrow(), [std::time::Duration::from_secs(3)]);

    // Asked to come back in two minutes: the call ends with the service's answer instead.
    let mut client =
        client_for(ScriptedTransport::new().expect(lease_action("renew"), busy("120")));
    assert!(matches!(client.renew(&lock(), &id()), Err(Error::Throttled(_))));
    assert!(client.runtime().sleeps.borrow().is_empty());
}

fn client_for(script: ScriptedTransport) -> LeaseClient<ScriptedTransport, VirtualRuntime> {
    LeaseClient::new(script, VirtualRuntime::new())
}

#[test]
fn every_call_carries_one_client_request_id_across_its_attempts() {
    let mut client = client(
        ScriptedTransport::new()
            .expect(any_request, refusal(500, "InternalError"))
            .expect(any_request, granted(200))
            .expect(any_request, granted(200)),
    );
    client.renew(&lock(), &id()).unwrap();
    client.renew(&lock(), &id()).unwrap();
    let ids: Vec<String> = client
        .transport()
        .sent
        .iter()
        .map(|r| r.headers()["x-ms-client-request-id"].to_str().unwrap().to_string())
        .collect();
    assert_eq!(ids[0], ids[1], "a retry keeps the call's id");
    assert_ne!(ids[1], ids[2], "each call has its own");
    assert!(traffic_cop::LeaseId::parse(&ids[2]).is_ok(), "a GUID: {}", ids[2]);
}

/// `with_retry`: a client given one attempt (or zero, read as one) does not retry a 503.
#[test]
fn a_client_given_one_attempt_does_not_retry() {
    for attempts in [1, 0] {
        let script = ScriptedTransport::new().expect(any_request, refusal(503, "ServerBusy"));
        let policy = traffic_cop::retry::RetryPolicy {
            max_attempts: attempts,
            ..traffic_cop::retry::RetryPolicy::default()
        };
        let mut client = client(script).with_retry(policy);
        let error = client.inspect(&lock()).unwrap_err();
        assert!(matches!(error, Error::Throttled(_)), "{error:?}");
        assert_eq!(client.round_trips(), 1, "max_attempts {attempts}");
        assert!(client.runtime().sleeps.borrow().is_empty());
    }
}

/// `with_timeouts`: the transport is handed the client's time limits.
#[test]
fn a_client_hands_its_time_limits_to_the_transport() {
    use traffic_cop::transport::Timeouts;
    let world = crate::support::fake_world::FakeWorld::new();
    let limits = Timeouts {
        connect: std::time::Duration::from_millis(750),
        response: std::time::Duration::from_millis(2500),
    };
    let hooked = crate::support::hooked::Hooked::new(world.service.clone());
    let mut client = world.client_over(hooked).with_timeouts(limits);
    let _ = client.inspect(&lock());
    let sent: Vec<Timeouts> = client.transport().log.iter().map(|(_, _, t)| *t).collect();
    assert!(!sent.is_empty());
    assert!(sent.iter().all(|t| *t == limits), "{sent:?}");
}

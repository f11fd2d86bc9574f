//! Hostile input at the component boundary: every exported function, given malformed
//! connection strings, undecodable keys, bad lease ids, out-of-range durations and hostile
//! names, answers with a typed error, never traps, and sends nothing (a counting proxy in front
//! of Azurite sees zero requests).

use traffic_cop_testbed::runner::Test;

use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::{
    fresh, Decision, GuardOptions, LeaseDuration, LeaseError, Location, Lock, Outcome, SkipReason,
    Ticket,
};

const GOOD_ID: &str = "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e";

fn bad_connection_strings(port: u16) -> Vec<String> {
    vec![
        String::new(),
        ";;;".into(),
        "garbage".into(),
        "AccountName=devstoreaccount1;AccountKey=%%%not-base64%%%".into(),
        "AccountName=devstoreaccount1;AccountKey=".into(),
        format!("AccountName=Dev_Store;AccountKey={EMULATOR_KEY_B64}"),
        format!("AccountName=devstoreaccount1;AccountKey={EMULATOR_KEY_B64};BlobEndpoint=file:///etc/passwd"),
        format!("AccountName=devstoreaccount1;AccountKey={EMULATOR_KEY_B64};BlobEndpoint=http://u:p@127.0.0.1:{port}/x"),
        format!("BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;SharedAccessSignature=a b\nc"),
        "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://127.0.0.1:1".into(),
        "\u{0}\u{1}\u{2}".into(),
        "AccountName=ロック;AccountKey=c2VjcmV0".into(),
        "x".repeat(100_000),
    ]
}

fn bad_names() -> Vec<(String, String)> {
    let long_container = "a".repeat(64);
    let long_blob = "b".repeat(1025);
    [
        ("AB", "x"),
        ("a", "x"),
        ("-abc", "x"),
        ("ab--c", "x"),
        ("../etc", "x"),
        ("a/b", "x"),
        ("läse", "x"),
        (long_container.as_str(), "x"),
        ("abc", ""),
        ("abc", "../../etc/passwd"),
        ("abc", "a/./b"),
        ("abc", "a//b"),
        ("abc", "/leading"),
        ("abc", "trailing/"),
        ("abc", "nul\u{0}byte"),
        ("abc", "new\nline"),
        ("abc", "tab\tbed"),
        ("abc", "back\\slash"),
        ("abc", "\u{7f}"),
        ("abc", long_blob.as_str()),
    ]
    .into_iter()
    .map(|(c, b)| (c.to_string(), b.to_string()))
    .collect()
}

fn typed(error: &LeaseError) -> bool {
    matches!(error, LeaseError::InvalidConfig(_) | LeaseError::InvalidArgument(_))
}

fn options() -> GuardOptions {
    GuardOptions {
        holder: "me".into(),
        lease_seconds: 15,
        interval_seconds: 60,
        keep_alive_seconds: None,
    }
}

fn ticket(lock: Lock, lease_id: &str, options: GuardOptions) -> Ticket {
    Ticket {
        lock,
        lease_id: lease_id.into(),
        fencing_token: 1,
        interval: 0,
        started_at_ms: 0,
        deadline_ms: 0,
        keep_alive_by_ms: 0,
        previous_abandoned: false,
        options,
    }
}

/// Calls every exported function that takes a lock; each must fail with a typed error.
fn every_lock_function_refuses(lock: &Lock, what: &str) {
    let fixed = LeaseDuration::Fixed(15);
    let results = [
        ("acquire", fresh().acquire(lock, fixed, None).map(drop)),
        ("renew", fresh().renew(lock, GOOD_ID).map(drop)),
        ("change", fresh().change(lock, GOOD_ID, GOOD_ID).map(drop)),
        ("release", fresh().release(lock, GOOD_ID)),
        ("break-lease", fresh().break_lease(lock, Some(0)).map(drop)),
        ("inspect", fresh().inspect(lock).map(drop)),
        ("keep-alive", fresh().keep_alive(&ticket(lock.clone(), GOOD_ID, options())).map(drop)),
        (
            "complete",
            fresh().complete(&ticket(lock.clone(), GOOD_ID, options()), &Outcome::Success),
        ),
    ];
    for (function, result) in results {
        assert!(matches!(&result, Err(e) if typed(e)), "{function} with {what}: {result:?}");
    }
    match fresh().guarded_invoke(lock, &options()) {
        Decision::Skip(SkipReason::Error(e)) if typed(&e) => {}
        other => panic!("guarded-invoke with {what}: {other:?}"),
    }
}

fn malformed_connection_strings_and_hostile_names_are_refused_without_a_request() {
    let proxy = CountingProxy::start(Azurite::shared().port);
    let good = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
    let mut cases = 0;
    for connection_string in bad_connection_strings(proxy.port) {
        let lock = Lock {
            connection_string: connection_string.clone(),
            container: "abc".into(),
            blob: "x".into(),
        };
        every_lock_function_refuses(
            &lock,
            &format!("connection string {:.40?}", connection_string),
        );
        let location = Location { connection_string, container: "abc".into() };
        assert!(matches!(fresh().board(&location), Err(ref e) if typed(e)));
        assert!(
            matches!(fresh().claim(&location, &["x".into()], &options(), 1), Err(ref e) if typed(e))
        );
        cases += 1;
    }
    for (container, blob) in bad_names() {
        let lock = Lock {
            connection_string: good.clone(),
            container: container.clone(),
            blob: blob.clone(),
        };
        every_lock_function_refuses(&lock, &format!("names {container:.20?}/{blob:.20?}"));
        let location = Location { connection_string: good.clone(), container: container.clone() };
        let claim = fresh().claim(&location, std::slice::from_ref(&blob), &options(), 1);
        assert!(
            matches!(&claim, Err(e) if typed(e)),
            "claim {container:.20?}/{blob:.20?}: {claim:?}"
        );
        cases += 1;
    }
    assert_eq!(proxy.requests(), 0, "nothing may be sent for invalid input");
    println!("{cases} hostile locations x 11 exported functions: all refused, 0 requests");
}

fn bad_ids_durations_periods_and_options_are_refused_without_a_request() {
    let proxy = CountingProxy::start(Azurite::shared().port);
    let lock = Lock {
        connection_string: connection_string_for_port(proxy.port, EMULATOR_KEY_B64),
        container: "abc".into(),
        blob: "x".into(),
    };
    let bad_ids = [
        "",
        "nope",
        "8b8a5d3e2f4b4c2a9d0e1f2a3b4c5d6e",
        "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6",
        "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6ez",
        "../../../../",
        "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6\u{e9}",
    ];
    for id in bad_ids {
        for (function, result) in [
            ("acquire", fresh().acquire(&lock, LeaseDuration::Fixed(15), Some(id)).map(drop)),
            ("renew", fresh().renew(&lock, id).map(drop)),
            ("change (current)", fresh().change(&lock, id, GOOD_ID).map(drop)),
            ("change (proposed)", fresh().change(&lock, GOOD_ID, id).map(drop)),
            ("release", fresh().release(&lock, id)),
            ("keep-alive", fresh().keep_alive(&ticket(lock.clone(), id, options())).map(drop)),
            ("complete", fresh().complete(&ticket(lock.clone(), id, options()), &Outcome::Success)),
        ] {
            assert!(matches!(&result, Err(e) if typed(e)), "{function} with id {id:?}: {result:?}");
        }
    }
    for seconds in [0, 1, 14, 61, 3600, u32::MAX] {
        assert!(
            matches!(fresh().acquire(&lock, LeaseDuration::Fixed(seconds), None), Err(ref e) if typed(e)),
            "{seconds}"
        );
    }
    for period in [61, 1000, u32::MAX] {
        assert!(
            matches!(fresh().break_lease(&lock, Some(period)), Err(ref e) if typed(e)),
            "{period}"
        );
    }
    let bad_options = [
        GuardOptions { holder: String::new(), ..options() },
        GuardOptions { holder: "x".repeat(65), ..options() },
        GuardOptions { holder: "a\u{0}b".into(), ..options() },
        GuardOptions { lease_seconds: 14, ..options() },
        GuardOptions { lease_seconds: 61, ..options() },
        GuardOptions { keep_alive_seconds: Some(0), ..options() },
        GuardOptions { keep_alive_seconds: Some(8), ..options() },
        GuardOptions { interval_seconds: u64::MAX, ..options() },
    ];
    let location =
        Location { connection_string: lock.connection_string.clone(), container: "abc".into() };
    for bad in bad_options {
        assert!(
            matches!(fresh().guarded_invoke(&lock, &bad), Decision::Skip(SkipReason::Error(ref e)) if typed(e)),
            "{bad:?}"
        );
        assert!(
            matches!(fresh().claim(&location, &["x".into()], &bad, 1), Err(ref e) if typed(e)),
            "{bad:?}"
        );
        assert!(
            matches!(fresh().keep_alive(&ticket(lock.clone(), GOOD_ID, bad.clone())), Err(ref e) if typed(e)),
            "{bad:?}"
        );
        assert!(
            matches!(fresh().complete(&ticket(lock.clone(), GOOD_ID, bad.clone()), &Outcome::Failure("x".into())), Err(ref e) if typed(e))
        );
    }
    assert_eq!(proxy.requests(), 0, "nothing may be sent for invalid input");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        malformed_connection_strings_and_hostile_names_are_refused_without_a_request,
        bad_ids_durations_periods_and_options_are_refused_without_a_request,
    ]
}

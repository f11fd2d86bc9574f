//! Hostile input at the component boundary: every exported function, given malformed
//! connection strings, undecodable keys, bad lease ids, out-of-range durations, hostile names
//! and settings it cannot use, answers with a typed error (the guard's: a bad setting naming
//! the variable to fix), never traps, and sends nothing (a counting proxy in front of Azurite
//! sees zero requests).

use traffic_cop_testbed::runner::Test;

use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::fresh;
use traffic_cop_wasm_host::component::v1::lease::{LeaseDuration, Lock};
use traffic_cop_wasm_host::component::v1::{self, Decision, SkipReason};

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

/// The raw verbs' refusal of input they cannot use.
fn typed(error: &v1::Error) -> bool {
    matches!(error, v1::Error::InvalidConfig(_) | v1::Error::InvalidArgument(_))
}

/// The guard's refusal of a setting it cannot use, naming the variable to fix.
fn bad_setting(error: &v1::Error, variable: &str) -> bool {
    matches!(error, v1::Error::BadSetting(bad) if bad.variable == variable)
}

/// A job's settings on `lock`: its connection string, container and blob as the deployment's
/// variables, a 15 s lease, due every minute.
fn settings(lock: &Lock) -> v1::Settings {
    v1::Settings {
        lease_seconds: Some("15".into()),
        schedule: Some("@every 60s".into()),
        ..v1::settings(&lock.connection_string, &lock.container, &lock.blob, "me")
    }
}

/// Calls every exported function that takes a lock, as raw verbs and through the guard's
/// settings; each must fail with a typed error, the guard's naming `variable`.
fn every_lock_function_refuses(lock: &Lock, variable: &str, what: &str) {
    let fixed = LeaseDuration::Fixed(15);
    let results = [
        ("acquire", fresh().acquire(lock, fixed, None).map(drop)),
        ("renew", fresh().renew(lock, GOOD_ID).map(drop)),
        ("change", fresh().change(lock, GOOD_ID, GOOD_ID).map(drop)),
        ("release", fresh().release(lock, GOOD_ID)),
        ("break-lease", fresh().break_lease(lock, Some(0)).map(drop)),
        ("inspect", fresh().inspect(lock).map(drop)),
    ];
    for (function, result) in results {
        assert!(matches!(&result, Err(e) if typed(e)), "{function} with {what}: {result:?}");
    }
    let settings = settings(lock);
    match fresh().guarded_invoke(&settings) {
        Decision::Skip(v1::Skipped { reason: SkipReason::Error(e), .. })
            if bad_setting(&e, variable) => {}
        other => panic!("guarded-invoke with {what}: {other:?}"),
    }
    let operators = [
        ("pause", fresh().pause(&settings, "ops", "why", 0).map(drop)),
        ("resume", fresh().resume(&settings, "ops").map(drop)),
        ("run-now", fresh().run_now(&settings, "ops").map(drop)),
    ];
    for (function, result) in operators {
        assert!(
            matches!(&result, Err(e) if bad_setting(e, variable)),
            "{function} with {what}: {result:?}"
        );
    }
    // Asked to reach storage, the check names the variable and sends nothing either.
    let check = fresh().check_settings(&settings, 1, true);
    assert!(
        check.problems.iter().any(|p| p.variable == variable) && check.storage.is_none(),
        "check-settings with {what}: {check:?}"
    );
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
        let what = format!("connection string {:.40?}", connection_string);
        every_lock_function_refuses(&lock, "connection_string", &what);
        let settings = settings(&lock);
        for (function, result) in [
            ("board", fresh().board(&settings).map(drop)),
            ("claim", fresh().claim(&settings, &["x".into()], 1).map(drop)),
            ("read-fenced", fresh().read_fenced(&settings, "x").map(drop)),
        ] {
            assert!(
                matches!(&result, Err(e) if bad_setting(e, "connection_string")),
                "{function} with {what}: {result:?}"
            );
        }
        let token = fresh().get_token(&connection_string);
        assert!(matches!(&token, Err(e) if typed(e)), "get-token with {what}: {token:?}");
        cases += 1;
    }
    for (container, blob) in bad_names() {
        let lock = Lock {
            connection_string: good.clone(),
            container: container.clone(),
            blob: blob.clone(),
        };
        // The container is at fault unless it is the good one.
        let variable = if container == "abc" { "lock" } else { "container" };
        let what = format!("names {container:.20?}/{blob:.20?}");
        every_lock_function_refuses(&lock, variable, &what);
        // `claim` and `read-fenced` take the blob as an item or a data blob's name: an
        // argument, not a setting, unless the container is the one at fault.
        let settings = settings(&lock);
        let refused = |e: &v1::Error| match variable {
            "container" => bad_setting(e, "container"),
            _ => matches!(e, v1::Error::InvalidArgument(_)),
        };
        for (function, result) in [
            ("claim", fresh().claim(&settings, std::slice::from_ref(&blob), 1).map(drop)),
            ("read-fenced", fresh().read_fenced(&settings, &blob).map(drop)),
        ] {
            assert!(matches!(&result, Err(e) if refused(e)), "{function} with {what}: {result:?}");
        }
        if variable == "container" {
            let board = fresh().board(&settings);
            assert!(
                matches!(&board, Err(e) if bad_setting(e, "container")),
                "board with {what}: {board:?}"
            );
        }
        cases += 1;
    }
    assert_eq!(proxy.requests(), 0, "nothing may be sent for invalid input");
    println!("{cases} hostile locations x 15 exported functions: all refused, 0 requests");
}

/// Makes one setting unusable.
type Breaks = fn(&mut v1::Settings);

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
    let bad_settings: [(Breaks, &str); 13] = [
        (|s| s.holder = Some("x".repeat(65)), "holder"),
        (|s| s.holder = Some("a\u{0}b".into()), "holder"),
        (|s| s.lease_seconds = Some("14".into()), "lease_seconds"),
        (|s| s.lease_seconds = Some("61".into()), "lease_seconds"),
        (|s| s.lease_seconds = Some("fifteen".into()), "lease_seconds"),
        (|s| s.keep_alive_seconds = Some("0".into()), "keep_alive_seconds"),
        (|s| s.keep_alive_seconds = Some("8".into()), "keep_alive_seconds"),
        (|s| s.schedule = Some(format!("@every {}s", u64::MAX)), "schedule"),
        (|s| s.schedule = Some("@every 1y".into()), "schedule"),
        (|s| s.early_tolerance_ms = Some("300001".into()), "early_tolerance_ms"),
        (|s| s.wait_ms = Some("600001".into()), "wait_ms"),
        (|s| s.replace_after_seconds = Some("59".into()), "replace_after_seconds"),
        (|s| s.max_job_seconds = Some("16".into()), "max_job_seconds"),
    ];
    for (break_it, variable) in bad_settings {
        let mut bad = settings(&lock);
        break_it(&mut bad);
        match fresh().guarded_invoke(&bad) {
            Decision::Skip(v1::Skipped { reason: SkipReason::Error(e), .. })
                if bad_setting(&e, variable) => {}
            other => panic!("guarded-invoke with {bad:?}: {other:?}"),
        }
        let claim = fresh().claim(&bad, &["x".into()], 1);
        assert!(matches!(&claim, Err(e) if bad_setting(e, variable)), "{bad:?}: {claim:?}");
    }
    assert_eq!(proxy.requests(), 0, "nothing may be sent for invalid input");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        malformed_connection_strings_and_hostile_names_are_refused_without_a_request,
        bad_ids_durations_periods_and_options_are_refused_without_a_request,
    ]
}

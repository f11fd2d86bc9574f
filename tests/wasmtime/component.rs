//! The built component in a real host (wasmtime + wasi:http) against a real Azurite.

use traffic_cop_testbed::runner::Test;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::v1::lease::{LeaseDuration, LeaseState, Lock};
use traffic_cop_wasm_host::component::v1::Error;
use traffic_cop_wasm_host::component::{self as host, fresh};

/// A lock in a container of its own, so tests running in parallel never meet.
fn new_lock(connection_string: String) -> Lock {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    Lock {
        connection_string,
        container: format!("t{}-{n}", std::process::id()),
        blob: "jobs/nightly".into(),
    }
}

fn azurite_lock() -> Lock {
    new_lock(Azurite::shared().connection_string())
}

const FIXED_15: LeaseDuration = LeaseDuration::Fixed(15);

fn component_exports_lease_and_guard_and_imports_only_wasi() {
    let host = host::Host::shared();
    let ty = host.component.component_type();
    let exports: Vec<String> = ty.exports(&host.engine).map(|(name, _)| name.to_string()).collect();
    let imports: Vec<String> = ty.imports(&host.engine).map(|(name, _)| name.to_string()).collect();
    println!("exports: {exports:?}\nimports: {imports:?}");
    // The 1.0 contract, one version of it, and nothing else.
    assert_eq!(exports, ["traffic-cop:lease/lease@1.0.0", "traffic-cop:lease/guard@1.0.0"]);
    assert!(imports.iter().all(|i| i.starts_with("wasi:")), "{imports:?}");
    assert!(
        imports.iter().any(|i| i.starts_with("wasi:http/outgoing-handler@0.2.")),
        "{imports:?}"
    );
    assert!(!imports.iter().any(|i| i.contains("spin")), "{imports:?}");
}

/// docs/performance.md's sizes (`| \`name.wasm\` | about N KiB |`) are the built components',
/// within 2 %: a figure that drifted further is stale.
fn the_sizes_in_the_docs_are_the_built_components() {
    let page = traffic_cop_testbed::repo_root().join("docs/performance.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let built = [
        ("traffic_cop.wasm", traffic_cop_testbed::built::lease_component()),
        ("traffic_cop_async.wasm", traffic_cop_testbed::built::async_components().0),
    ];
    for (name, path) in built {
        let bytes = std::fs::metadata(&path).unwrap().len() as f64;
        let row = text.lines().find(|l| l.starts_with(&format!("| `{name}` | about ")));
        let row = row.unwrap_or_else(|| panic!("no size row for {name} in {}", page.display()));
        let kib: f64 = row
            .split("about ")
            .nth(1)
            .and_then(|s| s.split(" KiB").next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{row}"));
        let built_kib = bytes / 1024.0;
        assert!(
            (kib - built_kib).abs() <= built_kib * 0.02,
            "docs/performance.md says {name} is about {kib} KiB; it is {built_kib:.0} KiB"
        );
    }
}

/// Each lease artifact stays within the size it had when the contract was settled (649 KiB for
/// WASI 0.2, 714 KiB async): a user downloads it, and every host compiles it.
fn the_lease_artifacts_stay_within_their_size_budgets() {
    let built = [
        ("traffic_cop.wasm", traffic_cop_testbed::built::lease_component(), 649),
        ("traffic_cop_async.wasm", traffic_cop_testbed::built::async_components().0, 714),
    ];
    for (name, path, budget_kib) in built {
        let kib = std::fs::metadata(&path).unwrap().len().div_ceil(1024);
        assert!(kib <= budget_kib, "{name} is {kib} KiB, over its {budget_kib} KiB budget");
    }
}

/// The async artifact exports the same one version of the contract, and `hold` beside it.
fn the_async_component_exports_the_contract_and_hold_only() {
    let (wasm, _) = traffic_cop_testbed::built::async_components();
    let mut config = traffic_cop_wasm_host::compiled::config();
    config.wasm_component_model_async(true);
    let engine = traffic_cop_wasm_host::wasmtime::Engine::new(&config).unwrap();
    let component = traffic_cop_wasm_host::compiled::component_file(&engine, &wasm).unwrap();
    let ty = component.component_type();
    let exports: Vec<String> = ty.exports(&engine).map(|(name, _)| name.to_string()).collect();
    assert_eq!(
        exports,
        [
            "traffic-cop:lease/lease@1.0.0",
            "traffic-cop:lease/guard@1.0.0",
            "traffic-cop:lease/hold@0.5.0"
        ]
    );
}

fn every_verb_round_trips_and_counts_its_requests() {
    let azurite = Azurite::shared();
    let proxy = CountingProxy::start(azurite.port);
    let lock = new_lock(connection_string_for_port(proxy.port, EMULATOR_KEY_B64));
    let measure = |name: &str, expected: u64, call: &mut dyn FnMut()| {
        let before = proxy.requests();
        call();
        let trips = proxy.requests() - before;
        println!("round trips: {name} = {trips}");
        assert_eq!(trips, expected, "{name}");
    };

    let mut grant = None;
    measure("acquire (first use: container + blob created)", 4, &mut || {
        grant = Some(fresh().acquire(&lock, FIXED_15, None).unwrap());
    });
    let id = grant.unwrap().lease_id;
    measure("inspect", 1, &mut || {
        let status = fresh().inspect(&lock).unwrap();
        assert_eq!(
            (status.state, status.locked, status.infinite),
            (LeaseState::Leased, true, Some(false))
        );
    });
    measure("renew", 1, &mut || assert_eq!(fresh().renew(&lock, &id).unwrap().lease_id, id));
    let new_id = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
    measure("change", 1, &mut || {
        assert_eq!(fresh().change(&lock, &id, new_id).unwrap().lease_id, new_id)
    });
    measure("renew with the old id", 1, &mut || {
        assert!(matches!(fresh().renew(&lock, &id), Err(Error::LeaseLost(_))));
    });
    measure("release", 1, &mut || fresh().release(&lock, new_id).unwrap());
    measure("inspect", 1, &mut || {
        assert_eq!(fresh().inspect(&lock).unwrap().state, LeaseState::Available)
    });
    measure("acquire (steady state)", 1, &mut || {
        fresh().acquire(&lock, LeaseDuration::Infinite, Some(new_id)).unwrap();
    });
    measure("break-lease", 1, &mut || assert_eq!(fresh().break_lease(&lock, Some(0)).unwrap(), 0));
    measure("inspect", 1, &mut || {
        assert_eq!(fresh().inspect(&lock).unwrap().state, LeaseState::Broken)
    });
}

fn a_second_holder_is_told_held_by_other_and_a_retried_acquire_is_idempotent() {
    let lock = azurite_lock();
    let id = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    fresh().acquire(&lock, FIXED_15, Some(id)).unwrap();
    match fresh().acquire(&lock, FIXED_15, None) {
        Err(Error::HeldByOther(e)) => {
            assert_eq!((e.status, e.code.as_deref()), (409, Some("LeaseAlreadyPresent")));
            assert!(e.request_id.is_some());
        }
        other => panic!("expected held-by-other, got {other:?}"),
    }
    // The same proposed id again is what a retry after a lost answer sends: it succeeds.
    assert_eq!(fresh().acquire(&lock, FIXED_15, Some(id)).unwrap().lease_id, id);
}

fn racing_first_acquires_create_the_lock_once_and_elect_exactly_one_holder() {
    let lock = azurite_lock();
    let outcomes: Vec<_> = (0..6)
        .map(|_| {
            let lock = lock.clone();
            std::thread::spawn(move || fresh().acquire(&lock, FIXED_15, None))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let winners = outcomes.iter().filter(|o| o.is_ok()).count();
    let held = outcomes.iter().filter(|o| matches!(o, Err(Error::HeldByOther(_)))).count();
    assert_eq!((winners, held), (1, 5), "{outcomes:?}");
}

fn an_expired_lease_lets_the_next_holder_in() {
    let lock = azurite_lock();
    let first = fresh().acquire(&lock, FIXED_15, None).unwrap().lease_id;
    let started = Instant::now();
    assert!(matches!(fresh().acquire(&lock, FIXED_15, None), Err(Error::HeldByOther(_))));
    std::thread::sleep(Duration::from_secs(16).saturating_sub(started.elapsed()));
    assert_eq!(fresh().inspect(&lock).unwrap().state, LeaseState::Expired);
    let second = fresh().acquire(&lock, FIXED_15, None).unwrap().lease_id;
    assert_ne!(first, second);
    assert!(matches!(fresh().renew(&lock, &first), Err(Error::LeaseLost(_))));
}

fn break_periods_behave_as_documented() {
    // Infinite lease, no period: broken at once, and anyone may acquire.
    let lock = azurite_lock();
    fresh().acquire(&lock, LeaseDuration::Infinite, None).unwrap();
    assert_eq!(fresh().break_lease(&lock, None).unwrap(), 0);
    fresh().acquire(&lock, FIXED_15, None).unwrap();

    // Fixed lease, no period: it keeps breaking until its original end.
    let remaining = fresh().break_lease(&lock, None).unwrap();
    assert!((13..=15).contains(&remaining), "{remaining}");

    // Fixed lease, period 2: the holder loses it, nobody gets it until the period is over.
    let lock = azurite_lock();
    let holder = fresh().acquire(&lock, FIXED_15, None).unwrap().lease_id;
    assert_eq!(fresh().break_lease(&lock, Some(2)).unwrap(), 2);
    assert_eq!(fresh().inspect(&lock).unwrap().state, LeaseState::Breaking);
    assert!(matches!(fresh().renew(&lock, &holder), Err(Error::LeaseLost(_))));
    assert!(matches!(fresh().acquire(&lock, FIXED_15, None), Err(Error::HeldByOther(_))));
    std::thread::sleep(Duration::from_millis(3200));
    assert_eq!(fresh().inspect(&lock).unwrap().state, LeaseState::Broken);
    fresh().acquire(&lock, FIXED_15, None).unwrap();
}

fn a_missing_blob_in_an_existing_container_is_created() {
    let lock = azurite_lock();
    fresh().acquire(&lock, FIXED_15, None).unwrap();
    let sibling = Lock { blob: "other".into(), ..lock };
    assert!(matches!(fresh().inspect(&sibling), Err(Error::NotFound(_))));
    fresh().acquire(&sibling, FIXED_15, None).unwrap();
    assert_eq!(fresh().inspect(&sibling).unwrap().state, LeaseState::Leased);
}

fn a_wrong_key_is_unauthorized_with_a_hint() {
    let wrong_key = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ==";
    let lock = new_lock(connection_string_for_port(Azurite::shared().port, wrong_key));
    match fresh().acquire(&lock, FIXED_15, None) {
        Err(Error::Unauthorized(e)) => {
            assert_eq!(e.status, 403);
            // Azurite answers a bad signature with AuthorizationFailure, whose message names the
            // key among its causes (a clock off by 15 minutes is Azure's AuthenticationFailed).
            assert!(e.message.contains("wrong account key"), "{}", e.message);
            assert!(!format!("{e:?}").contains(wrong_key));
        }
        other => panic!("expected unauthorized, got {other:?}"),
    }
}

fn a_stopped_emulator_is_a_transport_error_not_a_trap() {
    let azurite = Azurite::start();
    let lock = new_lock(azurite.connection_string());
    let id = fresh().acquire(&lock, FIXED_15, None).unwrap().lease_id;
    azurite.stop();
    let started = Instant::now();
    match fresh().renew(&lock, &id) {
        Err(Error::Transport(detail)) => assert!(detail.contains("Connect"), "{detail}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    println!("transport failure reported after {:?} (retries included)", started.elapsed());
}

fn bad_input_is_a_typed_error_before_any_request() {
    // Port 9 (discard) has no listener here: had anything been sent, this would be a transport
    // error rather than the typed refusal each case expects.
    let good = connection_string_for_port(9, EMULATOR_KEY_B64);
    let lock = |cs: &str, container: &str, blob: &str| Lock {
        connection_string: cs.into(),
        container: container.into(),
        blob: blob.into(),
    };
    let config_cases = [
        "",
        "garbage",
        "AccountName=abc;AccountKey=%%%",
        "BlobEndpoint=file:///etc;SharedAccessSignature=x=1",
    ];
    for cs in config_cases {
        assert!(
            matches!(fresh().inspect(&lock(cs, "abc", "x")), Err(Error::InvalidConfig(_))),
            "{cs:?}"
        );
    }
    let name_cases = [
        ("AB", "x"),
        ("a".repeat(64).as_str(), "x"),
        ("abc", ""),
        ("abc", "../x"),
        ("abc", "a\u{0}b"),
        ("abc", &"x".repeat(1025)),
    ]
    .map(|(c, b)| (c.to_string(), b.to_string()));
    for (container, blob) in name_cases {
        let result = fresh().acquire(&lock(&good, &container, &blob), FIXED_15, None);
        assert!(
            matches!(result, Err(Error::InvalidArgument(_))),
            "{container:?}/{blob:?}: {result:?}"
        );
    }
    let ok = lock(&good, "abc", "x");
    for seconds in [0, 14, 61, u32::MAX] {
        assert!(matches!(
            fresh().acquire(&ok, LeaseDuration::Fixed(seconds), None),
            Err(Error::InvalidArgument(_))
        ));
    }
    assert!(matches!(fresh().acquire(&ok, FIXED_15, Some("nope")), Err(Error::InvalidArgument(_))));
    assert!(matches!(fresh().renew(&ok, "nope"), Err(Error::InvalidArgument(_))));
    assert!(matches!(fresh().change(&ok, "nope", "also-nope"), Err(Error::InvalidArgument(_))));
    assert!(matches!(fresh().release(&ok, ""), Err(Error::InvalidArgument(_))));
    assert!(matches!(fresh().break_lease(&ok, Some(61)), Err(Error::InvalidArgument(_))));
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        component_exports_lease_and_guard_and_imports_only_wasi,
        the_sizes_in_the_docs_are_the_built_components,
        the_lease_artifacts_stay_within_their_size_budgets,
        the_async_component_exports_the_contract_and_hold_only,
        every_verb_round_trips_and_counts_its_requests,
        a_second_holder_is_told_held_by_other_and_a_retried_acquire_is_idempotent,
        racing_first_acquires_create_the_lock_once_and_elect_exactly_one_holder,
        an_expired_lease_lets_the_next_holder_in,
        break_periods_behave_as_documented,
        a_missing_blob_in_an_existing_container_is_created,
        a_wrong_key_is_unauthorized_with_a_hint,
        a_stopped_emulator_is_a_transport_error_not_a_trap,
        bad_input_is_a_typed_error_before_any_request,
    ]
}

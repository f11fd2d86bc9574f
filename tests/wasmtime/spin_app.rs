//! The Spin app: spin.toml is checked against the build, the app's components are composed with
//! the lease component as the manifest declares, and their real exports (the cron trigger's
//! `handle-cron-event`, `wasi:http/incoming-handler`) are driven in the test host against
//! Azurite.

use traffic_cop_testbed::runner::Test;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::apps::{app_wasm, compose, App};
use traffic_cop_wasm_host::component::{fresh, v1, Host};

fn manifest() -> toml::Table {
    let text = std::fs::read_to_string(traffic_cop_testbed::repo_root().join("spin.toml")).unwrap();
    text.parse().expect("spin.toml parses")
}

fn apps() -> &'static (App, App) {
    static APPS: OnceLock<(App, App)> = OnceLock::new();
    APPS.get_or_init(|| {
        let engine = &Host::shared().engine;
        (App::load(engine, "cron_job").unwrap(), App::load(engine, "http_job").unwrap())
    })
}

/// Every minute: a lock created by its first tick owes the minute's due time its run (the guard
/// owes a due time up to a minute before the lock existed), so the first tick runs.
fn variables(container: &str, holder: &str) -> BTreeMap<String, String> {
    [
        ("connection_string", Azurite::shared().connection_string()),
        ("container", container.to_string()),
        ("lock", "nightly-cleanup".to_string()),
        ("holder", holder.to_string()),
        ("lease_seconds", "15".to_string()),
        ("schedule", traffic_cop_testbed::spin::every(60)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The container's locks as the board shows them, read straight from Azurite.
fn board(container: &str) -> Vec<v1::BoardEntry> {
    let connection_string = Azurite::shared().connection_string();
    let settings = v1::settings(&connection_string, container, "nightly-cleanup", "test-host");
    fresh().board(&settings).unwrap().locks
}

fn the_manifest_matches_the_build() {
    let manifest = manifest();
    assert_eq!(manifest["spin_manifest_version"].as_integer(), Some(2));
    let variables = manifest["variables"].as_table().unwrap();
    assert_eq!(
        variables["connection_string"]["secret"].as_bool(),
        Some(true),
        "the connection string is a secret"
    );
    let components = manifest["component"].as_table().unwrap();
    let triggers = manifest["trigger"].as_table().unwrap();
    assert_eq!(triggers["cron"][0]["component"].as_str(), Some("cron-job"));
    assert_eq!(triggers["http"][0]["component"].as_str(), Some("http-job"));
    for (id, crate_name) in [("cron-job", "cron_job"), ("http-job", "http_job")] {
        let component = components[id].as_table().unwrap();
        let source = component["source"].as_str().unwrap();
        assert_eq!(source, format!("target/wasm32-wasip2/release/{crate_name}.wasm"), "{id}");
        let build = component["build"]["command"].as_str().unwrap();
        assert!(
            build.contains(&format!("-p {id}"))
                && build.contains("--target wasm32-wasip2 --release"),
            "{id}: {build}"
        );
        assert!(
            traffic_cop_testbed::repo_root().join(source).is_file(),
            "{source} is produced by the build"
        );
        assert_eq!(component["allowed_outbound_hosts"][0].as_str(), Some("{{ storage_endpoint }}"));
        assert_eq!(
            component["dependencies_inherit_configuration"].as_bool(),
            Some(true),
            "{id} passes its permissions on"
        );
        let dependencies = component["dependencies"].as_table().unwrap();
        let keys: Vec<&String> = dependencies.keys().collect();
        assert_eq!(keys, ["traffic-cop:lease"], "{id}");
        let path = dependencies["traffic-cop:lease"]["path"].as_str().unwrap();
        assert_eq!(path, "target/wasm32-wasip2/release/traffic_cop.wasm");
        assert_eq!(
            traffic_cop_testbed::repo_root().join(path),
            traffic_cop_wasm_host::component::wasm_path()
        );

        // Every traffic-cop import of the app names our package and version, and the lease
        // component exports it.
        let app = traffic_cop_wasm_host::compiled::component_file(
            &Host::shared().engine,
            app_wasm(crate_name),
        )
        .unwrap();
        let imports: Vec<String> = app
            .component_type()
            .imports(&Host::shared().engine)
            .map(|(n, _)| n.to_string())
            .collect();
        let ours: Vec<&String> = imports.iter().filter(|i| i.starts_with("traffic-cop:")).collect();
        assert!(!ours.is_empty(), "{id} imports {imports:?}");
        let lease = &Host::shared().component;
        let exports: Vec<String> = lease
            .component_type()
            .exports(&Host::shared().engine)
            .map(|(n, _)| n.to_string())
            .collect();
        // The app is on the 1.0 contract: the guard, and the raw interface for Entra ID tokens.
        assert_eq!(
            ours,
            ["traffic-cop:lease/lease@1.0.0", "traffic-cop:lease/guard@1.0.0"],
            "{id} imports {imports:?}"
        );
        for import in ours {
            assert!(exports.contains(import), "{id}: {import} not exported by the lease component");
        }
    }
    let vars = |id: &str| {
        components[id]["variables"].as_table().unwrap().keys().cloned().collect::<Vec<_>>()
    };
    assert_eq!(vars("cron-job"), vars("http-job"));
    for key in vars("cron-job") {
        assert!(
            variables.contains_key(&key),
            "component variable {key} has an application variable"
        );
    }
}

fn composition_satisfies_every_traffic_cop_import() {
    for name in ["cron_job", "http_job"] {
        let composed =
            compose(&app_wasm(name), &traffic_cop_wasm_host::component::wasm_path()).unwrap();
        let engine = &Host::shared().engine;
        let component = traffic_cop_wasm_host::compiled::component(engine, &composed).unwrap();
        let imports: Vec<String> =
            component.component_type().imports(engine).map(|(n, _)| n.to_string()).collect();
        println!("{name} composed: {} KiB, imports {imports:?}", composed.len() / 1024);
        assert!(!imports.iter().any(|i| i.starts_with("traffic-cop:")), "{imports:?}");
        // What remains is what Spin provides: WASI, variables, key-value (the board cache and
        // kept tokens), and (cron) the trigger's types.
        let provided = [
            "wasi:",
            "fermyon:spin/variables@2.0.0",
            "fermyon:spin/key-value@2.0.0",
            "fermyon:spin-cron/cron-types@2.0.0",
        ];
        assert!(imports.iter().all(|i| provided.iter().any(|p| i.starts_with(p))), "{imports:?}");
    }
}

/// The wrappers ask their host for nothing Spin-specific: WASI (settings through
/// `wasi:config/store`), the trigger's types, the guard, and the wrapped job's handler. Nor
/// does `#[guarded]` add anything Spin-specific to the handler it guards.
fn the_wrappers_import_nothing_spin_specific() {
    traffic_cop_testbed::built::assert_app_built();
    let engine = &Host::shared().engine;
    // Each wrapper, the trigger's types it uses, and the import the wrapped job fills.
    let guarded = traffic_cop_testbed::built::wrapped_job("guarded");
    for (wasm, trigger_types, job) in [
        (app_wasm("cron_wrapper_async"), "spin:cron/cron-types@3.0.0", "handle-cron-event"),
        (app_wasm("cron_wrapper"), "fermyon:spin-cron/cron-types@2.0.0", "handle-cron-event"),
        (app_wasm("cron_wrapper_job"), "spin:cron/cron-types@3.0.0", "traffic-cop:job/job@0.1.0"),
        (
            app_wasm("http_wrapper_async"),
            "wasi:http/types@",
            "wasi:http/handler@0.3.0-rc-2026-03-15",
        ),
        // The guard is what the attribute imports in place of a wrapped job.
        (guarded, "wasi:http/types@", "traffic-cop:lease/guard@1.0.0"),
    ] {
        let name = wasm.file_stem().unwrap().to_string_lossy().into_owned();
        let wrapper = traffic_cop_wasm_host::compiled::component_file(engine, &wasm).unwrap();
        let imports: Vec<String> =
            wrapper.component_type().imports(engine).map(|(n, _)| n.to_string()).collect();
        let standard = ["wasi:", trigger_types, job, "traffic-cop:lease/"];
        let other: Vec<&String> =
            imports.iter().filter(|i| !standard.iter().any(|s| i.starts_with(s))).collect();
        assert!(
            other.is_empty(),
            "{name} imports {other:?} beyond the standard (all: {imports:?})"
        );
        assert!(imports.iter().any(|i| i == job), "{imports:?}");
        assert!(imports.iter().any(|i| i.starts_with("wasi:config/store@")), "{imports:?}");
        println!("{name} imports {imports:?}");
    }
}

fn cron_replicas_run_the_job_once_per_interval() {
    let (cron, _) = apps();
    let container = format!("cron{}", std::process::id());
    traffic_cop_testbed::room_in_minute(20);
    let printed: Vec<String> = (0..3)
        .map(|replica| {
            let vars = variables(&container, &format!("replica-{replica}"));
            cron.cron_tick(&vars, 1_700_000_000, None).unwrap()
        })
        .collect();
    // The tick woke the replica; the line names the due time it ran for (this minute's, by
    // the storage service's clock), not the tick.
    assert!(
        printed[0].contains(
            "woken by the cron tick of 2023-11-14T22:13:20Z: [replica-0] ran for the due time 20"
        ) && printed[0].contains(":00Z with fencing token 1: janitor report"),
        "{printed:?}"
    );
    for later in &printed[1..] {
        assert!(
            later.contains("skipped the due time 20")
                && later.contains(":00Z: already ran for the due time")
                && later.contains(": the run replica-0 started at "),
            "{printed:?}"
        );
    }
    let entries = board(&container);
    let lock = entries.iter().find(|e| e.name == "nightly-cleanup").expect("the job's lock");
    assert_eq!((lock.fencing_token, lock.holder.as_deref()), (1, Some("replica-0")));
    assert_eq!((lock.running, lock.last_outcome.as_deref()), (false, Some("success")));
}

fn a_cron_component_with_a_missing_variable_reports_which() {
    let (cron, _) = apps();
    let mut partial = variables("cronbad", "r");
    partial.remove("container");
    let error = cron.cron_tick(&partial, 1, None).unwrap_err();
    assert!(error.contains("set the `container` variable: is not set"), "{error}");
}

fn http_component_runs_the_job_and_renders_the_board() {
    let (_, http) = apps();
    let container = format!("http{}", std::process::id());
    traffic_cop_testbed::room_in_minute(20);
    let vars = variables(&container, "web-1");
    let (status, content_type, body) = http.http(&vars, "POST", "/run").unwrap();
    assert_eq!((status, content_type.as_str()), (200, "application/json"), "{body}");
    let report: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (report["decision"].as_str(), report["fencing_token"].as_u64()),
        (Some("run"), Some(1)),
        "{body}"
    );
    assert!(report["detail"].as_str().unwrap().contains("janitor report: 1 locks"), "{body}");

    let second = http.http(&variables(&container, "web-2"), "POST", "/run").unwrap();
    let report: serde_json::Value = serde_json::from_str(&second.2).unwrap();
    assert_eq!(report["decision"].as_str(), Some("skip"), "{}", second.2);
    assert!(report["detail"].as_str().unwrap().contains("already ran for the due time"));
    assert!(
        report["detail"].as_str().unwrap().contains("the run web-1 started at"),
        "{}",
        second.2
    );

    let (status, content_type, body) = http.http(&vars, "GET", "/status").unwrap();
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    let board: serde_json::Value = serde_json::from_str(&body).unwrap();
    let rows = &board["locks"];
    assert_eq!(rows[0]["name"].as_str(), Some("nightly-cleanup"));
    assert_eq!(rows[0]["holder"].as_str(), Some("web-1"));
    assert_eq!(rows[0]["last_outcome"].as_str(), Some("success"));

    let (status, content_type, html) = http.http(&vars, "GET", "/status.html").unwrap();
    assert_eq!((status, content_type.as_str()), (200, "text/html; charset=utf-8"));
    assert!(
        html.contains("<td>nightly-cleanup</td>")
            && html.contains("by web-1")
            && html.contains("class=\"run success\"")
            && html.contains("<th>fencing token</th>"),
        "{html}"
    );
    assert!(!html.contains("AccountKey") && !body.contains("AccountKey"), "no secret in the board");

    let (status, _, _) = http.http(&vars, "GET", "/elsewhere").unwrap();
    assert_eq!(status, 404);
}

fn an_overlapping_tick_of_the_same_replica_says_its_previous_tick_is_still_working() {
    let (cron, _) = apps();
    let container = format!("overlap{}", std::process::id());
    traffic_cop_testbed::room_in_minute(20);
    let mut vars = variables(&container, "solo");
    vars.insert("work_ms".into(), "3000".into());
    // Without the memory of its first tick's look, which would skip without asking.
    vars.insert("refresh_seconds".into(), "0".into());
    let first = std::thread::spawn({
        let vars = vars.clone();
        move || apps().0.cron_tick(&vars, 1_700_000_000, None)
    });
    // The first tick is granted and working once the board shows it running.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !board(&container).iter().any(|e| e.running) {
        assert!(std::time::Instant::now() < deadline, "the first tick never started its run");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let second = cron.cron_tick(&vars, 1_700_000_001, None).unwrap();
    assert!(
        second.contains("[solo] skipped the due time ")
            && second.contains(": the previous tick of this replica is still working")
            && !second.contains(": held by solo"),
        "{second}"
    );
    let first = first.join().unwrap().unwrap();
    assert!(
        first.contains("[solo] ran for the due time ") && first.contains(" with fencing token 1: "),
        "{first}"
    );
}

/// What the last look taught lives in the replica's key-value store: with it, a follower's
/// second tick in a minute sends no request; without a store (a manifest without
/// `key_value_stores`), every tick asks once, as before.
fn a_replica_without_a_store_asks_storage_on_every_tick() {
    let proxy = CountingProxy::start(Azurite::shared().port);
    let storage = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
    let (cron, _) = apps();
    let bare = App::load(&Host::shared().engine, "cron_job").unwrap().without_store();
    let container = format!("nostore{}", std::process::id());
    let vars = |holder: &str| {
        let mut vars = variables(&container, holder);
        vars.insert("connection_string".into(), storage.clone());
        vars
    };
    traffic_cop_testbed::room_in_minute(20);
    let ran = cron.cron_tick(&vars("leader"), 1, None).unwrap();
    assert!(ran.contains("[leader] ran for the due time"), "{ran}");
    let tick = |app: &App, holder: &str| {
        let before = proxy.requests();
        let said = app.cron_tick(&vars(holder), 1, None).unwrap();
        (proxy.requests() - before, said)
    };
    let (sent, said) = tick(cron, "kept");
    assert!(sent == 1 && said.contains(": already ran for the due time"), "{sent}: {said}");
    let (sent, said) = tick(cron, "kept");
    assert!(sent == 0 && said.contains("skipped: not asking storage"), "{sent}: {said}");
    for _ in 0..2 {
        let (sent, said) = tick(&bare, "bare");
        assert!(sent == 1 && said.contains(": already ran for the due time"), "{sent}: {said}");
    }
}

/// Everything the app's components print and answer, for a run, a skip, the board, the metrics,
/// the settings check and the operator's routes, and for a wrong key, a SAS and an unusable
/// connection string: no account key in any encoding, no SAS signature, no board token.
fn no_line_the_app_prints_or_answers_holds_a_secret() {
    let (cron, http) = apps();
    let container = format!("secrets-{}", std::process::id());
    let board_token = "board-token-marker-7f3a9c";
    let sig = "c2VjcmV0LXNpZ25hdHVyZS1tYXJrZXI%3D";
    let wrong_key = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXk=";
    let port = Azurite::shared().port;
    let mut marked = crate::wasmtime::contract::secrets(traffic_cop_testbed::EMULATOR_KEY_B64, sig);
    marked.extend(crate::wasmtime::contract::secrets(wrong_key, sig));
    marked.push(board_token.to_string());
    let auth = format!("Bearer {board_token}");
    let mut said: Vec<String> = Vec::new();
    let good = traffic_cop_testbed::azurite::connection_string_for_port(
        port,
        traffic_cop_testbed::EMULATOR_KEY_B64,
    );
    let connection_strings = [
        good.clone(),
        traffic_cop_testbed::azurite::connection_string_for_port(port, wrong_key),
        format!(
            "BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;SharedAccessSignature=sv=2020-08-04&ss=b&srt=sco&sp=rwdlac&se=2099-01-01T00:00:00Z&sig={sig}"
        ),
        format!(
            "AccountName=devstoreaccount1;AccountKey={}\
             ;BlobEndpoint=ftp://nowhere",
            traffic_cop_testbed::EMULATOR_KEY_B64
        ),
    ];
    for (i, connection_string) in connection_strings.iter().enumerate() {
        let mut vars = variables(&container, &format!("replica-{i}"));
        vars.insert("connection_string".into(), connection_string.clone());
        vars.insert("board_token".into(), board_token.into());
        for tick in [1_795_900_000, 1_795_900_001] {
            match cron.cron_tick(&vars, tick, None) {
                Ok(printed) => said.push(printed),
                Err(failed) => said.push(failed),
            }
        }
        for (method, path) in [
            ("POST", "/run"),
            ("GET", "/status"),
            ("GET", "/status.html"),
            ("GET", "/metrics"),
            ("GET", "/check"),
            ("POST", "/pause?by=ops&reason=deploy"),
            ("POST", "/run-now?by=ops"),
            ("POST", "/resume?by=ops"),
        ] {
            let headers = [("Authorization", auth.as_str()), ("Accept", "text/plain")];
            match http.serve_with(&vars, method, path, &headers, None) {
                Ok(answer) => {
                    said.push(format!("{} {}\n{}", answer.status, answer.body, answer.stdout))
                }
                Err(failed) => said.push(failed),
            }
        }
    }
    for text in &said {
        for secret in &marked {
            assert!(!text.contains(secret.as_str()), "a secret ({secret}) in {text}");
        }
    }
    // The runs, the refusals and the operator's answers were heard: the check is not passing
    // on empty texts.
    let all = said.concat();
    for heard in ["with fencing token", "403", "connection_string", "paused"] {
        assert!(all.contains(heard), "nothing said {heard:?}: {said:#?}");
    }
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        no_line_the_app_prints_or_answers_holds_a_secret,
        the_manifest_matches_the_build,
        composition_satisfies_every_traffic_cop_import,
        the_wrappers_import_nothing_spin_specific,
        cron_replicas_run_the_job_once_per_interval,
        a_cron_component_with_a_missing_variable_reports_which,
        http_component_runs_the_job_and_renders_the_board,
        an_overlapping_tick_of_the_same_replica_says_its_previous_tick_is_still_working,
        a_replica_without_a_store_asks_storage_on_every_tick,
    ]
}

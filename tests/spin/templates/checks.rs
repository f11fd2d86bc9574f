//! What `spin new` generated and what cargo built from it, checked before anything runs.

use super::{root, Template};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use traffic_cop_wasm_host::wasmtime::component::types::ComponentItem;
use traffic_cop_wasm_host::wasmtime::Engine;

/// The template engine rendered our parameters but left Spin's own `{{ var }}` expressions
/// alone, and the vendored WIT is the contract's current text.
pub(super) fn check_generated(template: &Template, project: &Path) {
    let read = |path: &str| {
        std::fs::read_to_string(project.join(path))
            .unwrap_or_else(|e| panic!("{}: {path}: {e}", template.id))
    };
    let manifest = read("spin.toml");
    assert!(manifest.contains(&format!("[component.{}]", template.name)), "{manifest}");
    assert!(
        manifest.contains(r#"allowed_outbound_hosts = ["{{ storage_endpoint }}"]"#),
        "{manifest}"
    );
    assert!(manifest.contains(r#"connection_string = "{{ connection_string }}""#), "{manifest}");
    assert!(manifest.contains(r#"cron_expression = "*/2 * * * * *""#), "{manifest}");
    assert!(manifest.contains(r#"schedule = { default = "*/2 * * * * *" }"#), "{manifest}");
    assert!(manifest.contains(r#"time_zone = { default = "Asia/Kathmandu" }"#), "{manifest}");
    assert!(
        manifest.contains(&format!(
            r#""traffic-cop:lease" = {{ path = "{}" }}"#,
            template.lease().display()
        )),
        "{manifest}"
    );
    assert!(!manifest.contains("{%") && !manifest.contains("project-name"), "{manifest}");
    let cargo: toml::Value = toml::from_str(&read("Cargo.toml")).expect("Cargo.toml parses");
    for (name, dep) in cargo["dependencies"].as_table().unwrap() {
        assert!(
            dep.get("git").is_none() && dep.get("path").is_none(),
            "{name} is not from crates.io"
        );
    }
    // The contract, one file (`hold` is nested in it), as the lease component is built from.
    let vendored = ["lease.wit"];
    for wit in vendored {
        let ours = std::fs::read_to_string(root().join("wit").join(wit)).unwrap();
        assert_eq!(
            read(&format!("wit/deps/traffic-cop-lease/{wit}")),
            ours,
            "templates/{}: wit/{wit} drifted",
            template.id
        );
    }
    assert!(read("wit/deps/spin-cron/cron.wit").contains(template.cron_wit));
}

/// Imports the 1.0 guard and the lease interface its types come from (and the async template
/// `hold`), nothing else of traffic-cop's, and exports the cron handler with the plugin line's
/// calling convention.
pub(super) fn check_component(template: &Template, wasm: &Path) {
    let mut config = traffic_cop_wasm_host::compiled::config();
    config.wasm_component_model_async(true);
    let engine = Engine::new(&config).expect("engine");
    let component = traffic_cop_wasm_host::compiled::component_file(&engine, wasm)
        .expect("the template's component compiles");
    let ty = component.component_type();
    let imports: Vec<String> = ty.imports(&engine).map(|(name, _)| name.to_string()).collect();
    let ours: Vec<&String> = imports.iter().filter(|n| n.starts_with("traffic-cop:")).collect();
    let want: &[&str] = if template.is_async {
        &[
            "traffic-cop:lease/guard@1.0.0",
            "traffic-cop:lease/hold@0.5.0",
            "traffic-cop:lease/lease@1.0.0",
        ]
    } else {
        &["traffic-cop:lease/guard@1.0.0", "traffic-cop:lease/lease@1.0.0"]
    };
    let mut ours = ours;
    ours.sort();
    assert_eq!(ours, want, "{}: imports {imports:?}", template.id);
    let exports: Vec<(String, ComponentItem)> =
        ty.exports(&engine).map(|(n, i)| (n.to_string(), i.ty)).collect();
    let handler = exports.iter().find(|(n, _)| n == "handle-cron-event");
    match handler {
        Some((_, ComponentItem::ComponentFunc(func))) => {
            assert_eq!(func.async_(), template.is_async, "{}: async export", template.id)
        }
        other => panic!("{}: no handle-cron-event func export: {other:?}", template.id),
    }
}

/// Every package the project's lock shares with the workspace's Cargo.lock is at its versions (the
/// build reuses the apps' compiled dependencies only then).
pub(super) fn check_lock_follows_apps(template: &Template, lock: &str) {
    let apps = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock");
    let apps = lock_versions(&apps);
    for (name, versions) in lock_versions(lock) {
        if let Some(apps_versions) = apps.get(&name) {
            assert!(
                versions.is_subset(apps_versions),
                "{}: {name} {versions:?} resolved apart from Cargo.lock's {apps_versions:?}",
                template.id
            );
        }
    }
}

/// Package name to its versions, from a Cargo.lock.
fn lock_versions(lock: &str) -> BTreeMap<String, BTreeSet<String>> {
    let lock: toml::Value = toml::from_str(lock).expect("Cargo.lock parses");
    let mut versions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for package in lock["package"].as_array().expect("[[package]] entries") {
        let field = |key: &str| package[key].as_str().expect("name and version").to_string();
        versions.entry(field("name")).or_default().insert(field("version"));
    }
    versions
}

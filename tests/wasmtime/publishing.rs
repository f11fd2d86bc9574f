//! Publishing: wkg.toml is a manifest wasm-pkg-tools accepts, CHANGELOG.md names every
//! version of `traffic-cop:lease` the WIT declares, and real Spin parses the registry form of
//! the component dependency README documents (and goes to that registry for it; the registry
//! here is a closed port on 127.0.0.1, so nothing leaves the machine).

use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::{opt_in, Test};

use crate::run::{run, scratch};
use std::process::Command;
use std::time::Duration;
use traffic_cop_testbed::spin::{find_spin, free_port};

fn read(path: &str) -> String {
    std::fs::read_to_string(traffic_cop_testbed::repo_root().join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The keys of wasm-pkg-core's `Manifest` and `Metadata` (both `deny_unknown_fields`), with
/// their aliases: anything else makes `wkg` refuse the file.
fn wkg_toml_has_only_what_wkg_accepts() {
    let manifest: toml::Table = toml::from_str(&read("wkg.toml")).expect("wkg.toml parses");
    for key in manifest.keys() {
        assert!(
            ["overrides", "metadata", "workspace"].contains(&key.as_str()),
            "unknown key {key}"
        );
    }
    let metadata = manifest["metadata"].as_table().expect("[metadata]");
    let known = [
        "authors",
        "author",
        "description",
        "licenses",
        "license",
        "source",
        "repository",
        "homepage",
        "revision",
    ];
    for (key, value) in metadata {
        assert!(known.contains(&key.as_str()), "wkg refuses metadata.{key}");
        assert!(value.is_str(), "metadata.{key} must be a string (authors too, unlike Cargo.toml)");
    }
    for required in ["authors", "description", "license"] {
        assert!(metadata.contains_key(required), "metadata.{required} missing");
    }
    let cargo: toml::Table = toml::from_str(&read("Cargo.toml")).unwrap();
    assert_eq!(metadata["license"].as_str(), cargo["package"]["license"].as_str(), "one license");
}

fn the_changelog_names_every_wit_version() {
    let changelog = read("CHANGELOG.md");
    let mut versions = Vec::new();
    for entry in std::fs::read_dir(traffic_cop_testbed::repo_root().join("wit")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wit") {
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines().map(str::trim) {
                if let Some(rest) = line.strip_prefix("package traffic-cop:lease@") {
                    versions.push(rest.trim_end_matches([';', '{', ' ']).to_string());
                }
            }
        }
    }
    versions.sort();
    versions.dedup();
    assert!(versions.len() >= 2, "found {versions:?}");
    for version in versions {
        assert!(
            changelog.contains(&format!("## traffic-cop:lease@{version} ")),
            "CHANGELOG.md has no section for traffic-cop:lease@{version}"
        );
    }
}

fn spin_up(spin: &std::path::Path, dir: &std::path::Path, dependency: &str) -> String {
    let lease = traffic_cop_wasm_host::component::wasm_path();
    let manifest = format!(
        "spin_manifest_version = 2\n[application]\nname = \"registry-dependency\"\nversion = \"0.1.0\"\n\
         [[trigger.http]]\nroute = \"/...\"\ncomponent = \"job\"\n\
         [component.job]\nsource = \"{}\"\ndependencies_inherit_configuration = true\n\
         [component.job.dependencies]\n{dependency}\n",
        lease.display()
    );
    std::fs::write(dir.join("spin.toml"), manifest).unwrap();
    let ran = run(
        Command::new(spin)
            .args(["up", "--listen", &format!("127.0.0.1:{}", free_port())])
            .env("SPIN_DATA_DIR", dir.join("data"))
            .current_dir(dir),
        Duration::from_secs(60),
    );
    assert!(
        ran.status.is_some_and(|s| !s.success()),
        "spin up ran without its dependency {}",
        ran.said()
    );
    ran.stderr + &ran.stdout
}

fn spin_reads_the_registry_form_of_the_dependency() {
    let spin = require("registry dependency", find_spin());
    let dir = scratch("registry-dependency");
    let port = free_port();
    let said = spin_up(
        &spin,
        &dir,
        &format!(
            "\"traffic-cop:lease\" = {{ version = \"^0.2.0\", package = \"traffic-cop:lease-azure\", registry = \"127.0.0.1:{port}\" }}"
        ),
    );
    assert!(said.contains("Failed to load component dependency `traffic-cop:lease`"), "{said}");
    assert!(
        said.contains(&format!("https://127.0.0.1:{port}/v2/")),
        "did not ask the registry: {said}"
    );
    // The same with a misspelt key: refused when the manifest is read, before any fetch.
    let said = spin_up(
        &spin,
        &dir,
        "\"traffic-cop:lease\" = { versoin = \"^0.2.0\", package = \"traffic-cop:lease-azure\" }",
    );
    assert!(
        said.contains("did not match any variant of untagged enum ComponentDependency"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// scripts/wit-packages builds both versions with wkg, each with wkg.toml's metadata inside.
/// Opt-in (`cargo test -p traffic-cop-built-tests -- --ignored wkg`), CI included: installing wkg costs
/// 5 min 27 s of compiling (`scripts/ecosystem-tools --wkg`), more than this check is worth on
/// every run.
fn both_wit_versions_build_as_wkg_packages_with_their_metadata() {
    let root = traffic_cop_testbed::repo_root();
    let wkg = root.join("target/ecosystem-tools/bin/wkg");
    if !wkg.is_file() {
        require("wkg packages", crate::run::on_path("wkg").map(drop));
    }
    let out = scratch("wit-packages");
    let ran =
        run(Command::new(root.join("scripts/wit-packages")).arg(&out), Duration::from_secs(120));
    assert!(ran.ok(), "scripts/wit-packages {}", ran.said());
    let manifest: toml::Table = toml::from_str(&read("wkg.toml")).unwrap();
    let description = manifest["metadata"]["description"].as_str().unwrap();
    // Each package names its own interfaces: only 0.5.0 has `hold`.
    for (version, present, absent) in [
        ("1.0.0", "traffic-cop:lease/guard@1.0.0", "traffic-cop:lease/hold@0.5.0"),
        ("0.5.0", "traffic-cop:lease/hold@0.5.0", "no such interface"),
    ] {
        let bytes = std::fs::read(out.join(format!("traffic-cop_lease@{version}.wasm")))
            .unwrap_or_else(|e| panic!("{version}: {e} {}", ran.said()));
        let has = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(bytes.starts_with(b"\0asm"), "{version}: not wasm");
        assert!(has(present) && !has(absent), "{version}: {present} missing or {absent} there");
        assert!(has(description), "{version}: the description from wkg.toml is not embedded");
        assert!(has("MIT OR Apache-2.0"), "{version}: the license is not embedded");
    }
    let _ = std::fs::remove_dir_all(out);
}

pub fn tests() -> Vec<Test> {
    let tests = traffic_cop_testbed::tests![
        wkg_toml_has_only_what_wkg_accepts,
        the_changelog_names_every_wit_version,
        spin_reads_the_registry_form_of_the_dependency,
    ];
    let wkg =
        traffic_cop_testbed::tests![both_wit_versions_build_as_wkg_packages_with_their_metadata];
    [tests, opt_in("installing wkg compiles for 5.5 minutes (scripts/ecosystem-tools --wkg)", wkg)]
        .concat()
}

//! The SpinKube manifests in deploy/spinkube, validated offline against the vendored schemas
//! (deploy/spinkube/schemas: the spin-operator SpinApp CRD, Kubernetes 1.34 CronJob and Secret)
//! with check-jsonschema (pinned; scripts/ecosystem-tools installs it into target/ecosystem-venv).
//! Broken copies must be refused, and the manifests must agree with each other and with
//! spin.toml. Without the validator the tests say so and return; under CI=true they fail.

use traffic_cop_testbed::runner::Test;

use crate::run::{run, scratch, Ran};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use traffic_cop_testbed::needs::require;

const MANIFESTS: [(&str, &str); 3] = [
    ("spinapp.yaml", "spinapp-core.spinkube.dev-v1alpha1.json"),
    ("cronjob.yaml", "k8s-v1.34.0-cronjob-batch-v1.json"),
    ("secret.yaml", "k8s-v1.34.0-secret-v1.json"),
];

fn deploy() -> PathBuf {
    traffic_cop_testbed::repo_root().join("deploy/spinkube")
}

fn venv() -> Result<PathBuf, String> {
    let venv = traffic_cop_testbed::repo_root().join("target/ecosystem-venv/bin");
    if venv.join("check-jsonschema").is_file() {
        Ok(venv)
    } else {
        Err("no check-jsonschema in target/ecosystem-venv (run scripts/ecosystem-tools)".into())
    }
}

fn validate(venv: &Path, manifest: &Path, schema: &str) -> Ran {
    run(
        Command::new(venv.join("check-jsonschema"))
            .arg("--schemafile")
            .arg(deploy().join("schemas").join(schema))
            .arg(manifest),
        Duration::from_secs(60),
    )
}

fn the_manifests_validate_against_the_published_schemas() {
    let venv = require("spinkube manifests", venv());
    for (manifest, schema) in MANIFESTS {
        let ran = validate(&venv, &deploy().join(manifest), schema);
        assert!(ran.ok(), "{manifest} against {schema} {}", ran.said());
        assert!(ran.stdout.contains("validation done"), "{manifest}: {}", ran.said());
    }
}

fn broken_manifests_are_refused() {
    let venv = require("spinkube manifests", venv());
    let dir = scratch("spinkube");
    // (manifest, text to replace, replacement, what the validator must name)
    let cases = [
        ("spinapp.yaml", "  replicas: 3", "  replica: 3", "'replica' was unexpected"),
        ("spinapp.yaml", "  replicas: 3", "  replicas: three", "'three' is not of type 'integer'"),
        ("spinapp.yaml", "  image: ", "  # image: ", "'image' is a required property"),
        ("spinapp.yaml", "kind: SpinApp", "kind: SpinApps", "'SpinApps' is not one of ['SpinApp']"),
        (
            "spinapp.yaml",
            "      valueFrom:\n        secretKeyRef:",
            "      valueFrom:\n        secretRef:",
            "'secretRef' was unexpected",
        ),
        ("cronjob.yaml", "  schedule: ", "  # schedule: ", "'schedule' is a required property"),
        (
            "cronjob.yaml",
            "  concurrencyPolicy:",
            "  concurencyPolicy:",
            "'concurencyPolicy' was unexpected",
        ),
        (
            "cronjob.yaml",
            "apiVersion: batch/v1",
            "apiVersion: batch/v1beta1",
            "'batch/v1beta1' is not one of ['batch/v1']",
        ),
        (
            "cronjob.yaml",
            "          restartPolicy: Never",
            "          restartPolicy: [Never]",
            "is not of type 'string'",
        ),
        ("secret.yaml", "type: Opaque", "type: [Opaque]", "is not of type 'string'"),
    ];
    for (manifest, from, to, named) in cases {
        let text = std::fs::read_to_string(deploy().join(manifest)).expect("manifest");
        assert!(text.contains(from), "{manifest} no longer contains {from:?}: update this case");
        let broken = dir.join(manifest);
        std::fs::write(&broken, text.replacen(from, to, 1)).expect("write the broken copy");
        let schema = MANIFESTS.iter().find(|(m, _)| *m == manifest).unwrap().1;
        let ran = validate(&venv, &broken, schema);
        assert!(
            !ran.ok() && ran.status.is_some(),
            "{manifest} with {to:?} accepted {}",
            ran.said()
        );
        assert!(
            ran.stdout.contains(named),
            "{manifest} with {to:?}: expected {named:?} {}",
            ran.said()
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// YAML as JSON, through the validator's own YAML reader (ruamel.yaml in the same venv).
fn yaml_json(venv: &Path, manifest: &str) -> serde_json::Value {
    let script = "import json,sys\nfrom ruamel.yaml import YAML\n\
                  print(json.dumps(YAML(typ='safe').load(open(sys.argv[1]))))";
    let ran = run(
        Command::new(venv.join("python")).args(["-c", script]).arg(deploy().join(manifest)),
        Duration::from_secs(30),
    );
    assert!(ran.ok(), "read {manifest} {}", ran.said());
    serde_json::from_str(&ran.stdout).expect("json")
}

fn the_manifests_agree_with_each_other_and_with_spin_toml() {
    let venv = require("spinkube manifests", venv());
    let app = yaml_json(&venv, "spinapp.yaml");
    let cron = yaml_json(&venv, "cronjob.yaml");
    let secret = yaml_json(&venv, "secret.yaml");
    let spin: toml::Value = toml::from_str(
        &std::fs::read_to_string(traffic_cop_testbed::repo_root().join("spin.toml")).unwrap(),
    )
    .unwrap();

    // Only the HTTP component: SpinKube's shim has no cron trigger.
    assert_eq!(app["spec"]["components"], serde_json::json!(["http-job"]));
    assert!(spin["component"].get("http-job").is_some(), "spin.toml has no http-job");
    // Every variable the SpinApp sets is one spin.toml declares.
    let declared = spin["variables"].as_table().unwrap();
    for variable in app["spec"]["variables"].as_array().unwrap() {
        let name = variable["name"].as_str().unwrap();
        assert!(declared.contains_key(name), "spin.toml declares no variable {name}");
    }
    // The connection string and the routes' token come from the Secret, by its name and key.
    let from_secret = |variable: &str| {
        let reference = app["spec"]["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == variable)
            .map(|v| v["valueFrom"]["secretKeyRef"].clone())
            .unwrap_or_else(|| panic!("{variable} from a secret"));
        assert_eq!(reference["name"], secret["metadata"]["name"]);
        let key = reference["key"].as_str().unwrap().to_string();
        assert!(secret["stringData"].get(&key).is_some(), "the Secret has no key {key}");
        key
    };
    from_secret("connection_string");
    let token_key = from_secret("board_token");
    // The CronJob sends that token (the routes are protected once it is set).
    let container = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    let env = container["env"].as_array().expect("the tick's env");
    let token_env = env
        .iter()
        .find(|e| e["valueFrom"]["secretKeyRef"]["key"] == token_key.as_str())
        .and_then(|e| e["name"].as_str())
        .expect("the tick reads the token from the Secret");
    let header = format!("Authorization: Bearer $({token_env})");
    assert!(
        container["args"].as_array().unwrap().iter().any(|a| a.as_str() == Some(&header)),
        "the tick does not send {header}"
    );
    // The CronJob POSTs /run to the Service the operator names after the SpinApp.
    let args = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"];
    let args: Vec<&str> = args.as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
    let service = app["metadata"]["name"].as_str().unwrap();
    assert!(args.contains(&"POST"), "{args:?}");
    assert!(
        args.iter().any(|a| a.starts_with(&format!("http://{service}.")) && a.ends_with("/run")),
        "no POST to http://{service}.…/run in {args:?}"
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        the_manifests_validate_against_the_published_schemas,
        broken_manifests_are_refused,
        the_manifests_agree_with_each_other_and_with_spin_toml,
    ]
}

//! deploy/prometheus/scrape-spinkube.yml, judged by promtool (Debian's prometheus package).
//! Debian builds Prometheus without Kubernetes discovery, so `promtool check config` refuses
//! the file as it ships ("field kubernetes_sd_configs not found"). The check here: the
//! discovery block is swapped for a static target and the credentials path for a scratch file,
//! and promtool must accept everything else (the job, the relabelling regexes and actions, the
//! bearer token, the rule file); the discovery block itself is held to the pod role's
//! documented meta labels and to the label SpinKube's operator puts on the app's pods.
//! (scrape-spin.yml and the rules are checked by promtool in scripts/test.)

use crate::run::{run, scratch};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

const DISCOVERY: &str = "    kubernetes_sd_configs:
      - role: pod
        namespaces:
          names: [default]
";
const CREDENTIALS: &str = "/etc/prometheus/secrets/traffic-cop/board-token";

fn shipped() -> String {
    let path = traffic_cop_testbed::repo_root().join("deploy/prometheus/scrape-spinkube.yml");
    std::fs::read_to_string(path).expect("deploy/prometheus/scrape-spinkube.yml")
}

fn promtool() -> Result<(), String> {
    match Command::new("promtool").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        _ => Err("promtool not found (apt-get install prometheus)".into()),
    }
}

/// The shipped config with static discovery and a scratch token file, and alerts.yml beside it.
fn checkable(config: &str, dir: &Path) -> PathBuf {
    assert!(config.contains(DISCOVERY), "the discovery block changed; update this check");
    assert!(config.contains(CREDENTIALS), "the token's mount path changed; update this check");
    let token = dir.join("board-token");
    std::fs::write(&token, "not-a-token").unwrap();
    let config = config
        .replace(DISCOVERY, "    static_configs:\n      - targets: [\"127.0.0.1:80\"]\n")
        .replace(CREDENTIALS, token.to_str().unwrap());
    let alerts = traffic_cop_testbed::repo_root().join("deploy/prometheus/alerts.yml");
    std::fs::copy(alerts, dir.join("alerts.yml")).unwrap();
    let path = dir.join("scrape-spinkube.yml");
    std::fs::write(&path, config).unwrap();
    path
}

fn check(config: &Path) -> crate::run::Ran {
    run(Command::new("promtool").arg("check").arg("config").arg(config), Duration::from_secs(30))
}

fn promtool_accepts_the_spinkube_scrape_config_but_its_discovery() {
    require("scrape-spinkube.yml", promtool());
    let dir = scratch("prometheus-files");
    let ran = check(&checkable(&shipped(), &dir));
    assert!(ran.ok(), "promtool check config {}", ran.said());
    assert!(ran.stdout.contains("1 rule files found"), "alerts.yml not loaded {}", ran.said());
}

fn promtool_refuses_broken_copies() {
    require("scrape-spinkube.yml", promtool());
    let dir = scratch("prometheus-files-broken");
    let cases = [
        ("action: keep", "action: kep", "unknown relabel action"),
        ("regex: (.+)", "regex: (.+", "error parsing regexp"),
        ("job_name: traffic-cop", "job_nam: traffic-cop", "job_nam"),
    ];
    for (from, to, said) in cases {
        let shipped = shipped();
        assert!(shipped.contains(from), "{from:?} is not in the shipped file");
        let ran = check(&checkable(&shipped.replacen(from, to, 1), &dir));
        assert!(!ran.ok(), "promtool accepted {to:?} {}", ran.said());
        assert!(ran.said().contains(said), "{to:?}: expected {said:?} {}", ran.said());
    }
}

/// Prometheus' Kubernetes discovery, role pod, names a pod label `core.spinkube.dev/app-name`
/// as `__meta_kubernetes_pod_label_core_spinkube_dev_app_name` (every character that is not
/// a letter, digit or underscore becomes `_`), and the app name is the SpinApp's.
fn the_discovery_keeps_the_spinapps_pods_by_the_operators_label() {
    let config = shipped();
    let sanitized: String = "core.spinkube.dev/app-name"
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let keep = format!(
        "      - source_labels: [__meta_kubernetes_pod_label_{sanitized}]\n        regex: traffic-cop\n        action: keep\n"
    );
    assert!(config.contains(&keep), "no keep on the operator's app-name label in\n{config}");
    let app = std::fs::read_to_string(
        traffic_cop_testbed::repo_root().join("deploy/spinkube/spinapp.yaml"),
    )
    .unwrap();
    assert!(app.contains("\n  name: traffic-cop\n"), "the SpinApp is not named traffic-cop");
    assert_eq!(unknown_meta_labels(&config), Vec::<String>::new());
    // A misspelt one is caught.
    let misspelt = config.replace("__meta_kubernetes_pod_ip]", "__meta_kubernetes_pod_ips]");
    assert_eq!(unknown_meta_labels(&misspelt), ["__meta_kubernetes_pod_ips"]);
}

/// The meta labels the relabelling reads that the pod role does not set (Prometheus'
/// kubernetes_sd_config documentation, role pod; the prefixes end in `_`).
fn unknown_meta_labels(config: &str) -> Vec<String> {
    const POD_ROLE: [&str; 9] = [
        "__meta_kubernetes_namespace",
        "__meta_kubernetes_pod_name",
        "__meta_kubernetes_pod_ip",
        "__meta_kubernetes_pod_label_",
        "__meta_kubernetes_pod_annotation_",
        "__meta_kubernetes_pod_node_name",
        "__meta_kubernetes_pod_uid",
        "__meta_kubernetes_pod_container_name",
        "__meta_kubernetes_pod_container_port_number",
    ];
    let known = |label: &str| {
        POD_ROLE.iter().any(|k| if k.ends_with('_') { label.starts_with(k) } else { label == *k })
    };
    config
        .split("source_labels: [")
        .skip(1)
        .filter_map(|s| s.split(']').next())
        .flat_map(|labels| labels.split(',').map(str::trim))
        .filter(|label| !known(label))
        .map(String::from)
        .collect()
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        promtool_accepts_the_spinkube_scrape_config_but_its_discovery,
        promtool_refuses_broken_copies,
        the_discovery_keeps_the_spinapps_pods_by_the_operators_label,
    ]
}

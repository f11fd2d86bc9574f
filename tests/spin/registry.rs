//! The lease component from an OCI registry, for real: `scripts/release` pushes it to a
//! `distribution` registry on loopback, and the app's own spin.toml, with its dependency in the
//! registry form (`version`, `package`, `registry`) and its build no longer compiling the lease
//! component, goes through `spin build` and two `spin up` replicas that run a guarded job, one
//! run per due time. Every Spin process has a HOME, config and cache of its own, so nothing
//! comes from a cache, and the registry's access log must show each replica's pull. Spin's
//! refusals are checked too: the registry stopped, a version that does not exist. And the form
//! for users without a registry: `{ url, digest }`, with a digest that does not match refused.

use traffic_cop_testbed::docs;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

use crate::story;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use traffic_cop_testbed::oci_registry::{self, OciRegistry};
use traffic_cop_testbed::spin::{self, assert_built, cron_line, find_spin, manifest_copy, Launch};

const PATH_FORM: &str = r#""traffic-cop:lease" = { path = "#;
const INTERVAL: u64 = 2;

/// A HOME, wasm-pkg config and cache of their own (Spin caches registry downloads under
/// `$XDG_CACHE_HOME/spin`); cargo and rustup keep the user's, so `spin build` compiles offline.
pub(super) struct Home {
    dir: PathBuf,
}

impl Home {
    pub(super) fn new(dir: &Path, registry: Option<&str>) -> Home {
        Home::with_login(dir, registry, None)
    }

    /// With the registry's credentials in the wasm-pkg config, as a protected registry needs.
    pub(super) fn with_login(
        dir: &Path,
        registry: Option<&str>,
        login: Option<(&str, &str)>,
    ) -> Home {
        let config = dir.join("config/wasm-pkg");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(dir.join("cache")).unwrap();
        if let Some(registry) = registry {
            // wasm-pkg-client 0.11 (Spin 4.0.2) speaks HTTPS to every OCI registry unless told:
            // the docs' config (docs/spin-and-spinkube.md), its login only for a protected one.
            let text = docs::example("wasm-pkg-config");
            let text = match login {
                Some((user, password)) => docs::replaced(
                    &text,
                    &[
                        ("\"me\"", &format!("\"{user}\"")),
                        ("\"a token\"", &format!("\"{password}\"")),
                    ],
                ),
                None => text
                    .lines()
                    .filter(|l| !l.starts_with("auth"))
                    .map(|l| format!("{l}\n"))
                    .collect(),
            };
            let text = docs::replaced(&text, &[("localhost:5000", registry)]);
            std::fs::write(config.join("config.toml"), text).unwrap();
        }
        Home { dir: dir.to_path_buf() }
    }

    pub(super) fn env(&self) -> Vec<(String, String)> {
        let real_home = std::env::var("HOME").unwrap_or_default();
        let keep = |name: &str, default: String| std::env::var(name).unwrap_or(default);
        vec![
            ("HOME".into(), self.dir.display().to_string()),
            ("XDG_CONFIG_HOME".into(), self.dir.join("config").display().to_string()),
            ("XDG_CACHE_HOME".into(), self.dir.join("cache").display().to_string()),
            ("CARGO_HOME".into(), keep("CARGO_HOME", format!("{real_home}/.cargo"))),
            ("RUSTUP_HOME".into(), keep("RUSTUP_HOME", format!("{real_home}/.rustup"))),
        ]
    }

    /// The components Spin downloaded into this HOME's cache (`spin/registry/wasm/sha256:…`).
    fn cached(&self) -> Vec<String> {
        let wasm = self.dir.join("cache/spin/registry/wasm");
        let mut names: Vec<String> = std::fs::read_dir(wasm)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// The app's spin.toml with the lease component taken as `dependency` says, and a build that
/// compiles only the app's own components.
fn app_manifest(dir: &Path, dependency: &str) -> PathBuf {
    let path = manifest_copy(dir, &spin::every(INTERVAL));
    let text = std::fs::read_to_string(&path).unwrap();
    let workspace = traffic_cop_testbed::repo_root().join("Cargo.toml");
    let build = format!(
        "command = \"cargo build --target wasm32-wasip2 --release --manifest-path {} -p cron-job \
         -p http-job\"",
        workspace.display()
    );
    let (mut dependencies, mut builds) = (0, 0);
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with(PATH_FORM) {
                dependencies += 1;
                format!("\"traffic-cop:lease\" = {dependency}")
            } else if line.starts_with("command = \"cargo build") {
                builds += 1;
                build.clone()
            } else {
                line.to_string()
            }
        })
        .collect();
    assert_eq!((dependencies, builds), (2, 2), "spin.toml changed shape: update this test");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// `scripts/release` to the registry, its release directory in `out`: the lease component's
/// layer digest, from SHA256SUMS.
fn release(registry: &OciRegistry, out: &Path) -> String {
    let ran = Command::new(traffic_cop_testbed::repo_root().join("scripts/release"))
        .args(["v1.0.0", "--registry", &registry.name(), "--no-build", "--out"])
        .arg(out)
        .output()
        .expect("scripts/release runs");
    let text = String::from_utf8_lossy(&ran.stdout).into_owned();
    assert!(ran.status.success(), "{text}{}", String::from_utf8_lossy(&ran.stderr));
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).expect("SHA256SUMS");
    let line = sums.lines().find(|l| l.ends_with("  traffic_cop.wasm")).expect("traffic_cop.wasm");
    format!("sha256:{}", line.split_once("  ").unwrap().0)
}

/// A blob of the registry's storage (`distribution`'s filesystem layout), by its digest.
fn stored_blob(storage: &Path, digest: &str) -> Vec<u8> {
    let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
    std::fs::read(storage.join(format!("blobs/sha256/{}/{hex}/data", &hex[..2])))
        .unwrap_or_else(|e| panic!("blob {digest}: {e}"))
}

/// The OCI config `scripts/release` pushed for each component names its imports and exports
/// as the component's world has them (wkg's form), read from the component itself.
fn check_configs(storage: &Path) {
    let config = |name: &str| -> serde_json::Value {
        let tag = storage
            .join(format!("repositories/traffic-cop/{name}/_manifests/tags/1.0.0/current/link"));
        let manifest = std::fs::read_to_string(&tag).unwrap_or_else(|e| panic!("{name}: {e}"));
        let manifest: serde_json::Value =
            serde_json::from_slice(&stored_blob(storage, manifest.trim())).unwrap();
        let config = manifest["config"]["digest"].as_str().unwrap().to_string();
        serde_json::from_slice::<serde_json::Value>(&stored_blob(storage, &config)).unwrap()
            ["component"]
            .clone()
    };
    let names = |value: &serde_json::Value| -> Vec<String> {
        value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    };
    let lease = config("lease-azure");
    assert_eq!(
        names(&lease["exports"]),
        ["traffic-cop:lease/lease@1.0.0", "traffic-cop:lease/guard@1.0.0"]
    );
    assert!(
        names(&lease["imports"]).iter().any(|i| i.starts_with("wasi:http/outgoing-handler@")),
        "{lease}"
    );
    let wrapper = config("cron-wrapper-async");
    let imports = names(&wrapper["imports"]);
    for needed in
        ["traffic-cop:lease/guard@1.0.0", "traffic-cop:lease/hold@0.5.0", "handle-cron-event"]
    {
        assert!(imports.iter().any(|i| i == needed), "{needed} in {imports:?}");
    }
    assert_eq!(names(&wrapper["exports"]), ["handle-cron-event"], "{wrapper}");
    // The contract as a WIT package: its world's interfaces in the config, and a layer that
    // decodes to `traffic-cop:lease@1.0.0` as wit/lease.wit declares it.
    let contract = config("lease");
    assert_eq!(
        names(&contract["exports"]),
        ["traffic-cop:lease/lease@1.0.0", "traffic-cop:lease/guard@1.0.0"]
    );
    let tag = storage.join("repositories/traffic-cop/lease/_manifests/tags/1.0.0/current/link");
    let manifest: serde_json::Value =
        serde_json::from_slice(&stored_blob(storage, std::fs::read_to_string(tag).unwrap().trim()))
            .unwrap();
    let layer = stored_blob(storage, manifest["layers"][0]["digest"].as_str().unwrap());
    let decoded = storage.join("../../../../lease.wit.wasm");
    std::fs::write(&decoded, layer).unwrap();
    let wasm_tools = traffic_cop_testbed::repo_root().join("target/release-tools/bin/wasm-tools");
    let wit = Command::new(wasm_tools).args(["component", "wit"]).arg(&decoded).output().unwrap();
    let wit = String::from_utf8_lossy(&wit.stdout);
    assert!(wit.contains("package traffic-cop:lease@1.0.0;"), "{wit}");
    assert!(wit.contains("guarded-invoke: func(settings: settings) -> decision;"), "{wit}");
    assert!(!wit.contains("interface hold"), "hold@0.5.0 is not the contract: {wit}");
    // wkg.toml's metadata inside, as `wkg build` puts it.
    let wkg: toml::Table = toml::from_str(
        &std::fs::read_to_string(traffic_cop_testbed::repo_root().join("wkg.toml")).unwrap(),
    )
    .unwrap();
    let bytes = std::fs::read(&decoded).unwrap();
    for needle in [wkg["metadata"]["description"].as_str().unwrap(), "MIT OR Apache-2.0"] {
        let found = bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(found, "{needle:?} is not embedded in the WIT package");
    }
}

/// `spin up` for an app that must fail to load: what it printed.
pub(super) fn refused(spin: &Path, data: &Path, manifest: &Path, home: &Home) -> String {
    let out = Command::new(spin)
        .args(["up", "-f"])
        .arg(manifest)
        .args(["--listen", &format!("127.0.0.1:{}", spin::free_port())])
        .env("SPIN_DATA_DIR", data)
        .envs(home.env())
        .stdin(Stdio::null())
        .output()
        .expect("spin up runs");
    assert!(!out.status.success(), "spin up loaded an app it could not have");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn a_spin_app_takes_the_component_from_a_registry_and_runs_a_guarded_job() {
    let spin = require("real spin (registry)", find_spin());
    let data = require("real spin (registry, cron 0.5.0)", cron_line("0.5.0"));
    let program = require("an OCI registry", oci_registry::find());
    assert_built();
    let dir = story::story_dir("registry");
    let mut registry = OciRegistry::start(&program, &dir.join("registry"));
    let digest = release(&registry, &dir.join("release"));
    check_configs(&dir.join("registry/storage/docker/registry/v2"));
    let home = Home::new(&dir.join("home"), Some(&registry.name()));
    let dependency = documented_dependency("registry", &[("<host>", &registry.name())]);
    let manifest = app_manifest(&dir.join("app"), &dependency);
    assert!(home.cached().is_empty(), "nothing may come from a cache: {:?}", home.cached());

    let build = Command::new(&spin)
        .args(["build", "-f"])
        .arg(&manifest)
        .env("SPIN_DATA_DIR", &data)
        .envs(home.env())
        // A user's build, not linted as ours (.ci/run's compiler wrapper).
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .stdin(Stdio::null())
        .output()
        .expect("spin build runs");
    let said = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success(), "spin build: {said}");
    // `spin build` loads the app, and so already fetches the component into this HOME's cache.
    assert_eq!(home.cached(), std::slice::from_ref(&digest), "spin build fetched it");

    let launch = Launch {
        spin: spin.clone(),
        data_dir: Some(data.clone()),
        manifest: manifest.clone(),
        component: None,
        lifetime: Duration::from_secs(120),
        env: home.env(),
    };
    let container = format!("spinregistry{}", std::process::id());
    let schedule = [("schedule", spin::every(INTERVAL)), ("work_ms", "500".to_string())];
    let nodes = story::start_nodes_with(&launch, &dir, &container, "pulled", 2, &schedule);
    let runs = |ticks: &[story::Tick]| ticks.iter().filter(|t| t.token.is_some()).count();
    let ticks = story::wait_for_ticks(&nodes, Duration::from_secs(30), |t| runs(t) >= 3);
    let all = story::dump(&ticks);
    assert!(runs(&ticks) >= 3, "no guarded runs with the component from the registry:\n{all}");
    let mut tokens: Vec<(u64, u64)> =
        ticks.iter().filter_map(|t| t.token.map(|token| (t.at, token))).collect();
    tokens.sort();
    assert!(tokens.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "{all}");
    drop(nodes);

    // The pull, as the registry saw it: `spin build` and each replica listed the tags and
    // fetched the manifest (a range is resolved every time an app loads); the component itself
    // was fetched once, by the build, and read from the cache after it.
    let log = registry.access_log();
    let fetched = |what: &str| log.lines().filter(|l| l.contains(what)).count();
    assert!(fetched("GET /v2/traffic-cop/lease-azure/tags/list") >= 3, "{log}");
    assert!(fetched("GET /v2/traffic-cop/lease-azure/manifests/1.0.0") >= 3, "{log}");
    assert!(fetched(&format!("GET /v2/traffic-cop/lease-azure/blobs/{digest}")) >= 1, "{log}");

    // Spin's refusals. A version no release has:
    let missing = app_manifest(&dir.join("missing"), &dependency.replace("^1.0.0", "^2.0.0"));
    let fresh = Home::new(&dir.join("home-missing"), Some(&registry.name()));
    let said = refused(&spin, &data, &missing, &fresh);
    assert!(
        said.contains("No matching version found for traffic-cop:lease-azure ^2.0.0"),
        "{said}"
    );
    // The registry stopped:
    registry.stop();
    let fresh = Home::new(&dir.join("home-stopped"), Some(&registry.name()));
    let said = refused(&spin, &data, &manifest, &fresh);
    assert!(said.contains("registry error"), "{said}");
    assert!(said.contains("Connection refused"), "{said}");
    println!("registry round trip on real Spin: {} runs, component {digest}", runs(&ticks));
}

/// The value of docs/spin-and-spinkube.md's `"traffic-cop:lease"` dependency in `form`
/// (`registry` or `url`), filled in with `edits`.
fn documented_dependency(form: &str, edits: &[(&str, &str)]) -> String {
    let example = docs::example("registry-dependency");
    let line = example
        .lines()
        .find(|l| l.starts_with("\"traffic-cop:lease\" = ") && l.contains(&format!(" {form} = ")))
        .unwrap_or_else(|| panic!("no {form} form in the docs' example: {example}"));
    docs::replaced(line.split_once(" = ").unwrap().1, edits)
}

/// A static file server on loopback for the `{ url, digest }` form (Python's http.server).
pub(super) struct FileServer {
    pub(super) port: u16,
    child: std::process::Child,
}

impl FileServer {
    pub(super) fn start(directory: &Path) -> FileServer {
        let port = spin::free_port();
        let child = Command::new("python3")
            .args(["-m", "http.server", "--bind", "127.0.0.1", &port.to_string(), "--directory"])
            .arg(directory)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 http.server starts");
        let server = FileServer { port, child };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "http.server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn a_spin_app_takes_the_component_by_url_and_digest_and_refuses_another_digest() {
    let spin = require("real spin (url dependency)", find_spin());
    let data = require("real spin (url dependency, cron 0.5.0)", cron_line("0.5.0"));
    assert_built();
    let dir = story::story_dir("url-dependency");
    let built = traffic_cop_testbed::repo_root().join("target/wasm32-wasip2/release");
    let bytes = std::fs::read(built.join("traffic_cop.wasm")).unwrap();
    let digest = format!("sha256:{}", sha256_hex(&bytes));
    let server = FileServer::start(&built);
    let url = format!("http://127.0.0.1:{}/traffic_cop.wasm", server.port);
    let home = Home::new(&dir.join("home"), None);
    let dependency = documented_dependency(
        "url",
        &[("https://…/traffic_cop.wasm", &url), ("sha256:…", &digest)],
    );
    let manifest = app_manifest(&dir.join("app"), &dependency);
    let launch = Launch {
        spin: spin.clone(),
        data_dir: Some(data.clone()),
        manifest,
        component: Some("http-job".into()),
        lifetime: Duration::from_secs(60),
        env: home.env(),
    };
    let container = format!("spinurl{}", std::process::id());
    let variables = [
        ("connection_string", traffic_cop_testbed::azurite::Azurite::shared().connection_string()),
        (
            "storage_endpoint",
            format!("http://127.0.0.1:{}", traffic_cop_testbed::azurite::Azurite::shared().port),
        ),
        ("container", container),
        ("holder", "by-url".to_string()),
    ];
    let mut replica = launch.start("by-url", &dir.join("by-url"), &variables);
    replica.wait_ready(Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"));
    // The board goes through the lease component: it was loaded from the URL.
    let (status, body) =
        spin::http(replica.port, "GET", "/status", Duration::from_secs(20)).unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(home.cached(), std::slice::from_ref(&digest));
    drop(replica);

    let wrong = format!("sha256:{}", "0".repeat(64));
    let other =
        app_manifest(&dir.join("wrong"), &format!("{{ url = \"{url}\", digest = \"{wrong}\" }}"));
    let said = refused(&spin, &data, &other, &Home::new(&dir.join("home-wrong"), None));
    assert!(said.contains("invalid content digest"), "{said}");
    println!("url dependency on real Spin: {url} ({digest})");
}

/// The digest Spin compares, computed here with the tests' own crate (sha2).
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_spin_app_takes_the_component_from_a_registry_and_runs_a_guarded_job,
        a_spin_app_takes_the_component_by_url_and_digest_and_refuses_another_digest,
    ]
}

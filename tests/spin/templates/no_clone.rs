//! A user without a clone, on Spin 4.0.2 with trigger-cron 0.5.0: the release (built here)
//! served from loopback, its templates installed by `--tar` over HTTP, its components from a
//! protected OCI registry (Debian's `docker-registry`, an htpasswd login), and a project
//! generated outside this repository whose spin.toml names no path. Each Spin process has a
//! HOME, config, cache and data directory of its own.

use super::*;
use crate::spin::registry::{refused, FileServer, Home};
use traffic_cop_testbed::oci_registry::{self, OciRegistry};

const USER: &str = "release-reader";
const PASSWORD: &str = "pull-only-secret";
const NAME: &str = "nightly";

/// The due times a job ran for, from one replica's log: what follows `ran` on its lines.
fn calls(log: &str, ran: &str) -> Vec<String> {
    log.lines().filter_map(|l| l.strip_prefix(ran)).map(str::to_string).collect()
}

/// Two replicas of `project` until three due times have run (the job printing `ran` and the
/// due time for each): each ran once. Returns how long after the replicas started the first
/// run was seen.
fn runs_once_per_due_time(
    (spin, data, project): (&Path, &Path, &Path),
    home: &Home,
    tag: &str,
    ran: &str,
    extra: &[(&str, &str)],
) -> Duration {
    let started = Instant::now();
    let mut first_run = None;
    let azurite = Azurite::shared();
    let container = format!("noclone-{tag}-{}", std::process::id());
    let replicas: Vec<(Background, PathBuf)> = (0..2)
        .map(|i| {
            let dir = project.join(format!("{tag}-{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            let mut env = home.env();
            env.extend(
                [
                    ("SPIN_DATA_DIR", data.display().to_string()),
                    ("SPIN_VARIABLE_CONNECTION_STRING", azurite.connection_string()),
                    (
                        "SPIN_VARIABLE_STORAGE_ENDPOINT",
                        format!("http://127.0.0.1:{}", azurite.port),
                    ),
                    ("SPIN_VARIABLE_CONTAINER", container.clone()),
                    ("SPIN_VARIABLE_HOLDER", format!("{tag}-{i}")),
                ]
                .map(|(k, v)| (k.to_string(), v)),
            );
            env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            let (logs, state) = (dir.join("logs"), dir.join("state"));
            let manifest = project.join("spin.toml");
            let args =
                ["up", "-f", manifest.to_str().unwrap(), "--log-dir", logs.to_str().unwrap()]
                    .into_iter()
                    .chain(["--state-dir", state.to_str().unwrap()])
                    .collect::<Vec<_>>();
            let up = Background::start(
                spin,
                &args,
                &env,
                &dir.join("spin.out"),
                Duration::from_secs(90),
            );
            (up, dir)
        })
        .collect();
    // The job's component is named after the project.
    let component = project.file_name().unwrap().to_str().unwrap();
    let log = |dir: &PathBuf| {
        std::fs::read_to_string(dir.join(format!("logs/{component}_stdout.txt")))
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut logs: Vec<String> = Vec::new();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        logs = replicas.iter().map(|(_, dir)| log(dir)).collect();
        let runs = logs.iter().map(|l| calls(l, ran).len()).sum::<usize>();
        if runs > 0 {
            first_run.get_or_insert_with(|| started.elapsed());
        }
        if runs >= 3 {
            break;
        }
    }
    let outs: Vec<String> = replicas
        .iter()
        .map(|(_, dir)| std::fs::read_to_string(dir.join("spin.out")).unwrap_or_default())
        .collect();
    drop(replicas);
    let mut dues: Vec<String> = logs.iter().flat_map(|l| calls(l, ran)).collect();
    assert!(dues.len() >= 3, "{tag}: fewer than 3 runs: {logs:#?} {outs:#?}");
    let total = dues.len();
    dues.sort();
    dues.dedup();
    assert_eq!(dues.len(), total, "{tag}: a due time ran twice: {logs:#?}");
    first_run.expect("a run was seen")
}

fn a_user_without_a_clone_installs_the_released_templates_and_runs_a_guarded_job() {
    let spin = require("real spin (no clone)", find_spin());
    let plugin = require("real spin (no clone, cron 0.5.0)", cron_line("0.5.0"));
    let program = require("an OCI registry", oci_registry::find());
    traffic_cop_testbed::built::assert_app_built();
    let work = scratch("no-clone-release");
    let registry = OciRegistry::start_protected(&program, &work.join("registry"), USER, PASSWORD);
    let release = work.join("release");
    std::fs::create_dir_all(&release).unwrap();
    let files = FileServer::start(&release);
    let base = format!("http://127.0.0.1:{}", files.port);
    let version = version();
    let released = run(
        Command::new(root().join("scripts/release"))
            .args([&version, "--no-build", "--registry", &registry.name(), "--download-url", &base])
            .arg("--out")
            .arg(&release)
            .env("OCI_USERNAME", USER)
            .env("OCI_PASSWORD", PASSWORD),
        Duration::from_secs(180),
    );
    assert!(released.ok(), "scripts/release {}", released.said());
    assert!(!released.said().contains(PASSWORD), "the release printed the password");

    // The user's side: nothing under this repository.
    let user = std::env::temp_dir().join(format!("traffic-cop-no-clone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&user);
    std::fs::create_dir_all(&user).unwrap();
    // The first hour, timed from here (the benchmark's figure: scripts/bench-first-run).
    let from_empty = Instant::now();
    let mut phases: Vec<(&str, Duration)> = Vec::new();
    let mut lap = Instant::now();
    let mut phase = |name, phases: &mut Vec<(&str, Duration)>| {
        phases.push((name, lap.elapsed()));
        lap = Instant::now();
    };
    assert!(!user.starts_with(root()), "{}", user.display());
    let home = Home::with_login(&user.join("home"), Some(&registry.name()), Some((USER, PASSWORD)));
    let data = user.join("spin-data");
    let copied = Command::new("cp").arg("-r").arg(&plugin).arg(&data).status().unwrap();
    assert!(copied.success(), "the plugin's data dir copied");
    let spin_in = |dir: &Path, args: &[&str]| {
        let mut command = Command::new(&spin);
        // A user's build, not linted as ours (.ci/run's compiler wrapper).
        command.args(args).env("SPIN_DATA_DIR", &data).envs(home.env()).current_dir(dir);
        command.env_remove("RUSTC_WORKSPACE_WRAPPER");
        command
    };
    // The README's commands from a release, its download URL this loopback server's, and the
    // project generated for this registry, its trigger asking every 2 s.
    let tarball = format!("{base}/traffic-cop-templates-{version}.tar.gz");
    let readme =
        docs::replaced(&docs::example("from-release"), &[("$release/", &format!("{base}/"))]);
    let commands: Vec<Vec<String>> = docs::shell_commands(&readme)
        .into_iter()
        .filter(|c| c.program == "spin")
        .map(|c| c.args)
        .collect();
    assert_eq!(commands.len(), 2, "the README's spin commands from a release: {readme}");
    assert_eq!(commands[0], ["templates", "install", "--tar", &tarball], "{readme}");
    let args: Vec<&str> = commands[0].iter().map(String::as_str).collect();
    let installed = run(&mut spin_in(&user, &args), Duration::from_secs(60));
    assert!(installed.ok(), "spin templates install --tar {}", installed.said());
    phase("spin templates install --tar", &mut phases);
    let registry_value = format!("traffic-cop-registry={}", registry.name());
    let mut args: Vec<&str> = commands[1].iter().map(String::as_str).collect();
    assert_eq!(args[..3], ["new", "-t", "traffic-cop-cron-rust-wrapped"], "{readme}");
    let name = args[3];
    args.extend(["--no-vcs", "-v", &registry_value, "-v", "cron-expression=*/2 * * * * *"]);
    let generated = run(&mut spin_in(&user, &args), Duration::from_secs(60));
    assert!(generated.ok(), "spin new {}", generated.said());
    phase("spin new", &mut phases);
    let project = user.join(name);
    let manifest = std::fs::read_to_string(project.join("spin.toml")).unwrap();
    assert!(!manifest.contains("path ="), "a path in the generated spin.toml: {manifest}");
    for package in ["traffic-cop:cron-wrapper-async", "traffic-cop:lease-azure-async"] {
        assert!(manifest.contains(&format!("package = \"{package}\"")), "{package}: {manifest}");
    }
    // docs/spin-and-spinkube.md's `source` lines: the registry form is the generated one.
    let sources = docs::replaced(&docs::example("wrapper-source"), &[("<host>", &registry.name())]);
    let (by_url_source, by_registry_source) = sources.split_once('\n').unwrap();
    assert!(manifest.lines().any(|l| l == by_registry_source.trim()), "{sources}\n{manifest}");
    // `TRAFFIC_COP_FIRST_RUN_CARGO_HOME` (the benchmark's `--empty-cargo-home`): the build's
    // crates fetched into that directory, as on a machine that never built Rust.
    let mut build = spin_in(&project, &["build", "--skip-generate-wits"]);
    let cargo_home = std::env::var("TRAFFIC_COP_FIRST_RUN_CARGO_HOME").ok();
    if let Some(cargo_home) = &cargo_home {
        build.env("CARGO_HOME", cargo_home);
    }
    let built = run(&mut build, Duration::from_secs(900));
    assert!(built.ok(), "spin build {}", built.said());
    if let Some(cargo_home) = &cargo_home {
        let fetched = std::fs::read_dir(Path::new(cargo_home).join("registry/cache"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|index| std::fs::read_dir(index.path()).into_iter().flatten().flatten())
            .count();
        assert!(fetched > 0, "the build fetched nothing into {cargo_home}");
        println!("measured: the build fetched {fetched} crates into an empty CARGO_HOME");
    }
    phase("spin build", &mut phases);
    let ran = format!("{name}: the job ran for the due time ");
    let first = runs_once_per_due_time((&spin, &data, &project), &home, "registry", &ran, &[]);
    phases.push(("spin up to the first guarded run", first));
    let shown: Vec<String> =
        phases.iter().map(|(name, took)| format!("{name} {:.1} s", took.as_secs_f64())).collect();
    let total = from_empty.elapsed() - lap.elapsed() + first;
    println!(
        "measured, first run without a clone: {:.1} s from an empty directory ({})",
        total.as_secs_f64(),
        shown.join(", ")
    );

    // Spin's pulls (oci-client) passed the login; an anonymous one is answered 401.
    let log = registry.access_log();
    let pulled = |what: &str| {
        log.lines().any(|l| {
            l.contains("msg=\"authorized request\"")
                && l.contains("useragent=oci-client")
                && l.contains(&format!("uri={what}"))
        })
    };
    assert!(pulled("/v2/traffic-cop/cron-wrapper-async/manifests/"), "{log}");
    assert!(pulled("/v2/traffic-cop/lease-azure-async/manifests/"), "{log}");
    let anonymous = traffic_cop_testbed::spin::http(
        registry.port,
        "GET",
        &format!("/v2/traffic-cop/lease-azure-async/manifests/{version}"),
        Duration::from_secs(5),
    );
    assert_eq!(anonymous.map(|(status, _)| status).ok(), Some(401));

    // Refusals, in Spin's words as the docs quote them: a wrong password, then a layer
    // tampered with in the registry (a fresh cache, so the registry is asked).
    let quoted = std::fs::read_to_string(root().join("docs/spin-and-spinkube.md")).unwrap();
    let manifest_path = project.join("spin.toml");
    let wrong =
        Home::with_login(&user.join("home-wrong"), Some(&registry.name()), Some((USER, "not-it")));
    let said = refused(&spin, &data, &manifest_path, &wrong);
    assert!(!said.contains(PASSWORD) && !said.contains("not-it"), "Spin printed a password");
    println!("wrong credentials: {said}");
    let lease_sha = release_sha(&release, "traffic_cop_async.wasm");
    let blob = work.join(format!(
        "registry/storage/docker/registry/v2/blobs/sha256/{}/{lease_sha}/data",
        &lease_sha[..2]
    ));
    let mut tampered = std::fs::read(&blob).expect("the layer in the registry's storage");
    let at = tampered.len() / 2;
    tampered[at] ^= 0xff;
    std::fs::write(&blob, tampered).unwrap();
    let fresh = Home::with_login(
        &user.join("home-tampered"),
        Some(&registry.name()),
        Some((USER, PASSWORD)),
    );
    let said_tampered = refused(&spin, &data, &manifest_path, &fresh);
    println!("tampered: {said_tampered}");
    for (case, said, quote) in [
        ("wrong credentials", &said, "Not authorized"),
        ("a tampered layer", &said_tampered, "Invalid digest"),
    ] {
        assert!(said.contains(quote), "{case}: Spin said {said}");
        assert!(quoted.contains(&format!("`{quote}`")), "the docs do not quote {quote:?}");
    }

    // The same app with the release's `{ url, digest }` lines (USING.md's) instead.
    let using = std::fs::read_to_string(release.join("USING.md")).unwrap();
    let line_for = |file: &str| {
        using.lines().find(|l| l.contains(&format!("/{file}\""))).expect(file).to_string()
    };
    let by_url: Vec<String> = manifest
        .lines()
        .map(|l| {
            if l.contains("package = \"traffic-cop:cron-wrapper-async\"") {
                line_for("cron_wrapper_async.wasm")
            } else if l.contains("package = \"traffic-cop:lease-azure-async\"") {
                line_for("traffic_cop_async.wasm")
            } else {
                l.to_string()
            }
        })
        .collect();
    let by_url = by_url.join("\n") + "\n";
    let by_url_source = docs::replaced(by_url_source, &[("https://…", &base)]);
    let shown = docs::output_matches(&by_url_source, &by_url);
    assert!(shown.is_ok(), "the docs' url source line: {shown:?}\n{by_url}");
    std::fs::write(project.join("spin.toml"), by_url).unwrap();
    let url_home = Home::new(&user.join("home-url"), None);
    let built = run(
        Command::new(&spin)
            .args(["build", "--skip-generate-wits"])
            .env("SPIN_DATA_DIR", &data)
            .envs(url_home.env())
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .current_dir(&project),
        Duration::from_secs(300),
    );
    assert!(built.ok(), "spin build (url) {}", built.said());
    let _ = runs_once_per_due_time((&spin, &data, &project), &url_home, "url", &ran, &[]);
    drop(files);
    let _ = std::fs::remove_dir_all(&user);
    let _ = std::fs::remove_dir_all(&work);
}

/// The docs' manifest for the sync wrapper (docs/wrappers.md, the block after its `example:
/// sync-wrapper` mark) as a user fills it in from a release served at `base`: each `https://…/`
/// file and `sha256:…` digest is the release's; the trigger asks every 2 s, not every minute.
fn docs_sync_manifest(release: &Path, base: &str) -> String {
    let block = docs::example("sync-wrapper");
    assert!(block.contains("cron_expression = \"0 * * * * *\""), "{block}");
    block
        .replace("cron_expression = \"0 * * * * *\"", "cron_expression = \"*/2 * * * * *\"")
        .lines()
        .map(|line| match line.find("url = \"https://…/") {
            Some(at) => {
                let rest = &line[at + "url = \"https://…/".len()..];
                let file = &rest[..rest.find('"').unwrap()];
                let sha = release_sha(release, file);
                line.replace("https://…", base).replace("sha256:…", &format!("sha256:{sha}"))
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The docs' spin.toml for the sync wrapper, on Spin 3.6.3 with trigger-cron 0.3.0 (what
/// SpinKube's shim embeds): the wrapper and the lease component from the release's files,
/// checked by digest, a sync job behind it, two replicas, one run per due time.
fn the_docs_sync_wrapper_runs_from_the_release_on_spin_3_6_3() {
    let (spin, plugin) =
        require("Spin 3.6.3 with trigger-cron 0.3.0", traffic_cop_testbed::spin::spin_3());
    traffic_cop_testbed::built::assert_app_built();
    let job = traffic_cop_testbed::built::app_wasm("cron_handler_sync");
    assert!(job.is_file(), "{} (scripts/build-components test-jobs)", job.display());
    let work = scratch("no-clone-sync");
    let release = work.join("release");
    std::fs::create_dir_all(&release).unwrap();
    let files = FileServer::start(&release);
    let base = format!("http://127.0.0.1:{}", files.port);
    let released = run(
        Command::new(root().join("scripts/release"))
            .args([&version(), "--no-build", "--download-url", &base])
            .arg("--out")
            .arg(&release),
        Duration::from_secs(120),
    );
    assert!(released.ok(), "scripts/release {}", released.said());
    let user = std::env::temp_dir().join(format!("traffic-cop-no-clone-3-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&user);
    let project = user.join(NAME);
    std::fs::create_dir_all(project.join("target/wasm32-wasip2/release")).unwrap();
    std::fs::copy(&job, project.join("target/wasm32-wasip2/release/my_job.wasm")).unwrap();
    let manifest = docs_sync_manifest(&release, &base);
    assert!(!manifest.contains("path =") && !manifest.contains('…'), "{manifest}");
    std::fs::write(project.join("spin.toml"), manifest).unwrap();
    let data = user.join("spin-data");
    let copied = Command::new("cp").arg("-r").arg(&plugin).arg(&data).status().unwrap();
    assert!(copied.success(), "the plugin's data dir copied");
    let home = Home::new(&user.join("home"), None);
    let schedule = [("SPIN_VARIABLE_SCHEDULE", "*/2 * * * * *")];
    let _ = runs_once_per_due_time(
        (&spin, &data, &project),
        &home,
        "sync",
        "handler called for ",
        &schedule,
    );
    drop(files);
    let _ = std::fs::remove_dir_all(&user);
    let _ = std::fs::remove_dir_all(&work);
}

fn version() -> String {
    let text = std::fs::read_to_string(root().join("release.toml")).unwrap();
    toml::from_str::<toml::Table>(&text).unwrap()["version"].as_str().unwrap().to_string()
}

/// The sha256 of one file of the release directory, from its SHA256SUMS.
fn release_sha(release: &Path, file: &str) -> String {
    let sums = std::fs::read_to_string(release.join("SHA256SUMS")).unwrap();
    let line = sums.lines().find(|l| l.ends_with(&format!("  {file}"))).expect(file);
    line.split_once("  ").unwrap().0.to_string()
}

pub(super) fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_user_without_a_clone_installs_the_released_templates_and_runs_a_guarded_job,
        the_docs_sync_wrapper_runs_from_the_release_on_spin_3_6_3,
    ]
}

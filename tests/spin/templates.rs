//! The `spin new` templates in templates/: installed into a scratch Spin data dir, generated
//! non-interactively, built with cargo for wasm32-wasip2 (crates.io only), their component's
//! imports and exports checked, and each run by real `spin up` replicas under its trigger-cron
//! line against Azurite: one run per interval, the other replica skips.
//!
//! Needs the spin CLI and the plugin lines (scripts/test installs them from
//! ../shared/tools/spin); without them the test says so and returns, under CI=true it fails.
//! Builds go to the repository's target/ (as CARGO_TARGET_DIR), where the component and the
//! Spin app's components are built, from Cargo.lock as the projects' starting lock: the
//! host-side macros and the dependencies they share are compiled once.

use traffic_cop_testbed::docs::{self, ShellCommand};
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::runner::Test;

use crate::run::{run, scratch, Background};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::spin::{cron_line, find_spin};

mod checks;
mod no_clone;
use checks::{check_component, check_generated, check_lock_follows_apps};

struct Template {
    id: &'static str,
    line: &'static str,
    name: &'static str,
    cron_wit: &'static str,
    is_async: bool,
}

const TEMPLATES: [Template; 2] = [
    Template {
        id: "traffic-cop-cron-rust",
        line: "0.3.0",
        name: "sync-job",
        cron_wit: "package fermyon:spin-cron@2.0.0;",
        is_async: false,
    },
    Template {
        id: "traffic-cop-cron-rust-async",
        line: "0.5.0",
        name: "async-job",
        cron_wit: "package spin:cron@3.0.0;",
        is_async: true,
    },
];

/// The template whose code is a plain cron handler and whose spin.toml guards it with the
/// async cron wrapper. Not in [`TEMPLATES`]: it is run by its own test.
const WRAPPED: Template = Template {
    id: "traffic-cop-cron-rust-wrapped",
    line: "0.5.0",
    name: "nightly-job",
    cron_wit: "package spin:cron@3.0.0;",
    is_async: true,
};

impl Template {
    /// The lease component its spin.toml names: the WASI 0.2 one, or for the async template
    /// the async one (guard@0.4.0); either checked against its sources.
    fn lease(&self) -> PathBuf {
        if self.is_async {
            traffic_cop_testbed::built::async_components().0
        } else {
            traffic_cop_testbed::built::lease_component()
        }
    }
}

fn root() -> PathBuf {
    traffic_cop_testbed::repo_root()
}

/// `spin <args>` in `dir`, with a Spin data dir of its own into which this repository's
/// templates were just installed (`spin templates install --dir`).
fn templates_installed(spin: &Path, dir: &Path) -> impl Fn(&[&str]) -> Command {
    let (spin, dir, spin_data) = (spin.to_path_buf(), dir.to_path_buf(), dir.join("spin-data"));
    let spin_cmd = move |args: &[&str]| {
        let mut command = Command::new(&spin);
        // A user's build, not linted as ours (.ci/run's compiler wrapper).
        command.args(args).env("SPIN_DATA_DIR", &spin_data).current_dir(&dir);
        command.env_remove("RUSTC_WORKSPACE_WRAPPER");
        command
    };
    let root_dir = root().display().to_string();
    let installed =
        run(&mut spin_cmd(&["templates", "install", "--dir", &root_dir]), Duration::from_secs(60));
    assert!(installed.ok(), "spin templates install {}", installed.said());
    spin_cmd
}

fn templates_install_generate_build_and_run_under_their_cron_lines() {
    let spin = require("spin templates", find_spin());
    let mut lines = Vec::new();
    for template in &TEMPLATES {
        let data =
            require(&format!("spin templates ({})", template.line), cron_line(template.line));
        lines.push(data);
    }
    let dir = scratch("templates");
    let spin_cmd = templates_installed(&spin, &dir);
    let listed = run(&mut spin_cmd(&["templates", "list"]), Duration::from_secs(60));
    for template in &TEMPLATES {
        assert!(
            listed.stdout.contains(template.id),
            "{} not installed {}",
            template.id,
            listed.said()
        );
    }

    let azurite = Azurite::start();
    let mut built_projects = Vec::new();
    for (template, data) in TEMPLATES.iter().zip(lines) {
        let started = Instant::now();
        let project = dir.join(template.name);
        let lease_value = format!("lease-component={}", template.lease().display());
        let generated = run(
            &mut spin_cmd(&[
                "new",
                "-t",
                template.id,
                template.name,
                "--accept-defaults",
                "--no-vcs",
                "-v",
                &lease_value,
                "-v",
                "cron-expression=*/2 * * * * *",
                "-v",
                "time-zone=Asia/Kathmandu",
                "-o",
                &project.display().to_string(),
            ]),
            Duration::from_secs(60),
        );
        assert!(generated.ok(), "spin new -t {} {}", template.id, generated.said());
        check_generated(template, &project);
        let wasm = build(template, &project);
        check_component(template, &wasm);
        let built = started.elapsed();
        run_replicas(template, &spin, &data, &project, &wasm, &azurite);
        built_projects.push((template, data, project));
        eprintln!(
            "template {}: generated and built in {built:?}, ran on trigger-cron {} in {:?}",
            template.id,
            template.line,
            started.elapsed() - built
        );
    }
    run_mixed_fleet(&spin, &built_projects, &azurite);
    azurite.stop();
    let _ = std::fs::remove_dir_all(dir);
}

/// `cargo build` as spin.toml's build command runs it, into the repository's target/.
fn build(template: &Template, project: &Path) -> PathBuf {
    let target = root().join("target");
    // Cargo.lock as the project's starting lock: cargo keeps its versions wherever the
    // project's requirements allow, so what the project shares with the apps (the host macros,
    // spin-sdk, wit-bindgen) is compiled once in target/. Resolved afresh, a crates.io release
    // newer than the lock rebuilt all of it (the macros alone are about 250 MB).
    std::fs::copy(root().join("Cargo.lock"), project.join("Cargo.lock"))
        .expect("Cargo.lock copied into the project");
    // Every run generates the project anew under the same package name, and cargo took an
    // earlier run's build of it as fresh after the vendored WIT had changed (the component it
    // built then no longer linked): the project's own artifacts go first, not its dependencies.
    let package = template.name;
    let cleaned = run(
        Command::new("cargo")
            .args(["clean", "--release", "--target", "wasm32-wasip2", "-p", package])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(project),
        Duration::from_secs(120),
    );
    assert!(cleaned.ok(), "cargo clean -p {package} {}", cleaned.said());
    let built = run(
        Command::new("cargo")
            .args(["build", "--release", "--target", "wasm32-wasip2"])
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .current_dir(project),
        Duration::from_secs(900),
    );
    assert!(built.ok(), "cargo build of the {} project {}", template.id, built.said());
    let lock = std::fs::read_to_string(project.join("Cargo.lock")).expect("Cargo.lock");
    assert!(!lock.contains("source = \"git+"), "a git dependency in Cargo.lock");
    check_lock_follows_apps(template, &lock);
    let wasm =
        target.join(format!("wasm32-wasip2/release/{}.wasm", template.name.replace('-', "_")));
    assert!(wasm.is_file(), "{} not built {}", wasm.display(), built.said());
    wasm
}

/// Two replicas, a tick every 2 s on a 2 s schedule in Asia/Kathmandu (UTC+05:45): every
/// tick, one runs and one skips. A third, with a typo in its time zone, never runs and says
/// on stderr which variable to fix.
fn run_replicas(
    template: &Template,
    spin: &Path,
    data: &Path,
    project: &Path,
    wasm: &Path,
    azurite: &Azurite,
) {
    // spin.toml's `source` is the project's own target dir; the build went to the shared one.
    let source = project.join("target/wasm32-wasip2/release");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::copy(wasm, source.join(wasm.file_name().unwrap())).unwrap();
    let container = format!("tpl-{}-{}", template.name, std::process::id());
    let replicas: Vec<(Background, PathBuf)> = (0..3)
        .map(|i| {
            // The third has a typo in its time zone.
            let typo = (i == 2).then_some(("SPIN_VARIABLE_TIME_ZONE", "Europe/Berln"));
            let dir = project.join(format!("replica-{i}"));
            start_replica((spin, data, project), &dir, azurite, &container, &format!("r-{i}"), typo)
        })
        .collect();
    let log = |dir: &PathBuf| {
        std::fs::read_to_string(dir.join(format!("logs/{}_stdout.txt", template.name)))
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let runs = |logs: &[String]| {
        logs.iter().flat_map(|l| l.lines()).filter(|l| l.contains(" with fencing token ")).count()
    };
    let mut logs = Vec::new();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        logs = replicas[..2].iter().map(|(_, dir)| log(dir)).collect();
        if runs(&logs) >= 3 && logs.iter().any(|l| l.contains("] skipped")) {
            break;
        }
    }
    let outputs: Vec<String> = replicas
        .iter()
        .map(|(_, dir)| std::fs::read_to_string(dir.join("spin.out")).unwrap_or_default())
        .collect();
    let typo_dir = replicas[2].1.clone();
    drop(replicas);
    let typo_said = |stream: &str| {
        std::fs::read_to_string(typo_dir.join(format!("logs/{}_{stream}.txt", template.name)))
            .unwrap_or_default()
    };
    let (typo_out, typo_err) = (typo_said("stdout"), typo_said("stderr"));
    assert!(
        typo_err.contains("error: set the `time_zone` variable") && typo_err.contains("Berln"),
        "{}: the misconfigured replica did not name time_zone on stderr: {typo_err}\n{typo_out}",
        template.id
    );
    assert!(!typo_out.contains("with fencing token"), "{}: {typo_out}", template.id);
    let all = format!("{logs:#?}\nspin said: {outputs:#?}");
    let mut tokens: Vec<u64> = logs
        .iter()
        .flat_map(|l| l.lines())
        .filter_map(|l| l.split(" with fencing token ").nth(1))
        .map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap())
        .collect();
    assert!(tokens.len() >= 3, "{}: fewer than 3 runs in 30 s: {all}", template.id);
    assert!(
        logs.iter()
            .any(|l| l.contains(": already ran for the due time") || l.contains(": held by ")),
        "{}: no replica skipped: {all}",
        template.id
    );
    assert!(logs.iter().all(|l| l.lines().all(|line| !line.contains("complete failed"))), "{all}");
    // Times for people: the due time in ISO 8601 on the Kathmandu clock.
    for line in logs.iter().flat_map(|l| l.lines()).filter(|l| l.contains(" with fencing token ")) {
        let due = line.split(" for the due time ").nth(1).and_then(|rest| rest.split_once(' '));
        assert!(
            due.is_some_and(|(at, _)| {
                at.ends_with("+05:45") && chrono::DateTime::parse_from_rfc3339(at).is_ok()
            }),
            "{}: the due time is not on the Kathmandu clock in ISO 8601: {line}",
            template.id
        );
    }
    tokens.sort_unstable();
    let expected: Vec<u64> = (1..=tokens.len() as u64).collect();
    assert_eq!(tokens, expected, "{}: each token granted once, none skipped: {all}", template.id);
}

/// `spin up` of a generated project in `dir`, on `container`, as `holder`, with one more
/// variable if given.
fn start_replica(
    (spin, data, project): (&Path, &Path, &Path),
    dir: &Path,
    azurite: &Azurite,
    container: &str,
    holder: &str,
    extra: Option<(&str, &str)>,
) -> (Background, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let mut env: Vec<(String, String)> = [
        ("SPIN_DATA_DIR", data.display().to_string()),
        ("SPIN_VARIABLE_CONNECTION_STRING", azurite.connection_string()),
        ("SPIN_VARIABLE_STORAGE_ENDPOINT", format!("http://127.0.0.1:{}", azurite.port)),
        ("SPIN_VARIABLE_CONTAINER", container.to_string()),
        ("SPIN_VARIABLE_HOLDER", holder.to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .to_vec();
    env.extend(extra.map(|(k, v)| (k.to_string(), v.to_string())));
    let (logs, state) = (dir.join("logs"), dir.join("state"));
    let manifest = project.join("spin.toml");
    let args = [
        "up",
        "-f",
        manifest.to_str().unwrap(),
        "--log-dir",
        logs.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
    ];
    let spin_up =
        Background::start(spin, &args, &env, &dir.join("spin.out"), Duration::from_secs(120));
    (spin_up, dir.to_path_buf())
}

/// A rolling upgrade on one lock, every 2 s: two replicas of the sync template (trigger-cron
/// 0.3.0) run alone, then two of the async one (`hold`, trigger-cron 0.5.0) join them, then the
/// sync ones go. Which replica wins a due time while both kinds run is a race the hosts decide
/// (one kind may win every time), so each kind gets due times of its own before and after.
/// Each due time runs once, whichever ran it, and the tokens count up without a gap.
fn run_mixed_fleet(spin: &Path, projects: &[(&Template, PathBuf, PathBuf)], azurite: &Azurite) {
    let container = format!("tpl-mixed-{}", std::process::id());
    let replica_dir = |project: &Path, i: usize| project.join(format!("mixed-{i}"));
    let start_fleet = |(template, data, project): &(&Template, PathBuf, PathBuf)| {
        (0..2)
            .map(|i| {
                let holder = format!("{}-{i}", template.name);
                let started = (spin, data.as_path(), project.as_path());
                let dir = replica_dir(project, i);
                start_replica(started, &dir, azurite, &container, &holder, None).0
            })
            .collect::<Vec<Background>>()
    };
    let dirs: Vec<(PathBuf, &Template)> = projects
        .iter()
        .flat_map(|(template, _, project)| (0..2).map(|i| (replica_dir(project, i), *template)))
        .collect();
    let logs = || -> Vec<String> {
        dirs.iter()
            .map(|(dir, template)| {
                std::fs::read_to_string(dir.join(format!("logs/{}_stdout.txt", template.name)))
                    .unwrap_or_default()
            })
            .collect()
    };
    let runs_by = |logs: &[String], name: &str| {
        let prefix = format!("[{name}-");
        logs.iter()
            .flat_map(|l| l.lines())
            .filter(|l| l.contains(" with fencing token ") && l.starts_with(&prefix))
            .count()
    };
    let names: Vec<&str> = projects.iter().map(|(template, _, _)| template.name).collect();
    let total = |logs: &[String]| -> usize { names.iter().map(|name| runs_by(logs, name)).sum() };
    let wait = |done: &dyn Fn(&[String]) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && !done(&logs()) {
            std::thread::sleep(Duration::from_millis(500));
        }
    };
    let (old, new) = (&projects[0], &projects[1]);
    let old_fleet = start_fleet(old);
    wait(&|logs| runs_by(logs, old.0.name) >= 2);
    let new_fleet = start_fleet(new);
    let before = total(&logs());
    wait(&|logs| total(logs) >= before + 3);
    drop(old_fleet);
    let before = runs_by(&logs(), new.0.name);
    wait(&|logs| runs_by(logs, new.0.name) >= before + 2);
    let fleets = new_fleet;
    drop(fleets);
    let logs = logs();
    let all = format!("{logs:#?}");
    for (template, _, _) in projects {
        assert!(runs_by(&logs, template.name) > 0, "no run by {}: {all}", template.id);
    }
    // Each due time once, whoever ran it; the tokens count up without a gap or a repeat.
    let mut runs: Vec<(u64, String)> = logs
        .iter()
        .flat_map(|l| l.lines())
        .filter_map(|l| l.split_once(" for the due time ")?.1.split_once(" with fencing token "))
        .map(|(due, rest)| {
            let token = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap();
            (token.parse().unwrap(), due.to_string())
        })
        .collect();
    runs.sort();
    let tokens: Vec<u64> = runs.iter().map(|(token, _)| *token).collect();
    assert_eq!(tokens, (1..=tokens.len() as u64).collect::<Vec<_>>(), "{all}");
    let mut due: Vec<&String> = runs.iter().map(|(_, due)| due).collect();
    due.sort();
    due.dedup();
    assert_eq!(due.len(), runs.len(), "a due time ran twice: {all}");
    let per_template: Vec<String> =
        names.iter().map(|name| format!("{name} {}", runs_by(&logs, name))).collect();
    eprintln!(
        "templates: a mixed fleet on one lock ran {} due times once each ({})",
        runs.len(),
        per_template.join(", ")
    );
}

/// A weekday 02:00 in Berlin, due at :30 past the minute: the trigger polls every minute at
/// second 30 (trigger-cron fires in UTC: a copy of the schedule would wake it at 02:00 UTC),
/// and the expression is written once, as the guard's schedule.
fn the_trigger_polls_at_the_schedules_seconds_and_the_schedule_is_written_once() {
    let spin = require("spin templates", find_spin());
    let dir = scratch("templates-poll");
    let spin_cmd = templates_installed(&spin, &dir);
    for template in TEMPLATES.iter().chain([&WRAPPED]) {
        let project = dir.join(template.name);
        let generated = run(
            &mut spin_cmd(&[
                "new",
                "-t",
                template.id,
                template.name,
                "--accept-defaults",
                "--no-vcs",
                "-v",
                "cron-expression=30 0 2 * * Mon-Fri",
                "-v",
                "time-zone=Europe/Berlin",
                "-o",
                &project.display().to_string(),
            ]),
            Duration::from_secs(60),
        );
        assert!(generated.ok(), "spin new -t {} {}", template.id, generated.said());
        let manifest = std::fs::read_to_string(project.join("spin.toml")).unwrap();
        let manifest_toml: toml::Value = toml::from_str(&manifest).expect("spin.toml parses");
        let trigger = &manifest_toml["trigger"]["cron"][0]["cron_expression"];
        assert_eq!(trigger.as_str(), Some("30 * * * * *"), "{}: {manifest}", template.id);
        assert_eq!(manifest.matches("30 0 2 * * Mon-Fri").count(), 1, "{manifest}");
        let variables = &manifest_toml["variables"];
        assert_eq!(variables["schedule"]["default"].as_str(), Some("30 0 2 * * Mon-Fri"));
        assert_eq!(variables["time_zone"]["default"].as_str(), Some("Europe/Berlin"));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The wrapped template: generated code with no traffic-cop call and a world that imports
/// nothing, built, and run by two replicas under trigger-cron 0.5.0: the wrapper calls the
/// handler once per due time across both, and only on runs.
/// What the README's quick start does before `spin templates install`, which the test bed has
/// done: the clone (this checkout), the builds (scripts/test), Azurite's package and the plugin
/// (.ci/run; the test starts an Azurite of its own) and the moves between directories.
const QUICK_START_SETUP: [&str; 7] = [
    "git clone",
    "cd",
    "scripts/build-components lease apps",
    "npm ci --prefix tools/azurite",
    "node tools/azurite/run.js",
    "spin plugins",
    "built=",
];

/// The README's quick start, from `spin templates install` on, and its second replica: the
/// wrapped template generated, built and run by two replicas with their own state and logs.
fn the_wrapped_template_guards_a_plain_handler() {
    let spin = require("spin templates (wrapped)", find_spin());
    let data = require("spin templates (wrapped, cron 0.5.0)", cron_line(WRAPPED.line));
    traffic_cop_testbed::built::assert_app_built();
    let wrapper = traffic_cop_testbed::built::app_wasm("cron_wrapper_async");
    let built = wrapper.parent().unwrap().display().to_string();
    assert_eq!(WRAPPED.lease().parent(), wrapper.parent());
    let readme =
        docs::replaced(&docs::example("quick-start"), &[("$built/", &format!("{built}/"))]);
    let (setup, commands): (Vec<ShellCommand>, Vec<ShellCommand>) =
        docs::shell_commands(&readme).into_iter().partition(|c| {
            let line = format!("{} {}", c.program, c.args.join(" "));
            QUICK_START_SETUP.iter().any(|s| line.starts_with(s))
        });
    assert_eq!(setup.len(), 10, "the quick start's setup changed: {setup:#?}");
    let said: Vec<Vec<&str>> =
        commands.iter().map(|c| c.args.iter().map(String::as_str).collect()).collect();
    assert!(commands.iter().all(|c| c.program == "spin"), "{commands:#?}");
    assert_eq!(said.len(), 4, "{commands:#?}");
    assert_eq!(said[0], ["templates", "install", "--dir", "."], "run in the clone: {readme}");
    assert_eq!(said[1][..4], ["new", "-t", WRAPPED.id, WRAPPED.name], "{readme}");
    assert_eq!(said[2], ["build", "--skip-generate-wits"], "{readme}");
    assert_eq!(said[3], ["up"], "{readme}");
    let dir = scratch("templates-wrapped");
    let spin_cmd = templates_installed(&spin, &dir);
    let project = dir.join(WRAPPED.name);
    let out = project.display().to_string();
    let mut args = said[1].clone();
    args.extend(["--no-vcs", "-v", "cron-expression=*/2 * * * * *", "-o", &out]);
    let generated = run(&mut spin_cmd(&args), Duration::from_secs(60));
    assert!(generated.ok(), "spin new -t {} {}", WRAPPED.id, generated.said());
    let code = std::fs::read_to_string(project.join("src/lib.rs")).unwrap();
    let world = std::fs::read_to_string(project.join("wit/world.wit")).unwrap();
    let cargo = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(!world.contains("import"), "the job's world imports: {world}");
    let cargo: toml::Value = toml::from_str(&cargo).expect("Cargo.toml parses");
    let dependencies: Vec<&String> = cargo["dependencies"].as_table().unwrap().keys().collect();
    assert_eq!(dependencies, ["wit-bindgen"], "the job depends on more than its bindings");
    assert!(!code.contains("guard::") && !code.contains("traffic_cop"), "{code}");
    let wasm = build(&WRAPPED, &project);
    // The build the README runs: no warning about import interfaces, before or after the job
    // is built (plain `spin build` warns on a fresh project).
    let spin_built = run(
        spin_cmd(&said[2]).current_dir(&project).env("CARGO_TARGET_DIR", root().join("target")),
        Duration::from_secs(300),
    );
    assert!(spin_built.ok(), "spin build --skip-generate-wits {}", spin_built.said());
    assert!(!spin_built.said().contains("Warning"), "{}", spin_built.said());
    let manifest = std::fs::read_to_string(project.join("spin.toml")).unwrap();
    assert!(manifest.contains("spin build --skip-generate-wits"), "{manifest}");
    let source = project.join("target/wasm32-wasip2/release");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::copy(&wasm, source.join(wasm.file_name().unwrap())).unwrap();
    let azurite = Azurite::start();
    let container = format!("tpl-wrapped-{}", std::process::id());
    // The README's replicas, in the project: the quick start's `spin up`, then the second
    // replica's, each with its own state and logs; Azurite and the plugin are the test's.
    let second = docs::shell_commands(&docs::example("second-replica"));
    assert_eq!(second.len(), 1, "{second:#?}");
    let replicas: Vec<(Background, PathBuf)> = [&commands[3], &second[0]]
        .iter()
        .enumerate()
        .map(|(i, up)| {
            assert_eq!((up.program.as_str(), up.args[0].as_str()), ("spin", "up"), "{up:#?}");
            let mut env: Vec<(String, String)> = [
                ("SPIN_DATA_DIR", data.display().to_string()),
                ("SPIN_VARIABLE_CONNECTION_STRING", azurite.connection_string()),
                ("SPIN_VARIABLE_STORAGE_ENDPOINT", format!("http://127.0.0.1:{}", azurite.port)),
                ("SPIN_VARIABLE_CONTAINER", container.clone()),
            ]
            .map(|(k, v)| (k.to_string(), v))
            .to_vec();
            env.extend(up.env.iter().cloned());
            let logs = match up.args.iter().position(|a| a == "--log-dir") {
                Some(at) => project.join(&up.args[at + 1]),
                None => project.join(".spin/logs"),
            };
            let args: Vec<&str> = up.args.iter().map(String::as_str).collect();
            let out = dir.join(format!("replica-{i}.out"));
            let spin_up =
                Background::start_in(&project, &spin, &args, &env, &out, Duration::from_secs(120));
            (spin_up, logs.parent().unwrap().to_path_buf())
        })
        .collect();
    let log = |dir: &PathBuf| {
        std::fs::read_to_string(dir.join(format!("logs/{}_stdout.txt", WRAPPED.name)))
            .unwrap_or_default()
    };
    let ran = format!("{}: the job ran for the due time ", WRAPPED.name);
    let calls = |log: &str| -> Vec<String> {
        log.lines().filter_map(|l| l.strip_prefix(ran.as_str())).map(str::to_string).collect()
    };
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut logs: Vec<String> = Vec::new();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        logs = replicas.iter().map(|(_, dir)| log(dir)).collect();
        let skipped = logs.iter().any(|l| l.contains("\"decision\":\"skip\""));
        if logs.iter().map(|l| calls(l).len()).sum::<usize>() >= 3 && skipped {
            break;
        }
    }
    drop(replicas);
    azurite.stop();
    let all = format!("{logs:#?}");
    let mut dues: Vec<String> = logs.iter().flat_map(|l| calls(l)).collect();
    assert!(dues.len() >= 3, "fewer than 3 runs: {all}");
    assert!(logs.iter().any(|l| l.contains("\"decision\":\"skip\"")), "no skip: {all}");
    for l in &logs {
        let runs = l.lines().filter(|line| line.contains("\"decision\":\"run\"")).count();
        // A call still working when the replicas stopped has no decision yet.
        let called = calls(l).len();
        assert!(called >= runs && called <= runs + 1, "{called} calls for {runs} runs: {all}");
    }
    let total = dues.len();
    dues.sort();
    dues.dedup();
    assert_eq!(dues.len(), total, "a due time ran twice: {all}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The lock check itself: the workspace's lock passes, and one package moved to a version the
/// apps do not have (as a fresh resolution after a crates.io release would) is refused.
fn the_lock_check_refuses_a_version_apart_from_the_apps() {
    let apps = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock");
    check_lock_follows_apps(&TEMPLATES[0], &apps);
    let entry = apps.find("name = \"spin-sdk\"\nversion = \"").expect("spin-sdk in Cargo.lock");
    let at = entry + "name = \"spin-sdk\"\nversion = \"".len();
    let moved = format!("{}5.99.0{}", &apps[..at], &apps[at + apps[at..].find('"').unwrap()..]);
    let refused = std::panic::catch_unwind(|| check_lock_follows_apps(&TEMPLATES[0], &moved));
    assert!(refused.is_err(), "a spin-sdk apart from Cargo.lock passed");
}

/// `spin templates install --git`, as the templates' README gives it, from this repository's
/// committed tree (a `file://` URL standing in for GitHub's): all three templates, no clone of
/// the user's own.
fn the_templates_install_from_the_repository_by_git() {
    let spin = require("spin templates (--git)", find_spin());
    let dir = scratch("templates-git");
    let spin_in = |args: &[&str]| {
        let mut command = Command::new(&spin);
        command.args(args).env("SPIN_DATA_DIR", dir.join("spin-data")).current_dir(&dir);
        command.env_remove("RUSTC_WORKSPACE_WRAPPER");
        command
    };
    let url = format!("file://{}", root().display());
    let installed =
        run(&mut spin_in(&["templates", "install", "--git", &url]), Duration::from_secs(120));
    assert!(installed.ok(), "spin templates install --git {}", installed.said());
    let listed = run(&mut spin_in(&["templates", "list"]), Duration::from_secs(30));
    assert!(listed.ok(), "spin templates list {}", listed.said());
    let ids = TEMPLATES.iter().map(|t| t.id).chain(["traffic-cop-cron-rust-wrapped"]);
    for id in ids {
        assert!(listed.said().contains(id), "{id} not installed: {}", listed.said());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

pub fn tests() -> Vec<Test> {
    let own = traffic_cop_testbed::tests![
        templates_install_generate_build_and_run_under_their_cron_lines,
        the_templates_install_from_the_repository_by_git,
        the_lock_check_refuses_a_version_apart_from_the_apps,
        the_trigger_polls_at_the_schedules_seconds_and_the_schedule_is_written_once,
        the_wrapped_template_guards_a_plain_handler,
    ];
    [no_clone::tests(), own].concat()
}

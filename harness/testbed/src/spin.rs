//! The real Spin CLI for the tests and the demo: where to find it and its trigger-cron plugin
//! lines, a copy of spin.toml with a shorter schedule, and [`SpinReplica`], one `spin up`
//! process group on its own port, log dir and variables.
//!
//! Layout (what `scripts/test` and `.ci/run` make with `../shared/tools/spin/install.sh`):
//! `target/spin/<cron version>/bin/spin` and `target/spin/<cron version>/data` for Spin 4.0.2,
//! one directory per plugin line because a Spin data dir holds one trigger-cron version, and
//! `target/spin/spin-3.6.3/` for the Spin 3.6.3 CLI with trigger-cron 0.3.0 (the Spin that
//! SpinKube's containerd shim embeds up to v0.24). `TRAFFIC_COP_SPIN_HOME` replaces
//! `target/spin`.

mod http;
mod replica;

pub use http::{http, http_sending, http_with};
pub use replica::{kill_group, pause_group, resume_group, Launch, SpinReplica, WRAPPER};

use std::path::{Path, PathBuf};

/// The trigger-cron plugin lines the tests run: 0.3.0 (`fermyon:spin-cron@2.0.0`) and 0.5.0
/// (`spin:cron@3.0.0`, whose host calls our sync export too).
pub const CRON_LINES: [&str; 2] = ["0.3.0", "0.5.0"];

/// Where the plugin lines are installed: `TRAFFIC_COP_SPIN_HOME`, else `target/spin`.
pub fn spin_home() -> PathBuf {
    std::env::var_os("TRAFFIC_COP_SPIN_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repo_root().join("target/spin"))
}

/// The `spin` CLI: `SPIN`, then PATH, then the copy `scripts/test` installs.
pub fn find_spin() -> Result<PathBuf, String> {
    if let Some(spin) = std::env::var_os("SPIN").filter(|s| !s.is_empty()) {
        let spin = PathBuf::from(spin);
        return if spin.is_file() {
            Ok(spin)
        } else {
            Err(format!("SPIN={} is not a file", spin.display()))
        };
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("spin"))
        .find(|candidate| candidate.is_file());
    let installed = CRON_LINES.iter().map(|v| spin_home().join(v).join("bin/spin"));
    on_path.into_iter().chain(installed).find(|p| p.is_file()).ok_or_else(|| {
        "no spin CLI (set SPIN, put spin on PATH, or let scripts/test or scripts/demo install it \
         from ../shared/tools/spin)"
            .to_string()
    })
}

/// The older Spin line the tests also run: the one SpinKube's shim embeds up to v0.24.0, and
/// what many CLI installs still are.
pub const SPIN_3: &str = "3.6.3";

/// The Spin 3.6.3 CLI and its data dir (with trigger-cron 0.3.0), checked by `spin --version`.
pub fn spin_3() -> Result<(PathBuf, PathBuf), String> {
    let home = spin_home().join(format!("spin-{SPIN_3}"));
    let cli = home.join("bin/spin");
    let version = std::process::Command::new(&cli)
        .arg("--version")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .map_err(|_| {
            format!(
                "no Spin {SPIN_3} at {} (scripts/test installs it from ../shared/tools/spin)",
                cli.display()
            )
        })?;
    if !version.starts_with(&format!("spin {SPIN_3}")) {
        return Err(format!("{} is {:?}, not Spin {SPIN_3}", cli.display(), version.trim()));
    }
    Ok((cli, home.join("data")))
}

/// The Spin data dir holding trigger-cron `version`, checked against the plugin's manifest.
pub fn cron_line(version: &str) -> Result<PathBuf, String> {
    cron_line_in(&spin_home().join(version).join("data"), version)
}

/// `data` if it holds trigger-cron `version`.
pub fn cron_line_in(data: &Path, version: &str) -> Result<PathBuf, String> {
    let data = data.to_path_buf();
    let manifest = data.join("plugins/manifests/trigger-cron.json");
    let text = std::fs::read_to_string(&manifest).map_err(|_| {
        format!(
            "no trigger-cron {version} in {} (scripts/test installs it from ../shared/tools/spin)",
            data.display()
        )
    })?;
    if text.contains(&format!("\"{version}\"")) {
        Ok(data)
    } else {
        Err(format!("{} is not trigger-cron {version}", manifest.display()))
    }
}

/// Writes `dir/spin.toml`: the project's spin.toml with the cron schedule replaced and the
/// relative `source`/dependency paths made absolute (the copy lives elsewhere). Everything
/// else is the users' manifest unchanged; spin.toml itself is never edited.
pub fn manifest_copy(dir: &Path, cron_expression: &str) -> PathBuf {
    let root = crate::repo_root();
    let original = std::fs::read_to_string(root.join("spin.toml")).expect("spin.toml");
    let absolute = |line: &str, key: &str| -> Option<String> {
        let (head, rest) = line.split_once(&format!("{key} = \""))?;
        Some(format!("{head}{key} = \"{}/{rest}", root.display()))
    };
    let (mut crons, mut paths) = (0, 0);
    let copy: Vec<String> = original
        .lines()
        .map(|line| {
            if line.starts_with("cron_expression = ") {
                crons += 1;
                format!("cron_expression = \"{cron_expression}\"")
            } else if let Some(line) =
                absolute(line, "source").filter(|_| line.starts_with("source"))
            {
                paths += 1;
                line
            } else if let Some(line) = absolute(line, "path").filter(|_| !line.starts_with('#')) {
                paths += 1;
                line
            } else {
                line.to_string()
            }
        })
        .collect();
    assert!(
        crons == 1 && paths == 4,
        "spin.toml changed shape ({crons} cron expressions, {paths} paths): update manifest_copy"
    );
    std::fs::create_dir_all(dir).expect("manifest dir");
    let path = dir.join("spin.toml");
    std::fs::write(&path, copy.join("\n") + "\n").expect("manifest copy");
    path
}

/// Fails when any of the app's components the tests load is missing or older than its
/// sources.
pub fn assert_built() {
    crate::built::assert_app_built()
}

/// Fails when a component [`manifest_copy`] loads is missing or older than its sources;
/// checks nothing else.
pub fn assert_manifest_built() {
    crate::built::assert_app_components()
}

/// A free loopback port (bound, then released for `spin up --listen`).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

/// The app's `schedule` for a job due every `seconds` (a divisor of a minute, of an hour in
/// minutes, or an hour or a day), in Spin's cron dialect.
pub fn every(seconds: u64) -> String {
    match seconds {
        s if s < 60 && 60 % s == 0 => format!("*/{s} * * * * *"),
        60 => "0 * * * * *".into(),
        s if s % 60 == 0 && s < 3600 && 60 % (s / 60) == 0 => format!("0 */{} * * * *", s / 60),
        3600 => "0 0 * * * *".into(),
        86_400 => "0 0 0 * * *".into(),
        other => panic!("no cron expression for every {other} s"),
    }
}

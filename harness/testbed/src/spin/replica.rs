//! One `spin up` replica in a process group of its own. Spin runs each trigger in a child
//! process (`spin trigger http`, `spin trigger-cron`, the plugin binary), so killing the
//! `spin up` pid alone would leave the triggers running: everything is killed by group.
//!
//! A small `sh` wrapper makes the group die with whoever started it: it holds our end of a
//! pipe and kills the group when that pipe closes (a test process killed outright, no Drop
//! run), and it also caps the group's lifetime, so nothing started here can outlive a hung run.

use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The watcher runs as the group leader's shell, then becomes the program itself (`exec`), so
/// the child's pid is the program's and the group id. Usage: `sh -c WRAPPER sh <lifetime
/// seconds> <program> <args…>`, with a pipe on stdin whose closing kills the group.
pub const WRAPPER: &str = r#"
exec 3<&0
life=$1; shift
(cat <&3 >/dev/null; kill -KILL 0) &
(sleep "$life"; kill -KILL 0) &
exec "$@" </dev/null 3<&-
"#;

/// How every replica of one story is started.
#[derive(Clone)]
pub struct Launch {
    pub spin: PathBuf,
    /// `SPIN_DATA_DIR` (where the trigger-cron plugin is); `None` keeps the user's own.
    pub data_dir: Option<PathBuf>,
    pub manifest: PathBuf,
    /// `-c <id>`: run only this component (and so only its trigger).
    pub component: Option<String>,
    /// The group is killed after this long, whatever happens.
    pub lifetime: Duration,
    /// More environment for `spin up` (a `HOME` and XDG directories of its own, so nothing
    /// comes from the user's caches).
    pub env: Vec<(String, String)>,
}

pub struct SpinReplica {
    pub name: String,
    pub port: u16,
    dir: PathBuf,
    child: Child,
    watch: Option<ChildStdin>,
    killed: bool,
    paused: bool,
    /// To start it again on another port when its port was taken meanwhile (see `wait_ready`).
    launch: Launch,
    variables: Vec<(String, String)>,
}

impl Launch {
    /// Starts `spin up` on `127.0.0.1:<free port>` with logs and state under `dir` and each
    /// variable as `SPIN_VARIABLE_<NAME>`.
    pub fn start(&self, name: &str, dir: &Path, variables: &[(&str, String)]) -> SpinReplica {
        std::fs::create_dir_all(dir).expect("replica dir");
        let variables: Vec<(String, String)> =
            variables.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let (mut child, port) = self.spawn(dir, &variables);
        let watch = child.stdin.take();
        SpinReplica {
            name: name.to_string(),
            port,
            dir: dir.to_path_buf(),
            child,
            watch,
            killed: false,
            paused: false,
            launch: self.clone(),
            variables,
        }
    }

    fn spawn(&self, dir: &Path, variables: &[(String, String)]) -> (Child, u16) {
        let port = super::free_port();
        let out = std::fs::File::create(dir.join("spin.out")).expect("spin.out");
        let mut command = Command::new("sh");
        command
            .args(["-c", WRAPPER, "sh", &self.lifetime.as_secs().max(1).to_string()])
            .arg(&self.spin)
            .args(["up", "-f"])
            .arg(&self.manifest)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--log-dir"])
            .arg(dir.join("logs"))
            .arg("--state-dir")
            .arg(dir.join("state"));
        if let Some(component) = &self.component {
            command.args(["-c", component]);
        }
        if let Some(data) = &self.data_dir {
            command.env("SPIN_DATA_DIR", data);
        }
        for (key, value) in variables {
            command.env(format!("SPIN_VARIABLE_{}", key.to_uppercase()), value);
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        let child = command
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(out.try_clone().expect("spin.out"))
            .stderr(out)
            .spawn()
            .expect("sh starts spin");
        (child, port)
    }
}

impl SpinReplica {
    /// The one component it runs (`-c`), if it runs only one.
    pub fn launch_component(&self) -> Option<&str> {
        self.launch.component.as_deref()
    }

    /// Waits until Spin says it serves on its port and the port answers; on failure says what
    /// spin printed. The port was free when picked, but another process (a test's proxy or
    /// receiver) may take it before Spin binds: then Spin exits and another listener would
    /// answer, so the replica is started again on a new port.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            let output = self.output();
            if output.contains(&format!("127.0.0.1:{} is already in use", self.port)) {
                kill_group(&mut self.child, self.watch.take());
                let (mut child, port) = self.launch.spawn(&self.dir, &self.variables);
                (self.watch, self.child, self.port) = (child.stdin.take(), child, port);
                continue;
            }
            let address = SocketAddr::from(([127, 0, 0, 1], self.port));
            if output.contains(&format!("Serving http://127.0.0.1:{}", self.port))
                && TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok()
            {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("{}: spin exited ({status}): {}", self.name, self.output()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("{}: not listening after {timeout:?}: {}", self.name, self.output()))
    }

    /// What `spin up` itself printed (not the components).
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.dir.join("spin.out")).unwrap_or_default()
    }

    /// Where Spin writes a component's stderr, `<log dir>/<component>_stderr.txt`: the apps'
    /// human-readable tick lines (their stdout carries the JSON decision log).
    pub fn log_path(&self, component: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{component}_stderr.txt"))
    }

    /// A component's human-readable lines so far (its stderr).
    pub fn log(&self, component: &str) -> String {
        std::fs::read_to_string(self.log_path(component)).unwrap_or_default()
    }

    /// A component's stdout so far: the apps' JSON decision log, one object per line (the
    /// guests print their human-readable lines there).
    pub fn stdout(&self, component: &str) -> String {
        let path = self.dir.join("logs").join(format!("{component}_stdout.txt"));
        std::fs::read_to_string(path).unwrap_or_default()
    }

    pub fn is_killed(&self) -> bool {
        self.killed
    }

    /// Whether any process of this replica's group (spin, its triggers, the plugin) is still
    /// there after `grace`: killed children linger as zombies until init reaps them.
    pub fn group_alive(&self, grace: Duration) -> bool {
        let deadline = Instant::now() + grace;
        loop {
            let alive = Command::new("kill")
                .args(["-0", "--", &format!("-{}", self.child.id())])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !alive || Instant::now() >= deadline {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The `spin up` process's id, which is also its process group's.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// One signal to `spin up` alone, as an orchestrator stopping it sends SIGTERM (or a
    /// terminal's Ctrl-C sends SIGINT); Spin itself decides what its triggers get.
    pub fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
    }

    /// Waits up to `timeout` for `spin up` to exit; its exit status when it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => return None,
            }
        }
    }

    /// SIGSTOP to every process of the group (spin, its triggers, the plugin): the replica
    /// freezes mid-work as a paused VM or a long GC would, holding whatever it believed it
    /// held. The wrapper's own watchers (`sh`, `cat`, `sleep`) are continued at once, so the
    /// group still dies with the test process and at the end of its lifetime while stopped
    /// (SIGKILL ends stopped processes too).
    pub fn pause(&mut self) {
        pause_group(self.child.id());
        self.paused = true;
    }

    /// SIGCONT to the whole group: the frozen replica carries on where it stopped, unaware
    /// that time passed.
    pub fn resume(&mut self) {
        resume_group(self.child.id());
        self.paused = false;
    }

    /// Whether any of Spin's own processes (not the wrapper's watchers, not zombies) is still
    /// in the group after `grace`: after a graceful stop, a trigger that outlived `spin up`.
    pub fn spin_alive(&self, grace: Duration) -> bool {
        let deadline = Instant::now() + grace;
        loop {
            let alive = group_members(self.child.id()).into_iter().any(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                let state = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next());
                !matches!(comm.trim(), "sh" | "cat" | "sleep") && !matches!(state, Some("Z") | None)
            });
            if !alive || Instant::now() >= deadline {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// SIGKILL to the whole group: spin and its trigger processes die mid-work, with no
    /// chance to complete or release anything.
    pub fn kill(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        kill_group(&mut self.child, self.watch.take());
    }
}

/// SIGKILLs the whole process group a [`WRAPPER`] child leads, reaps the child, and closes
/// the watcher's pipe.
pub fn kill_group(child: &mut Child, watch: Option<ChildStdin>) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
    drop(watch);
}

impl Drop for SpinReplica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The pids whose process group is `group` (from /proc: `stat`'s fifth field).
/// SIGSTOP to every process of the group `group` (see [`SpinReplica::pause`]); the wrapper's own
/// watchers (`sh`, `cat`, `sleep`) are continued at once.
pub fn pause_group(group: u32) {
    let _ = Command::new("kill").args(["-STOP", "--", &format!("-{group}")]).status();
    for pid in group_members(group) {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if matches!(comm.trim(), "sh" | "cat" | "sleep") {
            let _ = Command::new("kill").args(["-CONT", &pid.to_string()]).status();
        }
    }
}

/// SIGCONT to the whole group `group`.
pub fn resume_group(group: u32) {
    let _ = Command::new("kill")
        .args(["-CONT", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
}

fn group_members(group: u32) -> Vec<u32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid pgrp ...`; comm may hold spaces, so split after its `)`.
        let pgrp = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(2));
        if pgrp.and_then(|p| p.parse::<u32>().ok()) == Some(group) {
            members.push(pid);
        }
    }
    members
}

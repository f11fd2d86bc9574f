#![allow(dead_code)] // each test file uses only part of it
//! Child processes for the Node, template and SpinKube tests: each runs in a process group of
//! its own with a time limit, and the whole group is killed when the limit passes, so nothing
//! a test starts (npm, cargo, node, their children) outlives it.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub struct Ran {
    /// `None`: killed at the time limit.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Ran {
    pub fn ok(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Everything it printed, for failure messages.
    pub fn said(&self) -> String {
        let status = self.status.map_or("killed at its time limit".into(), |s| s.to_string());
        format!(
            "({status}, {:?})\n--- stdout\n{}\n--- stderr\n{}",
            self.took, self.stdout, self.stderr
        )
    }
}

pub fn run(command: &mut Command, limit: Duration) -> Ran {
    let started = Instant::now();
    let mut child = command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        if started.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The group goes either way: a finished npm or cargo may leave helpers behind.
    traffic_cop_testbed::spin::kill_group(&mut child, None);
    Ran {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        took: started.elapsed(),
    }
}

/// `name` on PATH.
pub fn on_path(name: &str) -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("no {name} on PATH"))
}

/// A fresh scratch directory under target/ecosystem (removed first if a run left it).
pub fn scratch(name: &str) -> PathBuf {
    let dir = traffic_cop_testbed::repo_root()
        .join("target/ecosystem")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A long-running process (`spin up`) in a process group of its own, output to `log`. The
/// group dies when this is dropped, when the test process dies (a `sh` watcher holds a pipe
/// from us and kills the group when it closes), and after `life` whatever happens.
pub struct Background {
    child: std::process::Child,
    watch: Option<std::process::ChildStdin>,
}

// The same group watcher the Spin replicas run under.
use traffic_cop_testbed::spin::WRAPPER as WATCHER;

impl Background {
    pub fn start(
        program: &std::path::Path,
        args: &[&str],
        env: &[(String, String)],
        log: &std::path::Path,
        life: Duration,
    ) -> Background {
        Background::start_in(Path::new("."), program, args, env, log, life)
    }

    /// [`Background::start`] with `dir` as the working directory (a docs example's relative
    /// paths).
    pub fn start_in(
        dir: &Path,
        program: &std::path::Path,
        args: &[&str],
        env: &[(String, String)],
        log: &std::path::Path,
        life: Duration,
    ) -> Background {
        let out = std::fs::File::create(log).expect("log file");
        let mut command = Command::new("sh");
        command.current_dir(dir);
        command
            .args(["-c", WATCHER, "sh", &life.as_secs().max(1).to_string()])
            .arg(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(out.try_clone().expect("log file"))
            .stderr(out);
        let mut child = command.spawn().unwrap_or_else(|e| panic!("cannot start {program:?}: {e}"));
        let watch = child.stdin.take();
        Background { child, watch }
    }

    /// Freezes the group (SIGSTOP), as [`traffic_cop_testbed::spin::SpinReplica::pause`] does.
    pub fn pause(&self) {
        traffic_cop_testbed::spin::pause_group(self.child.id());
    }

    pub fn resume(&self) {
        traffic_cop_testbed::spin::resume_group(self.child.id());
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        traffic_cop_testbed::spin::kill_group(&mut self.child, self.watch.take());
    }
}

//! One `spin up` replica in a process group of its own. Spin runs each trigger in a child
//! process (`spin trigger http`, `spin trigger-cron`, the plugin binary), so killing the
//! `spin up` pid alone would leave the triggers running: everything is killed by group.
//!
//! A small `sh` wrapper makes the group die with whoever started it: it holds our end of a
//! pipe and kills the group when that pipe closes (a test process killed outright, no Drop
//! run), and it also caps the group's lifetime, so nothing started here can outlive a hung run.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The watcher runs as the group leader's shell, then becomes `spin` itself (`exec`), so
/// the child's pid is spin's and the group id.
const WRAPPER: &str = r#"
exec 3<&0
life=$1; shift
(cat <&3 >/dev/null; kill -KILL 0) &
(sleep "$life"; kill -KILL 0) &
exec "$@" </dev/null 3<&-
"#;

/// How every replica of one story is started.
pub struct Launch {
    pub spin: PathBuf,
    /// `SPIN_DATA_DIR` (where the trigger-cron plugin is); `None` keeps the user's own.
    pub data_dir: Option<PathBuf>,
    pub manifest: PathBuf,
    /// `-c <id>`: run only this component (and so only its trigger).
    pub component: Option<String>,
    /// The group is killed after this long, whatever happens.
    pub lifetime: Duration,
}

pub struct SpinReplica {
    pub name: String,
    pub port: u16,
    dir: PathBuf,
    child: Child,
    watch: Option<ChildStdin>,
    killed: bool,
}

impl Launch {
    /// Starts `spin up` on `127.0.0.1:<free port>` with logs and state under `dir` and each
    /// variable as `SPIN_VARIABLE_<NAME>`.
    pub fn start(&self, name: &str, dir: &Path, variables: &[(&str, String)]) -> SpinReplica {
        std::fs::create_dir_all(dir).expect("replica dir");
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
        let mut child = command
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(out.try_clone().expect("spin.out"))
            .stderr(out)
            .spawn()
            .expect("sh starts spin");
        let watch = child.stdin.take();
        SpinReplica {
            name: name.to_string(),
            port,
            dir: dir.to_path_buf(),
            child,
            watch,
            killed: false,
        }
    }
}

impl SpinReplica {
    /// Waits until the HTTP listener answers; on failure says what spin printed.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        let address = SocketAddr::from(([127, 0, 0, 1], self.port));
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
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

    /// Where Spin writes a component's stdout: `<log dir>/<component>_stdout.txt`.
    pub fn log_path(&self, component: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{component}_stdout.txt"))
    }

    /// A component's stdout so far.
    pub fn log(&self, component: &str) -> String {
        std::fs::read_to_string(self.log_path(component)).unwrap_or_default()
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

    /// SIGKILL to the whole group: spin and its trigger processes die mid-work, with no
    /// chance to complete or release anything.
    pub fn kill(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        drop(self.watch.take());
    }
}

impl Drop for SpinReplica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One HTTP/1.1 exchange with a replica on 127.0.0.1: status and body.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    timeout: Duration,
) -> Result<(u16, String), String> {
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&address, timeout).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no complete HTTP answer")?;
    let (head, body) = (String::from_utf8_lossy(&raw[..split]), &raw[split + 4..]);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line: {head:.60}"))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked { dechunk(body) } else { body.to_vec() };
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        let rest = &body[end + 2..];
        if size == 0 || rest.len() < size {
            break;
        }
        out.extend_from_slice(&rest[..size]);
        body = rest[size..].strip_prefix(b"\r\n").unwrap_or(&rest[size..]);
    }
    out
}

//! An OCI registry on loopback for the registry tests: Debian's `docker-registry` (the CNCF
//! `distribution` registry 2.8), anonymous or behind an htpasswd login, its storage in a directory of the test's, its access
//! log kept. It listens on `127.0.0.1` only; clients name it `localhost:<port>`, the only name
//! Spin's registry client speaks plain HTTP to (with the wasm-pkg config the tests write).
//! Stopped on drop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct OciRegistry {
    pub port: u16,
    protected: bool,
    log: PathBuf,
    child: Child,
}

/// The `docker-registry` program (Debian's package), or why it is missing.
pub fn find() -> Result<PathBuf, String> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("docker-registry"))
        .find(|candidate| candidate.is_file());
    on_path.ok_or_else(|| {
        "no docker-registry (Debian's package: apt-get install docker-registry; .ci/run does)"
            .to_string()
    })
}

impl OciRegistry {
    /// Starts it with storage and logs under `dir`, and waits until `/v2/` answers.
    pub fn start(program: &Path, dir: &Path) -> OciRegistry {
        OciRegistry::start_with(program, dir, None)
    }

    /// The same, answering only `user` with `password` (HTTP Basic, an htpasswd file:
    /// [`htpasswd_line`]).
    pub fn start_protected(program: &Path, dir: &Path, user: &str, password: &str) -> OciRegistry {
        OciRegistry::start_with(program, dir, Some((user, password)))
    }

    fn start_with(program: &Path, dir: &Path, login: Option<(&str, &str)>) -> OciRegistry {
        std::fs::create_dir_all(dir.join("storage")).expect("registry dir");
        let port = crate::spin::free_port();
        let config = dir.join("config.yml");
        let mut text = format!(
            "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\n\
             storage:\n  filesystem:\n    rootdirectory: {}\n\
             http:\n  addr: 127.0.0.1:{port}\n",
            dir.join("storage").display()
        );
        if let Some((user, password)) = login {
            std::fs::write(dir.join("htpasswd"), htpasswd_line(user, password)).unwrap();
            text += &format!(
                "auth:\n  htpasswd:\n    realm: traffic-cop-tests\n    path: {}\n",
                dir.join("htpasswd").display()
            );
        }
        std::fs::write(&config, text).expect("registry config");
        let log = dir.join("registry.log");
        let out = std::fs::File::create(&log).expect("registry log");
        let child = Command::new(program)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("registry log"))
            .stderr(out)
            .spawn()
            .expect("docker-registry starts");
        let mut registry = OciRegistry { port, protected: login.is_some(), log, child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !registry.answers() {
            if Instant::now() > deadline || registry.child.try_wait().ok().flatten().is_some() {
                panic!("docker-registry did not start: {}", registry.access_log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `localhost:<port>`, as spin.toml and the wasm-pkg config name it.
    pub fn name(&self) -> String {
        format!("localhost:{}", self.port)
    }

    fn answers(&self) -> bool {
        crate::spin::http(self.port, "GET", "/v2/", Duration::from_secs(2))
            .is_ok_and(|(status, _)| status == if self.protected { 401 } else { 200 })
    }

    /// What the registry logged, its access log included (one line per request).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `user`'s htpasswd line, its bcrypt hash made by Python's `crypt` at bcrypt's lowest cost (4).
/// The registry checks the password on every request, and at `crypt`'s default cost (12) that
/// took it about 25 CPU-seconds of a test run; what the login protects here is nothing.
pub fn htpasswd_line(user: &str, password: &str) -> String {
    let hashed = std::process::Command::new("python3")
        .args(["-W", "ignore", "-c"])
        .arg(
            "import crypt, sys; \
             print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))",
        )
        .arg(password)
        .output()
        .expect("python3 runs");
    let hash = String::from_utf8(hashed.stdout).unwrap();
    assert!(hash.starts_with("$2"), "no bcrypt hash: {}", String::from_utf8_lossy(&hashed.stderr));
    format!("{user}:{}\n", hash.trim())
}

#[cfg(test)]
mod tests {
    /// The cheapest bcrypt cost, and still a hash of the password that bcrypt accepts.
    #[test]
    fn the_htpasswd_line_hashes_at_bcrypt_cost_4() {
        let line = super::htpasswd_line("pusher", "s3cret");
        let hash = line.trim().strip_prefix("pusher:").expect(&line);
        assert!(hash.starts_with("$2b$04$"), "{hash}");
        let check = std::process::Command::new("python3")
            .args([
                "-W",
                "ignore",
                "-c",
                "import crypt, sys; print(crypt.crypt(sys.argv[1], sys.argv[2]))",
            ])
            .args(["s3cret", hash])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(check.stdout).unwrap().trim(), hash);
    }
}

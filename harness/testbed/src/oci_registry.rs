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

    /// The same, answering only `user` with `password` (HTTP Basic, an htpasswd file whose
    /// bcrypt hash Python's `crypt` makes).
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
            let hashed = std::process::Command::new("python3")
                .args(["-W", "ignore", "-c"])
                .arg("import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))")
                .arg(password)
                .output()
                .expect("python3 runs");
            let hash = String::from_utf8(hashed.stdout).unwrap();
            assert!(
                hash.starts_with("$2"),
                "no bcrypt hash: {}",
                String::from_utf8_lossy(&hashed.stderr)
            );
            std::fs::write(dir.join("htpasswd"), format!("{user}:{}\n", hash.trim())).unwrap();
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

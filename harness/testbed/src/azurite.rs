//! Starts Azurite (tools/azurite, pinned) on 127.0.0.1 with an ephemeral port and in-memory
//! storage. The emulator lives as long as our end of its stdin pipe: dropping [`Azurite`] or
//! ending the test process stops it (tools/azurite/run.js).

use std::io::{BufRead, BufReader};

use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

pub struct Azurite {
    child: Child,
    stdin: Option<ChildStdin>,
    pub port: u16,
}

impl Azurite {
    /// Starts a fresh emulator; panics with a setup hint if it cannot.
    pub fn start() -> Azurite {
        Azurite::start_with(&[])
    }

    /// Starts one with extra Azurite flags (azurite_oauth.rs: `--oauth basic --cert … --key …`,
    /// which make it listen on https).
    pub fn start_with(extra_args: &[String]) -> Azurite {
        let dir = crate::repo_root().join("tools/azurite");
        assert!(
            dir.join("node_modules/azurite").is_dir(),
            "Azurite is not installed: run `npm ci --prefix tools/azurite` (scripts/test does)"
        );
        let mut child = Command::new("node")
            .arg(dir.join("run.js"))
            .env("AZURITE_EXTRA_ARGS", extra_args.join("\n"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node is on PATH");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let address = line.split("listens on http").nth(1);
                if let Some(url) = address.and_then(|a| a.split("://127.0.0.1:").nth(1)) {
                    let _ = tx.send(url.trim().parse::<u16>().ok());
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .ok()
            .flatten()
            .expect("Azurite did not report its port within 60 s");
        Azurite { stdin: child.stdin.take(), child, port }
    }

    /// The emulator shared by every test in this process, started on first use.
    pub fn shared() -> &'static Azurite {
        static SHARED: OnceLock<Azurite> = OnceLock::new();
        SHARED.get_or_init(Azurite::start)
    }

    /// A connection string in the form Azure SDK users write for Azurite on a custom port.
    pub fn connection_string(&self) -> String {
        connection_string_for_port(self.port, crate::EMULATOR_KEY_B64)
    }

    /// Stops the emulator and waits for it to exit.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        drop(self.stdin.take());
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        self.shutdown();
    }
}

pub fn connection_string_for_port(port: u16, key: &str) -> String {
    format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={key};\
         BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"
    )
}

//! The guest jobs written in other languages (guests/python with componentize-py, guests/js
//! with ComponentizeJS) in the test host: composed with the lease component exactly as the
//! Rust apps are ([`crate::apps::compose`]), then sent `POST /run` through their
//! `wasi:http/incoming-handler@0.2.0` export with Spin variables, a fresh instance per request.
//! An instance can be killed mid-request (a trap at its next epoch check), which is how a
//! replica dying in the middle of its run is played here.

use crate::apps::App;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::{Config, Engine};

/// `target/guests/<language>_job.wasm` (`python` or `js`, from `scripts/build-guests`), when
/// it is there and newer than its sources; `Err` says why not (a missing toolchain is a skip
/// outside CI, see `spin::or_skip`). A stale build is never run: that panics.
pub fn guest_wasm(language: &str) -> Result<PathBuf, String> {
    let root = crate::repo_root();
    let wasm = root.join("target/guests").join(format!("{language}_job.wasm"));
    if !wasm.is_file() {
        return Err(format!(
            "{} missing: run scripts/build-guests (it installs the pinned toolchains)",
            wasm.display()
        ));
    }
    let source = if language == "js" { "js/app.js" } else { "python/app.py" };
    let mut sources = vec![root.join("guests").join(source)];
    // Only the WIT the bindings come from: other files beside it (a wkg.toml) do not count.
    let mut dirs = vec![root.join("guests/wit")];
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "wit") {
                sources.push(path);
            }
        }
    }
    crate::component::assert_fresh(&wasm, &sources);
    Ok(wasm)
}

/// What one request got back, and what the guest printed meanwhile.
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub stdout: String,
}

/// A guest composed with the lease component, compiled once, instantiated per request.
pub struct Guest {
    app: App,
    ticking: Arc<AtomicBool>,
}

impl Guest {
    /// Composes `wasm` with the built lease component and compiles the result. The engine
    /// counts epochs (every 10 ms, until the guest is dropped) so a request can be killed.
    pub fn load(wasm: &Path) -> Result<Guest, String> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config).map_err(|e| format!("{e:#}"))?;
        let app = App::load_path(&engine, wasm)?;
        let ticking = Arc::new(AtomicBool::new(true));
        let running = ticking.clone();
        std::thread::spawn(move || {
            while running.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
                engine.increment_epoch();
            }
        });
        Ok(Guest { app, ticking })
    }

    /// Sends one request (empty body) to a fresh instance. Setting `kill` while it runs traps
    /// the instance at its next epoch check: no answer, no `complete`, no release.
    pub fn http(
        &self,
        variables: &BTreeMap<String, String>,
        method: &str,
        path: &str,
        kill: Arc<AtomicBool>,
    ) -> Result<Answer, String> {
        let answer = self.app.serve(variables, method, path, Some(kill))?;
        Ok(Answer { status: answer.status, body: answer.body, stdout: answer.stdout })
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        self.ticking.store(false, Ordering::SeqCst);
    }
}

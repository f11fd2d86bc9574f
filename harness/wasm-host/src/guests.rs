//! The guest jobs written in other languages (guests/python with componentize-py, guests/js
//! with ComponentizeJS) in the test host: composed with the lease component exactly as the
//! Rust apps are ([`crate::apps::compose`]), then sent requests (`POST /run`, the operator's
//! routes with their `Authorization`) through their `wasi:http/incoming-handler@0.2.0` export
//! with Spin variables, a fresh instance per request.
//! An instance can be killed mid-request (a trap at its next epoch check), which is how a
//! replica dying in the middle of its run is played here.

use crate::apps::App;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::{Config, Engine};

pub use traffic_cop_testbed::built::guest_wasm;

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
        self.http_with(variables, method, path, &[], kill)
    }

    /// [`http`](Self::http) with request headers.
    pub fn http_with(
        &self,
        variables: &BTreeMap<String, String>,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        kill: Arc<AtomicBool>,
    ) -> Result<Answer, String> {
        // Always a kill switch: with epoch interruption on, a store without a deadline traps at
        // once.
        let answer = self.app.serve_with(variables, method, path, headers, Some(kill))?;
        Ok(Answer { status: answer.status, body: answer.body, stdout: answer.stdout })
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        self.ticking.store(false, Ordering::SeqCst);
    }
}

//! The guest jobs written in other languages (guests/python with componentize-py, guests/js
//! with ComponentizeJS) in the test host: composed with the lease component exactly as the
//! Rust apps are ([`crate::apps::compose`]), then sent `POST /run` through their
//! `wasi:http/incoming-handler@0.2.0` export with Spin variables, a fresh instance per request.
//! Unlike [`crate::apps::App`] this loads any path, and an instance can be killed mid-request
//! (a trap at its next epoch check), which is how a replica dying in the middle of its run is
//! played here.

use crate::component::State;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi_http::p2::bindings::http::types::{ErrorCode, Scheme};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpView};

mod variables {
    wasmtime::component::bindgen!({ world: "spin-variables", path: "wit" });
}

use variables::fermyon::spin::variables::{Error as VariableError, Host as VariablesHost};

impl VariablesHost for State {
    fn get(&mut self, name: String) -> Result<String, VariableError> {
        self.variables.get(&name).cloned().ok_or(VariableError::Undefined(name))
    }
}

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
    engine: Engine,
    component: Component,
    linker: Linker<State>,
    ticking: Arc<AtomicBool>,
}

impl Guest {
    /// Composes `wasm` with the built lease component and compiles the result. The engine
    /// counts epochs (every 10 ms, until the guest is dropped) so a request can be killed.
    pub fn load(wasm: &Path) -> Result<Guest, String> {
        let composed = crate::apps::compose(wasm, &crate::component::wasm_path())?;
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config).map_err(|e| format!("{e:#}"))?;
        let component = Component::new(&engine, &composed).map_err(|e| format!("{e:#}"))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| e.to_string())?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)
            .map_err(|e| e.to_string())?;
        variables::SpinVariables::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut linker,
            |s| s,
        )
        .map_err(|e| e.to_string())?;
        let ticking = Arc::new(AtomicBool::new(true));
        let (ticker, running) = (engine.clone(), ticking.clone());
        std::thread::spawn(move || {
            while running.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
                ticker.increment_epoch();
            }
        });
        Ok(Guest { engine, component, linker, ticking })
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
        use wasmtime_wasi_http::p2::bindings::sync::Proxy;
        let stdout = MemoryOutputPipe::new(64 * 1024);
        let mut wasi = WasiCtx::builder();
        wasi.inherit_stderr().stdout(stdout.clone());
        let state = State {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            variables: variables.clone(),
        };
        let mut store = Store::new(&self.engine, state);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if kill.load(Ordering::SeqCst) {
                Err(wasmtime::format_err!("killed"))
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        let request = hyper::Request::builder()
            .method(method)
            .uri(format!("http://traffic-cop.local{path}"))
            .body(
                Empty::<Bytes>::new()
                    .map_err(|never: std::convert::Infallible| -> ErrorCode { match never {} }),
            )
            .map_err(|e| e.to_string())?;
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let incoming = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, request)
            .map_err(|e| e.to_string())?;
        let outparam =
            store.data_mut().http().new_response_outparam(sender).map_err(|e| e.to_string())?;
        let proxy = Proxy::instantiate(&mut store, &self.component, &self.linker)
            .map_err(|e| format!("{e:#}"))?;
        // The guest writes its body while `handle` runs: read it concurrently.
        let guest = std::thread::spawn(move || {
            proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, incoming, outparam)
                .map_err(|e| format!("trap: {e:#}"))
        });
        let runtime =
            tokio::runtime::Builder::new_current_thread().build().map_err(|e| e.to_string())?;
        let response = runtime.block_on(async {
            let response = receiver.await.map_err(|_| "guest never set a response".to_string())?;
            let response = response.map_err(|e| format!("guest error: {e:?}"))?;
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("body: {e:?}"))?
                .to_bytes();
            Ok::<_, String>((status, String::from_utf8_lossy(&body).into_owned()))
        });
        let handled = guest.join().map_err(|_| "guest thread panicked".to_string())?;
        let (status, body) = match (response, handled) {
            (Ok(answer), Ok(())) => answer,
            (_, Err(trap)) => return Err(trap),
            (Err(e), Ok(())) => return Err(e),
        };
        let stdout = String::from_utf8_lossy(&stdout.contents()).into_owned();
        Ok(Answer { status, body, stdout })
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        self.ticking.store(false, Ordering::SeqCst);
    }
}

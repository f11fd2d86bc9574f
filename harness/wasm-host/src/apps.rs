//! The Spin app's components in the test host: composed with the lease component the way
//! spin.toml declares it (`wac plug` semantics, via wac-graph), then driven through their real
//! exports: the cron trigger's `handle-cron-event` and `wasi:http/incoming-handler`. The host
//! provides what Spin provides them: WASI, outbound HTTP, `fermyon:spin/variables` and the
//! default key-value store (`apps_kv`).

use crate::component::State;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::UpdateDeadline;
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi_http::p2::bindings::http::types::{ErrorCode, Scheme};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpView};

mod cron {
    wasmtime::component::bindgen!({ world: "spin-cron", path: "../../apps/wit/deps/spin-cron" });
}

use crate::apps_kv::bindings::fermyon::spin::variables::{
    Error as VariableError, Host as VariablesHost,
};
use crate::apps_kv::bindings::SpinVariables;

impl VariablesHost for State {
    fn get(&mut self, name: String) -> Result<String, VariableError> {
        self.variables.get(&name).cloned().ok_or(VariableError::Undefined(name))
    }
}

pub use traffic_cop_testbed::built::app_wasm;

/// Plugs every export of `plug` into the matching imports of `socket` (what `wac plug` and
/// Spin's component dependencies do) and returns the composed component's bytes.
pub fn compose(socket: &Path, plug: &Path) -> Result<Vec<u8>, String> {
    use wac_graph::{types::Package, CompositionGraph, EncodeOptions};
    let mut graph = CompositionGraph::new();
    let mut register = |name: &str, path: &Path| {
        let package = Package::from_file(name, None, path, graph.types_mut())
            .map_err(|e| format!("{}: {e:#}", path.display()))?;
        graph.register_package(package).map_err(|e| e.to_string())
    };
    let socket = register("traffic-cop:app", socket)?;
    let plug = register("traffic-cop:lease-impl", plug)?;
    wac_graph::plug(&mut graph, vec![plug], socket).map_err(|e| format!("plug: {e:#}"))?;
    graph.encode(EncodeOptions::default()).map_err(|e| format!("encode: {e:#}"))
}

/// A composed app component, compiled once, instantiated per event.
pub struct App {
    engine: Engine,
    component: Component,
    linker: Linker<State>,
    /// Each replica's key-value store, shared by its instances: a replica is a `holder`, and
    /// each `spin up` keeps a store of its own.
    kv: std::sync::Mutex<BTreeMap<String, crate::apps_kv::Kv>>,
    /// No store at all, as for a manifest without `key_value_stores`.
    storeless: bool,
}

impl App {
    /// Composes `target/wasm32-wasip2/release/<name>.wasm` (built from apps/) with the lease component and compiles it.
    pub fn load(engine: &Engine, name: &str) -> Result<App, String> {
        let apps = traffic_cop_testbed::repo_root().join("apps");
        traffic_cop_testbed::built::assert_fresh(
            &app_wasm(name),
            &[
                apps.join("shared/src"),
                apps.join(name.replace('_', "-")).join("src"),
                apps.join("wit"),
            ],
        );
        App::load_path(engine, &app_wasm(name))
    }

    /// Composes any socket component at `wasm` with the lease component and compiles it, with
    /// what Spin gives its components: WASI, outbound HTTP and `fermyon:spin/variables`.
    pub fn load_path(engine: &Engine, wasm: &Path) -> Result<App, String> {
        let composed = compose(wasm, &crate::component::wasm_path())?;
        let component =
            crate::compiled::component(engine, &composed).map_err(|e| format!("{e:#}"))?;
        let mut linker = Linker::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| e.to_string())?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)
            .map_err(|e| e.to_string())?;
        SpinVariables::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| e.to_string())?;
        Ok(App {
            engine: engine.clone(),
            component,
            linker,
            kv: Default::default(),
            storeless: false,
        })
    }

    pub fn component(&self) -> &Component {
        &self.component
    }

    /// The app as a manifest without `key_value_stores` runs it: opening a store fails.
    pub fn without_store(self) -> App {
        App { storeless: true, ..self }
    }

    /// The store of the replica whose `holder` the variables name.
    fn replica_kv(&self, variables: &BTreeMap<String, String>) -> crate::apps_kv::Kv {
        let holder = variables.get("holder").cloned().unwrap_or_default();
        self.kv.lock().unwrap().entry(holder).or_default().clone()
    }

    fn store(
        &self,
        variables: &BTreeMap<String, String>,
        stdout: &MemoryOutputPipe,
    ) -> Store<State> {
        // Both streams in one: the app's decision log (stdout, JSON) and its lines for people
        // (stderr), in the order printed.
        let mut wasi = WasiCtx::builder();
        wasi.stdout(stdout.clone()).stderr(stdout.clone());
        let state = State {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            variables: variables.clone(),
            hooks: None,
            kv: (!self.storeless).then(|| self.replica_kv(variables)),
        };
        Store::new(&self.engine, state)
    }

    /// Delivers one cron tick, as spin-trigger-cron does: a fresh instance per tick. Returns
    /// what the component printed. With `kill` (and an engine with epoch interruption, ticked
    /// by the caller), setting the flag traps the instance at its next epoch check: a process
    /// killed in the middle of its run.
    pub fn cron_tick(
        &self,
        variables: &BTreeMap<String, String>,
        timestamp: u64,
        kill: Option<Arc<AtomicBool>>,
    ) -> Result<String, String> {
        let stdout = MemoryOutputPipe::new(64 * 1024);
        let mut store = self.store(variables, &stdout);
        kill_switch(&mut store, kill);
        let printed =
            |stdout: &MemoryOutputPipe| String::from_utf8_lossy(&stdout.contents()).into_owned();
        let instance = cron::SpinCron::instantiate(&mut store, &self.component, &self.linker)
            .map_err(|e| format!("{e:#}"))?;
        let metadata = cron::fermyon::spin_cron::cron_types::Metadata { timestamp };
        match instance.call_handle_cron_event(&mut store, metadata) {
            Ok(Ok(())) => Ok(printed(&stdout)),
            Ok(Err(cron::fermyon::spin_cron::cron_types::Error::Other(e))) => Err(e),
            Err(trap) => Err(format!("trap: {trap:#}")),
        }
    }

    /// Sends one HTTP request through `wasi:http/incoming-handler` and returns status,
    /// content type and body.
    pub fn http(
        &self,
        variables: &BTreeMap<String, String>,
        method: &str,
        path: &str,
    ) -> Result<(u16, String, String), String> {
        let answer = self.serve(variables, method, path, None)?;
        Ok((answer.status, answer.content_type, answer.body))
    }

    /// [`http`](Self::http) on a fresh instance that setting `kill` traps at its next epoch
    /// check (an engine with epoch interruption, ticked by the caller), with what it printed.
    pub fn serve(
        &self,
        variables: &BTreeMap<String, String>,
        method: &str,
        path: &str,
        kill: Option<Arc<AtomicBool>>,
    ) -> Result<HttpAnswer, String> {
        self.serve_with(variables, method, path, &[], kill)
    }

    /// [`serve`](Self::serve) with request headers.
    pub fn serve_with(
        &self,
        variables: &BTreeMap<String, String>,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        kill: Option<Arc<AtomicBool>>,
    ) -> Result<HttpAnswer, String> {
        use wasmtime_wasi_http::p2::bindings::sync::Proxy;
        let stdout = MemoryOutputPipe::new(64 * 1024);
        let mut store = self.store(variables, &stdout);
        kill_switch(&mut store, kill);
        let mut request =
            hyper::Request::builder().method(method).uri(format!("http://traffic-cop.local{path}"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
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
        // The guest writes the body while `handle` runs; read it concurrently so a body larger
        // than the host's buffer cannot stall the guest.
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
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("body: {e:?}"))?
                .to_bytes();
            Ok::<_, String>((status, content_type, String::from_utf8_lossy(&body).into_owned()))
        });
        // A trap (a kill) is the answer even when a response was already set.
        guest.join().map_err(|_| "guest thread panicked".to_string())??;
        let (status, content_type, body) = response?;
        let stdout = String::from_utf8_lossy(&stdout.contents()).into_owned();
        Ok(HttpAnswer { status, content_type, body, stdout })
    }
}

/// One HTTP exchange with a component, and what it printed meanwhile.
pub struct HttpAnswer {
    pub status: u16,
    pub content_type: String,
    pub body: String,
    /// What it printed on stdout and stderr, in order.
    pub stdout: String,
}

/// With `kill`, the store traps at its next epoch check once the flag is set: a process killed
/// in the middle of its run.
fn kill_switch(store: &mut Store<State>, kill: Option<Arc<AtomicBool>>) {
    let Some(kill) = kill else { return };
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if kill.load(Ordering::SeqCst) {
            Err(wasmtime::format_err!("killed"))
        } else {
            Ok(UpdateDeadline::Continue(1))
        }
    });
}

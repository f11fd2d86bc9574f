//! A real component host for the built `.wasm`: wasmtime 48 with WASI and wasi:http, the same
//! host stack Spin embeds. Every call gets a fresh instance, as a serverless host would.

use std::sync::OnceLock;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

wasmtime::component::bindgen!({
    world: "traffic-cop:lease/lease-provider@1.0.0",
    path: "../../wit",
});

/// traffic-cop:lease@1.0.0: the guard's types, with the raw verbs' as `v1::lease` and their
/// error as `v1::Error`.
pub mod v1 {
    pub use super::exports::traffic_cop::lease1_0_0::guard::*;
    pub use super::exports::traffic_cop::lease1_0_0::lease::Error;
    pub mod lease {
        pub use super::super::exports::traffic_cop::lease1_0_0::lease::*;
    }

    /// Settings with the lock and the holder, every other variable unset.
    pub fn settings(
        connection_string: &str,
        container: &str,
        lock: &str,
        holder: &str,
    ) -> Settings {
        Settings {
            connection_string: Some(connection_string.into()),
            container: Some(container.into()),
            lock: Some(lock.into()),
            holder: Some(holder.into()),
            lease_seconds: None,
            keep_alive_seconds: None,
            schedule: None,
            time_zone: None,
            cron_dialect: None,
            early_tolerance_ms: None,
            starting_deadline_seconds: None,
            replace_after_seconds: None,
            wait_ms: None,
            max_job_seconds: None,
            refresh_seconds: None,
        }
    }
}

/// One app replica's Spin `default` key-value store (apps_kv.rs serves it to the components).
pub type Kv = std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, Vec<u8>>>>;

pub struct State {
    pub(crate) wasi: WasiCtx,
    pub(crate) http: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    /// Spin component variables, for the app components (see `apps`).
    pub(crate) variables: std::collections::BTreeMap<String, String>,
    /// A sender of this instance's own (see `staged`); else the process-wide hooks.
    pub(crate) hooks: Option<Box<dyn wasmtime_wasi_http::WasiHttpHooks + Send>>,
    /// Spin's default key-value store, shared by one app replica's instances (see `apps_kv`);
    /// none: no store is allowed (`no-such-store`).
    pub(crate) kv: Option<Kv>,
}

impl State {
    /// WASI with the host's stderr, wasi:http with the process-wide hooks, no Spin variables
    /// and no key-value store: what the lease component alone needs.
    pub(crate) fn plain() -> State {
        State {
            wasi: WasiCtx::builder().inherit_stderr().build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            variables: Default::default(),
            hooks: None,
            kv: None,
        }
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: match &mut self.hooks {
                Some(hooks) => hooks.as_mut(),
                None => crate::outbound::hooks(),
            },
        }
    }
}

pub struct Host {
    pub engine: Engine,
    pub component: Component,
    /// Imports resolved and type-checked once, as a serving host does.
    pub(crate) pre: LeaseProviderPre<State>,
}

pub use traffic_cop_testbed::built::wasm_path;
/// A resource the component keeps (a 1.0 `run`), as a handle.
pub use wasmtime::component::ResourceAny;

impl Host {
    /// The host the tests share: wasmtime's default (on-demand) instance allocation.
    pub fn shared() -> &'static Host {
        static HOST: OnceLock<Host> = OnceLock::new();
        HOST.get_or_init(|| Host::load(crate::compiled::config()))
    }

    /// Instances from wasmtime's pooling allocator, which Spin uses: memories are reserved
    /// once and reset between instances, not mapped and unmapped each time.
    pub fn pooled() -> &'static Host {
        static HOST: OnceLock<Host> = OnceLock::new();
        HOST.get_or_init(|| {
            let mut pool = wasmtime::PoolingAllocationConfig::default();
            pool.total_component_instances(64)
                .total_core_instances(64)
                .total_memories(64)
                .total_tables(64)
                .max_memory_size(64 << 20)
                // Zeroed, not returned, so the next instance takes no page fault per page.
                .linear_memory_keep_resident(4 << 20)
                .table_keep_resident(64 << 10);
            let mut config = crate::compiled::config();
            config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
            Host::load(config)
        })
    }

    fn load(config: wasmtime::Config) -> Host {
        let wasm = traffic_cop_testbed::built::lease_component();
        // For `perf` (this crate's `perf` feature): names the component's compiled functions
        // in /tmp/perf-<pid>.map.
        #[cfg(feature = "perf")]
        let config = {
            let mut config = config;
            if std::env::var_os("TRAFFIC_COP_PERFMAP").is_some() {
                config.profiler(wasmtime::ProfilingStrategy::PerfMap);
            }
            config
        };
        let engine = Engine::new(&config).expect("engine");
        let component =
            crate::compiled::component_file(&engine, &wasm).expect("component compiles");
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker).unwrap();
        let pre = LeaseProviderPre::new(linker.instantiate_pre(&component).expect("imports"))
            .expect("exports");
        Host { engine, component, pre }
    }

    /// A fresh instance, as a per-event serverless host would make.
    pub fn instance(&self) -> Instance {
        let mut store = Store::new(&self.engine, State::plain());
        let provider = self.pre.instantiate(&mut store).expect("instantiates");
        Instance { store, provider }
    }
}

/// One instance; each method is one exported call. A trap fails the test.
pub struct Instance {
    pub(crate) store: Store<State>,
    pub(crate) provider: LeaseProvider,
}

/// A fresh instance for a single call.
pub fn fresh() -> Instance {
    Host::shared().instance()
}

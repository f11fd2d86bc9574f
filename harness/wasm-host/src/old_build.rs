//! The lease component as built before guard@0.3.0 (tests/fixtures/traffic_cop-7cb116a.wasm),
//! for the mixed fleet of a rolling upgrade: it exports `lease-provider@0.2.0`, so it is bound
//! with that world's types, apart from the current build's.

use crate::component::State;
use std::sync::OnceLock;
use wasmtime::component::Linker;
use wasmtime::{Engine, Store};

wasmtime::component::bindgen!({
    world: "traffic-cop:lease/lease-provider@0.2.0",
    path: "../../tests/fixtures/wit-7cb116a",
});

pub use exports::traffic_cop::lease0_1_0::lease::{LeaseError, Lock};
pub use exports::traffic_cop::lease0_2_0::guard::{
    BoardEntry, Decision, GuardOptions, Location, Outcome, SkipReason, Ticket,
};

struct OldHost {
    engine: Engine,
    pre: LeaseProviderPre<State>,
}

fn host() -> &'static OldHost {
    static HOST: OnceLock<OldHost> = OnceLock::new();
    HOST.get_or_init(|| {
        let wasm = traffic_cop_testbed::repo_root().join("tests/fixtures/traffic_cop-7cb116a.wasm");
        let engine = Engine::new(&crate::compiled::config()).expect("engine");
        let component =
            crate::compiled::component_file(&engine, &wasm).expect("the old build compiles");
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker).unwrap();
        let pre = LeaseProviderPre::new(linker.instantiate_pre(&component).expect("imports"))
            .expect("the old build exports lease-provider@0.2.0");
        OldHost { engine, pre }
    })
}

/// One instance of the old build, for one call.
pub struct OldInstance {
    store: Store<State>,
    provider: LeaseProvider,
}

pub fn old_fresh() -> OldInstance {
    let host = host();
    let mut store = Store::new(&host.engine, State::plain());
    let provider = host.pre.instantiate(&mut store).expect("instantiates");
    OldInstance { store, provider }
}

impl OldInstance {
    pub fn guarded_invoke(&mut self, lock: &Lock, options: &GuardOptions) -> Decision {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_guarded_invoke(&mut self.store, lock, options).expect("no trap")
    }
    pub fn complete(&mut self, ticket: &Ticket, outcome: &Outcome) -> Result<(), LeaseError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_complete(&mut self.store, ticket, outcome).expect("no trap")
    }
    pub fn board(&mut self, location: &Location) -> Result<Vec<BoardEntry>, LeaseError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_board(&mut self.store, location).expect("no trap")
    }
}

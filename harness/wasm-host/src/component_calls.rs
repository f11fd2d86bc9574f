//! traffic-cop:lease@1.0.0, each method one exported call on the instance (component.rs). A
//! granted run is a resource of the instance that granted it: its calls go to that instance.

use crate::component::{v1, Instance};
use wasmtime::component::ResourceAny;

impl Instance {
    pub fn guarded_invoke(&mut self, settings: &v1::Settings) -> v1::Decision {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_guarded_invoke(&mut self.store, settings).expect("no trap")
    }
    pub fn run_details(&mut self, run: ResourceAny) -> v1::RunDetails {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.run().call_details(&mut self.store, run).expect("no trap")
    }
    pub fn run_text(&mut self, run: ResourceAny) -> String {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.run().call_text(&mut self.store, run).expect("no trap")
    }
    pub fn run_keep_alive(&mut self, run: ResourceAny) -> Result<u64, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.run().call_keep_alive(&mut self.store, run).expect("no trap")
    }
    pub fn run_write_fenced(
        &mut self,
        run: ResourceAny,
        name: &str,
        contents: &[u8],
    ) -> Result<v1::FencedWrite, v1::FencedError> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.run().call_write_fenced(&mut self.store, run, name, contents).expect("no trap")
    }
    pub fn run_complete(&mut self, run: ResourceAny, outcome: &v1::Outcome) -> v1::Finished {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.run().call_complete(&mut self.store, run, outcome).expect("no trap")
    }
    /// Drops the caller's handle: the run stays open unless it was completed.
    pub fn drop_run(&mut self, run: ResourceAny) {
        run.resource_drop(&mut self.store).expect("no trap");
    }
    pub fn claim(
        &mut self,
        settings: &v1::Settings,
        items: &[String],
        max: u32,
    ) -> Result<v1::Claimed, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_claim(&mut self.store, settings, items, max).expect("no trap")
    }
    pub fn board(&mut self, settings: &v1::Settings) -> Result<v1::StatusBoard, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_board(&mut self.store, settings).expect("no trap")
    }
    pub fn read_fenced(
        &mut self,
        settings: &v1::Settings,
        name: &str,
    ) -> Result<Option<v1::FencedData>, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_read_fenced(&mut self.store, settings, name).expect("no trap")
    }
    pub fn pause(
        &mut self,
        settings: &v1::Settings,
        by: &str,
        reason: &str,
        drain_ms: u32,
    ) -> Result<v1::OperatorAnswer, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_pause(&mut self.store, settings, by, reason, drain_ms).expect("no trap")
    }
    pub fn resume(
        &mut self,
        settings: &v1::Settings,
        by: &str,
    ) -> Result<v1::OperatorAnswer, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_resume(&mut self.store, settings, by).expect("no trap")
    }
    pub fn run_now(
        &mut self,
        settings: &v1::Settings,
        by: &str,
    ) -> Result<v1::OperatorAnswer, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_run_now(&mut self.store, settings, by).expect("no trap")
    }
    pub fn check_settings(
        &mut self,
        settings: &v1::Settings,
        count: u32,
        reach_storage: bool,
    ) -> v1::SettingsCheck {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_check_settings(&mut self.store, settings, count, reach_storage).expect("no trap")
    }
    pub fn due_times(
        &mut self,
        settings: &v1::Settings,
        after_ms: u64,
        count: u32,
    ) -> Result<Vec<u64>, v1::Error> {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_due_times(&mut self.store, settings, after_ms, count).expect("no trap")
    }
    pub fn error_text(&mut self, error: &v1::Error) -> String {
        let guard = self.provider.traffic_cop_lease1_0_0_guard();
        guard.call_error_text(&mut self.store, error).expect("no trap")
    }
    pub fn acquire(
        &mut self,
        lock: &v1::lease::Lock,
        duration: v1::lease::LeaseDuration,
        id: Option<&str>,
    ) -> Result<v1::lease::LeaseGrant, v1::Error> {
        let lease = self.provider.traffic_cop_lease1_0_0_lease();
        lease.call_acquire(&mut self.store, lock, duration, id).expect("no trap")
    }
    pub fn renew(
        &mut self,
        lock: &v1::lease::Lock,
        id: &str,
    ) -> Result<v1::lease::LeaseGrant, v1::Error> {
        let lease = self.provider.traffic_cop_lease1_0_0_lease();
        lease.call_renew(&mut self.store, lock, id).expect("no trap")
    }
    pub fn change(
        &mut self,
        lock: &v1::lease::Lock,
        id: &str,
        proposed: &str,
    ) -> Result<v1::lease::LeaseGrant, v1::Error> {
        let lease = self.provider.traffic_cop_lease1_0_0_lease();
        lease.call_change(&mut self.store, lock, id, proposed).expect("no trap")
    }
    pub fn release(&mut self, lock: &v1::lease::Lock, id: &str) -> Result<(), v1::Error> {
        let lease = self.provider.traffic_cop_lease1_0_0_lease();
        lease.call_release(&mut self.store, lock, id).expect("no trap")
    }
    pub fn break_lease(
        &mut self,
        lock: &v1::lease::Lock,
        period: Option<u32>,
    ) -> Result<u32, v1::Error> {
        let lease = self.provider.traffic_cop_lease1_0_0_lease();
        lease.call_break_lease(&mut self.store, lock, period).expect("no trap")
    }
    pub fn inspect(&mut self, lock: &v1::lease::Lock) -> Result<v1::lease::LockStatus, v1::Error> {
        let lease = self.provider.traffic_cop_lease1_0_0_lease();
        lease.call_inspect(&mut self.store, lock).expect("no trap")
    }
    pub fn get_token(
        &mut self,
        connection_string: &str,
    ) -> Result<v1::lease::AccessToken, v1::Error> {
        let lease = self.provider.traffic_cop_lease1_0_0_lease();
        lease.call_get_token(&mut self.store, connection_string).expect("no trap")
    }
}

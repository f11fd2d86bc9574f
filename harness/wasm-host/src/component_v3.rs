//! The 0.3.0 guard, through the same instances as the older calls (component.rs).

use crate::component::{v3, Instance, Lock};

impl Instance {
    pub fn guarded_invoke_v3(&mut self, lock: &Lock, options: &v3::GuardOptions) -> v3::Decision {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_guarded_invoke(&mut self.store, lock, options).expect("no trap")
    }
    pub fn keep_alive_v3(&mut self, ticket: &v3::Ticket) -> Result<u64, v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_keep_alive(&mut self.store, ticket).expect("no trap")
    }
    pub fn complete_v3(
        &mut self,
        ticket: &v3::Ticket,
        outcome: &v3::Outcome,
    ) -> Result<(), v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_complete(&mut self.store, ticket, outcome).expect("no trap")
    }
    pub fn claim_v3(
        &mut self,
        location: &v3::Location,
        items: &[String],
        options: &v3::GuardOptions,
        max: u32,
    ) -> Result<v3::Claimed, v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_claim(&mut self.store, location, items, options, max).expect("no trap")
    }
    pub fn board_v3(&mut self, location: &v3::Location) -> Result<v3::StatusBoard, v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_board(&mut self.store, location).expect("no trap")
    }
    pub fn write_fenced_v3(
        &mut self,
        ticket: &v3::Ticket,
        name: &str,
        contents: &[u8],
    ) -> Result<v3::FencedWrite, v3::FencedError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_write_fenced(&mut self.store, ticket, name, contents).expect("no trap")
    }
    pub fn pause_v3(
        &mut self,
        lock: &Lock,
        by: &str,
        reason: &str,
        drain_ms: u32,
    ) -> Result<v3::OperatorAnswer, v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_pause(&mut self.store, lock, by, reason, drain_ms).expect("no trap")
    }
    pub fn resume_v3(
        &mut self,
        lock: &Lock,
        by: &str,
    ) -> Result<v3::OperatorAnswer, v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_resume(&mut self.store, lock, by).expect("no trap")
    }
    pub fn run_now_v3(
        &mut self,
        lock: &Lock,
        by: &str,
    ) -> Result<v3::OperatorAnswer, v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_run_now(&mut self.store, lock, by).expect("no trap")
    }
    pub fn due_times_v3(
        &mut self,
        schedule: &v3::Schedule,
        after_ms: u64,
        count: u32,
    ) -> Result<Vec<u64>, v3::GuardError> {
        let guard = self.provider.traffic_cop_lease0_3_0_guard();
        guard.call_due_times(&mut self.store, schedule, after_ms, count).expect("no trap")
    }
}

//! The 0.2.0 guard and the identity interface, through the same instances as the 0.1.0 calls
//! (component.rs).

use crate::component::{v2, AccessToken, Instance, LeaseError, Lock};

/// The 0.2.0 guard, through the same instance.
impl Instance {
    pub fn guarded_invoke_v2(&mut self, lock: &Lock, options: &v2::GuardOptions) -> v2::Decision {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_guarded_invoke(&mut self.store, lock, options).expect("no trap")
    }
    pub fn complete_v2(
        &mut self,
        ticket: &v2::Ticket,
        outcome: &v2::Outcome,
    ) -> Result<(), LeaseError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_complete(&mut self.store, ticket, outcome).expect("no trap")
    }
    pub fn claim_v2(
        &mut self,
        location: &v2::Location,
        items: &[String],
        options: &v2::GuardOptions,
        max: u32,
    ) -> Result<Vec<v2::Ticket>, LeaseError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_claim(&mut self.store, location, items, options, max).expect("no trap")
    }
    /// `traffic-cop:lease/identity@0.2.0.get-token`.
    pub fn get_token(&mut self, connection_string: &str) -> Result<AccessToken, LeaseError> {
        let identity = self.provider.traffic_cop_lease0_2_0_identity();
        identity.call_get_token(&mut self.store, connection_string).expect("no trap")
    }
    pub fn keep_alive_v2(&mut self, ticket: &v2::Ticket) -> Result<u64, LeaseError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_keep_alive(&mut self.store, ticket).expect("no trap")
    }
    pub fn board_v2(&mut self, location: &v2::Location) -> Result<Vec<v2::BoardEntry>, LeaseError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_board(&mut self.store, location).expect("no trap")
    }
    pub fn write_fenced_v2(
        &mut self,
        ticket: &v2::Ticket,
        name: &str,
        contents: &[u8],
    ) -> Result<v2::FencedWrite, v2::FencedError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_write_fenced(&mut self.store, ticket, name, contents).expect("no trap")
    }
    pub fn read_fenced_v2(
        &mut self,
        location: &v2::Location,
        name: &str,
    ) -> Result<Option<v2::FencedData>, LeaseError> {
        let guard = self.provider.traffic_cop_lease0_2_0_guard();
        guard.call_read_fenced(&mut self.store, location, name).expect("no trap")
    }
}

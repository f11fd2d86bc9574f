//! Fixtures for the scripted-transport tests: one lock, one lease id, a granted answer.

use super::{response, ScriptedTransport, VirtualRuntime, EMULATOR};
use traffic_cop::{LeaseClient, LeaseId, Lock};

pub const ID: &str = "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e";

pub fn lock() -> Lock {
    Lock::parse(EMULATOR, "locks", "nightly").unwrap()
}

pub fn id() -> LeaseId {
    LeaseId::parse(ID).unwrap()
}

pub fn granted(
    status: u16,
) -> Result<traffic_cop::transport::Response, traffic_cop::TransportError> {
    response(
        status,
        &[
            ("x-ms-lease-id", ID),
            ("etag", "\"0x1\""),
            ("last-modified", "Wed, 01 Jan 2025 00:00:00 GMT"),
        ],
    )
}

pub fn client(script: ScriptedTransport) -> LeaseClient<ScriptedTransport, VirtualRuntime> {
    LeaseClient::new(script, VirtualRuntime::new())
}

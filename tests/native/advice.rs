//! Errors a user can act on, through the client: a request the host refused to send names the
//! endpoint, the outbound-host permission and the variable that sets it; an
//! `AuthorizationFailure` from an emulator or loopback endpoint names the key first (there it
//! is a bad signature), from Azure the account's network rules.

use crate::support::*;
use traffic_cop::transport::{Response, TransportError, TransportErrorKind};
use traffic_cop::{Error, LeaseClient, Lock};

const AZURE: &str = "DefaultEndpointsProtocol=https;AccountName=acct;\
     AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;\
     EndpointSuffix=core.windows.net";

fn inspect(connection_string: &str, answer: Result<Response, TransportError>) -> Error {
    let lock = Lock::parse(connection_string, "jobs", "nightly").unwrap();
    let mut client = LeaseClient::new(
        ScriptedTransport::new().expect(any_request, answer),
        VirtualRuntime::new(),
    );
    client.inspect(&lock).unwrap_err()
}

#[test]
fn a_denied_request_names_the_endpoint_and_the_variable_that_allows_it() {
    let error = inspect(AZURE, transport_error(TransportErrorKind::Denied));
    let Error::Transport(transport) = &error else { panic!("{error:?}") };
    assert_eq!(transport.kind, TransportErrorKind::Denied);
    let text = error.to_string();
    for needle in [
        "https://acct.blob.core.windows.net",
        "allowed_outbound_hosts",
        "storage_endpoint",
        "SPIN_VARIABLE_STORAGE_ENDPOINT",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert!(!text.contains("Eby8vdM02"), "the key leaked: {text}");
}

#[test]
fn authorization_failure_names_the_key_first_on_an_emulator_and_the_firewall_on_azure() {
    let position = |text: &str, needle: &str| {
        text.find(needle).unwrap_or_else(|| panic!("{needle} missing: {text}"))
    };
    for endpoint in [EMULATOR, "UseDevelopmentStorage=true"] {
        let text = inspect(endpoint, refusal(403, "AuthorizationFailure")).to_string();
        assert!(position(&text, "account key") < position(&text, "network rules"), "{text}");
        assert!(!text.contains("firewall or network rules do not admit"), "{text}");
    }
    let text = inspect(AZURE, refusal(403, "AuthorizationFailure")).to_string();
    assert!(position(&text, "firewall") < position(&text, "account key"), "{text}");
}

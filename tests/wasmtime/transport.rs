//! The component's wasi:http transport at its edges, in a host that stages them: an answer
//! that becomes ready together with the guest's own deadline is still the answer. Failed on the
//! code before it, which took the answer while checking for a timeout, dropped it, and then
//! reported "response already taken", a failure that is never retried, for a request that had
//! been answered.

use traffic_cop_testbed::runner::Test;
use traffic_cop_wasm_host::component::{LeaseError, Lock};
use traffic_cop_wasm_host::staged;

fn an_answer_ready_at_the_deadline_is_kept_not_dropped() {
    let lock = Lock {
        connection_string: "UseDevelopmentStorage=true".into(),
        container: "edges".into(),
        blob: "job".into(),
    };
    // Each call is one exchange whose answer and deadline land in the same poll nearly always.
    // On a loaded machine the answer sometimes wakes a tick after the deadline: that call
    // times out, rightly. What must never happen is the old failure (any other error), or the
    // deadline winning when both are ready (then every call would time out).
    let (mut answered, mut late) = (0, Vec::new());
    for call in 0..30 {
        match staged::at_the_deadline().inspect(&lock) {
            Ok(status) => {
                assert!(!status.locked);
                answered += 1;
            }
            Err(LeaseError::Transport(why)) if why.starts_with("Timeout") => late.push(call),
            Err(error) => {
                panic!("call {call}: an answer ready at the deadline was lost: {error:?}")
            }
        }
    }
    assert!(answered >= 20, "only {answered} of 30 answers kept; calls {late:?} timed out");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![an_answer_ready_at_the_deadline_is_kept_not_dropped]
}

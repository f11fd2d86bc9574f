//! The component's wasi:http transport at its edges, in a host that stages them: an answer
//! that becomes ready together with the guest's own deadline is still the answer. Failed on the
//! code before it, which took the answer while checking for a timeout, dropped it, and then
//! reported "response already taken", a failure that is never retried, for a request that had
//! been answered.

use traffic_cop_testbed::runner::Test;
use traffic_cop_wasm_host::component::v1::lease::Lock;
use traffic_cop_wasm_host::component::v1::Error;
use traffic_cop_wasm_host::staged;

fn an_answer_ready_at_the_deadline_is_kept_not_dropped() {
    let lock = Lock {
        connection_string: "UseDevelopmentStorage=true".into(),
        container: "edges".into(),
        blob: "job".into(),
    };
    // Each call is one exchange whose answer and deadline land in the same poll nearly always.
    // On a loaded machine the answer often wakes a tick after the deadline: that call times
    // out, rightly (a CI run saw 17 of 30 do so). What must never happen is the old failure
    // (any other error), or the deadline winning when both are ready: then no call at all
    // would keep its answer. So calls go on until a few answers were kept, within a bound.
    let (mut answered, mut late) = (0, 0);
    for call in 0..MAX_CALLS {
        match staged::at_the_deadline().inspect(&lock) {
            Ok(status) => {
                assert!(!status.locked);
                answered += 1;
            }
            Err(Error::Transport(why)) if why.starts_with("Timeout") => late += 1,
            Err(error) => {
                panic!("call {call}: an answer ready at the deadline was lost: {error:?}")
            }
        }
        if answered == ENOUGH {
            break;
        }
    }
    assert_eq!(answered, ENOUGH, "{answered} answers kept, {late} calls timed out");
}

/// Answers kept that show the answer wins; each call takes about 20 ms.
const ENOUGH: u32 = 5;
const MAX_CALLS: u32 = 300;

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![an_answer_ready_at_the_deadline_is_kept_not_dropped]
}

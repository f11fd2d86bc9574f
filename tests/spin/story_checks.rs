//! The story judge itself, on ticks recorded from a real run: a late first event whose run
//! still works when the next one comes is overlap refused, not a lost tick; a tick an interval
//! after the one before that nobody ran still fails the story.

use crate::story::{check_story, parse_report, Killed, Tick};

const T: u64 = 1_795_534_000;

/// CI, 2026-11-24, trigger-cron 0.3.0 under Spin 4.0.2 on a 3 s schedule: the event due at
/// +53 came a second late (+54), its 1.5 s of work still held the lease at +56; the run of
/// +62 was killed and +77 took over. `second` is when the tick after the late one came.
fn recorded(second: u64) -> (Vec<Tick>, Killed) {
    let a = |node: usize| format!("cron030spin4-{node}");
    let held = |node: usize| format!("[{}] skipped: held by {}", a(node), a(2));
    let mut lines = vec![
        (54, 1, format!("[{}] ran with fencing token 1: janitor report", a(1))),
        (second, 0, format!("[{}] skipped: held by {}", a(0), a(1))),
        (second, 1, format!("[{}] skipped: the previous tick of this replica is still working (lease held by {} until it completes or expires)", a(1), a(1))),
        (second, 2, format!("[{}] skipped: held by {}", a(2), a(1))),
        (59, 0, held(0)),
        (59, 1, held(1)),
        (59, 2, format!("[{}] ran with fencing token 2: janitor report", a(2))),
    ];
    for at in (62..=74).step_by(3) {
        lines.extend([(at, 0, held(0)), (at, 1, held(1))]);
    }
    lines.push((
        77,
        0,
        format!("[{}] ran with fencing token 4 (took over an abandoned run): janitor report", a(0)),
    ));
    lines.push((77, 1, format!("[{}] skipped: held by {}", a(1), a(0))));
    lines.push((80, 0, format!("[{}] ran with fencing token 5: janitor report", a(0))));
    lines.push((80, 1, format!("[{}] skipped: held by {}", a(1), a(0))));
    let ticks =
        lines.iter().map(|(at, node, line)| parse_report(T + at, *node, line).unwrap()).collect();
    let killed =
        Killed { node: 2, holder: a(2), token: 3, start_ms: (T + 62) * 1000 + 300, at: T + 62 };
    (ticks, killed)
}

fn a_late_tick_whose_run_overlaps_the_next_is_not_a_lost_tick() {
    let (ticks, killed) = recorded(56);
    let takeover = check_story(&ticks, &killed, 3);
    assert_eq!(takeover.token, Some(4));
}

fn a_tick_an_interval_after_the_last_that_nobody_ran_still_fails() {
    let (ticks, killed) = recorded(57);
    let judged = std::panic::catch_unwind(|| check_story(&ticks, &killed, 3));
    let message = judged.expect_err("a lost tick passed").downcast::<String>().unwrap();
    assert!(message.contains(&format!("tick {} had no run", T + 57)), "{message}");
}

pub fn tests() -> Vec<traffic_cop_testbed::runner::Test> {
    traffic_cop_testbed::tests![
        a_late_tick_whose_run_overlaps_the_next_is_not_a_lost_tick,
        a_tick_an_interval_after_the_last_that_nobody_ran_still_fails,
    ]
}

//! The integration runner's groups side by side (harness/testbed/src/runner.rs): each group's
//! tests start in their listed order, never more of one group at once than its limit, and the
//! groups overlap; the last group left runs up to its own limit for running alone; a test that
//! a filter leaves out does not hold up the ones after it.

use std::sync::mpsc;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};
use traffic_cop_testbed::runner::{run_trials, side_by_side, Arguments, Slots, Test};

/// (group, listed position, started, ended), since the run began.
type Span = (&'static str, usize, Duration, Duration);

fn test(name: &str, body: fn()) -> Test {
    Test { name: name.to_string(), body, opt_in: None }
}

/// The inner run's own report goes nowhere: its summary lines would read as this binary's.
fn args(filter: Option<&str>) -> Arguments {
    let mut args = Arguments::from_iter(["runner", "--quiet", "--logfile", "/dev/null"]);
    args.filter = filter.map(str::to_string);
    args
}

/// Runs the groups in a thread of their own, failing (rather than hanging) if the run takes
/// more than `bound`.
fn run_within(groups: Vec<(&'static str, Vec<Test>, Slots)>, filter: Option<&str>, bound: u64) {
    let (args, trials) = side_by_side(groups, args(filter));
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(run_trials(&args, trials).has_failed());
    });
    let failed = finished.recv_timeout(Duration::from_secs(bound)).expect("the run never ended");
    assert!(!failed, "a test in the run failed");
}

static ORDER: Mutex<Vec<Span>> = Mutex::new(Vec::new());
static ORDER_EPOCH: Mutex<Option<Instant>> = Mutex::new(None);

fn record(group: &'static str, position: usize) {
    let epoch = *ORDER_EPOCH.lock().unwrap().get_or_insert_with(Instant::now);
    let started = epoch.elapsed();
    thread::sleep(Duration::from_millis(150));
    ORDER.lock().unwrap().push((group, position, started, epoch.elapsed()));
}

macro_rules! recorders {
    ($($name:ident = $group:literal $position:literal),* $(,)?) => {
        $(fn $name() { record($group, $position) })*
    };
}

recorders! {
    a0 = "a" 0, a1 = "a" 1, a2 = "a" 2, a3 = "a" 3,
    b0 = "b" 0, b1 = "b" 1, b2 = "b" 2, b3 = "b" 3, b4 = "b" 4, b5 = "b" 5,
}

#[test]
fn groups_overlap_each_within_its_limit_and_in_listed_order() {
    let a = vec![test("a0", a0), test("a1", a1), test("a2", a2), test("a3", a3)];
    let b = [b0, b1, b2, b3, b4, b5];
    let b = b.iter().enumerate().map(|(i, body)| test(&format!("b{i}"), *body)).collect();
    run_within(vec![("a", a, Slots::fixed(1)), ("b", b, Slots::fixed(2))], None, 30);

    let spans = ORDER.lock().unwrap().clone();
    assert_eq!(spans.len(), 10, "{spans:?}");
    for (group, limit) in [("a", 1), ("b", 2)] {
        let mut mine: Vec<Span> = spans.iter().copied().filter(|s| s.0 == group).collect();
        // In listed order: two tests the gate lets in together (both slots freed at once) may
        // reach their first line microseconds apart either way; one let in out of order would
        // start a whole span (150 ms) before one listed earlier.
        mine.sort_by_key(|s| s.1);
        assert!(
            mine.windows(2).all(|w| w[1].2 + Duration::from_millis(20) >= w[0].2),
            "{group} started out of order: {mine:?}"
        );
        mine.sort_by_key(|s| s.2);
        for span in &mine {
            let at_once = mine.iter().filter(|o| o.2 <= span.2 && span.2 < o.3).count();
            assert!(at_once <= limit, "{at_once} of {group} at once (limit {limit}): {mine:?}");
        }
    }
    let overlap = spans
        .iter()
        .any(|a| a.0 == "a" && spans.iter().any(|b| b.0 == "b" && b.2 < a.3 && a.2 < b.3));
    assert!(overlap, "the groups ran one after the other: {spans:?}");
}

static FILTERED_RAN: Mutex<Vec<&str>> = Mutex::new(Vec::new());

fn kept_first() {
    FILTERED_RAN.lock().unwrap().push("kept_first");
}
fn left_out() {
    FILTERED_RAN.lock().unwrap().push("left_out");
}
fn kept_last() {
    FILTERED_RAN.lock().unwrap().push("kept_last");
}

#[test]
fn a_filtered_out_test_holds_up_no_test_after_it() {
    let tests = vec![
        test("kept_first", kept_first),
        test("left_out", left_out),
        test("kept_last", kept_last),
    ];
    run_within(vec![("g", tests, Slots::fixed(1))], Some("kept"), 10);
    assert_eq!(*FILTERED_RAN.lock().unwrap(), ["kept_first", "kept_last"]);
}

static ALONE: Mutex<Vec<Span>> = Mutex::new(Vec::new());
static ALONE_EPOCH: Mutex<Option<Instant>> = Mutex::new(None);

fn spell(group: &'static str, position: usize, millis: u64) {
    let epoch = *ALONE_EPOCH.lock().unwrap().get_or_insert_with(Instant::now);
    let started = epoch.elapsed();
    thread::sleep(Duration::from_millis(millis));
    ALONE.lock().unwrap().push((group, position, started, epoch.elapsed()));
}

#[test]
fn the_last_group_left_runs_up_to_its_limit_alone() {
    let long = vec![test("long0", || spell("long", 0, 700))];
    // A test's body is a plain `fn()`: closures that capture nothing, one per position.
    let short: [fn(); 7] = [
        || spell("short", 0, 300),
        || spell("short", 1, 300),
        || spell("short", 2, 300),
        || spell("short", 3, 300),
        || spell("short", 4, 300),
        || spell("short", 5, 300),
        || spell("short", 6, 300),
    ];
    let short = short.iter().enumerate().map(|(i, body)| test(&format!("s{i}"), *body)).collect();
    // "short" lists its tests first: while "long" runs, one at a time; once it ends, three.
    let groups =
        vec![("short", short, Slots { beside: 1, alone: 3 }), ("long", long, Slots::fixed(1))];
    run_within(groups, None, 30);

    let spans = ALONE.lock().unwrap().clone();
    assert_eq!(spans.len(), 8, "{spans:?}");
    let long_end = spans.iter().find(|s| s.0 == "long").expect("long ran").3;
    let short: Vec<Span> = spans.iter().copied().filter(|s| s.0 == "short").collect();
    let at_once = |span: &Span| short.iter().filter(|o| o.2 <= span.2 && span.2 < o.3).count();
    for span in short.iter().filter(|s| s.2 < long_end) {
        assert!(at_once(span) <= 1, "two of short beside long: {short:?}");
    }
    let most = short.iter().filter(|s| s.2 >= long_end).map(at_once).max().unwrap_or(0);
    assert!((2..=3).contains(&most), "{most} of short at once alone (limit 3): {short:?}");
}

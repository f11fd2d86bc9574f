//! The guard's behaviour suite. Every scenario runs against two worlds: the native guard over
//! the in-memory fake service on virtual time (tests/native/guard.rs), and the built component in
//! wasmtime over Azurite on real time (tests/wasmtime/guard_azurite). Same steps, same expectations.
#![allow(dead_code)]

use std::time::Duration;

/// One `#[test]` per scenario, each in a fresh world made by `$world`: the list both worlds run
/// (the native world, under libtest).
#[macro_export]
macro_rules! scenario_tests {
    ($world:expr) => {
        #[test]
        fn leader_runs_once_and_followers_skip_in_one_round_trip() {
            scenarios::leader_runs_once_and_followers_skip_in_one_round_trip(&mut $world);
        }
        #[test]
        fn a_crashed_holder_is_taken_over_after_the_lease_period() {
            scenarios::a_crashed_holder_is_taken_over_after_the_lease_period(&mut $world);
        }
        #[test]
        fn keep_alive_holds_the_lease_past_its_period() {
            scenarios::keep_alive_holds_the_lease_past_its_period(&mut $world);
        }
        #[test]
        fn interval_zero_runs_again_once_released() {
            scenarios::interval_zero_runs_again_once_released(&mut $world);
        }
        #[test]
        fn claims_share_items_without_overlap() {
            scenarios::claims_share_items_without_overlap(&mut $world);
        }
    };
}

/// The same list for the integration tests' runner: `scenarios()` names one test per scenario.
#[macro_export]
macro_rules! scenario_trials {
    ($world:expr) => {
        fn leader_runs_once_and_followers_skip_in_one_round_trip() {
            scenarios::leader_runs_once_and_followers_skip_in_one_round_trip(&mut $world);
        }
        fn a_crashed_holder_is_taken_over_after_the_lease_period() {
            scenarios::a_crashed_holder_is_taken_over_after_the_lease_period(&mut $world);
        }
        fn keep_alive_holds_the_lease_past_its_period() {
            scenarios::keep_alive_holds_the_lease_past_its_period(&mut $world);
        }
        fn interval_zero_runs_again_once_released() {
            scenarios::interval_zero_runs_again_once_released(&mut $world);
        }
        fn claims_share_items_without_overlap() {
            scenarios::claims_share_items_without_overlap(&mut $world);
        }

        pub fn scenarios() -> Vec<traffic_cop_testbed::runner::Test> {
            traffic_cop_testbed::tests![
                leader_runs_once_and_followers_skip_in_one_round_trip,
                a_crashed_holder_is_taken_over_after_the_lease_period,
                keep_alive_holds_the_lease_past_its_period,
                interval_zero_runs_again_once_released,
                claims_share_items_without_overlap
            ]
        }
    };
}

/// What a guarded invoke answered, in a shape both worlds share.
#[derive(Clone, Debug)]
pub enum Seen<T> {
    Run { ticket: T, token: u64, abandoned: bool },
    Held { holder: Option<String> },
    AlreadyRan { holder: Option<String>, running: bool, outcome: Option<String> },
    Error(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    Lost,
    Other(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub state: String,
    pub holder: Option<String>,
    pub token: u64,
    pub running: bool,
    pub outcome: Option<String>,
}

pub trait World {
    type Ticket: Clone + std::fmt::Debug;
    /// The lease period every scenario uses.
    const LEASE_SECONDS: u32 = 15;
    /// The job interval: long enough that a scenario's quick steps stay inside one.
    fn interval_seconds(&self) -> u64;
    fn invoke(&mut self, lock: &str, holder: &str) -> Seen<Self::Ticket> {
        let interval = self.interval_seconds();
        self.invoke_every(lock, holder, interval)
    }
    fn invoke_every(
        &mut self,
        lock: &str,
        holder: &str,
        interval_seconds: u64,
    ) -> Seen<Self::Ticket>;
    fn keep_alive(&mut self, ticket: &Self::Ticket) -> Result<(), Failure>;
    fn complete(&mut self, ticket: &Self::Ticket, success: bool) -> Result<(), Failure>;
    fn claim(
        &mut self,
        items: &[String],
        holder: &str,
        max: u32,
    ) -> Result<Vec<(Self::Ticket, String, u64)>, Failure>;
    fn board(&mut self) -> Vec<Row>;
    /// Lets time pass (virtually, or by sleeping).
    fn advance(&mut self, by: Duration);
    /// Waits until just after an interval boundary, so the next quick steps share one interval.
    fn align(&mut self);
    /// HTTP requests sent so far.
    fn requests(&self) -> u64;
}

fn run<T>(seen: Seen<T>) -> (T, u64, bool) {
    match seen {
        Seen::Run { ticket, token, abandoned } => (ticket, token, abandoned),
        other => panic!("expected run, got {}", other_name(&other)),
    }
}

fn other_name<T>(seen: &Seen<T>) -> String {
    match seen {
        Seen::Run { token, .. } => format!("run(token {token})"),
        Seen::Held { holder } => format!("held-by-other({holder:?})"),
        Seen::AlreadyRan { holder, running, outcome } => {
            format!("already-ran({holder:?}, running {running}, {outcome:?})")
        }
        Seen::Error(e) => format!("error({e})"),
    }
}

/// Counts the requests one step takes.
fn trips<W: World, R>(world: &mut W, step: impl FnOnce(&mut W) -> R) -> (R, u64) {
    let before = world.requests();
    let result = step(world);
    (result, world.requests() - before)
}

pub fn leader_runs_once_and_followers_skip_in_one_round_trip<W: World>(w: &mut W) {
    // First use creates the lock; do it outside the measured steps.
    w.align();
    let (a, token, abandoned) = run(w.invoke("steady", "alpha"));
    assert!(!abandoned);
    w.complete(&a, true).unwrap();
    w.advance(Duration::from_secs(w.interval_seconds()));
    w.align();

    let (leader, leader_trips) = trips(w, |w| w.invoke("steady", "alpha"));
    let (a, next, _) = run(leader);
    assert_eq!(next, token + 1, "tokens increase by one per grant");
    assert_eq!(leader_trips, 3, "leader: look, acquire, record");
    println!("round trips: leader run = {leader_trips}");

    let (follower, follower_trips) = trips(w, |w| w.invoke("steady", "bravo"));
    assert!(
        matches!(&follower, Seen::Held { holder: Some(h) } if h == "alpha"),
        "{}",
        other_name(&follower)
    );
    assert_eq!(follower_trips, 1, "follower skip while held");
    println!("round trips: follower skip (held) = {follower_trips}");

    let ((), complete_trips) = trips(w, |w| w.complete(&a, true).unwrap());
    assert_eq!(complete_trips, 2, "complete: record (from the grant it remembers), release");
    println!("round trips: complete = {complete_trips}");

    let (late, late_trips) = trips(w, |w| w.invoke("steady", "charlie"));
    match &late {
        Seen::AlreadyRan { holder, running, outcome } => {
            assert_eq!(
                (holder.as_deref(), *running, outcome.as_deref()),
                (Some("alpha"), false, Some("success"))
            )
        }
        other => panic!("expected already-ran, got {}", other_name(other)),
    }
    assert_eq!(late_trips, 1, "follower skip after the run");
    println!("round trips: follower skip (already ran) = {late_trips}");

    w.advance(Duration::from_secs(w.interval_seconds()));
    let (_, third, _) = run(w.invoke("steady", "charlie"));
    assert_eq!(third, token + 2);
}

pub fn a_crashed_holder_is_taken_over_after_the_lease_period<W: World>(w: &mut W) {
    w.align();
    let (crashed, token, _) = run(w.invoke("crash", "alpha"));
    // alpha "dies": no keep-alive, no complete. Within the lease nobody else runs.
    w.advance(Duration::from_secs(w.interval_seconds()));
    assert!(
        matches!(w.invoke("crash", "bravo"), Seen::Held { holder: Some(ref h) } if h == "alpha")
    );
    w.advance(Duration::from_secs(u64::from(W::LEASE_SECONDS) + 1));
    let (taken, next, abandoned) = run(w.invoke("crash", "bravo"));
    assert!(abandoned, "the takeover reports the abandoned run");
    assert!(next > token);
    // The dead holder, were it to wake up, is told it lost the lease.
    assert_eq!(w.keep_alive(&crashed), Err(Failure::Lost));
    assert_eq!(w.complete(&crashed, true), Err(Failure::Lost));
    w.complete(&taken, false).unwrap();
    let row = w.board().into_iter().find(|r| r.name == "crash").expect("board lists the lock");
    assert_eq!(row.token, next);
    assert_eq!(
        (row.running, row.outcome.as_deref(), row.holder.as_deref()),
        (false, Some("failure: scripted"), Some("bravo"))
    );
}

pub fn keep_alive_holds_the_lease_past_its_period<W: World>(w: &mut W) {
    w.align();
    let (ticket, _, _) = run(w.invoke("long", "alpha"));
    for _ in 0..3 {
        w.advance(Duration::from_secs(6));
        w.keep_alive(&ticket).unwrap();
    }
    // 18 s after the grant, past one 15 s period: still ours.
    assert!(matches!(w.invoke("long", "bravo"), Seen::Held { .. }));
    w.complete(&ticket, true).unwrap();
}

pub fn interval_zero_runs_again_once_released<W: World>(w: &mut W) {
    w.align();
    let (a, first, _) = run(w.invoke_every("nodedup", "alpha", 0));
    assert!(matches!(w.invoke_every("nodedup", "bravo", 0), Seen::Held { .. }));
    w.complete(&a, true).unwrap();
    let (b, second, _) = run(w.invoke_every("nodedup", "bravo", 0));
    assert_eq!(second, first + 1);
    w.complete(&b, true).unwrap();
}

pub fn claims_share_items_without_overlap<W: World>(w: &mut W) {
    let items: Vec<String> = (0..6).map(|i| format!("items/{i}")).collect();
    w.align();
    let first: Vec<_> = w.claim(&items, "alpha", 4).unwrap();
    let second: Vec<_> = w.claim(&items, "bravo", 4).unwrap();
    let third: Vec<_> = w.claim(&items, "charlie", 4).unwrap();
    assert_eq!((first.len(), second.len(), third.len()), (4, 2, 0));
    let mut names: Vec<&String> = first.iter().chain(&second).map(|(_, name, _)| name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 6, "every item claimed exactly once");
    for (ticket, _, token) in first.iter().chain(&second) {
        assert_eq!(*token, 1);
        w.complete(ticket, true).unwrap();
    }
    assert!(w.claim(&items, "delta", 10).unwrap().is_empty(), "all ran in this interval");
    w.advance(Duration::from_secs(w.interval_seconds()));
    let again = w.claim(&items, "delta", 10).unwrap();
    assert_eq!(again.len(), 6);
    assert!(again.iter().all(|(_, _, token)| *token == 2));
    let board = w.board();
    let running = board.iter().filter(|r| r.name.starts_with("items/") && r.running).count();
    assert_eq!(running, 6, "{board:?}");
    assert!(
        board
            .iter()
            .filter(|r| r.name.starts_with("items/"))
            .all(|r| r.state == "leased" && r.holder.as_deref() == Some("delta")),
        "{board:?}"
    );
}

//! The guard natively, over the in-memory fake service on virtual time: the behaviour suite,
//! plus a long contention run that would take hours of real time.

use crate::support;

use crate::scenarios::{self, Failure, Row, Seen, World};
use crate::support::fake_service::FakeService;
use crate::support::{VirtualRuntime, EMULATOR};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, SystemTime};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, SkipReason, Ticket};
use traffic_cop::{Account, Error, LeaseClient, Lock};

struct Virtual {
    clock: Rc<Cell<SystemTime>>,
    service: FakeService,
    seed: u64,
}

impl Virtual {
    fn new() -> Virtual {
        let clock = Rc::new(Cell::new(support::epoch()));
        Virtual { service: FakeService::new(clock.clone()), clock, seed: 1 }
    }

    /// A fresh client per call, as a fresh component instance would be.
    fn client(&mut self) -> LeaseClient<FakeService, VirtualRuntime> {
        self.seed += 1;
        LeaseClient::new(
            self.service.clone(),
            VirtualRuntime::on_clock(self.clock.clone(), self.seed * 0x9E37_79B9),
        )
    }

    fn options(&self, holder: &str, interval_seconds: u64) -> GuardOptions {
        GuardOptions::every_interval(holder, Self::LEASE_SECONDS, interval_seconds, None).unwrap()
    }
}

fn failure(error: Error) -> Failure {
    match error {
        Error::LeaseLost(_) => Failure::Lost,
        other => Failure::Other(other.to_string()),
    }
}

impl World for Virtual {
    type Ticket = Ticket;

    fn interval_seconds(&self) -> u64 {
        4
    }

    fn invoke_every(&mut self, lock: &str, holder: &str, interval_seconds: u64) -> Seen<Ticket> {
        let lock = Lock::parse(EMULATOR, "guard", lock).unwrap();
        let options = self.options(holder, interval_seconds);
        match guard::guarded_invoke(&mut self.client(), &lock, &options) {
            Decision::Run(ticket) => Seen::Run {
                token: ticket.fencing_token,
                abandoned: ticket.previous_abandoned,
                ticket,
            },
            Decision::Skip(SkipReason::HeldByOther { holder, .. }) => Seen::Held { holder },
            Decision::Skip(SkipReason::AlreadyRan { holder, running, outcome, .. }) => {
                let outcome = outcome.as_ref().map(Outcome::as_record_text);
                Seen::AlreadyRan { holder, running, outcome }
            }
            Decision::Skip(SkipReason::Error(error)) => Seen::Error(error.to_string()),
            Decision::Skip(other) => Seen::Error(format!("no such skip was set up, yet {other:?}")),
        }
    }

    fn keep_alive(&mut self, ticket: &Ticket) -> Result<(), Failure> {
        guard::keep_alive(&mut self.client(), ticket).map(drop).map_err(failure)
    }

    fn complete(&mut self, ticket: &Ticket, success: bool) -> Result<(), Failure> {
        let outcome = if success { Outcome::Success } else { Outcome::Failure("scripted".into()) };
        guard::complete(&mut self.client(), ticket, &outcome).map_err(failure)
    }

    fn claim(
        &mut self,
        items: &[String],
        holder: &str,
        max: u32,
    ) -> Result<Vec<(Ticket, String, u64)>, Failure> {
        let account = Account::from_connection_string(EMULATOR).unwrap();
        let options = self.options(holder, self.interval_seconds());
        let tickets = guard::claim(&mut self.client(), &account, "guard", items, &options, max)
            .map_err(failure)?
            .tickets;
        Ok(tickets.into_iter().map(|t| (t.clone(), t.lock.blob.clone(), t.fencing_token)).collect())
    }

    fn board(&mut self) -> Vec<Row> {
        let account = Account::from_connection_string(EMULATOR).unwrap();
        guard::board(&mut self.client(), &account, "guard")
            .unwrap()
            .into_iter()
            .map(|e| Row {
                name: e.name,
                state: format!("{:?}", e.state).to_lowercase(),
                holder: e.record.holder,
                token: e.record.fence,
                running: e.record.running,
                outcome: e.record.outcome.as_ref().map(Outcome::as_record_text),
            })
            .collect()
    }

    fn advance(&mut self, by: Duration) {
        self.clock.set(self.clock.get() + by);
    }

    fn align(&mut self) {
        let interval = self.interval_seconds() * 1000;
        let ms = guard::unix_ms(self.clock.get());
        self.advance(Duration::from_millis(interval - ms % interval + 100));
    }

    fn requests(&self) -> u64 {
        self.service.requests()
    }
}

crate::scenario_tests!(Virtual::new());

#[test]
fn invalid_options_and_tickets_are_refused_before_any_request() {
    let mut world = Virtual::new();
    let error = GuardOptions::every_interval("me", 20, 60, Some(15)).unwrap_err();
    assert!(error.to_string().contains("keep-alive-seconds * 2 <= lease-seconds"), "{error}");
    let account = Account::from_connection_string(EMULATOR).unwrap();
    let options = world.options("me", 4);
    let bad_items = ["ok".to_string(), "../escape".to_string()];
    let result = guard::claim(&mut world.client(), &account, "guard", &bad_items, &options, 5);
    assert!(matches!(result, Err(Error::InvalidArgument(_))), "{result:?}");
    assert_eq!(world.requests(), 0);
}

#[test]
fn virtual_contention_over_five_hundred_ticks_never_double_runs() {
    const CONTENDERS: u64 = 8;
    const TICKS: u64 = 500;
    let mut world = Virtual::new();
    world.align();
    let mut rng: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut grants, mut crashes, mut skips) = (Vec::new(), Vec::new(), 0u64);
    let first = guard::unix_ms(world.clock.get()) / 1000;
    for _ in 0..TICKS {
        // Contenders arrive in a different order each tick, spread over the first 300 ms.
        let mut order: Vec<u64> = (0..CONTENDERS).collect();
        order.sort_by_key(|_| next());
        let tick_start = world.clock.get();
        for contender in order {
            world.advance(Duration::from_millis(next() % 40));
            match world.invoke_every("contended", &format!("c{contender}"), 1) {
                Seen::Run { ticket, token, .. } => {
                    grants.push((token, ticket.past_due.due_at_ms / 1000));
                    if next().is_multiple_of(20) {
                        crashes.push(ticket.past_due.due_at_ms / 1000);
                    } else {
                        world.complete(&ticket, true).unwrap();
                    }
                }
                Seen::Error(e) => panic!("{e}"),
                _ => skips += 1,
            }
        }
        world.clock.set(tick_start + Duration::from_secs(1));
    }
    let intervals: std::collections::BTreeSet<u64> = grants.iter().map(|g| g.1).collect();
    assert_eq!(intervals.len(), grants.len(), "two runs in one interval");
    assert!(
        grants.windows(2).all(|w| w[1].0 == w[0].0 + 1 && w[1].1 > w[0].1),
        "tokens consecutive, intervals rising"
    );
    let blocked = |i: u64| crashes.iter().any(|c| *c < i && i <= c + 16);
    let missed: Vec<u64> =
        (first..first + TICKS).filter(|i| !intervals.contains(i) && !blocked(*i)).collect();
    assert!(missed.is_empty(), "{missed:?}");
    assert!(!crashes.is_empty());
    println!(
        "virtual contention: {} decisions, {} runs, {} crashes, {skips} skips, {} requests",
        CONTENDERS * TICKS,
        grants.len(),
        crashes.len(),
        world.requests()
    );
}

#[test]
fn a_host_clock_outside_azures_window_is_named_as_clock_skew() {
    let world = Virtual::new();
    let lock = Lock::parse(EMULATOR, "guard", "skewed").unwrap();
    let options = world.options("me", 60);
    for (offset_minutes, direction) in [(20i64, "ahead of"), (-45, "behind")] {
        // The replica's clock is off; the service keeps the true time.
        let skewed = Rc::new(Cell::new(if offset_minutes > 0 {
            world.clock.get() + Duration::from_secs(offset_minutes as u64 * 60)
        } else {
            world.clock.get() - Duration::from_secs(offset_minutes.unsigned_abs() * 60)
        }));
        let mut client =
            LeaseClient::new(world.service.clone(), VirtualRuntime::on_clock(skewed, 7));
        match guard::guarded_invoke(&mut client, &lock, &options) {
            Decision::Skip(SkipReason::Error(Error::Unauthorized(e))) => {
                let expected = format!(
                    "clock skew: this host's clock is {} minutes {direction}",
                    offset_minutes.abs()
                );
                assert!(e.message.contains(&expected), "{}", e.message);
            }
            other => panic!("expected unauthorized, got {other:?}"),
        }
    }
    // Within the window the same service answers normally.
    let mut client = world_client_at(&world, Duration::from_secs(14 * 60));
    assert!(matches!(guard::guarded_invoke(&mut client, &lock, &options), Decision::Run(_)));
}

fn world_client_at(world: &Virtual, ahead: Duration) -> LeaseClient<FakeService, VirtualRuntime> {
    let clock = Rc::new(Cell::new(world.clock.get() + ahead));
    LeaseClient::new(world.service.clone(), VirtualRuntime::on_clock(clock, 11))
}

/// Lengths of time as the sentences say them, under a second in tenths rounded half up.
#[test]
fn a_duration_reads_as_people_say_it() {
    let said: Vec<String> = [0, 49, 50, 420, 950, 1_000, 90_000, 720_000, 11_100_000, 187_200_000]
        .into_iter()
        .map(guard::duration)
        .collect();
    let want = [
        "0.0 s",
        "0.0 s",
        "0.1 s",
        "0.4 s",
        "1.0 s",
        "1 s",
        "90 s",
        "12 min",
        "3 h 5 min",
        "2 d 4 h",
    ];
    assert_eq!(said, want);
}

//! Replicas of one job ticking on one lock in virtual time over the fake service, each keeping
//! what `guarded_tick` says to keep (or keeping nothing, as a host without a key-value store):
//! what a fleet runs and what it pays in storage requests. The tests (tests/native/memory.rs)
//! and the benchmark (harness/tools, `tick-cost`) both count with it.

use super::fake_service::FakeService;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop::guard::{self, Decision, GuardOptions, Outcome, RawSettings, SkipReason};
use traffic_cop::transport::Runtime;
use traffic_cop::{LeaseClient, Lock};

const STORAGE: &str = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;\
AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;\
BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;";

/// A replica's clock: the shared virtual time, stepped by the replica's skew.
pub struct ReplicaClock {
    now: Rc<Cell<SystemTime>>,
    skew_ms: i64,
    seed: Cell<u64>,
}

impl Runtime for ReplicaClock {
    fn now(&self) -> SystemTime {
        at_ms((ms(self.now.get()) as i64 + self.skew_ms) as u64)
    }

    fn monotonic(&self) -> Duration {
        self.now.get().duration_since(UNIX_EPOCH).unwrap_or_default()
    }

    fn sleep(&self, duration: Duration) {
        self.now.set(self.now.get() + duration);
    }

    fn random_u64(&self) -> u64 {
        let mut x = self.seed.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.seed.set(x);
        x
    }
}

pub fn ms(time: SystemTime) -> u64 {
    guard::unix_ms(time)
}

pub fn at_ms(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// What one tick of one replica came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticked {
    /// Service time of the tick.
    pub at_ms: u64,
    pub replica: usize,
    /// `run`, or the skip reason's name as the decision log writes it.
    pub decision: &'static str,
    /// Storage requests the tick sent (a run's completion included).
    pub requests: u64,
}

pub struct TickFleet {
    pub clock: Rc<Cell<SystemTime>>,
    pub service: FakeService,
    pub lock: Lock,
    pub settings: RawSettings,
    /// Each replica's store; `remember: false` keeps nothing, as a host without one.
    pub kept: Vec<Option<String>>,
    pub remember: bool,
    /// Each replica's clock less the service's (ms).
    pub skews_ms: Vec<i64>,
    /// Scheduled runs: due time, the replicas that ran it.
    pub runs: BTreeMap<u64, Vec<usize>>,
    /// Manual runs (`run-now`): when, and who ran it.
    pub manual_runs: Vec<(u64, usize)>,
    pub ticks: Vec<Ticked>,
    seed: u64,
}

impl TickFleet {
    /// `replicas` replicas (one per skew) of a job on `schedule` in `time_zone`, the service's
    /// clock at `start_ms`. `refresh_seconds` as the variable says it.
    pub fn new(
        skews_ms: &[i64],
        schedule: &str,
        time_zone: &str,
        refresh_seconds: Option<&str>,
        remember: bool,
        start_ms: u64,
    ) -> TickFleet {
        let clock = Rc::new(Cell::new(at_ms(start_ms)));
        let settings = RawSettings {
            connection_string: Some(STORAGE.into()),
            container: Some("fleet".into()),
            lock: Some("job".into()),
            schedule: Some(schedule.into()),
            time_zone: Some(time_zone.into()),
            refresh_seconds: refresh_seconds.map(str::to_string),
            ..RawSettings::default()
        };
        TickFleet {
            service: FakeService::new(clock.clone()),
            clock,
            lock: settings.lock().expect("the fleet's lock"),
            settings,
            kept: vec![None; skews_ms.len()],
            remember,
            skews_ms: skews_ms.to_vec(),
            runs: BTreeMap::new(),
            manual_runs: Vec::new(),
            ticks: Vec::new(),
            seed: 0x9E37_79B9_7F4A_7C15,
        }
    }

    pub fn now_ms(&self) -> u64 {
        ms(self.clock.get())
    }

    fn random(&mut self) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    /// A client as `replica` has it, on its own clock.
    pub fn client(&mut self, replica: usize) -> LeaseClient<FakeService, ReplicaClock> {
        let seed = Cell::new(self.random() | 1);
        let clock = ReplicaClock { now: self.clock.clone(), skew_ms: self.skews_ms[replica], seed };
        LeaseClient::new(self.service.clone(), clock)
    }

    fn options(&self, replica: usize) -> GuardOptions {
        let settings =
            RawSettings { holder: Some(format!("replica-{replica}")), ..self.settings.clone() };
        settings.options(&traffic_cop::transport::StdRuntime).expect("the fleet's options")
    }

    /// One tick of `replica` now: its decision, and a granted run completed at once.
    pub fn tick(&mut self, replica: usize) -> Ticked {
        let options = self.options(replica);
        let refresh_ms = self.settings.refresh_ms().expect("the fleet's refresh_seconds");
        let before = self.service.requests();
        let kept = self.kept[replica].take();
        let mut client = self.client(replica);
        let (decision, keep) =
            guard::guarded_tick(&mut client, &self.lock, &options, kept.as_deref(), refresh_ms);
        if self.remember {
            self.kept[replica] = keep;
        }
        let name = match &decision {
            Decision::Run(ticket) => {
                match &ticket.manual_by {
                    Some(_) => self.manual_runs.push((ticket.started_ms, replica)),
                    None => self.runs.entry(ticket.past_due.due_at_ms).or_default().push(replica),
                }
                guard::complete(&mut client, ticket, &Outcome::Success).expect("complete");
                "run"
            }
            Decision::Skip(SkipReason::Error(error)) => panic!("replica {replica}: {error}"),
            Decision::Skip(reason) => reason_name(reason),
        };
        let ticked = Ticked {
            at_ms: self.now_ms(),
            replica,
            decision: name,
            requests: self.service.requests() - before,
        };
        self.ticks.push(ticked.clone());
        ticked
    }

    /// Every replica's trigger fires every `poll_ms` by its own clock (a moment apart, in no
    /// fixed order) until the service's clock reaches `until_ms`.
    pub fn poll_until(&mut self, until_ms: u64, poll_ms: u64) {
        let mut fires: Vec<(u64, usize)> = Vec::new();
        for (replica, skew) in self.skews_ms.clone().into_iter().enumerate() {
            let local_start = (self.now_ms() as i64 + skew) as u64;
            let mut local = local_start.div_ceil(poll_ms) * poll_ms;
            while ((local as i64) - skew) < until_ms as i64 {
                let jitter = self.random() % 300;
                fires.push((((local as i64) - skew) as u64 + jitter, replica));
                local += poll_ms;
            }
        }
        fires.sort();
        for (at, replica) in fires {
            if at > self.now_ms() {
                self.clock.set(at_ms(at));
            }
            self.tick(replica);
        }
        if until_ms > self.now_ms() {
            self.clock.set(at_ms(until_ms));
        }
    }

    /// Storage requests sent by ticks since `from_ms` (service clock).
    pub fn requests_since(&self, from_ms: u64) -> u64 {
        self.ticks.iter().filter(|t| t.at_ms >= from_ms).map(|t| t.requests).sum()
    }

    /// The first tick at or after `from_ms` whose decision is `decision`.
    pub fn first(&self, decision: &str, from_ms: u64) -> Option<&Ticked> {
        self.ticks.iter().find(|t| t.at_ms >= from_ms && t.decision == decision)
    }
}

/// A skip reason's name, as the decision log writes it.
pub fn reason_name(reason: &SkipReason) -> &'static str {
    match reason {
        SkipReason::HeldByOther { .. } => "held-by-other",
        SkipReason::AlreadyRan { .. } => "already-ran",
        SkipReason::TooLate { .. } => "too-late",
        SkipReason::NotDue { .. } => "not-due",
        SkipReason::Paused(_) => "paused",
        SkipReason::ScheduleConflict { .. } => "schedule-conflict",
        SkipReason::Remembered(_) => "remembered",
        SkipReason::Error(_) => "error",
    }
}

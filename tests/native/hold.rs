//! guard@0.4.0's `hold` on virtual time over the fake service: renewals at the period, a stop a
//! margin before the lease could expire when renewals keep failing (nothing sent after it), the
//! service's word ending it at once, and nothing sent after the run is closed. The link's
//! futures are ready at once, and its sleeps move the shared clock.

use crate::support::fake_service::FakeService;
use crate::support::hooked::{step, Hooked};
use crate::support::{epoch, poll_to_end, VirtualRuntime, EMULATOR};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime};
use traffic_cop::guard::{self, Decision, GuardOptions, Held, HoldPlan, Ticket};
use traffic_cop::transport::{
    AsyncTransport, Request, Response, Timeouts, Transport, TransportError,
};
use traffic_cop::{Error, LeaseClient, LeaseLoss, Lock, RanOutWhen};

type Clock = Rc<Cell<SystemTime>>;

/// Every request the link sent: when (seconds since the grant), its step, its time limits.
type Sent = Rc<RefCell<Vec<(f64, String, Timeouts)>>>;

struct Link {
    transport: Hooked,
    clock: Clock,
    granted_at: SystemTime,
    sent: Sent,
    /// Called after each sleep with the seconds since the grant.
    after_sleep: Box<dyn FnMut(f64)>,
    /// Sleeps that answer `Pending` once before they are over.
    stall: bool,
}

impl Link {
    fn seconds(&self) -> f64 {
        self.clock.get().duration_since(self.granted_at).unwrap().as_secs_f64()
    }
}

impl AsyncTransport for Link {
    fn send(
        &mut self,
        request: Request,
        timeouts: Timeouts,
    ) -> impl Future<Output = Result<Response, TransportError>> {
        self.sent.borrow_mut().push((self.seconds(), step(&request), timeouts));
        std::future::ready(self.transport.send(request, timeouts))
    }

    fn sleep(&mut self, duration: Duration) -> impl Future<Output = ()> {
        self.clock.set(self.clock.get() + duration);
        let at = self.seconds();
        (self.after_sleep)(at);
        let mut stalled = !self.stall;
        std::future::poll_fn(move |_| {
            if std::mem::replace(&mut stalled, true) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

/// One granted run on a fresh fake service, lease 15 s, keep-alive 5 s.
struct Run {
    clock: Clock,
    service: FakeService,
    lock: Lock,
    ticket: Ticket,
    held: Rc<Held>,
}

fn granted() -> Run {
    let clock = Rc::new(Cell::new(epoch()));
    let service = FakeService::new(clock.clone());
    let lock = Lock::parse(EMULATOR, "hold", "job").unwrap();
    let options = GuardOptions::every_interval("replica-a", 15, 0, None).unwrap();
    let mut client = client(&service, &clock, 1);
    let Decision::Run(ticket) = guard::guarded_invoke(&mut client, &lock, &options) else {
        panic!("the first call on a free lock runs");
    };
    let held = Rc::new(Held::new(&ticket, client.runtime()));
    Run { clock, service, lock, ticket, held }
}

fn client<T: Transport + Clone>(
    transport: &T,
    clock: &Clock,
    seed: u64,
) -> LeaseClient<T, VirtualRuntime> {
    LeaseClient::new(transport.clone(), VirtualRuntime::on_clock(clock.clone(), seed * 0x9E37))
}

impl Run {
    fn link(&self, transport: Hooked, after_sleep: impl FnMut(f64) + 'static) -> (Link, Sent) {
        let sent = Sent::default();
        let link = Link {
            transport,
            clock: self.clock.clone(),
            granted_at: self.clock.get(),
            sent: sent.clone(),
            after_sleep: Box::new(after_sleep),
            stall: false,
        };
        (link, sent)
    }

    /// `hold` to its end, on a client of its own (as the component's call is).
    fn hold(&self, link: &mut Link) -> Result<(), Error> {
        let mut client = client(&self.service, &self.clock, 2);
        poll_to_end(guard::hold(&mut client, link, &self.ticket, &self.held))
    }

    fn seconds(&self, since: SystemTime) -> f64 {
        self.clock.get().duration_since(since).unwrap().as_secs_f64()
    }
}

fn renewals(sent: &Sent) -> Vec<f64> {
    sent.borrow().iter().filter(|(_, step, _)| step == "renew").map(|(at, _, _)| *at).collect()
}

#[test]
fn renews_at_the_keep_alive_period_until_the_run_is_closed() {
    let run = granted();
    let held = run.held.clone();
    let (mut link, sent) = run.link(Hooked::new(run.service.clone()), move |at| {
        if at >= 60.0 {
            held.close();
        }
    });
    let started = run.clock.get();
    assert_eq!(run.hold(&mut link), Ok(()));
    let renewals = renewals(&sent);
    let expected: Vec<f64> = (1..=11).map(|k| 5.0 * f64::from(k)).collect();
    assert_eq!(renewals, expected, "one renewal every 5 s, none once closed at 60 s");
    assert_eq!(run.held.renewals(), 11);
    assert_eq!(run.seconds(started), 60.0, "returned when it woke to a closed run");
    // Renewed at 55 s, the lease runs to 70 s: the service still has it under our id.
    let status = client(&run.service, &run.clock, 3).inspect(&run.lock).unwrap();
    assert!(status.locked);
}

#[test]
fn failing_renewals_end_it_a_margin_before_the_lease_could_expire() {
    let run = granted();
    let plan = HoldPlan::of(&run.ticket.options);
    let fail_from = 12.0;
    let clock = run.clock.clone();
    let granted_at = run.clock.get();
    let transport = Hooked::new(run.service.clone()).before(move |_, request, _| {
        let at = clock.get().duration_since(granted_at).unwrap().as_secs_f64();
        (step(request) == "renew" && at >= fail_from)
            .then(|| Ok(http::Response::builder().status(503).body(b"busy".to_vec()).unwrap()))
    });
    let (mut link, sent) = run.link(transport, |_| {});
    let answer = run.hold(&mut link);
    let Err(Error::LeaseLost(LeaseLoss::RanOut(ran_out))) = &answer else {
        panic!("renewals failing past the margin end hold with lease-ran-out: {answer:?}");
    };
    assert_eq!(ran_out.when, RanOutWhen::WhileHolding);
    assert!(ran_out.message.contains("503"), "it says what failed: {}", ran_out.message);
    // The last renewal that succeeded was sent at 10 s: the lease runs to 25 s at the
    // earliest; hold must stop by 25 - margin (5 s) = 20 s, and send nothing after that.
    let stop = 10.0 + plan.lease.as_secs_f64() - plan.margin.as_secs_f64();
    let ended = run.seconds(granted_at);
    assert!(ended <= stop, "ended at {ended} s, after the stop line at {stop} s");
    assert!(ended >= stop - 1.0, "it kept trying until close to the stop line: {ended} s");
    let failed: Vec<_> =
        sent.borrow().iter().filter(|(at, _, _)| *at >= fail_from).cloned().collect();
    assert!(failed.len() >= 4, "tries again after a failed renewal: {failed:?}");
    for (at, step, timeouts) in &failed {
        let latest_end = at + (timeouts.connect + timeouts.response).as_secs_f64();
        assert!(latest_end <= stop + 1e-9, "{step} at {at} s could end at {latest_end} s");
    }
    // What the service saw: no renewal reached it after 10 s, and the lease it granted is
    // still ours until it expires, at least the margin after hold said to stop.
    let status = client(&run.service, &run.clock, 3).inspect(&run.lock).unwrap();
    assert!(status.locked, "the lease had not expired when hold stopped");
}

#[test]
fn the_services_word_that_the_lease_is_gone_ends_it_at_once() {
    let run = granted();
    let (service, clock, lock) = (run.service.clone(), run.clock.clone(), run.lock.clone());
    let taken = Rc::new(Cell::new(false));
    let taken_in_hook = taken.clone();
    let (mut link, sent) = run.link(Hooked::new(run.service.clone()), move |at| {
        // Between the first renewal (5 s) and the second (10 s), an operator breaks the
        // lease and another replica takes it.
        if at > 7.0 && !taken_in_hook.replace(true) {
            let mut other = client(&service, &clock, 9);
            other.break_lease(&lock, traffic_cop::BreakPeriod(Some(0))).unwrap();
            other.acquire(&lock, traffic_cop::LeaseDuration::Fixed(15), None).unwrap();
        }
    });
    let started = run.clock.get();
    let answer = run.hold(&mut link);
    let Err(Error::LeaseLost(LeaseLoss::Service(said))) = &answer else {
        panic!("a 409 on renewal ends hold with the service's lease-lost: {answer:?}");
    };
    assert_eq!(said.status, 409);
    assert_eq!(said.code.as_deref(), Some("LeaseIdMismatchWithLeaseOperation"));
    assert_eq!(renewals(&sent), vec![5.0, 10.0], "no retry after the service's word");
    assert_eq!(run.seconds(started), 10.0);
}

#[test]
fn a_closed_run_is_not_renewed_and_a_second_hold_is_refused() {
    let run = granted();
    // A hold that is waiting (its sleep not yet over) while another is asked for.
    let (mut first_link, first_sent) = run.link(Hooked::new(run.service.clone()), |_| {});
    first_link.stall = true;
    let mut first_client = client(&run.service, &run.clock, 4);
    {
        let mut first =
            pin!(guard::hold(&mut first_client, &mut first_link, &run.ticket, &run.held));
        let mut context = Context::from_waker(Waker::noop());
        assert!(first.as_mut().poll(&mut context).is_pending());
        let (mut second_link, second_sent) = run.link(Hooked::new(run.service.clone()), |_| {});
        let second = run.hold(&mut second_link);
        assert!(matches!(second, Err(Error::InvalidArgument(_))), "{second:?}");
        assert!(second_sent.borrow().is_empty());
        // The first is given up (dropped) here, as a caller drops the call.
    }
    assert!(first_sent.borrow().is_empty());
    // Dropped, it no longer counts as running; closed, a new hold returns at once.
    run.held.close();
    let (mut link, sent) = run.link(Hooked::new(run.service.clone()), |_| {});
    let started = run.clock.get();
    assert_eq!(run.hold(&mut link), Ok(()));
    assert!(sent.borrow().is_empty(), "nothing sent for a closed run: {:?}", sent.borrow());
    assert_eq!(run.seconds(started), 0.0);
    let keep_alive =
        guard::keep_alive_held(&mut client(&run.service, &run.clock, 5), &run.ticket, &run.held);
    assert!(matches!(keep_alive, Err(Error::InvalidArgument(_))), "{keep_alive:?}");
}

#[test]
fn a_keep_alive_moves_the_next_renewal() {
    let run = granted();
    run.clock.set(run.clock.get() + Duration::from_secs(3));
    guard::keep_alive_held(&mut client(&run.service, &run.clock, 6), &run.ticket, &run.held)
        .unwrap();
    let held = run.held.clone();
    let (mut link, sent) = run.link(Hooked::new(run.service.clone()), move |at| {
        if at >= 9.0 {
            held.close();
        }
    });
    assert_eq!(run.hold(&mut link), Ok(()));
    // Renewed by hand 3 s after the grant, when hold starts: the next renewal is due 5 s after
    // that (8 s after the grant), not 2 s after hold starts (5 s after the grant).
    assert_eq!(renewals(&sent), vec![5.0]);
}

#[path = "hold_blocked.rs"]
mod blocked;

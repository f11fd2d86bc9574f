//! guard@0.4.0's `hold` in the fault sweep: a run held for 40 s of virtual time (lease 15 s,
//! renewals every 5 s, then the run is closed), with every request of it failed every way
//! the sweep fails a request, then every request from one on (a partition), then a seeded
//! sample of two faults. The guarantee judged: while
//! `hold` has not returned, the service holds the run's lease, at every request sent and at
//! every wake; so a job that stops when `hold` returns never works without its lease.

use super::faulty::{Fault, Faulty, FAULTS};
use super::stage::{lock, Stage, CONTAINER};
use crate::support::poll_to_end;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;
use traffic_cop::guard::{self, Decision, GuardOptions, Held, Ticket};
use traffic_cop::transport::TransportError;
use traffic_cop::transport::{AsyncTransport, Request, Response, Timeouts, Transport};
use traffic_cop::Error;

/// How long a case holds before the run is closed.
const HELD: Duration = Duration::from_secs(40);

/// The faulty transport as `hold`'s link; it checks the lease before and after each request
/// and after each wait.
struct Watched<'a> {
    faulty: Faulty,
    stage: &'a Stage,
    ticket: &'a Ticket,
    held: &'a Held,
    closes_at: std::time::SystemTime,
    wrong: Rc<RefCell<Vec<String>>>,
}

impl Watched<'_> {
    fn check(&self, when: &str) {
        let holder = self.stage.service.holder(CONTAINER, "job");
        if holder.as_deref() != Some(self.ticket.lease_id.as_str()) {
            let at = self.stage.clock.get();
            self.wrong
                .borrow_mut()
                .push(format!("{when} at {at:?}: the service's lease is {holder:?}"));
        }
    }
}

impl AsyncTransport for Watched<'_> {
    fn send(
        &mut self,
        request: Request,
        timeouts: Timeouts,
    ) -> impl Future<Output = Result<Response, TransportError>> {
        self.check("before a request");
        let answer = self.faulty.send(request, timeouts);
        self.check("after a request");
        std::future::ready(answer)
    }

    fn sleep(&mut self, duration: Duration) -> impl Future<Output = ()> {
        self.stage.advance(duration);
        self.check("after a wait");
        if self.stage.clock.get() >= self.closes_at {
            self.held.close();
        }
        std::future::ready(())
    }
}

/// One case: the violations, how many requests `hold` sent, and what it answered.
fn case(faults: &[(usize, Fault)]) -> (Vec<String>, usize, Result<(), Error>) {
    let stage = Stage::new();
    let options = GuardOptions::every_interval("holder", 15, 0, Some(5)).unwrap();
    let Decision::Run(ticket) = guard::guarded_invoke(&mut stage.client(), &lock("job"), &options)
    else {
        panic!("setup: the first call on a free lock runs");
    };
    let held = Held::new(&ticket, &stage.runtime());
    stage.faulty.plan(faults);
    let wrong = Rc::new(RefCell::new(Vec::new()));
    let mut link = Watched {
        faulty: stage.faulty.clone(),
        stage: &stage,
        ticket: &ticket,
        held: &held,
        closes_at: stage.clock.get() + HELD,
        wrong: wrong.clone(),
    };
    let answer = poll_to_end(guard::hold(&mut stage.faulty_client(), &mut link, &ticket, &held));
    let sent = stage.faulty.log().len();
    let wrong = wrong.take();
    (
        wrong.into_iter().map(|w| format!("{faults:?}: {w} (answered {answer:?})")).collect(),
        sent,
        answer,
    )
}

#[test]
fn hold_with_every_request_failed_every_way_never_outlives_the_lease() {
    let (clean, requests, answer) = case(&[]);
    assert!(clean.is_empty(), "without faults: {clean:?}");
    assert_eq!(answer, Ok(()), "without faults, held until closed");
    assert!(requests >= 7, "renewals every 5 s for 40 s: {requests}");
    let (mut cases, mut wrong, mut lost) = (0, Vec::new(), 0);
    for index in 0..requests {
        for fault in FAULTS {
            cases += 1;
            let (violations, _, answer) = case(&[(index, fault)]);
            wrong.extend(violations);
            lost += usize::from(answer.is_err());
        }
    }
    // A partition: from one request on, every request fails the same way, so the renewals
    // fail until `hold` gives up. Only the margin then keeps the job inside its lease.
    for index in 0..requests {
        for fault in FAULTS {
            cases += 1;
            let cut: Vec<(usize, Fault)> = (index..index + 100).map(|i| (i, fault)).collect();
            let (violations, _, answer) = case(&cut);
            wrong.extend(violations);
            lost += usize::from(answer.is_err());
        }
    }
    let mut seed: u64 = 0x5EED_2026;
    let mut next = move |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % below as u64) as usize
    };
    for _ in 0..200 {
        let first = (next(requests), FAULTS[next(FAULTS.len())]);
        let second = (first.0 + 1 + next(4), FAULTS[next(FAULTS.len())]);
        cases += 1;
        let (violations, _, answer) = case(&[first, second]);
        wrong.extend(violations);
        lost += usize::from(answer.is_err());
    }
    eprintln!("fault sweep, hold: {cases} cases, {lost} ended lost, {} violations", wrong.len());
    assert!(wrong.is_empty(), "{} cases broke the guarantee:\n{}", wrong.len(), wrong.join("\n"));
}

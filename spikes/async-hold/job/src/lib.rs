//! The job: on each cron event it takes a ticket from the keeper (another component, composed
//! by Spin as a dependency), awaits `hold` beside its own work (a 5 s WASI 0.3 timer), drops
//! `hold` when the work is done, and says how many renewals happened during and after.

wit_bindgen::generate!({ world: "job", path: "wit", generate_all });

use spike::keeper::keeper::Ticket;
use std::future::Future;
use std::pin::pin;
use std::task::Poll;

struct Job;

export!(Job);

enum First<A, B> {
    Hold(A),
    Work(B),
}

/// Whichever finishes first; the other future is dropped.
async fn first<A: Future, B: Future>(a: A, b: B) -> First<A::Output, B::Output> {
    let (mut a, mut b) = (pin!(a), pin!(b));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(First::Hold(x));
        }
        if let Poll::Ready(y) = b.as_mut().poll(cx) {
            return Poll::Ready(First::Work(y));
        }
        Poll::Pending
    })
    .await
}

fn ms(since: u64) -> u64 {
    (wasip3::clocks::monotonic_clock::now() - since) / 1_000_000
}

impl Guest for Job {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let url = std::env::var("KEEPER_URL").map_err(|_| Error::Other("KEEPER_URL".into()))?;
        let start = wasip3::clocks::monotonic_clock::now();
        let ticket = Ticket::new(&url, 1000);
        println!("event {}: ticket taken, hold and 5 s of work start", metadata.timestamp);
        let work = wasip3::clocks::monotonic_clock::wait_for(5_000_000_000);
        match first(ticket.hold(100), work).await {
            First::Hold(n) => println!("at {} ms: hold returned {n} first", ms(start)),
            First::Work(()) => println!(
                "at {} ms: work done, hold dropped; renewals during the work: {}",
                ms(start),
                ticket.renewals()
            ),
        }
        wasip3::clocks::monotonic_clock::wait_for(3_000_000_000).await;
        println!("at {} ms: 3 s after the drop, renewals: {}", ms(start), ticket.renewals());
        Ok(())
    }
}

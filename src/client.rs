//! [`LeaseClient`]: the one place that sends. It stamps, signs, sends, retries transient
//! failures (re-signing each attempt) and creates the lock on first use. Everything it knows
//! about a verb comes from that verb's [`Op`].

use crate::config::{Credential, Lock};
use crate::error::{Error, LeaseLoss, RanOut, RanOutWhen, ServiceError};
use crate::identity::AccessToken;
use crate::identity::TokenCache;
use crate::ops::{
    prepare, Acquire, Break, BreakPeriod, Change, CreateBlob, CreateContainer, Inspect,
    LeaseDuration, LeaseGrant, LeaseId, LockStatus, Op, Release, Renew,
};
use crate::retry::{retry_after, should_retry, was_ambiguous, RetryPolicy};
use crate::transport::{
    run_blocking, AsyncTransport, Blocking, Deadline, Request, Response, Runtime, Timeouts,
    Transport, TransportError,
};
use std::time::{Duration, SystemTime};

mod bearer;
mod redact;
use bearer::bearer_header;
use redact::redact;
pub use redact::scrub_text;

pub struct LeaseClient<T, R> {
    transport: T,
    runtime: R,
    retry: RetryPolicy,
    timeouts: Timeouts,
    round_trips: u64,
    /// Bearer tokens fetched, by source (see [`LeaseClient::with_token_cache`]).
    tokens: TokenCache,
}

impl<T: Transport, R: Runtime> LeaseClient<T, R> {
    pub fn new(transport: T, runtime: R) -> LeaseClient<T, R> {
        LeaseClient {
            transport,
            runtime,
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
            round_trips: 0,
            tokens: TokenCache::default(),
        }
    }

    pub fn with_retry(self, retry: RetryPolicy) -> LeaseClient<T, R> {
        LeaseClient {
            retry: RetryPolicy { max_attempts: retry.max_attempts.max(1), ..retry },
            ..self
        }
    }

    pub fn with_timeouts(self, timeouts: Timeouts) -> LeaseClient<T, R> {
        LeaseClient { timeouts, ..self }
    }

    /// Shares fetched bearer tokens with every client given a clone of `tokens`.
    pub fn with_token_cache(self, tokens: TokenCache) -> LeaseClient<T, R> {
        LeaseClient { tokens, ..self }
    }

    /// HTTP exchanges attempted so far, retries included.
    pub fn round_trips(&self) -> u64 {
        self.round_trips
    }

    pub fn runtime(&self) -> &R {
        &self.runtime
    }

    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Takes the lease. `proposed_id` defaults to a fresh random GUID; either way it is sent,
    /// so a retry whose first attempt succeeded unheard re-acquires instead of failing. A
    /// missing container or lock blob is created and the acquire sent once more; in steady
    /// state this is one round trip.
    pub fn acquire(
        &mut self,
        lock: &Lock,
        duration: LeaseDuration,
        proposed_id: Option<LeaseId>,
    ) -> Result<LeaseGrant, Error> {
        let proposed_id = proposed_id.unwrap_or_else(|| LeaseId::random(&self.runtime));
        let op = Acquire::new(duration, proposed_id.clone())?;
        let outcome = match self.execute(lock, &op) {
            Err(Error::NotFound(missing)) => {
                self.create_lock(lock, &missing)?;
                self.execute(lock, &op)
            }
            outcome => outcome,
        };
        match outcome {
            Err(error) if outcome_unknown(&error) => {
                if self.release_unheard(lock, &proposed_id, None) {
                    Err(error)
                } else {
                    Err(error.context(&format!(
                        "the lease may have been granted (id {proposed_id}) and its release was \
                         not heard either: it may still hold the lock until it expires ({})",
                        duration.describe()
                    )))
                }
            }
            outcome => outcome,
        }
    }

    /// Releases a lease that may have been granted without our hearing of it (an acquire whose
    /// answer never came), so it does not block everyone for a lease period. Best effort: one
    /// attempt; a refusal only means it was never granted. Whether an answer said the lease is
    /// not (or no longer) held.
    pub(crate) fn release_unheard(
        &mut self,
        lock: &Lock,
        lease_id: &LeaseId,
        by: Option<Deadline>,
    ) -> bool {
        let retry = std::mem::replace(&mut self.retry, RetryPolicy::none());
        let answer = self.execute_by(lock, &Release { lease_id: lease_id.clone() }, by);
        self.retry = retry;
        match answer {
            Ok(()) => true,
            // Only the service's word counts: a refusal decided here sent nothing.
            Err(error) => error.service_error().is_some() && !outcome_unknown(&error),
        }
    }

    pub fn renew(&mut self, lock: &Lock, lease_id: &LeaseId) -> Result<LeaseGrant, Error> {
        self.execute(lock, &Renew { lease_id: lease_id.clone() })
    }

    pub fn change(
        &mut self,
        lock: &Lock,
        lease_id: &LeaseId,
        proposed_id: &LeaseId,
    ) -> Result<LeaseGrant, Error> {
        self.execute(lock, &Change { lease_id: lease_id.clone(), proposed_id: proposed_id.clone() })
    }

    pub fn release(&mut self, lock: &Lock, lease_id: &LeaseId) -> Result<(), Error> {
        self.execute(lock, &Release { lease_id: lease_id.clone() })
    }

    /// Returns the seconds until the lease is broken (0: broken now).
    pub fn break_lease(&mut self, lock: &Lock, period: BreakPeriod) -> Result<u32, Error> {
        self.execute(lock, &Break::new(period)?)
    }

    pub fn inspect(&mut self, lock: &Lock) -> Result<LockStatus, Error> {
        self.execute(lock, &Inspect)
    }

    /// Creates the container (unless only the blob is missing) and the lock blob.
    pub(crate) fn create_lock(&mut self, lock: &Lock, missing: &ServiceError) -> Result<(), Error> {
        if missing.code.as_deref() != Some("BlobNotFound") {
            self.execute(lock, &CreateContainer)?;
        }
        self.execute(lock, &CreateBlob)
    }

    /// Sends `op` with retries. Each attempt is dated and signed afresh, so a retry never
    /// carries a stale `x-ms-date`.
    pub fn execute<O: Op>(&mut self, lock: &Lock, op: &O) -> Result<O::Output, Error> {
        self.execute_by(lock, op, None)
    }

    /// [`execute`](Self::execute) that gives up at `by` (on the monotonic clock): a call that
    /// serves a lease must not outlive it. Each attempt's time limits shrink to the time left, no retry
    /// starts whose wait would pass `by`, and if `by` has passed nothing is sent and the
    /// answer is `LeaseLost` (the work must stop either way).
    pub fn execute_by<O: Op>(
        &mut self,
        lock: &Lock,
        op: &O,
        by: Option<Deadline>,
    ) -> Result<O::Output, Error> {
        run_blocking(self.call(None::<&mut Unsent>, lock, op, by))
    }

    /// [`execute_by`](Self::execute_by) whose sends and waits are `link`'s futures, so the
    /// instance's other tasks (the job's own work) go on while it waits. A bearer token is
    /// still fetched (rarely: it is cached) through the blocking transport.
    pub async fn execute_by_async<O: Op, A: AsyncTransport>(
        &mut self,
        link: &mut A,
        lock: &Lock,
        op: &O,
        by: Option<Deadline>,
    ) -> Result<O::Output, Error> {
        self.call(Some(link), lock, op, by).await
    }

    /// One call, through `link`, or without one through the client's own transport (whose
    /// futures are ready at once).
    async fn call<O: Op, A: AsyncTransport>(
        &mut self,
        link: Option<&mut A>,
        lock: &Lock,
        op: &O,
        by: Option<Deadline>,
    ) -> Result<O::Output, Error> {
        let mut signatures = Vec::new();
        let answer = match self.access_token_by(&lock.account, by) {
            Ok(bearer) => {
                let attempts = Attempts {
                    runtime: &self.runtime,
                    retry: self.retry,
                    timeouts: self.timeouts,
                    round_trips: &mut self.round_trips,
                    bearer: bearer.as_ref(),
                    signatures: &mut signatures,
                };
                let request = |lock: &Lock| op.request(lock);
                match link {
                    Some(link) => attempts.run(link, lock, &request, by).await,
                    None => {
                        let runtime = &self.runtime;
                        let mut blocking = Blocking { transport: &mut self.transport, runtime };
                        attempts.run(&mut blocking, lock, &request, by).await
                    }
                }
            }
            Err(error) => Err(error),
        };
        interpret(op, lock, answer, &signatures)
    }
}

/// The link of a call that has none: it sends through the client's own transport.
enum Unsent {}

impl AsyncTransport for Unsent {
    async fn send(&mut self, _: Request, _: Timeouts) -> Result<Response, TransportError> {
        match *self {}
    }

    async fn sleep(&mut self, _: Duration) {
        match *self {}
    }
}

/// The verb's reading of a call's answer, and every error told for its endpoint and scrubbed of
/// what was sent to authorize it.
fn interpret<O: Op>(
    op: &O,
    lock: &Lock,
    answer: Result<(Response, bool, SystemTime), Error>,
    signatures: &[String],
) -> Result<O::Output, Error> {
    let result = answer.and_then(|(response, ambiguous, sent_at)| {
        let result = if ambiguous {
            op.interpret_after_ambiguous(&response)
        } else {
            op.interpret(&response)
        };
        result.map_err(|e| e.with_clock_skew(sent_at, crate::ops::server_time(&response)))
    });
    let bearer = matches!(lock.account.credential, Credential::Bearer(_));
    result.map_err(|error| {
        let error = if bearer { error.for_bearer() } else { error };
        let error = error.for_endpoint(&lock.account.scheme, &lock.account.authority);
        redact(error, lock, signatures)
    })
}

/// What the attempts of one call share, lent by the client.
struct Attempts<'a, R> {
    runtime: &'a R,
    retry: RetryPolicy,
    timeouts: Timeouts,
    round_trips: &'a mut u64,
    bearer: Option<&'a AccessToken>,
    /// Every signature sent, to scrub from errors.
    signatures: &'a mut Vec<String>,
}

impl<R: Runtime> Attempts<'_, R> {
    /// The attempts of one call: the answer, whether an earlier attempt's outcome was unknown,
    /// and when the answered attempt was sent. Written once, async: the blocking calls run it
    /// over [`Blocking`], whose futures are ready at once. Not generic over the verb, so the
    /// component carries one copy of this loop per transport instead of one per verb.
    async fn run<A: AsyncTransport>(
        self,
        link: &mut A,
        lock: &Lock,
        request: &dyn Fn(&Lock) -> Request,
        by: Option<Deadline>,
    ) -> Result<(Response, bool, SystemTime), Error> {
        let runtime = self.runtime;
        self.signatures.extend(self.bearer.iter().map(|t| t.token.clone()));
        // One id for every attempt of this call, so the service's logs tie retries together.
        let client_request_id = LeaseId::random(runtime);
        let mut ambiguous = false;
        let mut attempt = 1;
        let (outcome, sent_at) = loop {
            let sent_at = runtime.now();
            let timeouts = match by.map(|by| by.left(runtime)) {
                None => self.timeouts,
                Some(Some(left)) => self.timeouts.within(left),
                Some(None) => return Err(lease_time_ran_out(attempt > 1)),
            };
            let mut request = request(lock);
            request
                .headers_mut()
                .insert("x-ms-client-request-id", crate::ops::header(client_request_id.as_str()));
            let (mut request, signature) = prepare(request, lock, sent_at);
            self.signatures.extend(signature);
            if let Some(token) = self.bearer {
                request.headers_mut().insert(http::header::AUTHORIZATION, bearer_header(token));
            }
            let outcome = link.send(request, timeouts).await;
            *self.round_trips += 1;
            if attempt >= self.retry.max_attempts || !should_retry(&outcome) {
                break (outcome, sent_at);
            }
            let wait = self.retry.delay(attempt, runtime);
            let wait = match retry_after(&outcome, runtime.now()) {
                // The service named its own wait; one longer than we would ever wait ends the
                // call with its answer rather than holding a timer tick hostage.
                Some(asked) if asked > MAX_RETRY_AFTER => break (outcome, sent_at),
                Some(asked) => wait.max(asked),
                None => wait,
            };
            if by.is_some_and(|by| by.left(runtime).is_none_or(|left| wait >= left)) {
                break (outcome, sent_at);
            }
            ambiguous |= was_ambiguous(&outcome);
            link.sleep(wait).await;
            attempt += 1;
        };
        match outcome {
            Ok(response) => Ok((response, ambiguous, sent_at)),
            Err(error) => Err(Error::Transport(error)),
        }
    }
}

/// The longest `Retry-After` the client waits out within one call.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// The local `LeaseLost` of a call that ran out of lease time: no service answer.
fn lease_time_ran_out(after_attempts: bool) -> Error {
    let (when, what) = if after_attempts {
        (RanOutWhen::BetweenAttempts, "the time left on the lease ran out between attempts")
    } else {
        (
            RanOutWhen::BeforeSending,
            "the time left on the lease ran out before the call; nothing was sent",
        )
    };
    let message = format!("{what}: treat the lease as lost and stop the work");
    Error::LeaseLost(LeaseLoss::RanOut(RanOut { when, message }))
}

/// Whether a failed call may have been carried out after all: no answer, or a server-side
/// failure. A 4xx refusal (other than 408) says it was not.
pub(crate) fn outcome_unknown(error: &Error) -> bool {
    match error {
        Error::Transport(_) => true,
        other => other.service_error().is_some_and(|e| e.status >= 500 || e.status == 408),
    }
}

//! On each cron event: `guarded-invoke` (traffic-cop:lease@1.0.0) with a 15 s lease and no schedule (any tick runs once
//! the lease is free); a granted run awaits `hold` beside one slow GET of `SLOW_URL`, whichever
//! ends first, then writes a fenced blob and completes. Every step is one stdout line the test reads.

wit_bindgen::generate!({ world: "hold-job", path: "wit", generate_all });

use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use traffic_cop::lease0_5_0::hold::hold;
use traffic_cop::lease1_0_0::guard::{self, Decision, Outcome, Settings};
use wasip3::http::types::{Fields, Method, Request, Scheme};

struct Job;

export!(Job);

fn env(name: &str) -> Result<String, Error> {
    std::env::var(name).map_err(|_| Error::Other(format!("{name} is not set")))
}

impl Guest for Job {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        let tick = metadata.timestamp;
        let holder = format!("job-{:04x}", wasip3::random::random::get_random_u64() & 0xffff);
        let settings = Settings {
            connection_string: Some(env("CONNECTION_STRING")?),
            container: Some(env("CONTAINER")?),
            lock: Some("hold-job".into()),
            holder: Some(holder.clone()),
            lease_seconds: Some("15".into()),
            keep_alive_seconds: None,
            schedule: None,
            time_zone: None,
            cron_dialect: None,
            early_tolerance_ms: None,
            starting_deadline_seconds: None,
            replace_after_seconds: None,
            wait_ms: None,
            max_job_seconds: None,
            refresh_seconds: None,
        };
        let run = match guard::guarded_invoke(&settings) {
            Decision::Run(run) => run,
            Decision::Skip(skipped) => {
                println!("[{holder}] tick {tick}: skipped: {}", skipped.text);
                return Ok(());
            }
        };
        println!("[{holder}] tick {tick}: run: {}", run.text());
        let slow = env("SLOW_URL")?;
        let outcome = match first(hold(&run), get(&slow)).await {
            First::Hold(said) => {
                println!("[{holder}] tick {tick}: hold ended first, the work stopped: {said:?}");
                Outcome::Failure(format!("stopped: {said:?}"))
            }
            First::Work(answer) => {
                println!("[{holder}] tick {tick}: work done: {answer:?}");
                Outcome::Success(format!("the slow request answered {answer:?}"))
            }
        };
        // After a lost lease this must be refused: a newer run was granted.
        let fenced = run.write_fenced("hold-job-result", format!("tick {tick}").as_bytes());
        println!("[{holder}] tick {tick}: fenced write: {fenced:?}");
        let finished = run.complete(&outcome);
        let completed = finished.error.map_or(Ok(()), Err);
        println!("[{holder}] tick {tick}: completed: {completed:?}: {}", finished.text);
        Ok(())
    }
}

enum First<A, B> {
    Hold(A),
    Work(B),
}

/// Whichever ends first; the other is dropped (for `hold`: its renewals stop).
async fn first<A: Future, B: Future>(a: A, b: B) -> First<A::Output, B::Output> {
    let (mut a, mut b) = (pin!(a), pin!(b));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(x) = a.as_mut().poll(cx) {
            return Poll::Ready(First::Hold(x));
        }
        b.as_mut().poll(cx).map(First::Work)
    })
    .await
}

/// GET `http://host:port/path`: its status.
async fn get(url: &str) -> Result<u16, String> {
    let rest = url.strip_prefix("http://").ok_or("http:// only")?;
    let (authority, path) =
        rest.split_once('/').map_or((rest, "/".to_string()), |(a, p)| (a, format!("/{p}")));
    let (trailers_tx, trailers) = wasip3::wit_future::new(|| Ok(None));
    drop(trailers_tx);
    let (request, _sent) = Request::new(Fields::new(), None, trailers, None);
    request.set_method(&Method::Get).map_err(|_| "method")?;
    request.set_scheme(Some(&Scheme::Http)).map_err(|_| "scheme")?;
    request.set_authority(Some(authority)).map_err(|_| "authority")?;
    request.set_path_with_query(Some(&path)).map_err(|_| "path")?;
    let response = wasip3::http::client::send(request).await.map_err(|e| format!("{e:?}"))?;
    Ok(response.get_status_code())
}

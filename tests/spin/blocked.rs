//! Behind the async cron wrapper on real Spin 4.0.2 with trigger-cron 0.5.0, a run whose
//! instance cannot renew its lease when due: a job that blocks (a 20 s `std::thread::sleep`, a
//! WASI 0.2 pollable's `block()`) under a 15 s lease, and a holder frozen by SIGSTOP past its
//! lease. The blocked run ends as a failure that says from when to when the instance did not
//! run, the trigger is told (the event fails), and `/metrics` counts it; the frozen holder's
//! stop says the lease's real timeline, which the counting proxy's record confirms.

use super::wrapped_app::{Wrapping, LEASE_SECONDS};
use super::wrapped_fleet::Fleet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::runner::Test;

fn a_job_that_blocks_its_instance(how: &str) {
    let handler = format!(r#"HANDLER_MODE = "ok", HANDLER_MS = "20000", HANDLER_BLOCK = "{how}""#);
    let name = format!("wrapper-blocked-{how}");
    let fleet = Fleet::start(&name, Wrapping::async_on_spin_4(), 1, &handler, &[]);
    let done = fleet.wait(Duration::from_secs(80), |f| f.decisions().iter().any(|d| d.blocked));
    // Read at once: a next blocked run takes another 20 s.
    let metrics = fleet.port(0).map(metrics);
    let said = fleet.said();
    let (decisions, spin_out, stderr) = (fleet.decisions(), fleet.spin_out(0), fleet.stderr(0));
    fleet.stop();
    assert!(done, "no run said it was blocked: {said}");
    let blocked: Vec<_> = decisions.iter().filter(|d| d.blocked).collect();
    let run = blocked[0];
    assert!(run.run, "{run:?}");
    assert!(
        run.detail.contains("renewals blocked: this instance did not run from 20")
            && run.detail.contains("(a renewal was due) to 20"),
        "the failure says from when to when: {run:?}"
    );
    // The event failed, so the trigger logged it.
    let logged = format!("{spin_out}{stderr}");
    assert!(
        logged.lines().any(|l| l.contains("ERROR trigger_cron: Component")
            && l.contains("failed")
            && l.contains("renewals blocked")),
        "the trigger did not log the failed event: {said}"
    );
    let metrics = metrics.expect("the replica serves /metrics");
    let line = metrics
        .lines()
        .find(|l| l.starts_with("traffic_cop_blocked_runs_total{"))
        .unwrap_or_else(|| panic!("no traffic_cop_blocked_runs_total: {metrics}"));
    assert!(
        line.ends_with(&format!(" {}", blocked.len())),
        "{line} after {} blocked",
        blocked.len()
    );
    eprintln!("measured ({how}): {}\n  /metrics: {line}", run.detail);
}

fn a_wrapped_job_that_sleeps_fails_as_blocked_and_is_counted() {
    a_job_that_blocks_its_instance("sleep");
}

fn a_wrapped_job_that_blocks_on_a_pollable_fails_as_blocked_and_is_counted() {
    a_job_that_blocks_its_instance("pollable");
}

/// `/metrics` of the app's board beside the wrapper.
fn metrics(port: u16) -> String {
    let (status, body) =
        traffic_cop_testbed::spin::http(port, "GET", "/metrics", Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("GET /metrics: {e}"));
    assert_eq!(status, 200, "{body}");
    body
}

/// A holder SIGSTOPped 10 s into a 40 s job for 40 s: another replica takes over after the
/// lease; on SIGCONT the holder's `hold` stops the job at once and says when the lease was
/// last renewed, when it could expire and when it stopped, which the proxy's record confirms.
fn a_frozen_holder_reports_the_leases_real_timeline() {
    let handler = r#"HANDLER_MODE = "ok", HANDLER_MS = "40000""#;
    let mut fleet = Fleet::start("wrapper-frozen", Wrapping::async_on_spin_4(), 2, handler, &[]);
    let running = fleet.wait(Duration::from_secs(40), |f| f.called().iter().any(|c| !c.is_empty()));
    assert!(running, "no run began: {}", fleet.said());
    let holder = (0..2).find(|&i| !fleet.called()[i].is_empty()).unwrap();
    std::thread::sleep(Duration::from_secs(10));
    fleet.pause(holder);
    std::thread::sleep(Duration::from_secs(40));
    fleet.resume(holder);
    let resumed_at = wall_now();
    let stopped = fleet.wait(fleet.started.elapsed() + Duration::from_secs(20), |f| {
        f.decisions().iter().any(|d| d.replica == holder && d.blocked)
    });
    let said = fleet.said();
    let (decisions, heads, proxy_start) =
        (fleet.decisions(), fleet.proxy.heads(), wall_now() - ms(fleet.proxy.started.elapsed()));
    fleet.stop();
    assert!(stopped, "the frozen holder did not report its stop: {said}");
    let stop = decisions.iter().find(|d| d.replica == holder && d.blocked).unwrap();
    let text = &stop.detail;
    let time = |after: &str| -> u64 {
        let at = text.split(after).nth(1).unwrap_or_else(|| panic!("no `{after}` in {text}"));
        let iso = at.split([',', ' ', ';', ')']).next().unwrap();
        traffic_cop_testbed::unix_ms_of_iso(iso).unwrap_or_else(|| panic!("{iso} in {text}"))
    };
    let (renewed, expires, told) =
        (time("by a request sent at "), time("so it could expire at "), time("told to stop at "));
    // What storage saw: the holder's last renewal, and the other replica's acquire.
    // (when, action, the lease id it names: the proposed one for an acquire)
    let lease_calls: Vec<(u64, String, String)> = heads
        .iter()
        .filter_map(|(at, head)| {
            let header = |name: &str| {
                head.lines().find_map(|l| {
                    let (key, value) = l.split_once(':')?;
                    key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_string())
                })
            };
            let action = header("x-ms-lease-action")?;
            let id = header("x-ms-proposed-lease-id").or_else(|| header("x-ms-lease-id"))?;
            Some((proxy_start + ms(*at), action, id))
        })
        .collect();
    let holders_lease = &lease_calls.first().expect("the holder's acquire").2;
    let last_renewal = lease_calls
        .iter()
        .filter(|(_, action, id)| action == "renew" && id == holders_lease)
        .map(|(at, _, _)| *at)
        .max()
        .unwrap_or_else(|| panic!("no renewal seen: {lease_calls:?}\n{said}"));
    let takeover = lease_calls
        .iter()
        .find(|(at, action, _)| action == "acquire" && *at > last_renewal)
        .map(|(at, _, _)| *at)
        .unwrap_or_else(|| panic!("no takeover seen: {lease_calls:?}\n{said}"));
    let within = |a: u64, b: u64, what: &str| {
        assert!(a.abs_diff(b) <= 1_000, "{what}: {a} vs {b} ms\n{text}\n{lease_calls:?}");
    };
    within(renewed, last_renewal, "the last renewal");
    within(expires, renewed + LEASE_SECONDS * 1000, "the expiry");
    within(told, resumed_at, "the stop");
    assert!(takeover + 1_000 >= expires, "taken over before the lease could expire: {text}");
    assert!(text.contains(" after it could expire"), "{text}");
    eprintln!(
        "measured: frozen holder, last renewal {} ms, takeover {} ms after that, told to stop \
         {} ms after resuming: {text}",
        renewed.abs_diff(last_renewal),
        takeover.saturating_sub(last_renewal),
        told.abs_diff(resumed_at)
    );
}

fn wall_now() -> u64 {
    ms(SystemTime::now().duration_since(UNIX_EPOCH).unwrap())
}

fn ms(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_wrapped_job_that_sleeps_fails_as_blocked_and_is_counted,
        a_wrapped_job_that_blocks_on_a_pollable_fails_as_blocked_and_is_counted,
        a_frozen_holder_reports_the_leases_real_timeline
    ]
}

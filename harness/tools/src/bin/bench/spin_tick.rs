//! Per-tick cost under the real Spin: one `spin up` of the app's `http-job` (the lease component
//! as its component dependency, as spin.toml declares it) against the bench's Azurite, through
//! a counting proxy. Each new 2 s due time gets two `POST /run`: the first is the leader's tick
//! (decide, the job's board report and fenced result, complete), the second a follower's
//! (decide: already ran). Time is from sending the trigger to the answer.

use super::{ms, percentile};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::azurite::connection_string_for_port;
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::spin::{find_spin, http, Launch};
use traffic_cop_testbed::{repo_root, EMULATOR_KEY_B64};

const TICKS: usize = 15;
const INTERVAL_MS: u64 = 2_000;

pub fn per_tick(azurite_port: u16) {
    let spin = match find_spin() {
        Ok(spin) => spin,
        Err(why) => return println!("\nper tick under real Spin: not run: {why}"),
    };
    let proxy = CountingProxy::start(azurite_port);
    let dir = repo_root().join("target/bench-spin");
    let _ = std::fs::remove_dir_all(&dir);
    let launch = Launch {
        spin,
        data_dir: Some(dir.join("data")),
        manifest: repo_root().join("spin.toml"),
        component: Some("http-job".into()),
        lifetime: Duration::from_secs(180),
        env: Vec::new(),
    };
    let variables = [
        ("connection_string", connection_string_for_port(proxy.port, EMULATOR_KEY_B64)),
        ("storage_endpoint", format!("http://127.0.0.1:{}", proxy.port)),
        ("container", "benchspin".to_string()),
        ("holder", "bench-replica".to_string()),
        ("lease_seconds", "15".to_string()),
        ("schedule", traffic_cop_testbed::spin::every(INTERVAL_MS / 1000)),
        ("work_ms", "0".to_string()),
    ];
    let mut replica = launch.start("bench-replica", &dir.join("replica"), &variables);
    if let Err(why) = replica.wait_ready(Duration::from_secs(90)) {
        replica.kill();
        return println!("\nper tick under real Spin: not run: spin up did not start: {why}");
    }
    let tick = |want: &str| {
        let (before, started) = (proxy.requests(), Instant::now());
        let (status, body) =
            http(replica.port, "POST", "/run", Duration::from_secs(30)).expect("POST /run");
        let elapsed = ms(started.elapsed());
        let decided = body.contains(&format!("\"decision\":\"{want}\""));
        (status == 200 && decided).then_some((elapsed, proxy.requests() - before))
    };
    let (mut leader, mut follower, mut odd) = (Vec::new(), Vec::new(), 0);
    for _ in 0..=TICKS {
        // Just into the next due time (the storage clock is this machine's).
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        std::thread::sleep(Duration::from_millis(INTERVAL_MS - now % INTERVAL_MS + 150));
        match (tick("run"), tick("skip")) {
            (Some(run), Some(skip)) => {
                leader.push(run);
                follower.push(skip);
            }
            _ => odd += 1,
        }
    }
    replica.kill();
    // The first tick creates the container and the lock: not a steady tick.
    let (leader, follower) = (&leader[1.min(leader.len())..], &follower[1.min(follower.len())..]);
    println!("\nper tick under real Spin ({}), trigger to answer:", launch.spin.display());
    println!(
        "  {:<28} {:>6} {:>11} {:>10} {:>12}",
        "", "ticks", "median ms", "p99 ms", "round trips"
    );
    for (name, samples) in [("leader (run, job, complete)", leader), ("follower (skip)", follower)]
    {
        let times: Vec<f64> = samples.iter().map(|s| s.0).collect();
        let trips = samples.iter().map(|s| s.1).sum::<u64>() as f64 / samples.len().max(1) as f64;
        println!(
            "  {name:<28} {:>6} {:>11.2} {:>10.2} {trips:>12.1}",
            samples.len(),
            percentile(&times, 50.0),
            percentile(&times, 99.0)
        );
    }
    if odd > 0 {
        println!("  ({odd} due times left out: a tick did not decide as expected)");
    }
}

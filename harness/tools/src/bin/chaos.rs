//! The long chaos run on real processes: `scripts/chaos [ticks=1000] [seed=1] [replicas=5]`.
//! N `spin up` cron replicas (every 2 s, alternating trigger-cron 0.3.0 and 0.5.0), each
//! behind its own seeded fault proxy, under a seeded schedule of SIGKILL, SIGTERM, restarts,
//! SIGSTOP/SIGCONT and partitions, until the replicas have logged `ticks` ticks in all.
//! Prints the counts and every violation; exits non-zero on any. Bounded in time.

use std::time::Duration;
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::spin::{assert_built, cron_line, find_spin, CRON_LINES};
use traffic_cop_wasm_host::chaos::{self, plan, ChaosConfig};

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).map(|a| a.parse().expect("numbers")).collect();
    let ticks = args.first().copied().unwrap_or(1000) as usize;
    let seed = args.get(1).copied().unwrap_or(1);
    let replicas = args.get(2).copied().unwrap_or(5) as usize;
    let spin = find_spin().unwrap_or_else(|why| panic!("{why}"));
    let lines: Vec<(String, _)> = CRON_LINES
        .iter()
        .filter_map(|line| Some((line.to_string(), cron_line(line).ok()?)))
        .collect();
    assert!(!lines.is_empty(), "no trigger-cron line installed (scripts/test installs them)");
    assert_built();
    let interval = 2;
    // Ticks come at replicas / interval per second; downtime and pauses cost some of them.
    let expected = Duration::from_secs(ticks as u64 * interval / replicas.max(1) as u64);
    let max_length = expected * 2 + Duration::from_secs(120);
    let dir = traffic_cop_testbed::repo_root().join(format!("target/chaos/seed-{seed}"));
    let _ = std::fs::remove_dir_all(&dir);
    let config = ChaosConfig {
        spin,
        lines,
        replicas,
        seed,
        interval,
        lease_seconds: 15,
        work_ms: 1000,
        fault_per_mille: 100,
        stalls: true,
        events: plan::seeded(seed, replicas, expected),
        ticks,
        min_length: Duration::ZERO,
        max_length,
        dir: dir.clone(),
        container: format!("chaos{seed}x{}", std::process::id()),
        azurite_port: Azurite::shared().port,
    };
    let versions: Vec<&str> = config.lines.iter().map(|(v, _)| v.as_str()).collect();
    println!(
        "chaos: seed {seed}, {replicas} replicas (trigger-cron {}), every {interval} s, lease {} s, work {} ms, {}% faults with stalls, {} events planned, until {ticks} ticks (at most {:?}); logs in {}",
        versions.join(" and "),
        config.lease_seconds,
        config.work_ms,
        config.fault_per_mille / 10,
        config.events.len(),
        max_length,
        dir.display()
    );
    let run = chaos::run(&config);
    for line in &run.timeline {
        println!("{line}");
    }
    if let Some(store) = &run.store {
        println!(
            "store                 token {}, {} writes in its history",
            store.fencing_token,
            store.history.len()
        );
    }
    for line in run.summary.lines(&run.violations) {
        println!("{line}");
    }
    if !run.violations.is_empty() {
        std::process::exit(1);
    }
}

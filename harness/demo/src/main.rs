//! The README's main command on real Spin: Azurite in memory on loopback, three `spin up`
//! replicas of the app (a copy of spin.toml whose cron schedule fires every two seconds), the
//! holder's whole process group SIGKILLed in the middle of its run, the others skipping until
//! its lease runs out, the takeover, and a short table of the board as the app serves it.
//!
//! It links no wasmtime: everything it learns it asks the replicas (their logs and `GET
//! /status`). Without a Spin CLI and the trigger-cron plugin it says why and exits with
//! [`NO_SPIN`]; `scripts/demo` then offers the wasmtime host (`traffic-cop-tools`' demo).

use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::spin::{self, Launch, SpinReplica};

/// The exit status that tells `scripts/demo` no Spin was found (nothing was started).
const NO_SPIN: i32 = 3;
const TICK_SECONDS: u64 = 2;
const SCHEDULE: &str = "*/2 * * * * *";
/// The trigger-cron line the README's quick start installs; it runs the app's cron component
/// as 0.3.x does.
const LINE: &str = "0.5.0";
const CONTAINER: &str = "demo";
const LOCK: &str = "nightly-cleanup";

struct Found {
    spin: PathBuf,
    /// `SPIN_DATA_DIR` for the plugin line `scripts/demo` installed; `None`: the user's own.
    data: Option<PathBuf>,
}

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    if !matches!(arg.as_str(), "" | "--spin") {
        eprintln!("usage: demo [--spin]");
        std::process::exit(2);
    }
    match available() {
        Ok(found) => run(found),
        Err(why) => {
            eprintln!("No Spin to run the replicas: {why}.");
            std::process::exit(if arg == "--spin" { 1 } else { NO_SPIN });
        }
    }
}

/// A Spin CLI and a trigger-cron plugin: the line `scripts/demo` installs from
/// `../shared/tools/spin`, else the plugin in the user's own Spin data.
fn available() -> Result<Found, String> {
    let spin = spin::find_spin()?;
    if let Ok(data) = spin::cron_line(LINE) {
        return Ok(Found { spin, data: Some(data) });
    }
    let listed = std::process::Command::new(&spin)
        .args(["plugins", "list", "--installed"])
        .output()
        .map_err(|e| format!("{} did not run: {e}", spin.display()))?;
    if String::from_utf8_lossy(&listed.stdout).contains("trigger-cron") {
        Ok(Found { spin, data: None })
    } else {
        Err(format!(
            "{} has no trigger-cron plugin (spin plugins install trigger-cron)",
            spin.display()
        ))
    }
}

fn run(found: Found) {
    // What scripts/demo built, and nothing else: the demo's manifest copy loads the lease
    // component, the cron component and the HTTP component.
    spin::assert_manifest_built();
    println!("Starting Azurite (in memory, 127.0.0.1, ephemeral port)...");
    let azurite = Azurite::start();
    let dir = traffic_cop_testbed::repo_root().join("target/spin-demo");
    let _ = std::fs::remove_dir_all(&dir);
    let plugin = match &found.data {
        Some(_) => format!("trigger-cron {LINE}"),
        None => "its trigger-cron".to_string(),
    };
    let launch = Launch {
        spin: found.spin.clone(),
        data_dir: found.data,
        manifest: spin::manifest_copy(&dir.join("app"), SCHEDULE),
        component: None,
        lifetime: Duration::from_secs(180),
        env: Vec::new(),
    };
    println!(
        "Azurite on 127.0.0.1:{}. {} up ({plugin}), 3 replicas, schedule \"{SCHEDULE}\", lease \
         15s, each run works 1.5s.",
        azurite.port,
        found.spin.display()
    );
    let mut replicas: Vec<SpinReplica> = (0..3)
        .map(|i| {
            let holder = format!("replica-{i}");
            let variables = [
                ("connection_string", azurite.connection_string()),
                ("storage_endpoint", format!("http://127.0.0.1:{}", azurite.port)),
                ("container", CONTAINER.to_string()),
                ("holder", holder.clone()),
                ("schedule", spin::every(TICK_SECONDS)),
                ("work_ms", "1500".to_string()),
            ];
            launch.start(&holder, &dir.join(&holder), &variables)
        })
        .collect();
    for replica in &mut replicas {
        replica.wait_ready(Duration::from_secs(90)).unwrap_or_else(|e| panic!("{e}"));
        println!("  {} serving http://127.0.0.1:{} and ticking", replica.name, replica.port);
    }
    println!();

    let started = Instant::now();
    let say = |who: &str, what: &str| {
        println!("[{:>5.1}s] {who:<10} {what}", started.elapsed().as_secs_f64())
    };
    let mut shown = vec![0usize; replicas.len()];
    let (mut killed, mut took_over_at) = (false, None::<Instant>);
    while started.elapsed() < Duration::from_secs(75) {
        for (i, replica) in replicas.iter().enumerate() {
            let log = replica.log("cron-job");
            for line in log.lines().skip(shown[i]) {
                // "woken by the cron tick of <ISO 8601>: <report>", printed when the tick is done;
                // the report names the due time.
                let Some((at, report)) = traffic_cop_testbed::tick_line(line) else {
                    say(&replica.name, line);
                    continue;
                };
                // The replica's column names it: its report's own `[holder] ` goes.
                let body = report.split_once("] ").map_or(report, |(_, body)| body);
                say(&replica.name, &format!("{body} (woken by the cron tick of {})", clock(at)));
                if line.contains("took over an abandoned run") {
                    took_over_at.get_or_insert_with(Instant::now);
                }
            }
            shown[i] = log.lines().count();
        }
        if !killed && started.elapsed() > Duration::from_secs(6) {
            killed = kill_the_holder(&mut replicas, &say);
        }
        if took_over_at.is_some_and(|t| t.elapsed() > Duration::from_secs(2 * TICK_SECONDS + 1)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // Show the board between runs, not in the middle of one.
    let calm = Instant::now() + Duration::from_secs(4);
    while Instant::now() < calm && our_lock(&replicas).is_some_and(|row| row["running"] == true) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let live = replicas.iter().find(|r| !r.is_killed()).expect("a live replica");
    println!("\nThe board, as {} serves it at GET /status:", live.name);
    match status(live) {
        Some(board) => print_board(&board),
        None => println!("  no answer from {}", live.name),
    }
    let logs = dir.display();
    drop(replicas);
    azurite.stop();
    println!(
        "\nEvery spin process group and Azurite stopped.\nMore: each replica's log is in \
         {logs}/replica-*/logs; a running app serves the whole board at /status.html (and JSON at \
         /status, metrics at /metrics); README.md, Quick start, makes an app of your own."
    );
}

/// The app's board (`GET /status`) from a replica still running.
fn status(replica: &SpinReplica) -> Option<Value> {
    let (code, body) = spin::http(replica.port, "GET", "/status", Duration::from_secs(10)).ok()?;
    (code == 200).then(|| serde_json::from_str(&body).ok()).flatten()
}

/// The demo lock's row of the board, asked of the first replica that answers.
fn our_lock(replicas: &[SpinReplica]) -> Option<Value> {
    let board = replicas.iter().filter(|r| !r.is_killed()).find_map(status)?;
    board["locks"].as_array()?.iter().find(|row| row["name"] == LOCK).cloned()
}

/// When the board shows a run in progress, SIGKILLs its replica's whole process group.
fn kill_the_holder(replicas: &mut [SpinReplica], say: &dyn Fn(&str, &str)) -> bool {
    let Some(row) = our_lock(replicas) else { return false };
    if row["state"] != "leased" || row["running"] != true {
        return false;
    }
    let Some(holder) = row["holder"].as_str() else { return false };
    let Some(index) = replicas.iter().position(|r| r.name == holder) else { return false };
    say(
        "host",
        &format!(
            "SIGKILL to {holder}'s spin process group in the middle of its run (fencing token {})",
            row["fencing_token"]
        ),
    );
    replicas[index].kill();
    say(holder, "KILLED: no complete, no release; its lease runs out in at most 15 s");
    true
}

/// One line per lock, and the lock's recent runs as the record keeps them.
fn print_board(board: &Value) {
    println!(
        "  {:<16} {:<9} {:<10} {:>5} {:<9} outcome",
        "lock", "state", "holder", "token", "start"
    );
    let text = |v: &Value| v.as_str().unwrap_or("-").to_string();
    let time = |v: &Value| v.as_u64().map_or("-".to_string(), |ms| clock(ms / 1000));
    for row in board["locks"].as_array().into_iter().flatten() {
        println!(
            "  {:<16} {:<9} {:<10} {:>5} {:<9} {}",
            text(&row["name"]),
            text(&row["state"]),
            text(&row["holder"]),
            row["fencing_token"].as_u64().unwrap_or(0),
            time(&row["last_start_ms"]),
            if row["running"] == true { "running".to_string() } else { text(&row["last_outcome"]) },
        );
        let runs: Vec<String> = row["history"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|run| format!("{} {}", run["fencing_token"], text(&run["outcome"])))
            .collect();
        println!(
            "  {:<16} since created: {} succeeded, {} failed, {} abandoned, {} due times missed",
            "", row["successes"], row["failures"], row["abandoned"], row["missed"]
        );
        if !runs.is_empty() {
            println!("  {:<16} recent runs (token outcome), newest first: {}", "", runs.join(", "));
        }
    }
}

/// `HH:MM:SS` UTC.
fn clock(secs: u64) -> String {
    format!("{:02}:{:02}:{:02}", secs / 3600 % 24, secs / 60 % 60, secs % 60)
}

//! The demo with real Spin: three `spin up` replicas of the app (a copy of spin.toml whose
//! cron schedule fires every two seconds instead of every minute), the holder's whole process
//! group SIGKILLed in the middle of its run, the takeover, and the board as Spin serves it.

use crate::{print_board, CONTAINER, LOCK};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::spin::{self, Launch, SpinReplica};
use traffic_cop_wasm_host::component::{fresh, LeaseState, Location};

const TICK_SECONDS: u64 = 2;
const SCHEDULE: &str = "*/2 * * * * *";
const LINE: &str = "0.3.0";

pub struct Found {
    spin: PathBuf,
    data: PathBuf,
}

/// A spin CLI and the trigger-cron plugin line the demo runs under.
pub fn available() -> Result<Found, String> {
    Ok(Found { spin: spin::find_spin()?, data: spin::cron_line(LINE)? })
}

pub fn run(found: Found) {
    spin::assert_built();
    println!("Starting Azurite (in memory, 127.0.0.1, ephemeral port)...");
    let azurite = Azurite::start();
    let dir = traffic_cop_testbed::repo_root().join("target/spin-demo");
    let _ = std::fs::remove_dir_all(&dir);
    let launch = Launch {
        spin: found.spin.clone(),
        data_dir: Some(found.data),
        manifest: spin::manifest_copy(&dir.join("app"), SCHEDULE),
        component: None,
        lifetime: Duration::from_secs(180),
    };
    println!(
        "Azurite on 127.0.0.1:{}. {} up, 3 replicas (trigger-cron {LINE}), schedule \"{SCHEDULE}\", \
         lease 15s, job interval {TICK_SECONDS}s, each run works 1.5s.",
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
                ("schedule", traffic_cop_testbed::spin::every(TICK_SECONDS)),
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
    let location =
        Location { connection_string: azurite.connection_string(), container: CONTAINER.into() };
    let mut shown = vec![0usize; replicas.len()];
    let (mut killed, mut took_over_at) = (None::<usize>, None::<Instant>);
    while started.elapsed() < Duration::from_secs(75) {
        for (i, replica) in replicas.iter().enumerate() {
            let log = replica.log("cron-job");
            for line in log.lines().skip(shown[i]) {
                // "cron tick <ISO 8601 time>: <report>", printed when the tick is done; the
                // scheduled moment tells which interval it was.
                let (at, report) = traffic_cop_testbed::tick_line(line).unwrap_or((0, line));
                say(&replica.name, &format!("tick {} {report}", crate::clock(at)));
                if line.contains("took over an abandoned run") {
                    took_over_at.get_or_insert_with(Instant::now);
                }
            }
            shown[i] = log.lines().count();
        }
        if killed.is_none() && started.elapsed() > Duration::from_secs(6) {
            killed = kill_the_holder(&mut replicas, &location, &say);
        }
        if took_over_at.is_some_and(|t| t.elapsed() > Duration::from_secs(2 * TICK_SECONDS + 1)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // Show the board between runs, not in the middle of one.
    let calm = Instant::now() + Duration::from_secs(4);
    while Instant::now() < calm
        && fresh().board(&location).is_ok_and(|b| b.iter().any(|e| e.name == LOCK && e.running))
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let live = replicas.iter().find(|r| !r.is_killed()).expect("a live replica");
    println!(
        "\nGET http://127.0.0.1:{}/status ({} answers through Spin's HTTP route):",
        live.port, live.name
    );
    match spin::http(live.port, "GET", "/status", Duration::from_secs(10)) {
        Ok((_, body)) => println!("{body}"),
        Err(e) => println!("  no answer: {e}"),
    }
    println!("\nStatus board ({CONTAINER}, also at /status.html):");
    print_board(&fresh().board(&location).expect("board"));
    drop(replicas);
    azurite.stop();
    println!("\nEvery spin process group and Azurite stopped. Done.");
}

/// When the board shows a run in progress, SIGKILLs its replica's whole process group.
fn kill_the_holder(
    replicas: &mut [SpinReplica],
    location: &Location,
    say: &dyn Fn(&str, &str),
) -> Option<usize> {
    let board = fresh().board(location).ok()?;
    let entry =
        board.into_iter().find(|e| e.name == LOCK && e.state == LeaseState::Leased && e.running)?;
    let holder = entry.holder?;
    let index = replicas.iter().position(|r| r.name == holder)?;
    say(
        "host",
        &format!(
            "SIGKILL to {holder}'s spin process group in the middle of its run (fencing token {})",
            entry.fencing_token
        ),
    );
    replicas[index].kill();
    say(&holder, "KILLED: no complete, no release; its lease runs out in at most 15 s");
    Some(index)
}

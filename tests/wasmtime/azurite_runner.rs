//! tools/azurite/run.js as a user starts it by hand: with stdin closed (`… </dev/null &`) it
//! stops at once and says why and what to type instead; with `--background` it keeps serving
//! until SIGTERM.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use traffic_cop_testbed::runner::Test;

fn run_js() -> Command {
    let dir = traffic_cop_testbed::repo_root().join("tools/azurite");
    assert!(dir.join("node_modules/azurite").is_dir(), "run `npm ci --prefix tools/azurite`");
    let mut command = Command::new("node");
    command.arg(dir.join("run.js")).arg("0");
    command
}

fn with_stdin_closed_it_stops_and_says_how_to_run_it_in_the_background() {
    let out = run_js()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("stdin closed") && said.contains("--background"), "{said}");
}

fn in_the_background_it_serves_without_stdin_until_sigterm() {
    let mut child = run_js()
        .arg("--background")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(port) = line.split("://127.0.0.1:").nth(1) {
                let _ = tx.send(port.trim().parse::<u16>().unwrap());
            }
        }
    });
    let port = rx.recv_timeout(Duration::from_secs(60));
    let stop = || {
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    };
    let Ok(port) = port else {
        stop();
        panic!("no port reported within 60 s");
    };
    // Stdin was closed from the start; it still answers a while later.
    std::thread::sleep(Duration::from_secs(2));
    let answered = TcpStream::connect(("127.0.0.1", port)).is_ok();
    stop();
    let exited = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        matches!(child.try_wait(), Ok(Some(_)))
    });
    if !exited {
        let _ = child.kill();
    }
    let _ = child.wait();
    assert!(answered, "Azurite stopped serving without stdin despite --background");
    assert!(exited, "SIGTERM did not stop it within 5 s");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        with_stdin_closed_it_stops_and_says_how_to_run_it_in_the_background,
        in_the_background_it_serves_without_stdin_until_sigterm,
    ]
}

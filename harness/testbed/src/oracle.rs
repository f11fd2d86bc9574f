//! The oracles' Python (target/oracle-venv, from `scripts/oracle-tools`): croniter and the
//! standard library's zoneinfo over the pinned PyPI tzdata, run as a subprocess that reads a
//! JSON question per line and writes a JSON answer per line.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The venv's interpreter, or why it is missing.
pub fn python() -> Result<PathBuf, String> {
    let python = crate::repo_root().join("target/oracle-venv/bin/python");
    if python.is_file() {
        Ok(python)
    } else {
        Err(format!("{} missing: run scripts/oracle-tools", python.display()))
    }
}

/// Runs `script` (a file under tests/oracles) with `input` on stdin; its stdout, or a panic
/// with its stderr. Zones come from the pinned tzdata package only (`PYTHONTZPATH` empty), the
/// same release the component's table was generated from.
pub fn ask(python: &PathBuf, script: &str, input: &str) -> String {
    let path = crate::repo_root().join("tests/oracles").join(script);
    let mut child = Command::new(python)
        .arg(&path)
        .env("PYTHONTZPATH", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("the oracle ran");
    writer.join().expect("writer").expect("the oracle read its input");
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

//! The oracles' Python (target/oracle-venv, from `scripts/oracle-tools`): croniter and the
//! standard library's zoneinfo over the pinned PyPI tzdata, run as a subprocess that reads a
//! JSON question per line and writes a JSON answer per line.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

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
    let mut child = spawn(python, script);
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("the oracle ran");
    writer.join().expect("writer").expect("the oracle read its input");
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn spawn(python: &PathBuf, script: &str) -> Child {
    let path = crate::repo_root().join("tests/oracles").join(script);
    Command::new(python)
        .arg(&path)
        .env("PYTHONTZPATH", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A script kept running for questions asked one at a time, each answered before the next is
/// asked: the interpreter and its imports are paid once. A check that reads the same thing
/// before and after something else needs the reads close together; a process per question took
/// seconds each on a loaded machine.
pub struct Session {
    script: String,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    pub fn start(python: &PathBuf, script: &str) -> Session {
        let mut child = spawn(python, script);
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Session { script: script.into(), child, stdin, stdout }
    }

    /// One question (a line of JSON), its answer (a line).
    pub fn ask(&mut self, question: &str) -> String {
        let asked = writeln!(self.stdin, "{question}").and_then(|()| self.stdin.flush());
        let mut answer = String::new();
        let read = asked.and_then(|()| self.stdout.read_line(&mut answer));
        if !matches!(read, Ok(n) if n > 0) {
            let _ = self.child.kill();
            let mut stderr = String::new();
            if let Some(mut err) = self.child.stderr.take() {
                let _ = err.read_to_string(&mut stderr);
            }
            panic!("{}: no answer ({read:?}): {stderr}", self.script);
        }
        answer
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

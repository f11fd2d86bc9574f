//! What a tick did: the decision log's JSON line (one per decision, on stdout, documented in
//! docs/operations.md) and the line for people (on stderr). Both are the lease component's own
//! (`report` and `text`); this reads the line back for the fields the apps act on, and writes
//! one of its own only for the apps' own variables, which the component never sees.

use crate::guard::{Finished, Skipped};
use crate::settings::BadVariable;
use crate::Settings;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct TickReport {
    pub lock: String,
    pub holder: Option<String>,
    /// `run`, `skip`, or `error`: the settings cannot be used (the event fails).
    pub decision: String,
    pub reason: Option<String>,
    /// A misconfigured app's variable to fix (`time_zone`).
    pub variable: Option<String>,
    pub fencing_token: Option<u64>,
    pub due_at_ms: Option<u64>,
    pub due_at: Option<String>,
    pub late_by_ms: Option<u64>,
    pub missed: Option<u64>,
    pub manual_by: Option<String>,
    pub previous_abandoned: bool,
    /// The decision or the run in words: the lease component's line, as printed.
    pub detail: String,
    /// The run's instance could not renew its lease when due: the run is a failure, and the
    /// event fails with it.
    pub blocked: bool,
    /// The line as the component wrote it, printed as it is.
    #[serde(skip)]
    line: String,
}

impl TickReport {
    /// The component's line, read back; a line it cannot read still prints as it is.
    fn read(line: String, detail: String) -> Self {
        let report =
            serde_json::from_str(&line).unwrap_or(TickReport { detail, ..Self::default() });
        TickReport { line, ..report }
    }

    /// One of the app's own variables cannot be used: the event fails, naming it.
    pub fn misconfigured(settings: &Settings, bad: &BadVariable) -> Self {
        let holder = settings.holder().unwrap_or("this replica");
        let report = TickReport {
            lock: settings.lock.clone(),
            holder: settings.holder().map(str::to_string),
            decision: "error".into(),
            reason: Some("misconfigured".into()),
            variable: Some(bad.variable.clone()),
            detail: format!("[{holder}] error: {bad}"),
            ..Self::default()
        };
        TickReport { line: serde_json::to_string(&report).unwrap_or_default(), ..report }
    }

    pub fn skipped(skipped: Skipped) -> Self {
        TickReport::read(skipped.report, skipped.text)
    }

    pub fn ran(finished: Finished) -> Self {
        TickReport::read(finished.report, finished.text)
    }

    /// The decision log's line: one JSON object.
    pub fn json(&self) -> String {
        self.line.clone()
    }

    /// The status that answers a tick over HTTP when the job's handler gave no answer: 500 when
    /// the settings cannot be used (a scheduler's `curl --fail` sees it), 503 for a run whose
    /// lease was lost while its handler worked (the call was dropped), 200 for a skip.
    pub fn status(&self) -> u16 {
        if self.is_misconfigured() {
            500
        } else if self.fencing_token.is_some() {
            503
        } else {
            200
        }
    }

    /// Whether the settings cannot be used: the event should fail, not skip.
    pub fn is_misconfigured(&self) -> bool {
        self.decision == "error"
    }

    /// Prints the decision: its JSON line on stdout, the line for people on stderr, prefixed.
    pub fn print(&self, prefix: &str) {
        println!("{}", self.line);
        eprintln!("{prefix}{}", self.detail);
    }
}

//! A lock's recent runs and its running totals, kept in the run record so that neither costs a
//! request: the grant writes the record anyway (and notes a previous run that never completed),
//! and so does `complete` (which adds the run it closes).
//!
//! Blob metadata holds 8 KiB in all, shared with the rest of the record, so the history is
//! bounded twice: at most [`HISTORY_LEN`] runs, and at most [`HISTORY_BYTES`] encoded (the
//! oldest runs go first). Each run keeps its holder's first [`HOLDER_CHARS`] characters and a
//! failure's first [`FAILURE_CHARS`]; the last run's full outcome stays in the record itself.

/// The most runs a history keeps.
pub const HISTORY_LEN: usize = 16;
/// The most bytes the encoded history takes in the record.
pub const HISTORY_BYTES: usize = 2048;
pub const HOLDER_CHARS: usize = 24;
pub const FAILURE_CHARS: usize = 40;

/// One finished run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PastRun {
    pub fence: u64,
    /// The due time a scheduled run was for; `None` for a manual or unscheduled one.
    pub due_ms: Option<u64>,
    pub started_ms: u64,
    /// `None` when it never completed (abandoned or replaced).
    pub stopped_ms: Option<u64>,
    /// Due times it caught up for.
    pub missed: u64,
    /// Asked for with `run-now`.
    pub manual: bool,
    pub holder: Option<String>,
    pub outcome: PastOutcome,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PastOutcome {
    Success,
    /// The failure's text, shortened.
    Failure(String),
    /// Granted and never completed: its holder crashed or lost the lease.
    Abandoned,
    /// Broken by a later grant (overlap `replace`).
    Replaced,
}

impl PastRun {
    /// How long after its due time it started.
    pub fn late_by_ms(&self) -> Option<u64> {
        self.due_ms.map(|due| self.started_ms.saturating_sub(due))
    }

    /// The outcome as the record's last-run field writes it; none for a run that never completed.
    /// How it ended, if it completed.
    pub fn completed_outcome(&self) -> Option<super::Outcome> {
        match &self.outcome {
            PastOutcome::Success => Some(super::Outcome::Success),
            PastOutcome::Failure(reason) => Some(super::Outcome::Failure(reason.clone())),
            PastOutcome::Abandoned | PastOutcome::Replaced => None,
        }
    }

    pub fn succeeded(&self) -> bool {
        self.outcome == PastOutcome::Success
    }
}

/// Counts since the lock was created (monotonic, as Prometheus counters must be).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub successes: u64,
    pub failures: u64,
    /// Runs that never completed, replaced ones included.
    pub abandoned: u64,
    /// Due times that passed with no run for them.
    pub missed: u64,
    pub last_success_ms: Option<u64>,
    pub last_failure_ms: Option<u64>,
    /// Runs during which their instance could not renew the lease when due (a blocking call in
    /// the job, or a frozen host), whether or not another replica took over meanwhile.
    pub blocked: u64,
}

/// `runs` (newest first) with `run` in front, cut to what the record keeps.
pub(super) fn with(runs: &[PastRun], run: PastRun) -> Vec<PastRun> {
    let mut runs: Vec<PastRun> =
        std::iter::once(shortened(run)).chain(runs.iter().cloned()).collect();
    runs.truncate(HISTORY_LEN);
    while runs.len() > 1 && encode(&runs).len() > HISTORY_BYTES {
        runs.pop();
    }
    runs
}

fn shortened(run: PastRun) -> PastRun {
    let cut = |text: &str, chars: usize| text.chars().take(chars).collect::<String>();
    let outcome = match run.outcome {
        PastOutcome::Failure(text) => PastOutcome::Failure(cut(&text, FAILURE_CHARS)),
        other => other,
    };
    PastRun { holder: run.holder.map(|h| cut(&h, HOLDER_CHARS)), outcome, ..run }
}

fn text(value: &str) -> String {
    crate::percent::encode(value, crate::percent::list_part)
}

fn untext(value: &str) -> String {
    crate::percent::decode(value, false)
}

fn optional(value: Option<u64>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// `fence,due,start,stop,missed,manual,outcome,holder` per run, runs joined by `;`. Empty
/// numbers are absent ones; the outcome is `s`, `f:<text>`, `a` or `r`.
pub(super) fn encode(runs: &[PastRun]) -> String {
    let one = |run: &PastRun| {
        let outcome = match &run.outcome {
            PastOutcome::Success => "s".to_string(),
            PastOutcome::Failure(text_) => format!("f:{}", text(text_)),
            PastOutcome::Abandoned => "a".into(),
            PastOutcome::Replaced => "r".into(),
        };
        format!(
            "{},{},{},{},{},{},{outcome},{}",
            run.fence,
            optional(run.due_ms),
            run.started_ms,
            optional(run.stopped_ms),
            run.missed,
            u8::from(run.manual),
            run.holder.as_deref().map(text).unwrap_or_default()
        )
    };
    runs.iter().map(one).collect::<Vec<_>>().join(";")
}

/// Reads what [`encode`] wrote; a run that does not read is left out.
pub(super) fn decode(value: &str) -> Vec<PastRun> {
    let one = |entry: &str| {
        let parts: Vec<&str> = entry.split(',').collect();
        let [fence, due, start, stop, missed, manual, outcome, holder] = parts[..] else {
            return None;
        };
        let maybe = |v: &str| if v.is_empty() { Some(None) } else { v.parse().ok().map(Some) };
        let outcome = match outcome.split_once(':') {
            Some(("f", failure)) => PastOutcome::Failure(untext(failure)),
            _ => match outcome {
                "s" => PastOutcome::Success,
                "a" => PastOutcome::Abandoned,
                "r" => PastOutcome::Replaced,
                _ => return None,
            },
        };
        Some(PastRun {
            fence: fence.parse().ok()?,
            due_ms: maybe(due)?,
            started_ms: start.parse().ok()?,
            stopped_ms: maybe(stop)?,
            missed: missed.parse().ok()?,
            manual: manual == "1",
            holder: Some(untext(holder)).filter(|h| !h.is_empty()),
            outcome,
        })
    };
    value.split(';').filter_map(one).take(HISTORY_LEN).collect()
}

/// `successes:failures:abandoned:missed:last_success:last_failure`, then `:blocked` once a run
/// was blocked (so a lock that never had one keeps the bytes earlier builds wrote).
pub(super) fn encode_totals(totals: &Totals) -> String {
    let blocked = match totals.blocked {
        0 => String::new(),
        blocked => format!(":{blocked}"),
    };
    format!(
        "{}:{}:{}:{}:{}:{}{blocked}",
        totals.successes,
        totals.failures,
        totals.abandoned,
        totals.missed,
        optional(totals.last_success_ms),
        optional(totals.last_failure_ms)
    )
}

pub(super) fn decode_totals(value: &str) -> Totals {
    let parts: Vec<&str> = value.split(':').collect();
    let number = |i: usize| parts.get(i).and_then(|v| v.parse::<u64>().ok());
    Totals {
        successes: number(0).unwrap_or(0),
        failures: number(1).unwrap_or(0),
        abandoned: number(2).unwrap_or(0),
        missed: number(3).unwrap_or(0),
        last_success_ms: number(4),
        last_failure_ms: number(5),
        blocked: number(6).unwrap_or(0),
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;

//! The run record kept in the lock blob's metadata: the last grant's fencing token, start,
//! stop, running flag, outcome and holder. Pure encode/decode. The lock blob's metadata belongs
//! to traffic-cop: keys without the `tc_` prefix are not kept, and `tc_` keys this build does
//! not know (a newer build's, in a rolling upgrade) are kept as they are through every write.

/// Metadata names: identifiers, because Azurite accepts nothing else (and Azure lowercases).
pub(super) const FENCE: &str = "tc_fence";
const START: &str = "tc_start";
const STOP: &str = "tc_stop";
const RUNNING: &str = "tc_running";
const OUTCOME: &str = "tc_outcome";
const HOLDER: &str = "tc_holder";
const EVERY: &str = "tc_every";
const PHASE: &str = "tc_phase";
const KNOWN: [&str; 8] = [FENCE, START, STOP, RUNNING, OUTCOME, HOLDER, EVERY, PHASE];
/// What every key of the record starts with.
const PREFIX: &str = "tc_";

/// Outcome text is kept short: it is a status line, not a log.
const MAX_OUTCOME_CHARS: usize = 200;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunRecord {
    /// The last fencing token granted on this lock (0: never).
    pub fence: u64,
    /// Service time the last run started, in ms since the Unix epoch.
    pub started_ms: Option<u64>,
    /// Service time the last run stopped, if it did.
    pub stopped_ms: Option<u64>,
    /// True from a grant until its `complete`; still true after a crash (the run was abandoned).
    pub running: bool,
    /// `success` or `failure: …` of the last completed run.
    pub outcome: Option<String>,
    /// Label of the last run's holder.
    pub holder: Option<String>,
    /// The schedule the last run was granted under (interval, offset in seconds), so the board
    /// can say when the lock is next due without being told.
    pub schedule: Option<(u64, u64)>,
    /// `tc_` keys this build does not know, with their values, written back unchanged.
    pub unknown: Vec<(String, String)>,
}

impl RunRecord {
    /// Reads a record from metadata; missing or unreadable fields read as "never".
    pub fn from_metadata(metadata: &[(String, String)]) -> RunRecord {
        let get = |key: &str| {
            metadata.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
        };
        let number = |key: &str| get(key).and_then(|v| v.parse::<u64>().ok());
        let text = |key: &str| get(key).filter(|v| !v.is_empty()).map(decode);
        RunRecord {
            fence: number(FENCE).unwrap_or(0),
            started_ms: number(START),
            stopped_ms: number(STOP),
            running: get(RUNNING) == Some("true"),
            outcome: text(OUTCOME),
            holder: text(HOLDER),
            schedule: number(EVERY)
                .filter(|every| *every > 0)
                .map(|every| (every, number(PHASE).filter(|phase| *phase < every).unwrap_or(0))),
            unknown: metadata
                .iter()
                .filter(|(k, _)| {
                    k.get(..PREFIX.len()).is_some_and(|p| p.eq_ignore_ascii_case(PREFIX))
                        && !KNOWN.iter().any(|known| k.eq_ignore_ascii_case(known))
                })
                .cloned()
                .collect(),
        }
    }

    pub fn to_metadata(&self) -> Vec<(String, String)> {
        let mut pairs = vec![
            (FENCE.to_string(), self.fence.to_string()),
            (RUNNING.to_string(), self.running.to_string()),
        ];
        let mut push = |key: &str, value: Option<String>| {
            if let Some(value) = value {
                pairs.push((key.to_string(), value));
            }
        };
        push(START, self.started_ms.map(|v| v.to_string()));
        push(STOP, self.stopped_ms.map(|v| v.to_string()));
        push(OUTCOME, self.outcome.as_deref().map(encode));
        push(HOLDER, self.holder.as_deref().map(encode));
        push(EVERY, self.schedule.map(|(every, _)| every.to_string()));
        push(PHASE, self.schedule.map(|(_, phase)| phase.to_string()));
        pairs.extend(self.unknown.iter().cloned());
        pairs
    }

    /// The record a new grant writes: the next token, running, no stop yet.
    pub fn granted(&self, fence: u64, started_ms: u64, holder: &str) -> RunRecord {
        RunRecord {
            fence,
            started_ms: Some(started_ms),
            stopped_ms: None,
            running: true,
            outcome: None,
            // Empty text is not written (a metadata value cannot be told from an absent one).
            holder: Some(holder.to_string()).filter(|h| !h.is_empty()),
            schedule: None,
            unknown: self.unknown.clone(),
        }
    }

    /// This record, noting the schedule of the options it was granted under.
    pub fn scheduled(self, options: &super::GuardOptions) -> RunRecord {
        let schedule = (options.interval_seconds > 0)
            .then_some((options.interval_seconds, options.offset_seconds));
        RunRecord { schedule, ..self }
    }

    /// The first due time after the last run's, if the lock has a schedule and a run.
    pub fn next_due_ms(&self) -> Option<u64> {
        let (every, phase) = self.schedule?;
        Some(super::Schedule::new(every, phase).next_due_ms(self.started_ms?))
    }

    /// Whether, at service time `now_ms`, the next due time has passed by more than the skew
    /// tolerance with no run for it: a run was missed (or is very late).
    pub fn overdue(&self, now_ms: u64) -> bool {
        let (Some((every, phase)), Some(next)) = (self.schedule, self.next_due_ms()) else {
            return false;
        };
        now_ms > next.saturating_add(super::Schedule::new(every, phase).tolerance_ms())
    }

    /// The record `complete` writes.
    pub fn completed(&self, stopped_ms: u64, outcome: &str) -> RunRecord {
        let outcome: String = outcome.chars().take(MAX_OUTCOME_CHARS).collect();
        RunRecord {
            stopped_ms: Some(stopped_ms),
            running: false,
            outcome: Some(outcome).filter(|o| !o.is_empty()),
            ..self.clone()
        }
    }
}

/// Metadata values travel as HTTP header values: visible ASCII stays, everything else (and `%`)
/// is percent-encoded, so any holder label or outcome text survives the round trip.
fn encode(text: &str) -> String {
    crate::percent::encode(text, crate::percent::visible_ascii)
}

fn decode(text: &str) -> String {
    crate::percent::decode(text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_metadata_round_trip_with_any_text() {
        let record = RunRecord::default()
            .granted(7, 1_735_689_600_000, "replica 3 — ü%20\n")
            .completed(1_735_689_601_500, "failure: disk full; 100% used");
        let metadata = record.to_metadata();
        assert!(metadata.iter().all(|(_, v)| v.bytes().all(|b| (0x21..0x7f).contains(&b))));
        assert_eq!(RunRecord::from_metadata(&metadata), record);
    }

    #[test]
    fn missing_or_garbage_fields_read_as_never() {
        let garbage = [("tc_fence".into(), "x".into()), ("tc_start".into(), "-1".into())];
        assert_eq!(RunRecord::from_metadata(&garbage), RunRecord::default());
        assert_eq!(RunRecord::from_metadata(&[]), RunRecord::default());
    }

    #[test]
    fn tc_keys_this_build_does_not_know_survive_every_write() {
        let stored = [
            ("tc_fence".to_string(), "4".to_string()),
            ("tc_running".into(), "false".into()),
            ("tc_from_a_newer_build".into(), "x%20y".into()),
            ("TC_Shouting".into(), "1".into()),
            ("not_ours".into(), "dropped".into()),
        ];
        let record = RunRecord::from_metadata(&stored);
        let granted = record.granted(5, 1_000, "b").completed(2_000, "success");
        let written = granted.to_metadata();
        for kept in ["tc_from_a_newer_build", "TC_Shouting"] {
            assert!(written.iter().any(|(k, _)| k == kept), "{kept} lost: {written:?}");
        }
        assert!(!written.iter().any(|(k, _)| k == "not_ours"));
        assert_eq!(RunRecord::from_metadata(&written).unknown, record.unknown);
    }

    #[test]
    fn outcome_text_is_capped() {
        let record = RunRecord::default().completed(1, &"x".repeat(1000));
        assert_eq!(record.outcome.unwrap().len(), MAX_OUTCOME_CHARS);
    }
}

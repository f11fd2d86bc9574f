//! The run record's metadata keys and their encoding. Names are identifiers, because Azurite
//! accepts nothing else (and Azure lowercases them); values are visible ASCII, text
//! percent-encoded, parts joined by `:`. Keys this build does not know but that start with
//! `tc_` are kept as they are (a newer build's, in a rolling upgrade).

use super::record::{Grid, OfGrant, Paused, RunNow, RunRecord};
use super::record_text::{text, untext};
use super::seen::SeenSchedule;
use super::Outcome;

pub(super) const FENCE: &str = "tc_fence";
const START: &str = "tc_start";
const STOP: &str = "tc_stop";
const RUNNING: &str = "tc_running";
const OUTCOME: &str = "tc_outcome";
const HOLDER: &str = "tc_holder";
/// The grid of a guard@0.1.0/0.2.0-shaped schedule, as those builds write it.
const EVERY: &str = "tc_every";
const PHASE: &str = "tc_phase";
/// `fence:due_ms:missed`: the due time of the last scheduled grant, tagged with that grant's
/// token, and the due times it caught up for.
const DUE: &str = "tc_due";
/// The schedule the last scheduled grant ran under ([`crate::schedule::Schedule::recorded`]).
const SCHEDULE: &str = "tc_sched";
/// `fence:by`: the run with that token was a manual one (`run-now`).
const MANUAL: &str = "tc_manual";
/// `fence:replaced_fence`: the run with that token replaced a stuck one.
const REPLACED: &str = "tc_replaced";
/// `since_ms:by:reason`
const PAUSED: &str = "tc_paused";
/// `at_ms:by`
const RUN_NOW: &str = "tc_runnow";
/// `first_seen_ms:last_seen_ms:schedule`, one per schedule replicas ticked with, newest first,
/// joined by `,`.
const SCHEDULES: &str = "tc_scheds";
/// `fence:lease_id`: the lease of the grant with that token.
const LEASE: &str = "tc_lease";
/// The last finished runs ([`super::history::encode`]).
const HISTORY: &str = "tc_hist";
/// Counts since the lock was created ([`super::history::encode_totals`]).
const TOTALS: &str = "tc_totals";
/// The record's format: what its keys mean. A build that adds keys keeps the format (older
/// builds keep unknown `tc_` keys as they are); a build that changes what a key means raises
/// it, and builds that read an older format refuse the record rather than misread it.
const FORMAT: &str = "tc_format";
/// The format this build reads and writes. Records written before formats were numbered have
/// no `tc_format` and are this one.
pub(super) const FORMAT_VERSION: u32 = 1;

const KNOWN: [&str; 19] = [
    FENCE, START, STOP, RUNNING, OUTCOME, HOLDER, EVERY, PHASE, DUE, SCHEDULE, MANUAL, REPLACED,
    PAUSED, RUN_NOW, SCHEDULES, LEASE, HISTORY, TOTALS, FORMAT,
];
const PREFIX: &str = "tc_";

/// `a:b` parts, split at the first `:` (the last part may be text with none left in it).
fn pair(value: &str) -> Option<(&str, &str)> {
    value.split_once(':')
}

impl RunRecord {
    /// Reads a record from metadata; missing or unreadable fields read as "never".
    pub fn from_metadata(metadata: &[(String, String)]) -> RunRecord {
        read(metadata)
    }

    /// Reads a record that a decision or a write will act on: one in another format than this
    /// build's is refused, naming both, rather than read with the wrong meanings.
    pub fn readable(metadata: &[(String, String)]) -> Result<RunRecord, crate::Error> {
        let format = metadata.iter().find(|(k, _)| k.eq_ignore_ascii_case(FORMAT));
        match format.map(|(_, v)| v.as_str()) {
            None => Ok(read(metadata)),
            Some(v) if v.parse() == Ok(FORMAT_VERSION) => Ok(read(metadata)),
            Some(v) => Err(super::unexpected(&format!(
                "the lock's record is in format {v:?} ({FORMAT}), and this traffic-cop build \
                 reads format {FORMAT_VERSION} only: a newer build wrote it, so upgrade this \
                 replica (replicas of the newer build run the job meanwhile)"
            ))),
        }
    }

    pub fn to_metadata(&self) -> Vec<(String, String)> {
        write(self)
    }
}

fn read(metadata: &[(String, String)]) -> RunRecord {
    let get =
        |key: &str| metadata.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v);
    let number = |key: &str| get(key).and_then(|v| v.parse::<u64>().ok());
    let words = |key: &str| get(key).filter(|v| !v.is_empty()).map(|v| untext(v));
    // `fence:rest`: the value a grant wrote, tagged with its token.
    let tagged = |key: &str| {
        let (fence, rest) = pair(get(key)?)?;
        Some((fence.parse::<u64>().ok()?, rest))
    };
    let of_grant = |(fence, value)| OfGrant { fence, value };
    RunRecord {
        fence: number(FENCE).unwrap_or(0),
        started_ms: number(START),
        stopped_ms: number(STOP),
        running: get(RUNNING).map(String::as_str) == Some("true"),
        outcome: words(OUTCOME).map(|text| Outcome::from_record_text(&text)),
        holder: words(HOLDER),
        every: number(EVERY).filter(|every| *every > 0).map(|interval_seconds| Grid {
            interval_seconds,
            offset_seconds: number(PHASE).filter(|phase| *phase < interval_seconds).unwrap_or(0),
        }),
        due: tagged(DUE)
            .and_then(|(fence, rest)| Some((fence, rest.split(':').next()?.parse().ok()?)))
            .map(of_grant),
        missed: tagged(DUE).and_then(|(_, rest)| rest.split(':').nth(1)?.parse().ok()).unwrap_or(0),
        schedule: words(SCHEDULE),
        manual: tagged(MANUAL).map(|(fence, by)| OfGrant { fence, value: untext(by) }),
        replaced: tagged(REPLACED)
            .and_then(|(fence, old)| Some((fence, old.parse().ok()?)))
            .map(of_grant),
        paused: get(PAUSED).and_then(|v| {
            let (since, rest) = pair(v)?;
            let (by, reason) = pair(rest).unwrap_or((rest, ""));
            Some(Paused { since_ms: since.parse().ok()?, by: untext(by), reason: untext(reason) })
        }),
        run_now: tagged(RUN_NOW).map(|(at_ms, by)| RunNow { at_ms, by: untext(by) }),
        schedules: get(SCHEDULES).map(|v| read_schedules(v)).unwrap_or_default(),
        lease: tagged(LEASE).map(|(fence, id)| OfGrant { fence, value: id.to_string() }),
        history: get(HISTORY).map(|v| super::history::decode(v)).unwrap_or_default(),
        totals: get(TOTALS).map(|v| super::history::decode_totals(v)).unwrap_or_default(),
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

fn write(record: &RunRecord) -> Vec<(String, String)> {
    let mut pairs = vec![
        (FENCE.to_string(), record.fence.to_string()),
        (RUNNING.to_string(), record.running.to_string()),
        (FORMAT.to_string(), FORMAT_VERSION.to_string()),
    ];
    let mut push = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            pairs.push((key.to_string(), value));
        }
    };
    push(START, record.started_ms.map(|v| v.to_string()));
    push(STOP, record.stopped_ms.map(|v| v.to_string()));
    // Empty text is not written: a metadata value cannot be told from an absent one.
    push(OUTCOME, record.outcome.as_ref().map(|o| text(&o.as_record_text())));
    push(HOLDER, record.holder.as_deref().filter(|h| !h.is_empty()).map(text));
    push(EVERY, record.every.map(|grid| grid.interval_seconds.to_string()));
    push(PHASE, record.every.map(|grid| grid.offset_seconds.to_string()));
    push(DUE, record.due.map(|d| format!("{}:{}:{}", d.fence, d.value, record.missed)));
    push(SCHEDULE, record.schedule.as_deref().map(text));
    push(MANUAL, record.manual.as_ref().map(|m| format!("{}:{}", m.fence, text(&m.value))));
    push(REPLACED, record.replaced.as_ref().map(|r| format!("{}:{}", r.fence, r.value)));
    push(
        PAUSED,
        record
            .paused
            .as_ref()
            .map(|p| format!("{}:{}:{}", p.since_ms, text(&p.by), text(&p.reason))),
    );
    push(RUN_NOW, record.run_now.as_ref().map(|r| format!("{}:{}", r.at_ms, text(&r.by))));
    let schedules = (!record.schedules.is_empty()).then(|| write_schedules(&record.schedules));
    push(SCHEDULES, schedules);
    // A lease id is a GUID: visible ASCII as it is.
    push(LEASE, record.lease.as_ref().map(|l| format!("{}:{}", l.fence, l.value)));
    let history = (!record.history.is_empty()).then(|| super::history::encode(&record.history));
    push(HISTORY, history);
    let counted = record.totals != super::history::Totals::default();
    push(TOTALS, counted.then(|| super::history::encode_totals(&record.totals)));
    pairs.extend(record.unknown.iter().cloned());
    pairs
}

fn write_schedules(schedules: &[SeenSchedule]) -> String {
    let one = |seen: &SeenSchedule| {
        let text = crate::percent::encode(&seen.schedule, crate::percent::list_part);
        format!("{}:{}:{text}", seen.first_seen_ms, seen.last_seen_ms)
    };
    schedules.iter().map(one).collect::<Vec<_>>().join(",")
}

/// Entries that cannot be read are left out: a newer build's, or damaged.
fn read_schedules(value: &str) -> Vec<SeenSchedule> {
    let one = |entry: &str| {
        let (first, rest) = pair(entry)?;
        let (last, text) = pair(rest)?;
        Some(SeenSchedule {
            first_seen_ms: first.parse().ok()?,
            last_seen_ms: last.parse().ok()?,
            schedule: untext(text),
        })
    };
    value.split(',').filter_map(one).collect()
}

//! src/schedule/zoned.rs judged by croniter 7.0.0 over zoneinfo and the pinned tzdata
//! (tests/oracles/cron.py): the first due time after, and the latest at or before, random
//! instants (most near DST changes) for random expressions in both dialects; and counts over
//! short windows.
//!
//! croniter keeps a different DST rule in two places (croniter/croniter.py), both only for a
//! job whose hour field is restricted (not all 24 hours, croniter's "*"):
//! - **fold**: croniter runs it at both readings of a repeated wall-clock time (the
//!   "alternative" time, :824-851); we run it at the first only. So croniter's runs at a second
//!   reading (zoneinfo's fold=1) are dropped.
//! - **gap**: croniter moves a time in a spring-forward gap on by whole minutes to the first
//!   that exists (`_add_tzinfo`, :228-232), keeping its seconds; we run it at the gap's first
//!   instant. So a croniter run in the first minute after a gap, at one of the job's seconds,
//!   for a job with a time in that gap, stands for a run at the transition (and is kept only if
//!   the expression names its own wall-clock time). croniter's get_prev does not see such a
//!   run before it has passed, hence the "fwd" runs cron.py adds after the previous one.
//!
//! A disagreement is expected when our answer is croniter's with these two rules applied to its
//! runs; it is counted by the rule that changed croniter's own answer. So is an answer before
//! 2020 from both: src/zone holds no history before it (src/zone/mod.rs), zoneinfo does.
//! Anything else fails.

use serde_json::{json, Value};
use std::path::PathBuf;
use traffic_cop::civil::civil_from_days;
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::zone::Zone;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::oracle;
use traffic_cop_testbed::runner::Test;

use crate::cron_corpus::{Job, Rng};

/// 2020-01-01T00:00Z and 2040-01-01T00:00Z.
pub(crate) const FROM: i64 = 1_577_836_800;
pub(crate) const TO: i64 = 2_208_988_800;
/// DST (Lord Howe's is 30 minutes, Santiago's and Havana's change at midnight, Dublin's is
/// negative, Casablanca's a Ramadan break), fixed odd offsets, and UTC.
pub(crate) const ZONES: [&str; 13] = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "America/Santiago",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "Europe/London",
    "Europe/Dublin",
    "Africa/Casablanca",
    "America/St_Johns",
    "America/Havana",
    "Asia/Kolkata",
    "UTC",
];
const EXPRESSIONS: usize = 3_000;
const INSTANTS_PER_EXPRESSION: usize = 4;
const WINDOWS: usize = 400;
const MOST_RUNS_PER_WINDOW: u64 = 250;
/// How far a window reaches (to the first due time after this, if there is none before).
const LONGEST_WINDOW: i64 = 2 * 366 * 86_400;

/// One of croniter's runs, as cron.py reports it.
struct Run {
    at: i64,
    fold: bool,
    gap: Option<i64>,
    own: bool,
}

#[derive(Default)]
struct Tally {
    compared: usize,
    fold: usize,
    gap: usize,
    before_2020: usize,
    wrong: Vec<String>,
}

impl Job {
    fn question(&self, at: &[i64], runs: &[(i64, u64, i64)]) -> String {
        let dialect = if self.dialect == Dialect::Spin { "spin" } else { "classic" };
        let question = json!({"expr": self.expression, "dialect": dialect, "zone": self.zone});
        let mut question = question.as_object().expect("an object").clone();
        question.extend([("at".into(), json!(at)), ("runs".into(), json!(runs))]);
        format!("{}\n", Value::Object(question))
    }

    fn describe(&self) -> String {
        format!("{:?} ({:?}) in {}", self.expression, self.dialect, self.zone)
    }

    /// The instant and its wall-clock reading in our zone, for messages.
    fn show(&self, t: Option<i64>) -> String {
        let Some(t) = t else { return "none".into() };
        let civil = Zone::named(self.zone).expect("a zone").to_civil(t);
        let (y, m, d) = civil_from_days(civil.div_euclid(86_400));
        let s = civil.rem_euclid(86_400);
        format!("{t} ({y}-{m:02}-{d:02} {:02}:{:02}:{:02})", s / 3600, s / 60 % 60, s % 60)
    }

    /// Our answer against croniter's first run (`raw`) and its runs' under our rule (`ruled`).
    // One comparison's facts, each named at the two call sites; a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    fn judge(
        &self,
        what: &str,
        q: i64,
        ours: Option<u64>,
        raw: Option<&Run>,
        ruled: Option<i64>,
        every_hour: bool,
        tally: &mut Tally,
    ) {
        tally.compared += 1;
        let ours = ours.map(|ms| (ms / 1000) as i64);
        let theirs = raw.map(|r| r.at);
        if ours == theirs {
        } else if ours.max(theirs) < Some(FROM) {
            tally.before_2020 += 1;
        } else if ours != ruled {
            let (q, ours, theirs, ruled) =
                (self.show(Some(q)), self.show(ours), self.show(theirs), self.show(ruled));
            tally.wrong.push(format!(
                "{}, {what} {q}: ours {ours}, croniter's {theirs} ({ruled} by our DST rule)",
                self.describe()
            ));
        } else if raw.is_some_and(|r| r.fold && !every_hour) {
            tally.fold += 1;
        } else {
            tally.gap += 1;
        }
    }
}

fn runs(value: &Value) -> Vec<Run> {
    let runs = value.as_array().expect("runs");
    let run = |r: &Value| Run {
        at: r[0].as_i64().expect("an instant"),
        fold: r[1] == 1,
        gap: r[2].as_i64(),
        own: r[3] == true,
    };
    runs.iter().map(run).collect()
}

/// croniter's runs under our DST rule (see the module docs), in order.
fn ruled<'a>(runs: impl IntoIterator<Item = &'a Run>, every_hour: bool) -> Vec<i64> {
    let mut out = Vec::new();
    for run in runs {
        match run.gap {
            _ if every_hour => out.push(run.at),
            Some(transition) => {
                out.extend([transition].into_iter().chain(run.own.then_some(run.at)))
            }
            None if !run.fold => out.push(run.at),
            None => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn ask(python: &PathBuf, jobs: &[Job], questions: &str) -> Vec<Value> {
    let answers = oracle::ask(python, "cron.py", questions);
    let answers: Vec<Value> =
        answers.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    assert_eq!(jobs.len(), answers.len(), "an answer per expression");
    answers
}

fn fail_on(wrong: &[String]) {
    let first = wrong[..wrong.len().min(20)].join("\n");
    assert!(wrong.is_empty(), "{} disagreements with croniter, the first:\n{first}", wrong.len());
}

fn next_and_previous_agree_with_croniter() {
    let python = require("croniter over the pinned tzdata", oracle::python());
    let mut rng = Rng(0xC40_2026);
    let (mut jobs, mut instants, mut questions) = (Vec::new(), Vec::new(), String::new());
    for _ in 0..EXPRESSIONS {
        let job = rng.job();
        let at: Vec<i64> = (0..INSTANTS_PER_EXPRESSION).map(|_| rng.instant(job.zone)).collect();
        questions.push_str(&job.question(&at, &[]));
        jobs.push(job);
        instants.push(at);
    }
    let mut tally = Tally::default();
    for ((job, at), answer) in jobs.iter().zip(&instants).zip(ask(&python, &jobs, &questions)) {
        let every_hour = answer["every_hour"] == true;
        for (&q, around) in at.iter().zip(answer["at"].as_array().expect("at")) {
            // Due times are whole seconds: any ms within q's second asks the same question.
            let q_ms = q as u64 * 1000 + rng.below(1000);
            let (next, prev, fwd) =
                (runs(&around["next"]), runs(&around["prev"]), runs(&around["fwd"]));
            let ruled_next = ruled(&next, every_hour).into_iter().find(|&t| t > q);
            job.judge(
                "after",
                q,
                job.cron.after(q_ms),
                next.first(),
                ruled_next,
                every_hour,
                &mut tally,
            );
            let ruled_prev =
                ruled(prev.iter().chain(&fwd), every_hour).into_iter().rfind(|&t| t <= q);
            let ours = job.cron.at_or_before(q_ms);
            job.judge("at or before", q, ours, prev.first(), ruled_prev, every_hour, &mut tally);
        }
    }
    fail_on(&tally.wrong);
    let triples = EXPRESSIONS * INSTANTS_PER_EXPRESSION;
    assert!(triples >= 10_000 && tally.compared == 2 * triples, "{}", tally.compared);
    let Tally { compared, fold, gap, before_2020, .. } = tally;
    eprintln!(
        "cron: {triples} (expression, instant, zone) triples, {EXPRESSIONS} expressions in {} zones: {compared} next/previous comparisons, {} as croniter, {fold} fold and {gap} gap differences by our DST rule, {before_2020} both before 2020",
        ZONES.len(),
        compared - fold - gap - before_2020
    );
}

fn counts_agree_with_croniter() {
    let python = require("croniter over the pinned tzdata", oracle::python());
    let mut rng = Rng(0xC0_0415);
    let (mut jobs, mut windows, mut questions) = (Vec::new(), Vec::new(), String::new());
    for _ in 0..WINDOWS {
        let job = rng.job();
        let q = rng.instant(job.zone);
        let window = (q, 1 + rng.below(MOST_RUNS_PER_WINDOW), q + LONGEST_WINDOW);
        questions.push_str(&job.question(&[], &[window]));
        jobs.push(job);
        windows.push(q);
    }
    let (mut wrong, mut counted, mut changed) = (Vec::new(), 0, 0);
    for ((job, &q), answer) in jobs.iter().zip(&windows).zip(ask(&python, &jobs, &questions)) {
        let runs = runs(&answer["runs"][0]);
        let raw: Vec<i64> = runs.iter().map(|r| r.at).collect();
        let due = ruled(&runs, answer["every_hour"] == true);
        assert!(!due.is_empty(), "{}: croniter found no run after {q}", job.describe());
        changed += usize::from(raw != due);
        // A window from within q's second to anywhere after the count-th run, up to the next.
        let count = rng.below(due.len() as u64) as usize;
        let after_ms = q as u64 * 1000 + rng.below(1000);
        let low = count.checked_sub(1).map_or(after_ms, |i| due[i] as u64 * 1000);
        let before_ms = low + 1 + rng.below(due[count] as u64 * 1000 - low);
        let ours = job.cron.count_between(after_ms, before_ms);
        counted += count;
        if ours != count as u64 {
            let (from, runs) = (job.show(Some(q)), &raw[..raw.len().min(20)]);
            wrong.push(format!("{}, between {after_ms} and {before_ms} ms: ours {ours}, croniter's {count} by our DST rule (its runs after {from}: {runs:?})", job.describe()));
        }
    }
    fail_on(&wrong);
    eprintln!("cron: {WINDOWS} windows, {counted} due times counted as croniter ({changed} windows' runs changed by our DST rule)");
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![next_and_previous_agree_with_croniter, counts_agree_with_croniter]
}

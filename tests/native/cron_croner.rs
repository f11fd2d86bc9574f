//! Differential test: `traffic_cop::schedule::cron` against croner 2.2.0 itself, the parser
//! Spin's cron trigger runs (`with_seconds_required().with_dom_and_dow()`, in UTC), and against
//! croner's default for the classic dialect. Hand-written, random and hostile expressions must
//! be accepted or refused alike, and accepted ones must give the same occurrences.
//!
//! The one difference is deliberate: croner accepts expressions that never match; we refuse
//! them. For those, croner's own matching predicates are shown to match nothing in a whole
//! 400-year cycle (so its search would run to its year-5000 limit), and a few cheap ones are
//! run through croner's search to that limit.

use chrono::{DateTime, TimeZone, Utc};
use croner::Cron as Croner;
use traffic_cop::civil::{civil_from_days, days_from_civil, DAYS_PER_CYCLE};
use traffic_cop::schedule::cron::{Cron, Dialect};

mod corpus;

use corpus::{random_expression, Rng, ACCEPTED, REFUSED};

fn croner(expression: &str, dialect: Dialect) -> Option<Croner> {
    let mut cron = Croner::new(expression);
    if dialect == Dialect::Spin {
        cron.with_seconds_required().with_dom_and_dow();
    }
    cron.parse().ok()
}

fn utc(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(seconds, 0).unwrap()
}

fn next_of(croner: &Croner, from: i64) -> Option<i64> {
    croner.find_next_occurrence(&utc(from), true).ok().map(|t| t.timestamp())
}

#[derive(Default)]
struct Tally {
    expressions: usize,
    both_accept: usize,
    both_refuse: usize,
    never_fire: usize,
    comparisons: usize,
}

/// Croner accepted what we refused as never firing: its own predicates match no second, or
/// no day in a whole cycle, so its search runs to the year 5000 and gives up.
fn assert_never_matches(expression: &str, theirs: &Croner, refusal: &str) {
    assert!(refusal.contains("never fire"), "{expression:?}: croner accepts, we say {refusal}");
    let pattern = &theirs.pattern;
    let any = |n: u32, matches: &dyn Fn(u32) -> bool| (0..n).any(matches);
    let times = any(60, &|s| pattern.second_match(s).unwrap())
        && any(60, &|m| pattern.minute_match(m).unwrap())
        && any(24, &|h| pattern.hour_match(h).unwrap());
    let start = days_from_civil(2025, 1, 1);
    let day = times
        && (start..start + DAYS_PER_CYCLE).any(|days| {
            let (year, month, day) = civil_from_days(days);
            pattern.month_match(month).unwrap()
                && pattern.day_match(year as i32, month, day).unwrap()
        });
    assert!(!day, "{expression:?}: croner matches a day in 400 years; we say {refusal}");
}

fn compare(expression: &str, ours: &Cron, theirs: &Croner, rng: &mut Rng, tally: &mut Tally) {
    let base = utc(0).timestamp() + 365 * 86_400;
    for _ in 0..3 {
        // An instant in 1971..2100, often on a round minute or day where matches sit.
        let mut from = base + rng.below(129 * 365 * 86_400) as i64;
        from -= from % [1, 60, 3_600, 86_400][rng.below(4) as usize];
        let mut expected = next_of(theirs, from);
        let mut at = from;
        for _ in 0..4 {
            let next = ours.next_civil(at);
            assert_eq!(next, expected, "{expression:?}: next at or after {}", utc(at));
            let Some(next) = next else { break };
            at = next + 1;
            expected = next_of(theirs, at);
            tally.comparisons += 1;
        }
        let prev = ours.prev_civil(from).unwrap();
        assert!(prev <= from && next_of(theirs, prev) == Some(prev), "{expression:?}: {prev}");
        assert!(next_of(theirs, prev + 1).is_none_or(|n| n > from), "{expression:?}: prev");
        assert!(ours.next_civil(prev + 1).unwrap() > from, "{expression:?}: prev");
        // Counting croner's iterator over a short span: up to 40 occurrences, or 3 days.
        let found: Vec<i64> = theirs
            .iter_from(utc(from))
            .map(|t| t.timestamp())
            .take_while(|&t| t < from + 3 * 86_400)
            .take(40)
            .collect();
        let to = if found.len() == 40 { found[39] + 1 } else { from + 3 * 86_400 };
        assert_eq!(ours.count_civil(from, to), found.len() as u64, "{expression:?} {from}..{to}");
        let middle = from + (to - from) / 2;
        let before_middle = found.iter().filter(|&&t| t < middle).count() as u64;
        assert_eq!(ours.count_civil(from, middle), before_middle, "{expression:?} to {middle}");
        tally.comparisons += 5;
    }
}

fn check(expression: &str, dialect: Dialect, rng: &mut Rng, tally: &mut Tally) {
    tally.expressions += 1;
    match (Cron::parse(expression, dialect), croner(expression, dialect)) {
        (Ok(ours), Some(theirs)) => {
            tally.both_accept += 1;
            compare(expression, &ours, &theirs, rng, tally);
        }
        (Err(_), None) => tally.both_refuse += 1,
        (Err(refusal), Some(theirs)) => {
            tally.never_fire += 1;
            assert_never_matches(expression, &theirs, &refusal.to_string());
        }
        (Ok(_), None) => panic!("{expression:?} ({dialect:?}): we accept, croner refuses"),
    }
}

/// The five-field form of a six-field expression (nicknames stay as they are).
fn classic(expression: &str) -> String {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    if fields.len() == 6 {
        fields[1..].join(" ")
    } else {
        expression.to_string()
    }
}

#[test]
fn our_cron_agrees_with_croner() {
    let mut rng = Rng(0xC0DE_C0DE_2025);
    let mut tally = Tally::default();
    let mut corpus: Vec<String> = ACCEPTED.iter().chain(REFUSED).map(|e| e.to_string()).collect();
    corpus.extend((0..4_000).map(|_| random_expression(&mut rng)));
    for expression in &corpus {
        for dialect in [Dialect::Spin, Dialect::Classic] {
            // Each expression in both dialects as written (one of them refuses its field
            // count), and in the classic dialect without its seconds.
            check(expression, dialect, &mut rng, &mut tally);
        }
        check(&classic(expression), Dialect::Classic, &mut rng, &mut tally);
    }
    // Croner's own search, run to its limit, for a few of the never-firing expressions.
    for expression in ["0 0 0 30 2 *", "0 0 0 * * 7L", "0 0 0 1 * 1#2"] {
        let theirs = croner(expression, Dialect::Spin).unwrap();
        assert!(theirs.find_next_occurrence(&utc(1_735_689_600), true).is_err(), "{expression}");
    }
    eprintln!(
        "cron_croner: {} expressions checked ({} accepted by both, {} refused by both, {} \
         refused by us alone as never firing); {} occurrence comparisons",
        tally.expressions,
        tally.both_accept,
        tally.both_refuse,
        tally.never_fire,
        tally.comparisons
    );
    assert!(tally.both_accept > 1_500 && tally.never_fire > 20 && tally.both_refuse > 2_000);
}

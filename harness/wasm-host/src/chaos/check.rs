//! The chaos run's judge: the replicas' reports and the fenced store, read back at the end.
//!
//! - at most one run per due time (each run's line names it; a manual run is one per request
//!   and names none): a replica held up past its tick (SIGSTOP, a partition) runs the due time
//!   of the moment it is granted, not its tick's;
//! - fencing tokens unique and increasing in the order they were granted, where the logs prove
//!   that order (a tick's second, and when its line was first read);
//! - the store's history (every accepted result appends itself, under fencing) strictly
//!   increasing, ending with the token the store holds, and holding every accepted write the
//!   logs report from its oldest entry on: a stale write that got through would have replaced
//!   a newer history, dropping an accepted entry or putting a lower token after a higher one;
//! - every refusal names a stored token strictly greater than the one presented.

use super::report::{Report, Write};
use std::collections::{BTreeMap, BTreeSet};

/// The fenced result blob as read at the end: the token stored with it and its history.
#[derive(Clone, Debug, Default)]
pub struct Store {
    pub fencing_token: u64,
    /// `(token, holder, scheduled second)` per accepted write, oldest first.
    pub history: Vec<(u64, String, u64)>,
}

/// Parses the result blob the app writes: one `token holder at` line per accepted write.
pub fn parse_history(contents: &str) -> Vec<(u64, String, u64)> {
    contents
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let token = fields.next()?.parse().ok()?;
            let holder = fields.next()?.to_string();
            let at = fields.next()?.parse().ok()?;
            Some((token, holder, at))
        })
        .collect()
}

pub fn check(reports: &[Report], store: Option<&Store>) -> Vec<String> {
    let mut violations = Vec::new();
    let mut runs: Vec<&Report> = reports.iter().filter(|r| r.token.is_some()).collect();
    runs.sort_by_key(|r| (r.at, r.token));
    let mut per_due: BTreeMap<u64, Vec<&Report>> = BTreeMap::new();
    for run in &runs {
        match (run.due, &run.manual_by) {
            (Some(due), None) => per_due.entry(due).or_default().push(run),
            (None, Some(_)) => {}
            _ => violations.push(format!(
                "{} token {:?} (tick {}): a scheduled run whose line names no due time",
                run.holder, run.token, run.at
            )),
        }
    }
    for (due, ran) in per_due.iter().filter(|(_, ran)| ran.len() > 1) {
        let who: Vec<String> = ran
            .iter()
            .map(|r| format!("{} token {:?} woken at {}", r.holder, r.token, r.at))
            .collect();
        violations.push(format!("due time {due}: {} runs ({})", ran.len(), who.join(", ")));
    }
    let mut seen = BTreeSet::new();
    for run in &runs {
        if !seen.insert(run.token) {
            violations.push(format!("token {:?} granted twice", run.token));
        }
    }
    // A lower token granted after a higher one, where the logs prove it: the lower token's
    // tick came after the higher token's line was already written. A cron event's second is
    // only when its handler started: one held up by a partition or a SIGSTOP is granted (for
    // the due time of that moment) long after its tick, and is not out of order for that.
    for low in &runs {
        for high in runs.iter().filter(|h| h.token > low.token) {
            let granted_by = high.seen.unwrap_or(high.at);
            if low.at > granted_by {
                violations.push(format!(
                    "tokens not increasing in grant order: token {:?} (tick {}) was granted after \
                     token {:?} (tick {}, logged by {granted_by})",
                    low.token, low.at, high.token, high.at
                ));
            }
        }
    }
    for run in &runs {
        if let Some(Write::Stale { presented, stored }) = &run.write {
            if presented >= stored || Some(*presented) != run.token {
                violations.push(format!(
                    "{} token {:?}: refused as stale with {presented} < {stored}",
                    run.holder, run.token
                ));
            }
        }
    }
    let accepted: Vec<u64> = runs
        .iter()
        .filter_map(|r| match r.write {
            Some(Write::Written(token)) => Some(token),
            _ => None,
        })
        .collect();
    let Some(store) = store else {
        if !accepted.is_empty() {
            violations.push(format!("{} writes accepted, but the store is empty", accepted.len()));
        }
        return violations;
    };
    for pair in store.history.windows(2) {
        if pair[1].0 <= pair[0].0 {
            violations.push(format!(
                "stale write accepted: the store's history has token {} after {}",
                pair[1].0, pair[0].0
            ));
        }
    }
    match store.history.last() {
        Some((last, _, _)) if *last == store.fencing_token => {}
        last => violations.push(format!(
            "the store holds token {} but its last write says {last:?}",
            store.fencing_token
        )),
    }
    let kept: BTreeSet<u64> = store.history.iter().map(|(t, _, _)| *t).collect();
    let oldest = store.history.first().map_or(u64::MAX, |(t, _, _)| *t);
    for token in accepted.iter().filter(|t| **t >= oldest && !kept.contains(t)) {
        violations.push(format!(
            "the write with token {token} was accepted, then lost: a stale write replaced it"
        ));
    }
    if let Some(max) = accepted.iter().max().filter(|max| **max > store.fencing_token) {
        violations
            .push(format!("accepted token {max} is newer than the stored {}", store.fencing_token));
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::report::parse_line;

    fn reports(lines: &[&str]) -> Vec<Report> {
        lines.iter().map(|l| parse_line(l).unwrap()).collect()
    }

    #[test]
    fn the_checker_catches_every_kind_of_violation() {
        let good = reports(&[
            "woken by the cron tick of 1970-01-01T00:00:02Z: [a] ran for the due time 1970-01-01T00:00:02Z with fencing token 1: j; result written with token 1",
            "woken by the cron tick of 1970-01-01T00:00:02Z: [b] skipped the due time 1970-01-01T00:00:02Z: already ran (a)",
            "woken by the cron tick of 1970-01-01T00:00:04Z: [a] ran for the due time 1970-01-01T00:00:04Z with fencing token 2: j; result written with token 2",
            "woken by the cron tick of 1970-01-01T00:00:06Z: [b] ran for the due time 1970-01-01T00:00:06Z with fencing token 3: j; result write refused: stale fencing token 3 < 4",
            "woken by the cron tick of 1970-01-01T00:00:08Z: [c] ran for the due time 1970-01-01T00:00:08Z with fencing token 4: j; result written with token 4",
        ]);
        let store = |tokens: &[u64]| Store {
            fencing_token: *tokens.last().unwrap(),
            history: tokens.iter().map(|t| (*t, "x".into(), 0)).collect(),
        };
        assert_eq!(check(&good, Some(&store(&[1, 2, 4]))), Vec::<String>::new());
        // Keeping only the last entries is fine.
        assert!(check(&good, Some(&store(&[2, 4]))).is_empty());
        let mut twice = good.clone();
        twice[1] = parse_line(
            "woken by the cron tick of 1970-01-01T00:00:02Z: [b] ran for the due time 1970-01-01T00:00:02Z with fencing token 9: j",
        )
        .unwrap();
        assert!(check(&twice, Some(&store(&[1, 2, 4]))).iter().any(|v| v.contains("2 runs")));
        let mut order = good.clone();
        order[2].token = Some(5);
        assert!(check(&order, Some(&store(&[1, 2, 4]))).iter().any(|v| v.contains("increasing")));
        // A stale write got through: 2 landed after 4, replacing its history.
        let replaced = check(&good, Some(&store(&[1, 2])));
        assert!(replaced.iter().any(|v| v.contains("newer than the stored")), "{replaced:?}");
        let lost = check(&good, Some(&store(&[1, 4, 5])));
        assert!(lost.iter().any(|v| v.contains("token 2 was accepted, then lost")), "{lost:?}");
        let backwards = check(&good, Some(&store(&[1, 2, 4, 3])));
        assert!(backwards.iter().any(|v| v.contains("after 4")), "{backwards:?}");
        let mut wrong_refusal = good.clone();
        wrong_refusal[3].write = Some(Write::Stale { presented: 3, stored: 3 });
        assert!(!check(&wrong_refusal, Some(&store(&[1, 2, 4]))).is_empty());
        assert!(!check(&good, None).is_empty());
    }

    #[test]
    fn runs_are_judged_per_due_time_not_per_tick() {
        // A replica frozen past its tick wakes and runs a later due time than its tick's: the
        // line names both, and it is no second run of the tick's due time.
        let same_tick = reports(&[
            "woken by the cron tick of 1970-01-01T00:00:16Z: [a] ran for the due time 1970-01-01T00:00:16Z with fencing token 74: j",
            "woken by the cron tick of 1970-01-01T00:00:16Z: [b] ran for the due time 1970-01-01T00:00:46Z with fencing token 85: j (caught up 4 missed due times)",
        ]);
        assert_eq!(check(&same_tick, None), Vec::<String>::new());
        // One due time run by two ticks is two runs of it.
        let same_due = reports(&[
            "woken by the cron tick of 1970-01-01T00:00:16Z: [a] ran for the due time 1970-01-01T00:00:16Z with fencing token 74: j",
            "woken by the cron tick of 1970-01-01T00:00:18Z: [b] ran for the due time 1970-01-01T00:00:16Z with fencing token 75: j",
        ]);
        let twice = check(&same_due, None);
        assert!(twice.iter().any(|v| v.starts_with("due time 16: 2 runs")), "{twice:?}");
        // Manual runs come one per request and name no due time; a scheduled run must name one.
        let manual = reports(&[
            "woken by the cron tick of 1970-01-01T00:00:16Z: [a] ran for the due time 1970-01-01T00:00:16Z with fencing token 1: j",
            "woken by the cron tick of 1970-01-01T00:00:18Z: [b] ran the manual run asked by ana with fencing token 2: j",
        ]);
        assert_eq!(check(&manual, None), Vec::<String>::new());
        let unnamed = reports(&[
            "woken by the cron tick of 1970-01-01T00:00:16Z: [a] ran with fencing token 1: j",
        ]);
        assert!(check(&unnamed, None).iter().any(|v| v.contains("names no due time")));
    }

    #[test]
    fn a_run_held_up_past_later_ticks_is_judged_by_when_it_was_granted() {
        // CI, 2026-11-24: c's handler for tick 206 was held up by a partition and a SIGSTOP;
        // its grant came after token 7 (tick 234), and its line was first read at 238.
        let mut runs = reports(&[
            "woken by the cron tick of 1970-01-01T00:03:14Z: [a] ran for the due time 1970-01-01T00:03:14Z with fencing token 1: j",
            "woken by the cron tick of 1970-01-01T00:03:26Z: [c] ran for the due time 1970-01-01T00:03:56Z with fencing token 8: j",
            "woken by the cron tick of 1970-01-01T00:03:32Z: [c] ran for the due time 1970-01-01T00:03:32Z with fencing token 3: j",
            "woken by the cron tick of 1970-01-01T00:03:54Z: [b] ran for the due time 1970-01-01T00:03:54Z with fencing token 7: j",
        ]);
        let seen = [195, 238, 213, 235];
        runs.iter_mut().zip(seen).for_each(|(r, at)| r.seen = Some(at));
        let order = |runs: &[Report]| {
            check(runs, None).into_iter().filter(|v| v.contains("grant order")).collect::<Vec<_>>()
        };
        assert_eq!(check(&runs, None), Vec::<String>::new());
        // Had token 8 been logged at 207, token 3 (tick 212) would have come after it.
        runs[1].seen = Some(207);
        assert_eq!(order(&runs).len(), 2, "{:?}", order(&runs));
    }
}

//! The mutual-exclusion checker the soak runs are judged by.

use super::Grant;
use std::collections::{BTreeMap, BTreeSet};

/// The mutual-exclusion checker. Per lock: no run is granted while another surely holds the
/// lease, no run completes after another was granted during its work (a holder that lost its
/// lease must be refused), no interval is granted twice, and fencing tokens strictly increase
/// in the order the runs were granted.
pub fn check(grants: &[Grant]) -> Vec<String> {
    let mut violations = Vec::new();
    let mut by_lock: BTreeMap<&str, Vec<&Grant>> = BTreeMap::new();
    for grant in grants {
        by_lock.entry(&grant.lock).or_default().push(grant);
    }
    for (lock, mut runs) in by_lock {
        runs.sort_by_key(|g| g.work.0);
        for (i, a) in runs.iter().enumerate() {
            for b in runs[i + 1..].iter().take_while(|b| b.work.0 < a.held_until.max(a.work.1)) {
                let (who, by) = ((a.contender, a.token), (b.contender, b.token));
                if b.work.0 < a.held_until {
                    violations.push(format!(
                        "{lock}: overlap: c{} token {} held the lease until {:?}, c{} token {} \
                         started at {:?}",
                        who.0, who.1, a.held_until, by.0, by.1, b.work.0
                    ));
                } else if a.completed {
                    violations.push(format!(
                        "{lock}: c{} token {} completed although c{} token {} was granted during \
                         its work",
                        who.0, who.1, by.0, by.1
                    ));
                }
            }
        }
        for pair in runs.windows(2) {
            if pair[1].token <= pair[0].token {
                violations.push(format!(
                    "{lock}: token did not increase: {} then {}",
                    pair[0].token, pair[1].token
                ));
            }
        }
        let mut intervals = BTreeSet::new();
        for run in &runs {
            if !intervals.insert(run.interval) {
                violations.push(format!("{lock}: interval {} granted twice", run.interval));
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn grant(lock: &str, token: u64, interval: u64, from: u64, to: u64) -> Grant {
        let ms = Duration::from_millis;
        Grant {
            lock: lock.into(),
            contender: 0,
            token,
            interval,
            work: (ms(from), ms(to)),
            held_until: ms(to),
            crashed: false,
            overran: false,
            completed: true,
        }
    }

    #[test]
    fn the_checker_catches_every_kind_of_violation() {
        assert!(check(&[
            grant("a", 1, 1, 0, 10),
            grant("a", 2, 2, 10, 20),
            grant("b", 1, 1, 5, 15)
        ])
        .is_empty());
        let overlap = check(&[grant("a", 1, 1, 0, 10), grant("a", 2, 2, 9, 20)]);
        assert!(overlap.len() == 1 && overlap[0].contains("overlap"), "{overlap:?}");
        let tokens = check(&[grant("a", 2, 1, 0, 10), grant("a", 2, 2, 10, 20)]);
        assert!(tokens.len() == 1 && tokens[0].contains("token"), "{tokens:?}");
        let intervals = check(&[grant("a", 1, 7, 0, 10), grant("a", 2, 7, 10, 20)]);
        assert!(intervals.len() == 1 && intervals[0].contains("twice"), "{intervals:?}");
        // A paused holder: its lease ran out at 15, another was granted at 16, and it then
        // completed at 17. Fine only if its complete was refused.
        let paused = Grant {
            held_until: Duration::from_millis(15),
            overran: true,
            ..grant("a", 1, 1, 0, 17)
        };
        let taken = grant("a", 2, 2, 16, 20);
        let lost = check(&[paused.clone(), taken.clone()]);
        assert!(lost.len() == 1 && lost[0].contains("completed although"), "{lost:?}");
        assert!(check(&[Grant { completed: false, ..paused }, taken.clone()]).is_empty());
        // A crash holds the lease until its deadline, however short its work.
        let crash = Grant {
            held_until: Duration::from_millis(18),
            crashed: true,
            completed: false,
            ..grant("a", 1, 1, 0, 0)
        };
        let early = check(&[crash, taken]);
        assert!(early.len() == 1 && early[0].contains("overlap"), "{early:?}");
    }
}

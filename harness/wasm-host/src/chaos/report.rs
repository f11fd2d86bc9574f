//! The replicas' own account of every tick, read back from their cron-job logs. The line is
//! what the app prints (`apps/shared/src/tick.rs`), after the tick that woke the replica:
//! `woken by the cron tick of <ISO 8601>: [holder] ran for the due time <ISO 8601> with fencing
//! token N (…): detail; result …`, `… [holder] ran the manual run asked by <who> with fencing
//! token N: …`, `… [holder] skipped the due time <ISO 8601>: detail` or `… [holder] skipped:
//! detail`.

/// What became of a run's fenced result write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// Accepted by the store with this token.
    Written(u64),
    /// Refused: the store had seen a newer token.
    Stale { presented: u64, stored: u64 },
    /// Not attempted (the run stopped first) or failed for another reason (faults, lease).
    Other(String),
}

#[derive(Clone, Debug)]
pub struct Report {
    /// The replica (its holder label).
    pub holder: String,
    /// The cron event's scheduled second: when the replica was woken, not what it ran.
    pub at: u64,
    /// The due time (unix second) the run was for, or the skip was about.
    pub due: Option<u64>,
    /// A manual run: who asked.
    pub manual_by: Option<String>,
    pub token: Option<u64>,
    pub took_over: bool,
    /// Everything after the head: why it skipped, or what the run did.
    pub detail: String,
    /// Runs only.
    pub write: Option<Write>,
    /// The run's `complete` was refused with `lease-lost`.
    pub complete_lost: bool,
    /// When the harness first read this line (unix seconds, rounded up): the run was granted
    /// before then. `None` when not watched; the judge then takes the tick's second.
    pub seen: Option<u64>,
}

impl Report {
    /// Why a skip skipped, as a short key for the counts.
    pub fn skip_reason(&self) -> &'static str {
        let d = &self.detail;
        if d.contains("previous tick of this replica") {
            "own previous tick"
        } else if d.starts_with("held by") {
            "held-by-other"
        } else if d.starts_with("already ran") {
            "already-ran"
        } else if d.starts_with("too late") {
            "too-late"
        } else if d.starts_with("could not decide") {
            "error"
        } else {
            "other"
        }
    }
}

/// Every readable tick line of one log; other lines (Spin's own) are ignored.
pub fn parse_log(log: &str) -> Vec<Report> {
    log.lines().filter_map(parse_line).collect()
}

pub fn parse_line(line: &str) -> Option<Report> {
    let (at, rest) = traffic_cop_testbed::tick_line(line)?;
    let (holder, rest) = rest.strip_prefix('[')?.split_once("] ")?;
    let holder = holder.to_string();
    if let Some(skipped) = rest.strip_prefix("skipped") {
        let (due, detail) = match skipped.strip_prefix(" the due time ") {
            Some(rest) => {
                let (due, detail) = rest.split_once(": ")?;
                (Some(traffic_cop_testbed::unix_of_iso(due)?), detail)
            }
            None => (None, skipped.strip_prefix(": ")?),
        };
        return Some(Report {
            holder,
            at,
            due,
            manual_by: None,
            token: None,
            took_over: false,
            detail: detail.to_string(),
            write: None,
            complete_lost: false,
            seen: None,
        });
    }
    let (what, rest) = rest.strip_prefix("ran")?.split_once("with fencing token ")?;
    let (head, detail) = rest.split_once(": ")?;
    let token = head.split(' ').next()?.parse().ok()?;
    let what = what.trim();
    let due = match what.strip_prefix("for the due time ") {
        Some(due) => Some(traffic_cop_testbed::unix_of_iso(due)?),
        None => None,
    };
    let manual_by = what.strip_prefix("the manual run asked by ").map(str::to_string);
    let write = if let Some(n) = after(detail, "; result written with token ") {
        Write::Written(number(n)?)
    } else if let Some(refused) = after(detail, "; result write refused: stale fencing token ") {
        let (presented, stored) = refused.split_once(" < ")?;
        Write::Stale { presented: number(presented)?, stored: number(stored)? }
    } else {
        Write::Other(detail.to_string())
    };
    Some(Report {
        holder,
        at,
        due,
        manual_by,
        token: Some(token),
        took_over: head.contains("took over an abandoned run"),
        complete_lost: detail.contains("complete failed: LeaseLost")
            || detail.contains("complete failed: lease lost"),
        detail: detail.to_string(),
        write: Some(write),
        seen: None,
    })
}

/// Whether the run granted `token` has ended as its replica sees it: it logs a run's line only
/// once the run is over (after `complete`, whether or not that succeeded). The lock's record can
/// still say it runs when `complete`'s answer was lost; striking its holder then strikes no run.
pub fn ended(reports: &[Report], token: u64) -> bool {
    reports.iter().any(|r| r.token == Some(token))
}

fn after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.find(marker).map(|at| &text[at + marker.len()..])
}

/// The leading digits of `text`.
fn number(text: &str) -> Option<u64> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_runs_skips_and_write_outcomes() {
        let run = parse_line(
            "woken by the cron tick of 1970-01-01T00:00:12Z: [r-1] ran for the due time 1970-01-01T01:00:10+01:00 with fencing token 7 (took over an abandoned run): janitor report: 1 locks; result written with token 7",
        )
        .unwrap();
        assert_eq!((run.at, run.due, run.token, run.took_over), (12, Some(10), Some(7), true));
        assert_eq!(run.write, Some(Write::Written(7)));
        let stale = parse_line(
            "woken by the cron tick of 1970-01-01T00:00:14Z: [r-0] ran the manual run asked by ana with fencing token 6: janitor report: x; result write refused: stale fencing token 6 < 7; complete failed: lease lost: its time ran out here: the time left on the lease ran out before the call; nothing was sent",
        )
        .unwrap();
        assert_eq!(stale.write, Some(Write::Stale { presented: 6, stored: 7 }));
        assert_eq!((stale.due, stale.manual_by.as_deref()), (None, Some("ana")));
        assert!(stale.complete_lost);
        let skip = parse_line(
            "woken by the cron tick of 1970-01-01T00:00:16Z: [r-2] skipped the due time 1970-01-01T00:00:16Z: held by r-1",
        )
        .unwrap();
        assert_eq!((skip.token, skip.due, skip.skip_reason()), (None, Some(16), "held-by-other"));
        let paused = parse_line(
            "woken by the cron tick of 1970-01-01T00:00:16Z: [r-2] skipped: paused by x",
        )
        .unwrap();
        assert_eq!((paused.due, paused.detail.as_str()), (None, "paused by x"));
        assert!(parse_line("some spin noise").is_none());
    }

    #[test]
    fn a_run_whose_line_is_logged_has_ended_though_its_complete_failed() {
        // As a CI run logged it: `complete`'s answer was lost, the record still said running,
        // and the chaos run struck the replica as if its run were still going.
        let log = "woken by the cron tick of 1970-01-01T00:00:04Z: [chaos-0] ran for the due time 1970-01-01T00:00:04Z with fencing token 4: janitor report: 1 locks; result written with token 4; complete failed: Timeout\n\
                   woken by the cron tick of 1970-01-01T00:00:06Z: [chaos-0] skipped: held by chaos-1";
        let reports: Vec<Report> = log.lines().filter_map(|l| parse_line(l.trim())).collect();
        assert!(ended(&reports, 4));
        assert!(!ended(&reports, 5));
    }
}

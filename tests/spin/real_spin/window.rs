//! The schedule as users write it, on real Spin: the trigger fires every 2 s on three replicas,
//! and the guard's `schedule` is a one-minute window, every 10 s, written on the wall clock of
//! Asia/Kathmandu (UTC+05:45 all year, so an hour-based mistake cannot pass). One run per due
//! time inside the window, none outside it, and a takeover after the running replica is
//! SIGKILLed. A fourth replica, on a lock of its own, reads the same expression in UTC and has
//! nothing due for hours.

use crate::spin::decisions::{decisions, Decision};
use crate::story;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use traffic_cop_testbed::spin::{manifest_copy, Launch};

const TRIGGER: &str = "*/2 * * * * *";
/// Kathmandu's offset: fixed since 1986 (no DST), 5 h 45 min.
const KATHMANDU_OFFSET_S: u64 = 5 * 3600 + 45 * 60;
const STEP_S: u64 = 10;
const WINDOW_S: u64 = 60;
/// How early a tick may count for a due time: the default tolerance (5 s), at most a quarter
/// of the gap before the due time: 2.5 s inside the window, the whole 5 s for its first due
/// time (the one before it is an hour or a day earlier).
const EARLY_MS: u64 = 2_500;
const FIRST_EARLY_MS: u64 = 5_000;

fn now_s() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The cron expression (Spin's dialect) for every 10 s of the minute that starts at the
/// Kathmandu wall-clock time `local_start` (seconds since the epoch, read on that clock). Its six
/// due times hold the story: the second is killed mid-run, the third is taken over once the
/// killed run's lease has run out, and three more follow.
pub fn window_expression(local_start: u64) -> String {
    format!("*/{STEP_S} {} {} * * *", local_start / 60 % 60, local_start / 3600 % 24)
}

pub fn kathmandu_window_with_a_takeover(spin: PathBuf, data: PathBuf) -> String {
    let dir = story::story_dir("window-kathmandu");
    let launch = Launch {
        spin,
        data_dir: Some(data),
        manifest: manifest_copy(&dir.join("app"), TRIGGER),
        component: None,
        lifetime: Duration::from_secs(330),
        env: Vec::new(),
    };
    // The window opens at the first whole minute at least 20 s after the replicas are up
    // (Kathmandu's minutes start on UTC's: the offset is a whole number of minutes).
    let start_expected = now_s() + 40;
    let window_utc = (start_expected + 20).div_ceil(60) * 60;
    let expression = window_expression(window_utc + KATHMANDU_OFFSET_S);
    let pid = std::process::id();
    let (container, utc_container) = (format!("kathmandu{pid}"), format!("kathmanduutc{pid}"));
    let variables = |zone: &str| {
        vec![
            ("schedule", expression.clone()),
            ("time_zone", zone.to_string()),
            ("work_ms", "3000".to_string()),
        ]
    };
    let mut nodes =
        story::start_nodes_with(&launch, &dir, &container, "ktm", 3, &variables("Asia/Kathmandu"));
    let utc = story::start_nodes_with(&launch, &dir, &utc_container, "utc", 1, &variables("UTC"));
    assert!(now_s() + 5 < window_utc, "replicas took too long to start: window missed");
    let due: Vec<u64> = (0..WINDOW_S / STEP_S).map(|k| window_utc + k * STEP_S).collect();
    let story_end = window_utc + WINDOW_S + 14;
    let mut killed: Option<story::Killed> = None;
    let deadline = Instant::now() + Duration::from_secs(story_end - now_s().min(story_end) + 30);
    while now_s() < story_end && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        if killed.is_none() {
            // The second run of the window, in the middle of its 3 s of work.
            killed = story::kill_running(&mut nodes, &container, 2, STEP_S).map(|k| {
                // Its due time: a grant may come up to the early tolerance before it.
                story::Killed { at: (k.start_ms + EARLY_MS) / 1000 / STEP_S * STEP_S, ..k }
            });
        }
    }
    let killed = killed.expect("no run of the window was seen running to be killed");
    let all: Vec<Decision> = nodes.iter().flat_map(decisions).collect();
    let dump = format!("expression {expression:?}, window from {window_utc}\n{all:#?}");
    let runs: Vec<&Decision> = all.iter().filter(|d| d.run).collect();

    // Before the window, every replica named its first due time: the Kathmandu reading.
    // After it, the next due time is the next day's (or the hour's other combination).
    let not_due: Vec<u64> = all
        .iter()
        .filter(|d| d.reason.as_deref() == Some("not-due"))
        .filter_map(|d| d.due_s)
        .collect();
    assert!(not_due.contains(&window_utc), "no not-due skip naming the window\n{dump}");
    let window_end = window_utc + WINDOW_S;
    assert!(
        not_due.iter().all(|s| *s == window_utc || *s >= window_end + 3000),
        "a next due time neither the window's start nor long after it\n{dump}"
    );

    // One grant per due time of the window (the killed run's grant counts), none outside it.
    let mut granted: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for run in &runs {
        let due_s = run.due_s.expect("a run names its due time");
        assert!(due.contains(&due_s), "a run outside the window: {run:?}\n{dump}");
        let tick = run.tick_s.expect("a run's tick time");
        let early_ms = if due_s == window_utc { FIRST_EARLY_MS } else { EARLY_MS };
        assert!(
            tick * 1000 + early_ms >= due_s * 1000 && tick <= due_s + STEP_S,
            "a run for {due_s} at the tick of {tick}, early by more than the tolerance or late \
             by a due time: {run:?}\n{dump}"
        );
        granted.entry(due_s).or_default().push(run.token.unwrap());
    }
    granted.entry(killed.at).or_default().push(killed.token);
    for at in &due {
        let tokens = granted.get(at).cloned().unwrap_or_default();
        assert_eq!(tokens.len(), 1, "due time {at}: grants {tokens:?}\n{dump}");
    }
    let tokens: Vec<u64> = granted.values().flatten().copied().collect();
    let first = tokens[0];
    assert_eq!(tokens, (first..first + due.len() as u64).collect::<Vec<_>>(), "{dump}");

    // The takeover: the next grant after the kill, on another replica, not before the killed
    // run's lease could expire, reporting the abandoned run.
    let takeover = runs
        .iter()
        .find(|r| r.token == Some(killed.token + 1))
        .unwrap_or_else(|| panic!("nobody took over from {}\n{dump}", killed.holder));
    assert!(takeover.abandoned && takeover.holder != killed.holder, "{takeover:?}\n{dump}");
    let expiry_ms = killed.start_ms + story::LEASE_SECONDS * 1000;
    assert!(takeover.granted_ms.unwrap() + 1000 >= expiry_ms, "early takeover\n{dump}");

    // The same expression in UTC: nothing due during the story, and the next due time hours
    // away (the Kathmandu wall-clock window, read as UTC, is 5 h 45 min later).
    let utc_decisions = decisions(&utc[0]);
    assert!(!utc_decisions.is_empty(), "the UTC replica never ticked");
    // Its first tick looks and finds nothing due; later ticks may remember that and not ask.
    let first_reason = utc_decisions[0].reason.as_deref();
    assert_eq!(first_reason, Some("not-due"), "UTC reading: {:?}", utc_decisions[0]);
    for d in &utc_decisions {
        let skipped = matches!(d.reason.as_deref(), Some("not-due" | "remembered"));
        assert!(!d.run && skipped, "UTC reading: {d:?}");
        assert!(d.due_s.unwrap() > window_utc + 3600 * 4, "UTC reading due too soon: {d:?}");
    }
    format!(
        "Kathmandu window {expression:?}: {} runs for {} due times, {} killed at token {}, \
         taken over by {} (token {}); {} UTC-reading ticks, none due",
        runs.len(),
        due.len(),
        killed.holder,
        killed.token,
        takeover.holder,
        takeover.token.unwrap(),
        utc_decisions.len()
    )
}

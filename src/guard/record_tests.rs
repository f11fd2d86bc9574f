use super::*;

fn lease() -> crate::ops::LeaseId {
    crate::ops::LeaseId::parse("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap()
}

#[test]
fn a_record_survives_metadata_round_trip_with_any_text() {
    let record = RunRecord {
        paused: Some(Paused { by: "ops: ana".into(), since_ms: 5, reason: "deploy; 50%".into() }),
        run_now: Some(RunNow { by: "bob:1".into(), at_ms: 9 }),
        schedules: vec![
            SeenSchedule {
                schedule: "cron:spin:UTC:0 * * * * *".into(),
                first_seen_ms: 7,
                last_seen_ms: 9,
            },
            SeenSchedule { schedule: "every:60:0, odd;".into(), first_seen_ms: 1, last_seen_ms: 2 },
        ],
        ..RunRecord::default()
    }
    .granted(7, 1_735_689_600_000, "replica 3 — ü%20\n", &lease())
    .manual_for("operator: x")
    .completed(1_735_689_601_500, &Outcome::Failure("disk full; 100% used".into()));
    let metadata = record.to_metadata();
    assert!(metadata.iter().all(|(_, v)| v.bytes().all(|b| (0x21..0x7f).contains(&b))));
    assert_eq!(RunRecord::from_metadata(&metadata), record);
}

#[test]
fn missing_or_garbage_fields_read_as_never() {
    let garbage = [
        ("tc_fence".into(), "x".into()),
        ("tc_start".into(), "-1".into()),
        ("tc_due".into(), "nope".into()),
        ("tc_paused".into(), ":".into()),
    ];
    assert_eq!(RunRecord::from_metadata(&garbage), RunRecord::default());
    assert_eq!(RunRecord::from_metadata(&[]), RunRecord::default());
}

#[test]
fn outcome_text_is_capped() {
    let record = RunRecord::default().completed(1, &Outcome::Failure("x".repeat(1000)));
    let text = record.outcome.unwrap().as_record_text();
    assert_eq!(text.len(), MAX_OUTCOME_CHARS);
    assert_eq!(text, format!("failure: {}", "x".repeat(MAX_OUTCOME_CHARS - "failure: ".len())));
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
    let granted = record.granted(5, 1_000, "b", &lease()).completed(2_000, &Outcome::Success);
    let written = granted.to_metadata();
    for kept in ["tc_from_a_newer_build", "TC_Shouting"] {
        assert!(written.iter().any(|(k, _)| k == kept), "{kept} lost: {written:?}");
    }
    assert!(!written.iter().any(|(k, _)| k == "not_ours"));
    assert_eq!(RunRecord::from_metadata(&written).unknown, record.unknown);
}

#[test]
fn the_last_scheduled_due_time_skips_manual_runs_and_reads_older_builds_grants_from_their_start() {
    let every_minute = Schedule::Every(crate::schedule::Every::new(60, 0).unwrap());
    let minute = 60_000;
    let scheduled = RunRecord::default()
        .granted(1, 10 * minute + 300, "a", &lease())
        .scheduled_for(&every_minute, 10 * minute, 0);
    assert_eq!(scheduled.last_due_ms(&every_minute, 0), Some(10 * minute));
    let manual = scheduled
        .completed(10 * minute + 900, &Outcome::Success)
        .granted(2, 12 * minute + 5, "b", &lease())
        .manual_for("ops");
    assert_eq!(manual.manual_by(), Some("ops"));
    assert_eq!(manual.last_due_ms(&every_minute, 0), Some(10 * minute));
    // An older build's grant: tc_due still names token 1, the run is token 3.
    let older =
        RunRecord { fence: 3, started_ms: Some(14 * minute - 2_000), manual: None, ..scheduled };
    assert_eq!(older.last_due_ms(&every_minute, 5_000), Some(14 * minute));
}

/// A rolling upgrade: the last run was granted and completed by a build before guard@0.3.0,
/// which writes no history. This build's next grant adds it, so the history and totals lose
/// no run of a mixed fleet; a run already in the history is not added twice.
#[test]
fn a_run_completed_by_an_older_build_joins_the_history_at_the_next_grant() {
    let ours =
        RunRecord::default().granted(1, 1_000, "new", &lease()).completed(1_500, &Outcome::Success);
    let keys = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    // What the old build's grant and complete leave: its own keys, ours kept as they were.
    let mut metadata = ours.to_metadata();
    metadata.retain(|(k, _)| !["tc_fence", "tc_start", "tc_stop", "tc_holder"].contains(&&**k));
    metadata.extend(keys(&[
        ("tc_fence", "2"),
        ("tc_start", "2000"),
        ("tc_stop", "2400"),
        ("tc_holder", "old"),
        ("tc_outcome", "failure: disk full"),
        ("tc_every", "2"),
        ("tc_phase", "0"),
    ]));
    metadata.retain(|(k, v)| k != "tc_outcome" || v != "success");
    let old = RunRecord::from_metadata(&metadata);
    let next = old.granted(3, 4_000, "new", &lease());
    let fences: Vec<u64> = next.history.iter().map(|run| run.fence).collect();
    assert_eq!(fences, [2, 1]);
    let run = &next.history[0];
    assert_eq!(
        (run.started_ms, run.stopped_ms, run.holder.as_deref()),
        (2_000, Some(2_400), Some("old"))
    );
    assert_eq!(run.outcome, PastOutcome::Failure("disk full".into()));
    assert_eq!((next.totals.successes, next.totals.failures), (1, 1));
    // Our own completed run is in the history already: the grant after it adds nothing.
    let again = ours.granted(2, 2_000, "new", &lease());
    assert_eq!(again.history.len(), 1);
    assert_eq!(again.totals.successes, 1);
}

/// The codec writes the bytes every build before the typed record wrote (replicas of different
/// builds share a lock), and the format they are in (`tc_format`, which those builds keep as an
/// unknown key). Pinned from the codec of commit 92998d8, before the record had types.
#[test]
fn the_codec_writes_the_bytes_earlier_builds_wrote() {
    let every = Schedule::Every(crate::schedule::Every::new(3_600, 900).unwrap());
    let record = RunRecord {
        paused: Some(Paused { by: "ops: ana".into(), since_ms: 5, reason: "deploy; 50%".into() }),
        ..RunRecord::default()
    }
    .granted(6, 1_735_686_000_000, "replica 2", &lease())
    .scheduled_for(&every, 1_735_686_000_000, 0)
    .completed(1_735_686_001_000, &Outcome::Success)
    .granted(7, 1_735_689_600_000, "replica 3 — ü%20\n", &lease())
    .scheduled_for(&every, 1_735_689_300_000, 2)
    .replacing(6)
    .manual_for("operator: x")
    .completed(1_735_689_601_500, &Outcome::Failure("disk full; 100% used".into()));
    let golden = [
        ("tc_fence", "7"),
        ("tc_running", "false"),
        ("tc_format", "1"),
        ("tc_start", "1735689600000"),
        ("tc_stop", "1735689601500"),
        ("tc_outcome", "failure%3A%20disk%20full;%20100%25%20used"),
        ("tc_holder", "replica%203%20%E2%80%94%20%C3%BC%2520%0A"),
        ("tc_every", "3600"),
        ("tc_phase", "900"),
        ("tc_due", "7:1735689300000:2"),
        ("tc_sched", "every%3A3600%3A900"),
        ("tc_manual", "7:operator%3A%20x"),
        ("tc_replaced", "7:6"),
        ("tc_paused", "5:ops%3A%20ana:deploy;%2050%25"),
        ("tc_lease", "7:0f8fad5b-d9cb-469f-a165-70867728950e"),
        (
            "tc_hist",
            "7,,1735689600000,1735689601500,0,1,f:disk%20full%3B%20100%25%20used,replica%203%20%E2%\
             80%94%20%C3%BC%2520%0A;6,1735686000000,1735686000000,1735686001000,0,0,r,replica%202",
        ),
        ("tc_totals", "1:1:0:2:1735686001000:1735689601500"),
    ];
    let written = record.to_metadata();
    let written: Vec<(&str, &str)> =
        written.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(written, golden);
    let read = RunRecord::from_metadata(&record.to_metadata());
    assert_eq!(read, record);
    assert_eq!(read.outcome, Some(Outcome::Failure("disk full; 100% used".into())));
    assert_eq!(read.manual, Some(OfGrant { fence: 7, value: "operator: x".to_string() }));
    assert_eq!(read.every, Some(Grid { interval_seconds: 3_600, offset_seconds: 900 }));
}

/// A record in another format than this build's is refused by name, not misread; one written
/// before formats were numbered (no `tc_format`) is this build's.
#[test]
fn a_record_in_another_format_is_refused_and_an_unnumbered_one_is_read() {
    let ours = RunRecord::default().granted(3, 1_000, "a", &lease());
    let mut metadata = ours.to_metadata();
    assert_eq!(RunRecord::readable(&metadata).unwrap(), ours);
    metadata.retain(|(k, _)| k != "tc_format");
    assert_eq!(RunRecord::readable(&metadata).unwrap(), ours, "an unnumbered record");
    for newer in ["2", "1.1", ""] {
        metadata.retain(|(k, _)| !k.eq_ignore_ascii_case("tc_format"));
        metadata.push(("TC_FORMAT".into(), newer.into()));
        match RunRecord::readable(&metadata) {
            Err(crate::Error::UnexpectedAnswer(m)) => {
                assert!(m.contains(&format!("format {newer:?}")), "{m}");
                assert!(m.contains("reads format 1 only") && m.contains("upgrade this replica"));
            }
            other => panic!("format {newer:?} read: {other:?}"),
        }
    }
}

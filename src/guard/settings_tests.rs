use super::*;
use crate::transport::StdRuntime;

const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

fn raw() -> RawSettings {
    RawSettings {
        connection_string: Some(format!(
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1"
        )),
        container: Some("locks".into()),
        lock: Some("nightly".into()),
        holder: Some("replica-1".into()),
        schedule: Some("0 0 2 * * *".into()),
        time_zone: Some("Europe/Berlin".into()),
        ..RawSettings::default()
    }
}

fn refused(settings: &RawSettings) -> (&'static str, String) {
    match settings.options(&StdRuntime).and_then(|_| settings.lock().map(|_| ())) {
        Err(Error::BadOption(e)) => (e.field, e.message),
        other => panic!("expected a bad setting, got {other:?}"),
    }
}

#[test]
fn unset_settings_take_their_defaults() {
    let options = raw().options(&StdRuntime).unwrap();
    assert_eq!(options.lease_seconds(), DEFAULT_LEASE_SECONDS);
    assert_eq!(options.keep_alive_seconds(), 5);
    assert_eq!(options.early_ms(), DEFAULT_EARLY_MS);
    assert_eq!(options.starting_deadline_seconds(), None);
    assert_eq!(options.overlap(), Overlap::Forbid);
    assert_eq!(options.holder(), "replica-1");
    let unscheduled = RawSettings { schedule: Some("  ".into()), ..raw() };
    assert_eq!(unscheduled.schedule().unwrap(), Schedule::None);
}

#[test]
fn an_unset_holder_is_a_random_label_per_instance() {
    let settings = RawSettings { holder: None, ..raw() };
    let holder = settings.options(&StdRuntime).unwrap().holder().to_string();
    assert!(holder.starts_with("instance-") && holder.len() == 15, "{holder}");
}

#[test]
fn each_unusable_setting_names_the_variable_to_set() {
    let cases: Vec<(RawSettings, &str, &str)> = vec![
        (RawSettings { connection_string: None, ..raw() }, "connection_string", "is not set"),
        (
            RawSettings { connection_string: Some("AccountName=x".into()), ..raw() },
            "connection_string",
            "",
        ),
        (RawSettings { container: Some("No_Such".into()), ..raw() }, "container", "container"),
        (RawSettings { lock: Some("a//b".into()), ..raw() }, "lock", "segments"),
        (
            RawSettings { lease_seconds: Some("ten".into()), ..raw() },
            "lease_seconds",
            "whole number",
        ),
        (RawSettings { lease_seconds: Some("90".into()), ..raw() }, "lease_seconds", "60"),
        (RawSettings { keep_alive_seconds: Some("14".into()), ..raw() }, "keep_alive_seconds", ""),
        (
            RawSettings { time_zone: Some("Mars/Olympus".into()), ..raw() },
            "time_zone",
            "Mars/Olympus",
        ),
        (RawSettings { schedule: Some("0 61 * * * *".into()), ..raw() }, "schedule", "minute"),
        (RawSettings { cron_dialect: Some("quartz".into()), ..raw() }, "cron_dialect", "quartz"),
        (
            RawSettings { replace_after_seconds: Some("5".into()), ..raw() },
            "replace_after_seconds",
            "60",
        ),
        (RawSettings { wait_ms: Some("-1".into()), ..raw() }, "wait_ms", "whole number"),
        (RawSettings { schedule: Some("@every 0s".into()), ..raw() }, "schedule", "@every"),
        (RawSettings { schedule: Some("@every soon".into()), ..raw() }, "schedule", "@every"),
        (
            RawSettings {
                max_job_seconds: Some("40".into()),
                lease_seconds: Some("30".into()),
                ..raw()
            },
            "max_job_seconds",
            "longer than the lease (30 s)",
        ),
    ];
    for (settings, variable, says) in cases {
        let (named, message) = refused(&settings);
        assert_eq!(named, variable, "{settings:?}: {message}");
        assert!(message.contains(says), "{variable}: {message:?} should say {says:?}");
        assert!(!message.contains(KEY), "{message}");
    }
}

#[test]
fn every_takes_a_duration_of_hours_minutes_and_seconds() {
    for (text, seconds) in [("@every 90s", 90), ("@every 5m", 300), ("@every 1h30m", 5400)] {
        let settings = RawSettings { schedule: Some(text.into()), ..raw() };
        match settings.schedule().unwrap() {
            Schedule::Every(every) => assert_eq!(every.interval_seconds(), seconds, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn a_classic_dialect_reads_five_fields() {
    let settings = RawSettings {
        schedule: Some("0 2 * * 1".into()),
        cron_dialect: Some("classic".into()),
        ..raw()
    };
    assert!(matches!(settings.schedule().unwrap(), Schedule::Cron(_)));
    assert_eq!(refused(&RawSettings { cron_dialect: None, ..settings }).0, "schedule");
}

#[test]
fn the_connection_string_stays_out_of_debug() {
    let shown = format!("{:?}", raw());
    assert!(!shown.contains(KEY) && !shown.contains("AccountKey"), "{shown}");
}

#[test]
fn a_variable_is_its_own_variable_and_a_schedule_part_is_the_schedule() {
    for variable in VARIABLES {
        assert_eq!(variable_of(variable), variable);
    }
    assert_eq!(variable_of("minute"), "schedule");
    assert_eq!(variable_of("blob"), "lock");
    assert_eq!(variable_of("lease-seconds"), "lease_seconds");
}

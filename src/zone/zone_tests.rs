use super::*;

/// Seconds since 1970-01-01T00:00:00 of a date and time: a Unix second when read as UTC, a
/// civil second when read on a zone's wall clock.
fn at(year: i64, month: u32, day: i64, hour: i64, minute: i64) -> i64 {
    crate::civil::days_from_civil(year, month, day as u32) * 86_400 + hour * 3600 + minute * 60
}

fn zone(name: &str) -> Zone {
    Zone::named(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn berlin_springs_forward_into_a_gap_and_falls_back_into_a_fold() {
    let berlin = zone("Europe/Berlin");
    assert_eq!(berlin.name(), "Europe/Berlin");
    let (spring, fall) = (at(2026, 3, 29, 1, 0), at(2026, 10, 25, 1, 0));
    assert_eq!(berlin.to_instant(at(2026, 3, 29, 2, 30)), Local::Gap { after: spring });
    let fold = Local::Fold { first: at(2026, 10, 25, 0, 30), second: at(2026, 10, 25, 1, 30) };
    assert_eq!(berlin.to_instant(at(2026, 10, 25, 2, 30)), fold);
    assert_eq!(berlin.to_instant(at(2026, 7, 1, 12, 0)), Local::Unique(at(2026, 7, 1, 10, 0)));
    assert_eq!(berlin.to_instant(at(2026, 3, 29, 1, 59)), Local::Unique(at(2026, 3, 29, 0, 59)));
    assert_eq!(berlin.to_instant(at(2026, 3, 29, 3, 0)), Local::Unique(spring));
    assert_eq!(berlin.offset_at(spring - 1), 3600);
    assert_eq!(berlin.offset_at(spring), 7200);
    assert_eq!(berlin.to_civil(fall), at(2026, 10, 25, 2, 0));
    assert_eq!(berlin.transitions(at(2026, 1, 1, 0, 0), at(2027, 1, 1, 0, 0)), [spring, fall]);
}

#[test]
fn new_york_and_its_links() {
    let new_york = zone("America/New_York");
    let spring = at(2026, 3, 8, 7, 0);
    assert_eq!(new_york.to_instant(at(2026, 3, 8, 2, 30)), Local::Gap { after: spring });
    let fold = Local::Fold { first: at(2026, 11, 1, 5, 30), second: at(2026, 11, 1, 6, 30) };
    assert_eq!(new_york.to_instant(at(2026, 11, 1, 1, 30)), fold);
    assert_eq!(new_york.offset_at(at(2026, 1, 15, 0, 0)), -5 * 3600);
    assert_eq!(new_york.offset_at(at(2026, 7, 15, 0, 0)), -4 * 3600);
    let eastern = zone("US/Eastern");
    assert_eq!(eastern.name(), "US/Eastern");
    assert_ne!(eastern, new_york);
    let year = (at(2026, 1, 1, 0, 0), at(2027, 1, 1, 0, 0));
    assert_eq!(eastern.transitions(year.0, year.1), new_york.transitions(year.0, year.1));
}

#[test]
fn kathmandu_is_five_forty_five_all_year() {
    let kathmandu = zone("Asia/Kathmandu");
    for month in 1..=12 {
        assert_eq!(kathmandu.offset_at(at(2026, month, 1, 0, 0)), 5 * 3600 + 45 * 60);
    }
    assert!(kathmandu.transitions(at(2020, 1, 1, 0, 0), at(2060, 1, 1, 0, 0)).is_empty());
    assert_eq!(kathmandu.to_instant(at(2026, 5, 1, 5, 45)), Local::Unique(at(2026, 5, 1, 0, 0)));
}

#[test]
fn lord_howe_moves_its_clock_by_half_an_hour() {
    let howe = zone("Australia/Lord_Howe");
    assert_eq!(howe.offset_at(at(2026, 1, 15, 0, 0)), 11 * 3600);
    assert_eq!(howe.offset_at(at(2026, 7, 15, 0, 0)), 10 * 3600 + 1800);
    // Ends on April 5, 02:00 +11 (becoming 01:30); starts on October 4, 02:00 +10:30.
    let fold = Local::Fold { first: at(2026, 4, 4, 14, 45), second: at(2026, 4, 4, 15, 15) };
    assert_eq!(howe.to_instant(at(2026, 4, 5, 1, 45)), fold);
    let gap = Local::Gap { after: at(2026, 10, 3, 15, 30) };
    assert_eq!(howe.to_instant(at(2026, 10, 4, 2, 15)), gap);
}

#[test]
fn southern_zones_have_summer_across_the_new_year() {
    let sydney = zone("Australia/Sydney");
    let fold = Local::Fold { first: at(2026, 4, 4, 15, 30), second: at(2026, 4, 4, 16, 30) };
    assert_eq!(sydney.to_instant(at(2026, 4, 5, 2, 30)), fold);
    assert_eq!(
        sydney.to_instant(at(2026, 10, 4, 2, 30)),
        Local::Gap { after: at(2026, 10, 3, 16, 0) }
    );
    // Santiago's rules changed after 2020: explicit changes up to 2023, the rule after.
    let santiago = zone("America/Santiago");
    let fold = Local::Fold { first: at(2026, 4, 5, 2, 30), second: at(2026, 4, 5, 3, 30) };
    assert_eq!(santiago.to_instant(at(2026, 4, 4, 23, 30)), fold);
    assert_eq!(
        santiago.to_instant(at(2026, 9, 6, 0, 30)),
        Local::Gap { after: at(2026, 9, 6, 4, 0) }
    );
    // 2022: summer time began a week late (the rule says September 3).
    assert_eq!(santiago.offset_at(at(2022, 9, 10, 12, 0)), -4 * 3600);
    assert_eq!(santiago.offset_at(at(2022, 9, 11, 12, 0)), -3 * 3600);
}

#[test]
fn utc_is_itself() {
    let utc = Zone::utc();
    assert_eq!(utc, zone("UTC"));
    assert_eq!(utc.name(), "UTC");
    assert_eq!(zone("Etc/UTC").offset_at(at(2026, 6, 1, 0, 0)), 0);
    for t in [i64::MIN, -1, 0, at(2026, 6, 1, 0, 0), i64::MAX] {
        assert_eq!(utc.offset_at(t), 0);
        assert_eq!(utc.to_civil(t), t);
        assert_eq!(utc.to_instant(t), Local::Unique(t));
    }
    assert!(utc.transitions(i64::MIN, i64::MAX).is_empty());
}

#[test]
fn changes_after_2020_are_kept_and_earlier_history_is_not() {
    // Nuuk, 2023: summer at -02, then -02 became standard time; the rule rules from October.
    let nuuk = zone("America/Nuuk");
    assert_eq!(nuuk.offset_at(at(2023, 7, 1, 0, 0)), -2 * 3600);
    assert_eq!(nuuk.offset_at(at(2024, 7, 1, 0, 0)), -3600);
    assert_eq!(nuuk.transitions(at(2023, 5, 1, 0, 0), at(2024, 1, 1, 0, 0)), Vec::<i64>::new());
    // Vancouver (tzdata 2026f): on -07 for good from March 2026; November's change is in name only.
    let vancouver = zone("America/Vancouver");
    let changes = vancouver.transitions(at(2026, 1, 1, 0, 0), at(2030, 1, 1, 0, 0));
    assert_eq!(changes, [at(2026, 3, 8, 10, 0)]);
    assert_eq!(vancouver.offset_at(at(2028, 1, 1, 0, 0)), -7 * 3600);
    // Before 2020: the offset in force at 2020-01-01T00:00Z, not Berlin's 2019 summer time.
    let berlin = zone("Europe/Berlin");
    assert_eq!(berlin.offset_at(at(2019, 7, 1, 0, 0)), 3600);
    assert!(berlin.transitions(0, SINCE).is_empty());
    assert_eq!(berlin.transitions(0, at(2020, 6, 1, 0, 0)), [at(2020, 3, 29, 1, 0)]);
}

#[test]
fn windows_ids_are_refused_with_the_iana_name() {
    for (windows, iana) in [
        ("W. Europe Standard Time", "Europe/Berlin"),
        ("w. europe standard time", "Europe/Berlin"),
        ("Eastern Standard Time", "America/New_York"),
        ("AUS Eastern Standard Time", "Australia/Sydney"),
        ("UTC-02", "Etc/GMT+2"),
        ("Mountain Standard Time (Mexico)", "America/Mazatlan"),
        ("MOUNTAIN STANDARD TIME (MEXICO)", "America/Mazatlan"),
    ] {
        let refused = ZoneError::Windows { name: windows.into(), iana: iana.into() };
        assert_eq!(Zone::named(windows), Err(refused.clone()));
        assert!(refused.to_string().contains(iana), "{refused}");
    }
    // "UTC" is an IANA name as well as a Windows id.
    assert_eq!(Zone::named("UTC"), Ok(Zone::utc()));
    for near in
        ["W. Europe Standard", "W. Europe *", "W. Europe Standard Time ", "Mountain Standard Time"]
    {
        assert!(
            !matches!(Zone::named(near), Err(ZoneError::Windows { iana, .. }) if iana == "Europe/Berlin" || iana == "America/Mazatlan"),
            "{near}"
        );
    }
}

#[test]
fn unknown_names_are_refused_with_a_suggestion_when_one_is_obvious() {
    for (asked, suggestion) in [
        ("europe/berlin", Some("Europe/Berlin")),
        ("EUROPE/BERLIN", Some("Europe/Berlin")),
        ("America/New York", Some("America/New_York")),
        ("utc", Some("UTC")),
        ("Europe/Berln", None),
        ("Mars/Olympus_Mons", None),
    ] {
        let refused = Zone::named(asked).unwrap_err();
        let expected =
            ZoneError::Unknown { name: asked.into(), suggestion: suggestion.map(String::from) };
        assert_eq!(refused, expected);
        assert!(refused.to_string().contains(suggestion.unwrap_or("Europe/Berlin")), "{refused}");
    }
}

#[test]
fn hostile_names_are_refused_without_panic() {
    let long = "Europe/Berlin".repeat(100_000);
    for name in [
        "",
        " ",
        "\0",
        "Europe/Berlin\0",
        "\u{7}\n\r\u{1b}[2J",
        "Europe/../Berlin",
        "Europe/Berlín",
        &long,
    ] {
        let refused = Zone::named(name).unwrap_err();
        let message = refused.to_string();
        assert!(!message.chars().any(char::is_control), "{message:?}");
        assert!(message.len() < 400, "{} bytes", message.len());
    }
    let ZoneError::Unknown { name, .. } = Zone::named(&long).unwrap_err() else { panic!() };
    assert_eq!(name.chars().count(), 100);
}

#[test]
fn every_name_is_found_and_the_table_is_consistent() {
    let names: Vec<&str> = Zone::names().collect();
    assert_eq!(names.len(), 598);
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len());
    for name in names {
        assert_eq!(zone(name).name(), name);
    }
    for entry in &table::ENTRIES {
        let changes = entry.history.changes;
        assert!(changes.windows(2).all(|pair| pair[0].0 < pair[1].0), "{}", entry.names);
        // Where the rule takes over, it agrees with the last explicit change (RFC 8536 3.3).
        if let Some(&(last, offset)) = changes.last() {
            assert_eq!(entry.rule.offset_at(i64::from(last)), offset, "{}", entry.names);
        }
    }
    for line in windows::WINDOWS.lines() {
        let (windows, iana) = line.split_once('=').unwrap();
        let windows = windows.replace('*', "Standard Time");
        assert!(Zone::named(iana).is_ok(), "{windows}: {iana}");
        if windows == "UTC" {
            continue; // an IANA name too
        }
        let refused = ZoneError::Windows { name: windows.clone(), iana: iana.into() };
        assert_eq!(Zone::named(&windows), Err(refused), "{windows}");
    }
    assert_eq!(windows::WINDOWS.lines().count(), 142);
}

#[test]
fn civil_seconds_round_trip() {
    for name in [
        "Europe/Berlin",
        "Australia/Lord_Howe",
        "America/Santiago",
        "Asia/Gaza",
        "Africa/Casablanca",
    ] {
        let zone = zone(name);
        for t in (at(2020, 1, 1, 0, 0)..at(2031, 1, 1, 0, 0)).step_by(3_333_331) {
            match zone.to_instant(zone.to_civil(t)) {
                Local::Unique(back) => assert_eq!(back, t, "{name}"),
                Local::Fold { first, second } => assert!(t == first || t == second, "{name}"),
                Local::Gap { .. } => panic!("{name}: {t} read back as a gap"),
            }
        }
    }
}

#[test]
fn extreme_instants_and_civil_seconds_are_answered() {
    let berlin = zone("Europe/Berlin");
    for t in [i64::MIN, i64::MIN + 1, -1, 0, i64::MAX - 1, i64::MAX] {
        assert!([3600, 7200].contains(&berlin.offset_at(t)));
        let _ = berlin.to_civil(t);
        let _ = berlin.to_instant(t);
    }
    let all = berlin.transitions(i64::MIN, i64::MAX);
    assert!(all.windows(2).all(|pair| pair[0] < pair[1]));
    assert_eq!(all.first(), Some(&at(2020, 3, 29, 1, 0)));
    assert!(all.len() < 16_000, "{}", all.len());
}

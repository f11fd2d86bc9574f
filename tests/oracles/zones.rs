//! src/zone judged by Python's zoneinfo over the same pinned tzdata (tests/oracles/zones.py):
//! the set of names; for every zone, the offset (and its ISO 8601 reading) at random instants of 2020..2060 and every
//! offset change in 2020..2060; and civil times, random ones and those within two hours of
//! every change in 2024..2030, read back as unique, gap or fold.

use serde_json::{json, Value};
use traffic_cop::civil;
use traffic_cop::zone::{Local, Zone};
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::oracle;
use traffic_cop_testbed::runner::Test;

/// 2020-01-01T00:00Z and 2060-01-01T00:00Z.
const FROM: i64 = 1_577_836_800;
const TO: i64 = 2_840_140_800;
/// 2024-01-01T00:00Z and 2030-01-01T00:00Z: where civil times around each change are asked.
const CHANGES_FROM: i64 = 1_704_067_200;
const CHANGES_TO: i64 = 1_893_456_000;
const OFFSETS_PER_ZONE: usize = 20;
const CIVIL_PER_ZONE: usize = 10;
/// Around a change's two wall-clock readings: both ends of the gap or fold, and two hours out.
const AROUND: [i64; 11] = [-7200, -3600, -1801, -1800, -1, 0, 1, 1799, 1800, 3600, 7200];

fn names_are_zoneinfos() {
    let python = require("zoneinfo over the pinned tzdata", oracle::python());
    let answer = oracle::ask(&python, "zones.py", &json!({"names": true}).to_string());
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    let theirs: Vec<&str> =
        answer["names"].as_array().expect("names").iter().flat_map(Value::as_str).collect();
    let mut ours: Vec<&str> = Zone::names().collect();
    ours.sort_unstable();
    assert_eq!(ours, theirs, "the table's names are not zoneinfo.available_timezones()");
    eprintln!("zones: {} names, as zoneinfo.available_timezones()", ours.len());
}

fn offsets_and_changes_agree_with_zoneinfo() {
    let python = require("zoneinfo over the pinned tzdata", oracle::python());
    let mut seed = 0x5EED_2026_u64;
    let mut questions = String::new();
    let mut asked = Vec::new();
    for name in Zone::names() {
        let zone = Zone::named(name).expect("a table name");
        let mut instants: Vec<i64> =
            (0..OFFSETS_PER_ZONE).map(|_| between(&mut seed, FROM, TO)).collect();
        let changes = zone.transitions(FROM, TO);
        instants.extend(changes.iter().flat_map(|&t| [t - 1, t]));
        let civil: Vec<i64> = (0..CIVIL_PER_ZONE).map(|_| between(&mut seed, FROM, TO)).collect();
        let question =
            json!({"zone": name, "offsets": instants, "civil": civil, "scan": [FROM, TO]});
        questions.push_str(&format!("{question}\n"));
        asked.push((zone, instants, civil, changes));
    }
    let answers = oracle::ask(&python, "zones.py", &questions);
    assert_eq!(asked.len(), answers.lines().count(), "an answer per zone");
    let (mut offsets, mut changes, mut civil_times, mut wrong) = (0, 0, 0, Vec::new());
    for ((zone, instants, civil, ours), line) in asked.into_iter().zip(answers.lines()) {
        let answer: Value = serde_json::from_str(line).expect("JSON");
        for (&t, theirs) in instants.iter().zip(answer["iso"].as_array().expect("iso")) {
            // What the guard shows people (`show-time`, the board, the log lines).
            let ours = civil::iso8601(t as u64 * 1000, zone.offset_at(t));
            let ours = ours.strip_suffix('Z').map_or(ours.clone(), |utc| format!("{utc}+00:00"));
            if Some(ours.as_str()) != theirs.as_str() {
                wrong.push(format!("{} at {t}: {ours} against {theirs}", zone.name()));
            }
        }
        for (&t, theirs) in instants.iter().zip(answer["offsets"].as_array().expect("offsets")) {
            offsets += 1;
            if Some(i64::from(zone.offset_at(t))) != theirs.as_i64() {
                wrong.push(format!(
                    "{} at {t}: offset {} against {theirs}",
                    zone.name(),
                    zone.offset_at(t)
                ));
            }
        }
        let theirs: Vec<i64> = answer["transitions"]
            .as_array()
            .expect("transitions")
            .iter()
            .flat_map(Value::as_i64)
            .collect();
        changes += theirs.len();
        if ours != theirs {
            wrong.push(format!("{}: changes {ours:?} against {theirs:?}", zone.name()));
        }
        civil_times += compare_civil(&zone, &civil, &answer["civil"], &mut wrong);
    }
    assert!(
        wrong.is_empty(),
        "{} disagreements, the first:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
    assert!(offsets >= 10_000, "{offsets}");
    eprintln!("zones: {offsets} offsets, {changes} changes in 2020..2060 and {civil_times} random civil times agree with zoneinfo");
}

fn civil_times_around_changes_agree_with_zoneinfo() {
    let python = require("zoneinfo over the pinned tzdata", oracle::python());
    let mut questions = String::new();
    let mut asked = Vec::new();
    for name in Zone::names() {
        let zone = Zone::named(name).expect("a table name");
        let changes = zone.transitions(CHANGES_FROM, CHANGES_TO);
        if changes.is_empty() {
            continue;
        }
        let mut civil: Vec<i64> = changes
            .iter()
            .flat_map(|&t| [zone.to_civil(t - 1) + 1, zone.to_civil(t)])
            .flat_map(|reading| AROUND.map(|d| reading + d))
            .collect();
        civil.sort_unstable();
        civil.dedup();
        questions.push_str(&format!("{}\n", json!({"zone": name, "civil": civil})));
        asked.push((zone, civil));
    }
    let answers = oracle::ask(&python, "zones.py", &questions);
    assert_eq!(asked.len(), answers.lines().count(), "an answer per zone");
    let (zones, mut compared, mut wrong) = (asked.len(), 0, Vec::new());
    for ((zone, civil), line) in asked.into_iter().zip(answers.lines()) {
        let answer: Value = serde_json::from_str(line).expect("JSON");
        compared += compare_civil(&zone, &civil, &answer["civil"], &mut wrong);
    }
    assert!(
        wrong.is_empty(),
        "{} disagreements, the first:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
    assert!(zones >= 20, "{zones}");
    eprintln!("zones: {compared} civil times around the changes of 2024..2030 in {zones} zones agree with zoneinfo");
}

/// Compares `to_instant` with zoneinfo's reading of each civil second; how many were compared.
fn compare_civil(zone: &Zone, civil: &[i64], theirs: &Value, wrong: &mut Vec<String>) -> usize {
    let theirs = theirs.as_array().expect("civil answers");
    assert_eq!(civil.len(), theirs.len(), "{}: an answer per civil time", zone.name());
    for (&c, theirs) in civil.iter().zip(theirs) {
        let ours = match zone.to_instant(c) {
            Local::Unique(t) => json!(["unique", t]),
            Local::Gap { after } => json!(["gap", after]),
            Local::Fold { first, second } => json!(["fold", first, second]),
        };
        if &ours != theirs {
            wrong.push(format!("{} civil {c}: {ours} against {theirs}", zone.name()));
        }
    }
    civil.len()
}

/// Uniform enough in [from, to) for picking test instants (xorshift64).
fn between(seed: &mut u64, from: i64, to: i64) -> i64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    from + (*seed % (to - from) as u64) as i64
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        names_are_zoneinfos,
        offsets_and_changes_agree_with_zoneinfo,
        civil_times_around_changes_agree_with_zoneinfo,
    ]
}

//! Unit tests of the cron reader and search. The differential test against croner itself is
//! `tests/native/cron_croner.rs`; these pin the API, the messages, and the search against brute
//! force.

use super::{Cron, Dialect};
use crate::civil::{days_from_civil, DAYS_PER_CYCLE, SECONDS_PER_DAY};

fn spin(expression: &str) -> Cron {
    Cron::parse(expression, Dialect::Spin).unwrap_or_else(|e| panic!("{expression}: {e}"))
}

fn at(year: i64, month: u32, day: u32, hour: i64, minute: i64, second: i64) -> i64 {
    days_from_civil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Valid-looking fields, plenty of which never match or match rarely.
fn random_expression(rng: &mut Rng) -> String {
    let time = ["*", "0", "*/7", "5/15", "1-3", "0,30", "59", "10-50/20", "*/30"];
    let dom = ["*", "?", "1", "15", "31", "L", "15W", "1W", "31W", "29", "1-7", "*/10", "L,1"];
    let month = ["*", "2", "1-6", "Feb", "*/5", "12", "2,4"];
    let dow = ["*", "?", "1", "Mon-Fri", "5L", "1#2", "0#5", "6-7", "sun", "2#1,4L", "0L"];
    let hour = ["*", "0", "23", "*/5", "9-17"];
    format!(
        "{} {} {} {} {} {}",
        rng.pick(&time),
        rng.pick(&time),
        rng.pick(&hour),
        rng.pick(&dom),
        rng.pick(&month),
        rng.pick(&dow)
    )
}

#[test]
fn weekday_jobs_fire_on_weekdays_only() {
    let cron = spin("0 0 9 * * Mon-Fri");
    // 2025-01-04 was a Saturday.
    assert_eq!(cron.next_civil(at(2025, 1, 4, 12, 0, 0)), Some(at(2025, 1, 6, 9, 0, 0)));
    assert_eq!(cron.next_civil(at(2025, 1, 6, 9, 0, 0)), Some(at(2025, 1, 6, 9, 0, 0)));
    assert_eq!(cron.prev_civil(at(2025, 1, 6, 8, 59, 59)), Some(at(2025, 1, 3, 9, 0, 0)));
    assert_eq!(cron.count_civil(at(2025, 1, 1, 0, 0, 0), at(2025, 2, 1, 0, 0, 0)), 23);
    assert!(!cron.every_hour() && spin("0 0 * * * *").every_hour());
    assert_eq!(cron.expression(), "0 0 9 * * Mon-Fri");
    assert_eq!(Cron::parse("  @daily ", Dialect::Classic).unwrap().expression(), "@daily");
}

#[test]
fn spin_needs_both_day_fields_and_classic_either() {
    let friday_13th = spin("0 0 0 13 * FRI");
    assert_eq!(friday_13th.next_civil(at(2025, 1, 1, 0, 0, 0)), Some(at(2025, 6, 13, 0, 0, 0)));
    let classic = Cron::parse("0 0 13 * FRI", Dialect::Classic).unwrap();
    assert_eq!(classic.next_civil(at(2025, 1, 1, 0, 0, 0)), Some(at(2025, 1, 3, 0, 0, 0)));
    assert_eq!(classic.next_civil(at(2025, 1, 11, 0, 0, 0)), Some(at(2025, 1, 13, 0, 0, 0)));
    // A `*` field defers to the other one in both dialects.
    let mondays = Cron::parse("0 0 * * 1", Dialect::Classic).unwrap();
    assert_eq!(mondays.next_civil(at(2025, 1, 1, 0, 0, 0)), Some(at(2025, 1, 6, 0, 0, 0)));
}

#[test]
fn croner_quirks_are_kept() {
    let from = at(2025, 1, 1, 0, 0, 0);
    // `?` in any field, names in any case and any field: JAN in day-of-week is Monday.
    assert_eq!(spin("? 0 0 * * jan").next_civil(from), spin("0 0 0 * * 1").next_civil(from));
    // `5#2L` reads as `5L`: a final L wins over the #.
    assert_eq!(
        spin("0 0 0 * * 5#2L"),
        Cron { expression: "0 0 0 * * 5#2L".into(), ..spin("0 0 0 * * 5L") }
    );
    // 1W with a Saturday 1st fires on the previous month's last day (2025-03-01 was a Saturday).
    let first_weekday = spin("0 0 0 1W * *");
    assert_eq!(first_weekday.next_civil(at(2025, 2, 2, 0, 0, 0)), Some(at(2025, 2, 28, 0, 0, 0)));
    // An `@` makes croner put "0 " in front in the Spin dialect: five fields then read as six.
    assert_eq!(spin("0 9 15w@ * *").next_civil(from), Some(at(2025, 1, 15, 9, 0, 0)));
    // `a/s` runs to the field's maximum, and 7 is Sunday in ranges and steps.
    assert_eq!(
        spin("0 0 0 * * 1/2"),
        Cron { expression: "0 0 0 * * 1/2".into(), ..spin("0 0 0 * * 0,1,3,5") }
    );
}

#[test]
fn refusals_name_the_field_and_quote_the_text() {
    let refuse = |expression: &str, dialect| Cron::parse(expression, dialect).unwrap_err();
    let five = refuse("0 9 * * 1", Dialect::Spin);
    assert_eq!(five.field, "expression");
    assert!(five.message.contains("classic"), "{five}");
    let six = refuse("0 0 9 * * 1", Dialect::Classic);
    assert!(six.message.contains("Spin"), "{six}");
    assert_eq!(refuse("", Dialect::Spin).field, "expression");
    assert!(refuse("@fortnightly", Dialect::Spin).message.contains("@daily"));
    for (expression, field, quoted) in [
        ("0 0 9 * * Mon-Fri#9", "day-of-week", "Mon-Fri#9"),
        ("0 75 9 * * *", "minute", "75"),
        ("0 0 9 * * MONDAY", "day-of-week", "MONDAY"),
        ("0 0 9 1W 1W *", "month", "1W"),
        ("0 0 9 *,1 * *", "day-of-month", "*,1"),
        ("0 0 0 30 2 *", "day-of-month", "30"),
        ("L * * * * *", "second", "L"),
        ("0 , * * * *", "minute", ","),
        ("0 0 0 * * 7L", "day-of-week", "7L"),
        ("0 0 0 1 * 1#2", "day-of-week", "1#2"),
        ("0 0 0 * L *", "month", "L"),
    ] {
        let error = refuse(expression, Dialect::Spin);
        assert_eq!(error.field, field, "{expression}: {error}");
        assert!(error.message.contains(&format!("{quoted:?}")), "{expression}: {error}");
    }
    assert!(refuse("0 0 0 * * 7L", Dialect::Spin).message.contains("0L"));
    assert!(refuse("0 0 0 30 2 *", Dialect::Spin).message.contains("never fire"));
    assert_eq!(refuse("0 0 30 2 *", Dialect::Classic).field, "day-of-month");
    // Either day field may match in the classic dialect, so only both failing is refused.
    assert!(Cron::parse("0 0 1 * 1#2", Dialect::Classic).is_ok());
}

#[test]
fn times_of_day_agree_with_brute_force() {
    for expression in ["*/7 5/15 1-3,20 * * *", "59 59 23 * * *", "0 0 0 * * *", "* * * * * *"] {
        let cron = spin(expression);
        let matching: Vec<u32> =
            (0..86_400).filter(|&t| cron.next_time_of_day(t) == Some(t)).collect();
        for t in (0..86_400).step_by(97).chain([0, 1, 59, 3_599, 86_399]) {
            let next = matching.iter().copied().find(|&m| m >= t);
            let prev = matching.iter().copied().rev().find(|&m| m <= t);
            let count = matching.iter().filter(|&&m| m >= t && m < 86_399).count() as u64;
            assert_eq!(cron.next_time_of_day(t), next, "{expression} {t}");
            assert_eq!(cron.prev_time_of_day(t), prev, "{expression} {t}");
            assert_eq!(cron.count_times_of_day(t, 86_399), count, "{expression} {t}");
        }
        assert_eq!(cron.next_time_of_day(86_400), None);
        assert_eq!(cron.prev_time_of_day(u32::MAX), matching.last().copied());
        assert_eq!(cron.count_times_of_day(0, u32::MAX), matching.len() as u64);
    }
}

#[test]
fn refusing_what_never_matches_agrees_with_scanning_a_whole_cycle() {
    let mut rng = Rng(0x0C70_2025);
    let start = days_from_civil(2000, 1, 1);
    let (mut refused, mut accepted) = (0, 0);
    for _ in 0..300 {
        let expression = random_expression(&mut rng);
        let (cron, _, _) = Cron::read(&expression, Dialect::Spin).unwrap();
        let days = (start..start + DAYS_PER_CYCLE).filter(|&d| cron.matches_day(d)).count();
        let parsed = Cron::parse(&expression, Dialect::Spin);
        assert_eq!(parsed.is_ok(), days > 0 && cron.seconds != 0 && cron.minutes != 0);
        if let Err(error) = parsed {
            assert!(error.message.contains("never fire"), "{expression}: {error}");
            refused += 1;
        } else {
            accepted += 1;
        }
    }
    assert!(refused > 10 && accepted > 100, "{refused} refused, {accepted} accepted");
}

#[test]
fn civil_search_agrees_with_walking_day_by_day() {
    let mut rng = Rng(0xDA7E_5EED);
    let mut checked = 0;
    while checked < 150 {
        let Ok(cron) = Cron::parse(&random_expression(&mut rng), Dialect::Spin) else { continue };
        checked += 1;
        let from = at(1971, 1, 1, 0, 0, 0)
            + (rng.below(130 * 365) as i64) * SECONDS_PER_DAY
            + rng.below(86_400) as i64;
        let next = cron.next_civil(from).unwrap();
        let prev = cron.prev_civil(from).unwrap();
        assert!(prev <= from && from <= next);
        assert_eq!(cron.next_civil(next), Some(next));
        assert_eq!(cron.prev_civil(prev), Some(prev));
        // Nothing matches strictly between them: they are the same instant, or `from` is not
        // a match.
        assert_eq!(cron.count_civil(prev, next + 1), if prev == next { 1 } else { 2 });
        let to = from + rng.below(40 * SECONDS_PER_DAY as u64) as i64;
        let mut walked = 0;
        let mut day = from.div_euclid(SECONDS_PER_DAY);
        while day * SECONDS_PER_DAY < to {
            if cron.matches_day(day) {
                let start = (from - day * SECONDS_PER_DAY).clamp(0, SECONDS_PER_DAY) as u32;
                let end = (to - day * SECONDS_PER_DAY).clamp(0, SECONDS_PER_DAY) as u32;
                walked += cron.count_times_of_day(start, end);
            }
            day += 1;
        }
        assert_eq!(cron.count_civil(from, to), walked);
        let cycle = DAYS_PER_CYCLE * SECONDS_PER_DAY;
        assert_eq!(cron.count_civil(from, from + 3 * cycle), 3 * cron.count_civil(0, cycle));
    }
}

#[test]
fn extremes_are_answered_without_overflow() {
    let every_second = spin("* * * * * *");
    assert_eq!(every_second.count_civil(i64::MIN, i64::MAX), u64::MAX);
    assert_eq!(every_second.next_civil(i64::MAX), Some(i64::MAX));
    assert_eq!(every_second.prev_civil(i64::MIN), Some(i64::MIN));
    // Croner gives up at the year 5000 (`lib.rs:95,671`); nothing in the calendar changes there.
    let new_year = spin("0 0 0 1 1 *");
    assert_eq!(new_year.next_civil(at(5000, 6, 1, 0, 0, 0)), Some(at(5001, 1, 1, 0, 0, 0)));
    let rare = spin("0 0 0 29 2 1");
    assert_eq!(rare.next_civil(i64::MAX - 1000), None);
    assert_eq!(rare.prev_civil(i64::MIN + 1000), None);
    let _ = (rare.count_civil(i64::MIN, i64::MAX), rare.matches_day(i64::MIN));
    let _ = rare.matches_day(i64::MAX);
}

#[test]
fn hostile_text_never_panics() {
    let mut rng = Rng(0xF022_F022);
    let pieces = [
        "*",
        "?",
        "/",
        "-",
        ",",
        "#",
        "L",
        "l",
        "W",
        "w",
        "@",
        "0",
        "7",
        "59",
        "60",
        "255",
        "256",
        "+5",
        "05",
        "MON",
        "sun",
        "jan",
        "DEC",
        " ",
        "\t",
        "\u{a0}",
        "İ",
        "\u{212a}",
        "ü",
        "\u{0}",
        "@daily",
        "@hourly",
        "99999999999999999999",
        "#L",
        "5L",
        "1#5",
        "0/1",
        "*/0",
    ];
    let instants = [i64::MIN, i64::MIN + 1, -1, 0, 1, 1_700_000_000, i64::MAX - 1, i64::MAX];
    let mut accepted = 0;
    for round in 0..6_000 {
        // Half the inputs are shaped like expressions (five or six fields of a few pieces),
        // half are pieces run together.
        let text: String = if round % 4 < 2 {
            let fields = 5 + rng.below(2);
            let field = |rng: &mut Rng| -> String {
                (0..1 + rng.below(3)).map(|_| rng.pick(&pieces)).collect()
            };
            (0..fields).map(|_| field(&mut rng)).collect::<Vec<_>>().join(" ")
        } else {
            (0..rng.below(14)).map(|_| rng.pick(&pieces)).collect()
        };
        let dialect = if round % 2 == 0 { Dialect::Spin } else { Dialect::Classic };
        let Ok(cron) = Cron::parse(&text, dialect) else { continue };
        accepted += 1;
        for &instant in &instants {
            let _ = (cron.next_civil(instant), cron.prev_civil(instant));
            let _ = cron.count_civil(instant, instant.saturating_add(10_000_000));
            let _ = cron.matches_day(instant);
        }
        let _ = cron.count_civil(i64::MIN, i64::MAX);
    }
    assert!(accepted > 0);
}

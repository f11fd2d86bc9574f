use super::*;

/// Unix seconds of a UTC date and time.
fn utc(year: i64, month: u32, day: i64, hour: i64, minute: i64) -> i64 {
    crate::civil::days_from_civil(year, month, day as u32) * 86_400 + hour * 3600 + minute * 60
}

fn parse(text: &str) -> Rule {
    Rule::parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn weekday(month: u8, week: u8, weekday: u8, time: i32) -> Change {
    Change { day: Day::Weekday { month, week, weekday }, time }
}

#[test]
fn reads_the_forms_the_footers_use() {
    let berlin = parse("CET-1CEST,M3.5.0,M10.5.0/3");
    let dst = Dst { offset: 7200, start: weekday(3, 5, 0, 7200), end: weekday(10, 5, 0, 10800) };
    assert_eq!(berlin, Rule { std: 3600, dst: Some(dst) });
    assert_eq!(parse("<+0545>-5:45"), Rule { std: 20_700, dst: None });
    assert_eq!(parse("<-0930>9:30"), Rule { std: -34_200, dst: None });
    assert_eq!(parse("UTC0"), Rule { std: 0, dst: None });
    let nuuk = parse("<-02>2<-01>,M3.5.0/-1,M10.5.0/0").dst.unwrap();
    assert_eq!((nuuk.offset, nuuk.start.time, nuuk.end.time), (-3600, -3600, 0));
    let gaza = parse("EET-2EEST,M3.4.4/50,M10.4.4/50").dst.unwrap();
    assert_eq!((gaza.start.time, gaza.end.time), (50 * 3600, 50 * 3600));
    let howe = parse("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0").dst.unwrap();
    assert_eq!(howe.offset, 39_600);
    let chatham = parse("<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45").dst.unwrap();
    assert_eq!((chatham.offset, chatham.start.time), (49_500, 9900));
    let julian = parse("EST5EDT,J60/2:30:15,300/-167").dst.unwrap();
    assert_eq!(julian.start, Change { day: Day::Julian(60), time: 9015 });
    assert_eq!(julian.end, Change { day: Day::Zero(300), time: -167 * 3600 });
    assert_eq!(parse("AAA+3BBB-2,0,365").dst.unwrap().offset, 7200);
}

#[test]
fn refuses_what_is_not_a_footer() {
    for bad in [
        "",
        "CET",
        "CE-1",
        "CET-",
        "CET-25",
        "<+05-5",
        "<+5>-5",
        "CET-1:60",
        "CET-1CEST",
        "CET-1CEST,M3.5.0",
        "CET-1CEST,M13.1.0,M10.5.0",
        "CET-1CEST,M3.6.0,M10.5.0",
        "CET-1CEST,M3.5.7,M10.5.0",
        "CET-1CEST,M0.5.0,M10.5.0",
        "CET-1CEST,J0,J365",
        "CET-1CEST,J1,366",
        "CET-1CEST,M3.5.0/168,M10.5.0",
        "CET-1CEST,M3.5.0,M10.5.0/3 ",
        "CET-1CEST,M3.5.0,M10.5.0,",
        "CET-1\u{0}",
        "CET-0001",
    ] {
        assert!(Rule::parse(bad).is_err(), "{bad:?} parsed");
    }
    assert_eq!(
        Rule::parse("CET-1CEST"),
        Err(PosixError { at: 9, expected: "a DST offset or ','" })
    );
}

#[test]
fn northern_dst_starts_on_the_standard_clock_and_ends_on_the_dst_clock() {
    let berlin = parse("CET-1CEST,M3.5.0,M10.5.0/3");
    let (start, end) = (utc(2026, 3, 29, 1, 0), utc(2026, 10, 25, 1, 0));
    assert_eq!([berlin.offset_at(start - 1), berlin.offset_at(start)], [3600, 7200]);
    assert_eq!([berlin.offset_at(end - 1), berlin.offset_at(end)], [7200, 3600]);
    assert_eq!(berlin.changes(utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0)), [start, end]);
    assert_eq!(berlin.changes(start, end), [start]);
    assert_eq!(berlin.changes(start + 1, end + 1), [end]);
}

#[test]
fn southern_dst_spans_the_new_year() {
    let sydney = parse("AEST-10AEDT,M10.1.0,M4.1.0/3");
    assert_eq!(sydney.offset_at(utc(2026, 1, 1, 0, 0)), 39_600);
    assert_eq!(sydney.offset_at(utc(2026, 7, 1, 0, 0)), 36_000);
    assert_eq!(sydney.offset_at(utc(2026, 12, 31, 23, 59)), 39_600);
    let changes = [utc(2026, 4, 4, 16, 0), utc(2026, 10, 3, 16, 0)];
    assert_eq!(sydney.changes(utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0)), changes);
    // Santiago: Saturday 24:00, that is Sunday's midnight.
    let santiago = parse("<-04>4<-03>,M9.1.6/24,M4.1.6/24");
    let changes = [utc(2026, 4, 5, 3, 0), utc(2026, 9, 6, 4, 0)];
    assert_eq!(santiago.changes(utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0)), changes);
}

#[test]
fn negative_dst_and_times_outside_the_day() {
    // Dublin: Irish Standard Time in summer, "DST" GMT in winter.
    let dublin = parse("IST-1GMT0,M10.5.0,M3.5.0/1");
    assert_eq!(dublin.offset_at(utc(2026, 1, 15, 0, 0)), 0);
    assert_eq!(dublin.offset_at(utc(2026, 7, 15, 0, 0)), 3600);
    assert_eq!(dublin.changes(utc(2026, 1, 1, 0, 0), utc(2027, 1, 1, 0, 0)).len(), 2);
    // Nuuk: the last Saturday of March at 22:00 (-1:00 on the Sunday), on the -02 clock.
    let nuuk = parse("<-02>2<-01>,M3.5.0/-1,M10.5.0/0");
    assert_eq!(
        nuuk.changes(utc(2026, 1, 1, 0, 0), utc(2026, 6, 1, 0, 0)),
        [utc(2026, 3, 29, 1, 0)]
    );
    // Gaza: the Thursday before the last Saturday... written as the 4th Thursday plus 50 h.
    let gaza = parse("EET-2EEST,M3.4.4/50,M10.4.4/50");
    assert_eq!(
        gaza.changes(utc(2090, 1, 1, 0, 0), utc(2090, 6, 1, 0, 0)),
        [utc(2090, 3, 25, 0, 0)]
    );
}

#[test]
fn julian_and_zero_based_days_and_the_fifth_week() {
    // 2028 is a leap year: J60 is March 1, day 59 (zero-based) is February 29.
    let julian = parse("EST5EDT,J60,J300");
    assert_eq!(
        julian.changes(utc(2028, 1, 1, 0, 0), utc(2028, 6, 1, 0, 0)),
        [utc(2028, 3, 1, 7, 0)]
    );
    let zero = parse("EST5EDT,59,300");
    assert_eq!(
        zero.changes(utc(2028, 1, 1, 0, 0), utc(2028, 6, 1, 0, 0)),
        [utc(2028, 2, 29, 7, 0)]
    );
    // February 2026 has four Sundays: week 5 is the 22nd.
    let last = parse("EST5EDT,M2.5.0,M11.1.0");
    assert_eq!(
        last.changes(utc(2026, 1, 1, 0, 0), utc(2026, 6, 1, 0, 0)),
        [utc(2026, 2, 22, 7, 0)]
    );
}

#[test]
fn permanent_dst_never_changes() {
    // zic's spelling of DST all year: from January 1 00:00 to December 31 25:00.
    let rule = parse("EST5EDT,0/0,J365/25");
    for year in [2025, 2026, 2028, 2100] {
        for (month, day) in [(1, 1), (6, 30), (12, 31)] {
            assert_eq!(rule.offset_at(utc(year, month, day, 0, 0)), -14_400, "{year}-{month}");
        }
    }
    assert_eq!(rule.changes(utc(2020, 1, 1, 0, 0), utc(2040, 1, 1, 0, 0)), Vec::<i64>::new());
}

#[test]
fn any_instant_is_answered() {
    let berlin = parse("CET-1CEST,M3.5.0,M10.5.0/3");
    for t in [i64::MIN, i64::MIN + 1, -1, 0, i64::MAX - 1, i64::MAX] {
        assert!([3600, 7200].contains(&berlin.offset_at(t)));
    }
    assert!(berlin.changes(i64::MIN, i64::MAX).len() < 20_000);
    assert!(berlin.changes(i64::MAX, i64::MIN).is_empty());
}

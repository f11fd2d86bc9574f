use super::*;

/// Instants spread over 1970..=9999, with the ends, leap days and month ends among them.
fn instants() -> Vec<u64> {
    let mut seconds: Vec<u64> = (0..LAST).step_by(7_777_777).collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        seconds.push(state % (LAST + 1));
    }
    // 1972-02-29, 2000-02-29 (a leap century), 2100-03-01 (2100 is not a leap year), ends.
    seconds.extend([68_169_600, 951_782_400, 4_107_542_400, 0, LAST, 1_700_000_000]);
    seconds
}

#[test]
fn formats_as_httpdate_does() {
    for s in instants() {
        let at = UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(format(at), httpdate::fmt_http_date(at), "unix {s}");
    }
}

#[test]
fn reads_what_httpdate_writes_back_to_the_same_second() {
    for s in instants() {
        let at = UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(parse(&httpdate::fmt_http_date(at)), Some(at), "unix {s}");
    }
}

#[test]
fn the_known_example() {
    assert_eq!(
        format(UNIX_EPOCH + Duration::from_secs(784_111_777)),
        "Sun, 06 Nov 1994 08:49:37 GMT"
    );
    assert_eq!(
        parse("Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(UNIX_EPOCH + Duration::from_secs(784_111_777))
    );
}

#[test]
fn out_of_range_instants_are_clamped() {
    assert_eq!(format(UNIX_EPOCH - Duration::from_secs(1)), "Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(
        format(UNIX_EPOCH + Duration::from_secs(LAST + 86_400)),
        "Fri, 31 Dec 9999 23:59:59 GMT"
    );
}

#[test]
fn refuses_what_is_not_an_imf_fixdate() {
    for text in [
        "",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Mon, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:37 GMT",
        "Sun, 06 Nov 1994 08:49:60 GMT",
        "Thu, 31 Apr 1994 08:49:37 GMT",
        "Tue, 29 Feb 2100 00:00:00 GMT",
        "Wed, 31 Dec 1969 23:59:59 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nox 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT ",
        "Sun, 0a Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08-49:37 GMT",
        "Sun, 06 Nov +994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:3\u{e9}GMT",
    ] {
        assert_eq!(parse(text), None, "{text:?}");
    }
}

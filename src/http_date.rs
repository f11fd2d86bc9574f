//! HTTP dates in the one form Azure Storage sends and `x-ms-date` must carry: RFC 9110's
//! IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`. Written here instead of taking `httpdate`
//! because the component carries every byte: this took 8 KB off its code. The obsolete
//! RFC 850 and asctime forms, which no Azure endpoint sends, read as `None`.
//! Pinned against `httpdate` over a range of instants in `http_date_tests.rs`.

use crate::civil::{civil_from_days, days_from_civil};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 1970-01-01 was a Thursday.
const WEEKDAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
const SECONDS_PER_DAY: u64 = 86_400;
/// The last second IMF-fixdate's four-digit year can name (9999-12-31T23:59:59Z).
const LAST: u64 = 253_402_300_799;

/// `at` as IMF-fixdate. Instants before 1970 or after 9999 are clamped to those ends (no
/// clock that signs a request is that far off).
pub fn format(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()).min(LAST);
    let days = seconds / SECONDS_PER_DAY;
    let of_day = seconds % SECONDS_PER_DAY;
    let (year, month, day) = civil_from_days(days as i64);
    let (year, month, day) = (year as u64, u64::from(month), u64::from(day));
    let mut out = Vec::with_capacity(29);
    out.extend_from_slice(WEEKDAYS[(days % 7) as usize]);
    out.extend_from_slice(b", ");
    push_digits(&mut out, day, 2);
    out.push(b' ');
    out.extend_from_slice(MONTHS[month as usize - 1]);
    out.push(b' ');
    push_digits(&mut out, year, 4);
    for (separator, value) in [(b' ', of_day / 3600), (b':', of_day / 60 % 60), (b':', of_day % 60)]
    {
        out.push(separator);
        push_digits(&mut out, value, 2);
    }
    out.extend_from_slice(b" GMT");
    // Only ASCII was pushed.
    String::from_utf8(out).unwrap_or_default()
}

/// An IMF-fixdate, or `None` for anything else (including a weekday that does not match the
/// date, a 31st of April, or a time such as 24:00:00).
pub fn parse(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    if b.len() != 29 || &b[3..5] != b", " || &b[25..] != b" GMT" {
        return None;
    }
    let separators = [(7, b' '), (11, b' '), (16, b' '), (19, b':'), (22, b':')];
    if separators.iter().any(|&(at, want)| b[at] != want) {
        return None;
    }
    let month = MONTHS.iter().position(|m| m[..] == b[8..11])? as u64 + 1;
    let (day, year) = (digits(&b[5..7])?, digits(&b[12..16])?);
    let (hour, minute, second) = (digits(&b[17..19])?, digits(&b[20..22])?, digits(&b[23..25])?);
    if year < 1970 || day == 0 || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    // A day past the month's end rolls into the next month, which the round trip refuses.
    let (y, m, d) = (year as i64, month as u32, day as u32);
    let days = days_from_civil(y, m, d);
    if civil_from_days(days) != (y, m, d) || WEEKDAYS[days.rem_euclid(7) as usize][..] != b[..3] {
        return None;
    }
    let seconds = days as u64 * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second;
    Some(UNIX_EPOCH + Duration::from_secs(seconds))
}

fn push_digits(out: &mut Vec<u8>, value: u64, width: u32) {
    for place in (0..width).rev() {
        out.push(b'0' + (value / 10u64.pow(place) % 10) as u8);
    }
}

fn digits(text: &[u8]) -> Option<u64> {
    text.iter()
        .try_fold(0u64, |value, &c| c.is_ascii_digit().then(|| value * 10 + (c - b'0') as u64))
}

#[cfg(test)]
#[path = "http_date_tests.rs"]
mod tests;

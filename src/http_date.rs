//! HTTP dates in the one form Azure Storage sends and `x-ms-date` must carry: RFC 9110's
//! IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`. Written here instead of taking `httpdate`
//! because the component carries every byte: this took 8 KB off its code. The obsolete
//! RFC 850 and asctime forms, which no Azure endpoint sends, read as `None`.
//! Pinned against `httpdate` over a range of instants in `http_date_tests.rs`.

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
    let (year, month, day) = civil_from_days(days);
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
    let days = days_from_civil(year, month, day);
    if civil_from_days(days) != (year, month, day) || WEEKDAYS[(days % 7) as usize][..] != b[..3] {
        return None;
    }
    let seconds = days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second;
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

/// Days since 1970-01-01 to (year, month, day), for days on or after it: Howard Hinnant's
/// `civil_from_days`, over 400-year eras of 146,097 days starting on 0000-03-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    (era * 400 + year_of_era + u64::from(month <= 2), month, day)
}

/// The inverse of [`civil_from_days`] for years from 1970; a day past the month's end spills
/// into the next month, which the caller's round trip catches.
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let year = if month <= 2 { year - 1 } else { year };
    let (era, year_of_era) = (year / 400, year % 400);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
#[path = "http_date_tests.rs"]
mod tests;

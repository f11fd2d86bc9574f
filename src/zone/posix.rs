//! POSIX TZ rules as TZif footers write them (RFC 8536 section 3.3):
//! `STDoffset[DST[offset],start[/time],end[/time]]`, names plain or `<+05>`-quoted, dates as
//! `Mm.w.d`, `Jn` or `n`, and change times of -167..=167 hours (so that "the Thursday before the
//! last Saturday at 02:00" is `M3.4.4/50`).
//!
//! The parser is a `const fn`: the generated table's footers are parsed while the crate
//! compiles, so a footer it cannot read fails the build rather than a lookup.

/// A zone's rule: its standard offset, and daylight saving time if it has any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    /// Seconds east of UTC (POSIX writes them west of UTC).
    pub std: i32,
    pub dst: Option<Dst>,
}

/// Daylight saving time: its offset, and when it starts (read on the standard-time clock) and
/// ends (read on the DST clock). Start after end in a year is the southern hemisphere's (or
/// Dublin's negative DST) shape: DST across the new year.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dst {
    pub offset: i32,
    pub start: Change,
    pub end: Change,
}

/// A day of the year and the local time on it, in seconds after that day's midnight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    pub day: Day,
    pub time: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Day {
    /// `Jn`: 1..=365, February 29 never counted (J60 is March 1).
    Julian(u16),
    /// `n`: 0..=365, February 29 counted.
    Zero(u16),
    /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = the last) of month `m`.
    Weekday { month: u8, week: u8, weekday: u8 },
}

/// Where a TZ string stops making sense, and what was expected there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PosixError {
    pub at: usize,
    pub expected: &'static str,
}

/// `?` is not available in a `const fn`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(value) => value,
            Err(e) => return Err(e),
        }
    };
}

impl Rule {
    pub(crate) const fn parse(text: &str) -> Result<Rule, PosixError> {
        let mut c = Cursor { bytes: text.as_bytes(), at: 0 };
        tri!(c.name());
        let std = -tri!(c.hms(24, "a standard offset"));
        if c.at == c.bytes.len() {
            return Ok(Rule { std, dst: None });
        }
        tri!(c.name());
        let mut offset = std + 3600;
        if !matches!(c.peek(), Some(b',')) {
            offset = -tri!(c.hms(24, "a DST offset or ','"));
        }
        // POSIX leaves a missing rule to the implementation; zic always writes one.
        tri!(c.expect(b',', "',' and the DST start"));
        let start = tri!(c.change());
        tri!(c.expect(b',', "',' and the DST end"));
        let end = tri!(c.change());
        if c.at != c.bytes.len() {
            return Err(c.error("the end of the rule"));
        }
        Ok(Rule { std, dst: Some(Dst { offset, start, end }) })
    }

    /// For the generated table only, where it runs at compile time: a footer that does not
    /// parse stops the build.
    pub(crate) const fn table(text: &str) -> Rule {
        match Rule::parse(text) {
            Ok(rule) => rule,
            Err(_) => panic!("a footer in src/zone/table.rs does not parse"),
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    const fn peek(&self) -> Option<u8> {
        if self.at < self.bytes.len() {
            Some(self.bytes[self.at])
        } else {
            None
        }
    }

    const fn error(&self, expected: &'static str) -> PosixError {
        PosixError { at: self.at, expected }
    }

    const fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), PosixError> {
        match self.peek() {
            Some(b) if b == byte => {
                self.at += 1;
                Ok(())
            }
            _ => Err(self.error(expected)),
        }
    }

    /// A zone abbreviation: three or more letters, or `<...>` of letters, digits, `+` and `-`.
    /// Only its shape is checked; the offsets are what count.
    const fn name(&mut self) -> Result<(), PosixError> {
        let quoted = matches!(self.peek(), Some(b'<'));
        if quoted {
            self.at += 1;
        }
        let start = self.at;
        while let Some(b) = self.peek() {
            let fits = b.is_ascii_alphabetic()
                || (quoted && (b.is_ascii_digit() || b == b'+' || b == b'-'));
            if !fits {
                break;
            }
            self.at += 1;
        }
        if self.at - start < 3 {
            return Err(self.error("a zone abbreviation of 3 or more characters"));
        }
        if quoted {
            return self.expect(b'>', "'>' closing the abbreviation");
        }
        Ok(())
    }

    /// `[+-]h[h][:mm[:ss]]` in seconds, hours at most `max_hours`.
    const fn hms(&mut self, max_hours: u32, expected: &'static str) -> Result<i32, PosixError> {
        let negative = matches!(self.peek(), Some(b'-'));
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.at += 1;
        }
        let hours = tri!(self.number(max_hours, expected));
        let mut seconds = hours * 3600;
        if matches!(self.peek(), Some(b':')) {
            self.at += 1;
            seconds += tri!(self.number(59, "minutes")) * 60;
            if matches!(self.peek(), Some(b':')) {
                self.at += 1;
                seconds += tri!(self.number(59, "seconds"));
            }
        }
        // At most 167 * 3600 + 3599: fits an i32.
        Ok(if negative { -(seconds as i32) } else { seconds as i32 })
    }

    /// A decimal number of at most 3 digits, at most `max`.
    const fn number(&mut self, max: u32, expected: &'static str) -> Result<u32, PosixError> {
        let start = self.at;
        let mut value = 0;
        while let Some(b) = self.peek() {
            if !b.is_ascii_digit() || self.at - start == 3 {
                break;
            }
            value = value * 10 + (b - b'0') as u32;
            self.at += 1;
        }
        if self.at == start || value > max {
            self.at = start;
            return Err(self.error(expected));
        }
        Ok(value)
    }

    /// `date[/time]`, the time -167..=167 hours and 02:00 when left out.
    const fn change(&mut self) -> Result<Change, PosixError> {
        let day = match self.peek() {
            Some(b'J') => {
                self.at += 1;
                let n = tri!(self.number(365, "a day 1..=365 after 'J'"));
                if n == 0 {
                    return Err(self.error("a day 1..=365 after 'J'"));
                }
                Day::Julian(n as u16)
            }
            Some(b'M') => {
                self.at += 1;
                let month = tri!(self.number(12, "a month 1..=12 after 'M'"));
                tri!(self.expect(b'.', "'.' and a week"));
                let week = tri!(self.number(5, "a week 1..=5"));
                tri!(self.expect(b'.', "'.' and a weekday"));
                let weekday = tri!(self.number(6, "a weekday 0..=6"));
                if month == 0 || week == 0 {
                    return Err(self.error("a month 1..=12 and a week 1..=5"));
                }
                Day::Weekday { month: month as u8, week: week as u8, weekday: weekday as u8 }
            }
            _ => Day::Zero(tri!(self.number(365, "a date: Mm.w.d, Jn or n")) as u16),
        };
        let mut time = 2 * 3600;
        if matches!(self.peek(), Some(b'/')) {
            self.at += 1;
            time = tri!(self.hms(167, "a time -167..=167 hours"));
        }
        Ok(Change { day, time })
    }
}

#[cfg(test)]
#[path = "posix_tests.rs"]
mod tests;

//! Why a time zone name was refused, with the name to use where one is obvious.

use super::{windows::WINDOWS, Zone, TZDATA_VERSION};
use std::fmt;

/// A name refused by [`Zone::named`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneError {
    /// Not an IANA name this build knows; `suggestion` is a close IANA name if one is obvious
    /// (case-insensitive match). `name` is what was asked, cut to its first 100 characters.
    Unknown { name: String, suggestion: Option<String> },
    /// A Windows time zone id (what Azure Functions' WEBSITE_TIME_ZONE takes, e.g.
    /// "W. Europe Standard Time"): refused, naming the IANA zone to use (CLDR windowsZones,
    /// territory 001).
    Windows { name: String, iana: String },
}

/// Longer than any IANA name or Windows id: not looked up, not echoed whole.
const LONGEST: usize = 100;

impl fmt::Display for ZoneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug quoting: a name with control characters cannot garble the message.
        match self {
            ZoneError::Unknown { name, suggestion: Some(suggestion) } => write!(
                f,
                "unknown time zone {name:?}; did you mean {suggestion:?}? (IANA names are \
                 exact, case included)"
            ),
            ZoneError::Unknown { name, suggestion: None } => write!(
                f,
                "unknown time zone {name:?}: expected an IANA name such as \"Europe/Berlin\", \
                 \"America/New_York\" or \"UTC\" (tzdata {TZDATA_VERSION})"
            ),
            ZoneError::Windows { name, iana } => {
                write!(f, "{name:?} is a Windows time zone id; use the IANA name {iana:?} instead")
            }
        }
    }
}

impl std::error::Error for ZoneError {}

/// The error for a name the table does not have. A name that is an IANA name but for case is
/// that (so "utc" suggests "UTC" rather than being the Windows id "UTC").
pub(super) fn refuse(name: &str) -> ZoneError {
    if name.len() > LONGEST {
        return ZoneError::Unknown { name: name.chars().take(LONGEST).collect(), suggestion: None };
    }
    let suggestion = Zone::names().find(|known| close(known, name)).map(str::to_string);
    match windows_iana(name) {
        Some(iana) if suggestion.is_none() => {
            ZoneError::Windows { name: name.to_string(), iana: iana.to_string() }
        }
        _ => ZoneError::Unknown { name: name.to_string(), suggestion },
    }
}

/// The IANA name for a Windows id, which Windows compares ignoring case.
fn windows_iana(name: &str) -> Option<&'static str> {
    let mut pairs = WINDOWS.lines().filter_map(|line| line.split_once('='));
    pairs.find(|(windows, _)| is_windows_id(windows, name)).map(|(_, iana)| iana)
}

/// Whether `name` is the table's `id`, in which `*` stands for "Standard Time".
fn is_windows_id(id: &str, name: &str) -> bool {
    let Some((head, tail)) = id.split_once('*') else {
        return id.eq_ignore_ascii_case(name);
    };
    let rest = strip_prefix(name, head).and_then(|rest| strip_prefix(rest, "Standard Time"));
    rest.is_some_and(|rest| rest.eq_ignore_ascii_case(tail))
}

fn strip_prefix<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.get(..prefix.len()).filter(|head| head.eq_ignore_ascii_case(prefix))?;
    text.get(prefix.len()..)
}

/// The same name but for letter case, or spaces where the name has underscores
/// ("america/new york").
fn close(known: &str, asked: &str) -> bool {
    known.len() == asked.len()
        && known
            .bytes()
            .zip(asked.bytes())
            .all(|(k, a)| k.eq_ignore_ascii_case(&a) || (k, a) == (b'_', b' '))
}

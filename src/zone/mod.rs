//! IANA time zones from a table bundled in the crate ([`TZDATA_VERSION`]): the UTC offset at an
//! instant, and wall-clock times back to instants with gaps and folds made explicit. Std only,
//! about 20 KB of data, where a general time zone crate with its database would add hundreds.
//!
//! # What the table holds, and what follows
//! For every zone and link name of the release: the rule for the future (its TZif footer, a
//! POSIX TZ string, see `posix`) and the explicit offset changes from 2020 on that precede it
//! (`scripts/tzdata.py` generates `table.rs`). Hence:
//! - instants before 2020-01-01T00:00:00Z have the offset in force at 2020-01-01T00:00:00Z,
//!   and no transitions are listed before it: due times are computed near now, where earlier
//!   history does not matter;
//! - instants after 9999-12-31T23:59:59Z have the offset in force then.
//!
//! Civil seconds are seconds since 1970-01-01T00:00:00 on the zone's wall clock: the Unix
//! second plus the offset.

mod error;
mod posix;
mod rule;
mod table;
mod windows;

pub use error::ZoneError;
pub use table::TZDATA_VERSION;

use posix::Rule;
use std::fmt;

/// 2020-01-01T00:00:00Z, where the table's history starts.
const SINCE: i64 = 1_577_836_800;
/// 9999-12-31T23:59:59Z.
const UNTIL: i64 = 253_402_300_799;
/// An instant whose wall clock reads a civil time lies this close to it: offsets are below
/// 25 hours (the parser's bound; the generator checks the explicit changes).
const WINDOW: i64 = 26 * 3600;

/// Names sharing a rule and a history: one entry of the generated table.
struct Entry {
    /// Space-separated (IANA names have no spaces).
    names: &'static str,
    rule: &'static Rule,
    history: &'static History,
}

/// A zone's explicit offset changes from 2020 on: `(Unix second, new offset)`. Before the
/// first, `initial`; from the last on, the rule (a last change may keep the offset: it marks
/// where the rule starts).
#[derive(Debug, PartialEq, Eq)]
struct History {
    initial: i32,
    changes: &'static [(u32, i32)],
}

static UTC: Rule = Rule { std: 0, dst: None };

/// An IANA time zone, from the table bundled in the component.
#[derive(Clone, PartialEq, Eq)]
pub struct Zone {
    name: &'static str,
    rule: &'static Rule,
    history: &'static History,
}

/// The name alone: the data behind it is the table's (Gaza's would be 200 lines).
impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Zone").field(&self.name).finish()
    }
}

/// What instant a wall-clock (civil) second is in a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Local {
    /// The civil second maps to one instant.
    Unique(i64),
    /// It falls in a gap (spring forward): `after` is the first instant after the gap (the
    /// transition instant).
    Gap { after: i64 },
    /// It happens twice (fall back).
    Fold { first: i64, second: i64 },
}

impl Zone {
    pub fn utc() -> Zone {
        Zone { name: "UTC", rule: &UTC, history: &table::HISTORIES[0] }
    }

    /// An IANA zone or link name, exactly (case-sensitive), as the table has it: "UTC",
    /// "Etc/UTC", "Europe/Berlin", "US/Eastern", ... A Windows id or a near miss is refused
    /// with the IANA name to use.
    pub fn named(name: &str) -> Result<Zone, ZoneError> {
        for entry in &table::ENTRIES {
            if let Some(name) = entry.names.split(' ').find(|known| *known == name) {
                return Ok(Zone { name, rule: entry.rule, history: entry.history });
            }
        }
        Err(error::refuse(name))
    }

    /// Every name [`Zone::named`] takes, zones and links alike.
    pub fn names() -> impl Iterator<Item = &'static str> {
        table::ENTRIES.iter().flat_map(|entry| entry.names.split(' '))
    }

    pub fn name(&self) -> &str {
        self.name
    }

    /// Seconds east of UTC at that instant.
    pub fn offset_at(&self, unix_seconds: i64) -> i32 {
        let t = unix_seconds.clamp(SINCE, UNTIL);
        let changes = self.history.changes;
        let after = changes.partition_point(|&(at, _)| i64::from(at) <= t);
        if after == changes.len() {
            return self.rule.offset_at(t);
        }
        match after.checked_sub(1).and_then(|last| changes.get(last)) {
            Some(&(_, offset)) => offset,
            None => self.history.initial,
        }
    }

    /// The wall-clock second at that instant: `unix_seconds` plus the offset.
    pub fn to_civil(&self, unix_seconds: i64) -> i64 {
        unix_seconds.saturating_add(i64::from(self.offset_at(unix_seconds)))
    }

    /// The inverse of [`Zone::to_civil`], with gaps and folds made explicit. (A civil second
    /// so far out that its instant does not fit an i64 saturates.)
    pub fn to_instant(&self, civil_seconds: i64) -> Local {
        let from = civil_seconds.saturating_sub(WINDOW);
        let changes = self.transitions(from, civil_seconds.saturating_add(WINDOW));
        let offsets =
            std::iter::once(from).chain(changes.iter().copied()).map(|t| self.offset_at(t));
        let instants = offsets
            .filter_map(|offset| civil_seconds.checked_sub(i64::from(offset)))
            .filter(|&t| t.checked_add(i64::from(self.offset_at(t))) == Some(civil_seconds));
        // The earliest and the latest instant reading this civil second.
        let span = instants.fold(None, |span, t| match span {
            None => Some((t, t)),
            Some((first, second)) => Some((t.min(first), t.max(second))),
        });
        match span {
            Some((only, same)) if only == same => Local::Unique(only),
            Some((first, second)) => Local::Fold { first, second },
            None => {
                // No instant reads this civil second: a change moved the clock past it.
                let skipped = changes.into_iter().find(|&at| {
                    let before = at + i64::from(self.offset_at(at - 1));
                    (before..at + i64::from(self.offset_at(at))).contains(&civil_seconds)
                });
                match skipped {
                    Some(after) => Local::Gap { after },
                    None => Local::Unique(
                        civil_seconds.saturating_sub(i64::from(self.offset_at(civil_seconds))),
                    ),
                }
            }
        }
    }

    /// Instants of offset changes in [from, to) (unix seconds), in order.
    pub fn transitions(&self, from: i64, to: i64) -> Vec<i64> {
        let (from, to) = (from.max(SINCE), to.min(UNTIL + 1));
        if from >= to {
            return Vec::new();
        }
        let changes = self.history.changes;
        let mut found: Vec<i64> = changes
            .iter()
            .map(|&(at, _)| i64::from(at))
            .filter(|&at| (from..to).contains(&at) && self.offset_at(at - 1) != self.offset_at(at))
            .collect();
        let rule_from = changes.last().map_or(SINCE, |&(at, _)| i64::from(at));
        found.extend(self.rule.changes(from.max(rule_from + 1), to));
        found
    }
}

#[cfg(test)]
#[path = "zone_tests.rs"]
mod tests;

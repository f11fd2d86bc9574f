//! Cron expressions exactly as Spin's cron trigger reads them, evaluated on civil seconds.
//!
//! Spin's `spin-trigger-cron` parses `cron_expression` with croner 2.x (2.1.0 in its lock; 2.1
//! and 2.2 parse and match identically) as `Cron::new(e).with_seconds_required()
//! .with_dom_and_dow().parse()` and fires in UTC. A guard must be due at exactly the trigger's
//! times, so this module reproduces croner 2.2.0's grammar and matching, quirks included, in a
//! few hundred lines instead of croner and chrono (about 85 KB of component). Where a quirk is
//! surprising, the comment cites croner's source (`pattern.rs`, `component.rs`, `lib.rs`).
//!
//! The one deliberate difference: croner accepts expressions that can never match (February
//! 30th, `L` in the seconds field, `7L`) and then searches to the year 5000 for each tick; the
//! trigger accepts them and never fires. [`Cron::parse`] refuses them, naming the field.

mod days;
mod field;
mod search;
mod text;

use days::DayRule;
use field::{span, Bits, Spec};
use std::fmt;

/// Which cron dialect an expression is written in. Never guessed from the field count: five
/// fields in the Spin dialect are a mistake worth reporting, not a different schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Spin's cron trigger: six fields, seconds first (`second minute hour day-of-month month
    /// day-of-week`); when both day fields are restricted, a day must match both.
    Spin,
    /// The crontab form (Vixie cron, Kubernetes CronJob): five fields (`minute hour
    /// day-of-month month day-of-week`), second 0; when both day fields are restricted, a day
    /// matching either is enough. Croner's default reading.
    Classic,
}

/// Why an expression was refused: the field at fault and what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronError {
    /// `"expression"` for the whole (empty, wrong field count, unknown nickname), else one of
    /// `"second"`, `"minute"`, `"hour"`, `"day-of-month"`, `"month"`, `"day-of-week"`.
    pub field: &'static str,
    /// What is wrong, quoting the offending text, in words a user can act on.
    pub message: String,
}

impl fmt::Display for CronError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field == "expression" {
            write!(f, "cron expression: {}", self.message)
        } else {
            write!(f, "cron {} field: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for CronError {}

/// A parsed cron expression that matches at least once in every 400 years.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cron {
    expression: String,
    dialect: Dialect,
    /// Bits 0..=59.
    seconds: u64,
    /// Bits 0..=59.
    minutes: u64,
    /// Bits 0..=23.
    hours: u64,
    days: DayRule,
}

/// The six fields in croner's order, seconds first (a five-field expression gets second 0).
const FIELDS: [Spec; 6] = [
    Spec { name: "second", min: 0, max: 59, nth: false, closest: false },
    Spec { name: "minute", min: 0, max: 59, nth: false, closest: false },
    Spec { name: "hour", min: 0, max: 23, nth: false, closest: false },
    Spec { name: "day-of-month", min: 1, max: 31, nth: false, closest: true },
    Spec { name: "month", min: 1, max: 12, nth: false, closest: false },
    Spec { name: "day-of-week", min: 0, max: 7, nth: true, closest: false },
];

impl Cron {
    /// Parses `expression` in `dialect`, accepting exactly what croner 2.2.0 accepts in that
    /// configuration, except expressions that can never match (see the module docs).
    pub fn parse(expression: &str, dialect: Dialect) -> Result<Cron, CronError> {
        let (cron, quotes, seven_l) = Cron::read(expression, dialect)?;
        cron.check_reachable(&quotes, seven_l)?;
        Ok(cron)
    }

    /// Croner's parse: the expression read into masks, each field's text as the user wrote it
    /// (quoted, for messages), and whether day-of-week held `7L`.
    fn read(expression: &str, dialect: Dialect) -> Result<(Cron, [String; 6], bool), CronError> {
        let expression = expression.trim();
        let spin = dialect == Dialect::Spin;
        if expression.is_empty() {
            return Err(whole(format!("it is empty; {}", shape(dialect))));
        }
        let normalized = text::normalize(expression, spin);
        let mut fields: Vec<&str> = normalized.split_whitespace().collect();
        let written: Vec<&str> = expression.split_whitespace().collect();
        if fields.len() != if spin { 6 } else { 5 } {
            return Err(field_count(expression, written.len(), fields.len(), dialect));
        }
        // Croner's five-field form gets second 0 in front.
        if !spin {
            fields.insert(0, "0");
        }
        // Quote the user's own text where it lines up with croner's fields (names and `?` are
        // rewritten in place), else croner's: an expanded nickname, or the "0" field that a
        // Spin expression with an `@` in it gains in front.
        let lead = 6usize.saturating_sub(written.len());
        let own = |index: usize| match index.checked_sub(lead) {
            Some(i) if lead <= 1 => written.get(i).copied(),
            _ => None,
        };
        let quotes: [String; 6] =
            std::array::from_fn(|index| format!("{:?}", own(index).unwrap_or(fields[index])));
        let mut bits: [Bits; 6] = Default::default();
        for (index, spec) in FIELDS.iter().enumerate() {
            bits[index] = field::parse(spec, fields[index]).map_err(|problem| {
                // Name the item when it is not the whole field as written (a list's item, or
                // text that names were replaced in).
                let at = match own(index) {
                    Some(text) if text.eq_ignore_ascii_case(&problem.item) => String::new(),
                    _ => format!(" at {:?}", problem.item),
                };
                in_field(spec.name, format!("{}{at}: {}", quotes[index], problem.what))
            })?;
        }
        let star_dom = fields[3] == "*";
        let star_dow = fields[5] == "*";
        let [second, minute, hour, dom, month, dow] = bits;
        // Croner folds 7 onto Sunday after parsing (so `6-7` works), but not for `7L`.
        let fold = |mask: u64| ((mask | mask >> 7) & 0x7f) as u8;
        let days = DayRule {
            months: month.all as u16,
            dom: dom.all as u32,
            dom_last: dom.last_day,
            dom_closest: dom.closest as u32,
            dow: fold(dow.all),
            dow_nth: dow.nth.map(fold),
            dow_last: (dow.last & 0x7f) as u8,
            star_dom,
            star_dow,
            dom_and_dow: spin,
        };
        let cron = Cron {
            expression: expression.to_string(),
            dialect,
            seconds: second.all,
            minutes: minute.all,
            hours: hour.all,
            days,
        };
        Ok((cron, quotes, dow.last & 1 << 7 != 0))
    }

    /// Refuses an expression that never matches; croner would search to the year 5000 for it
    /// on every tick, and the trigger would accept it and never fire.
    fn check_reachable(&self, quotes: &[String; 6], seven_l: bool) -> Result<(), CronError> {
        let never = |index: usize, why: &str| {
            let fire = "so the schedule would never fire (croner, the Spin trigger's parser, \
                        accepts such an expression and then silently never runs the job)";
            Err(in_field(FIELDS[index].name, format!("{}: {why}, {fire}", quotes[index])))
        };
        for (index, mask) in [self.seconds, self.minutes, self.hours].into_iter().enumerate() {
            if mask == 0 {
                return never(index, "selects no value (L and an empty list select nothing here)");
            }
        }
        if self.days.months == 0 {
            return never(4, "selects no month (L and an empty list select nothing here)");
        }
        let reach = self.days.reach();
        if reach.any_day {
            return Ok(());
        }
        if !reach.any_dow {
            let why = if seven_l {
                "7L is never the last Sunday in the trigger's parser (write 0L)"
            } else {
                "selects no day (L alone selects nothing here; 5L is the last Friday)"
            };
            return never(5, why);
        }
        if !reach.any_dom {
            return never(3, &format!("selects no day in month {}", quotes[4]));
        }
        never(5, &format!("never falls on the same day as day-of-month {}", quotes[3]))
    }

    /// The expression as given, trimmed.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The dialect the expression was parsed in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The hour field matches all 24 hours (such a schedule keeps running by elapsed time across
    /// a DST change; the schedule evaluator uses this).
    pub fn every_hour(&self) -> bool {
        self.hours == span(0, 23)
    }

    /// Whether the civil date `days` (days since 1970-01-01) matches the date fields: the month,
    /// and the day of month and day of week combined as the dialect says.
    pub fn matches_day(&self, days: i64) -> bool {
        let (mask, day) = self.days.mask_around(days);
        mask & (1 << day) != 0
    }
}

fn whole(message: String) -> CronError {
    CronError { field: "expression", message }
}

fn in_field(field: &'static str, message: String) -> CronError {
    CronError { field, message }
}

fn shape(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Spin => {
            "the Spin dialect takes six fields: second minute hour day-of-month month day-of-week"
        }
        Dialect::Classic => {
            "the classic dialect takes five fields: minute hour day-of-month month day-of-week"
        }
    }
}

fn field_count(expression: &str, written: usize, read: usize, dialect: Dialect) -> CronError {
    if expression.contains('@') && !text::is_nickname(expression) {
        let known = text::NICKNAME_LIST;
        return whole(format!(
            "{expression:?} has an \"@\" but is not one of the nicknames the trigger knows \
             ({known}); {}",
            shape(dialect)
        ));
    }
    let hint = match (dialect, read) {
        (Dialect::Spin, 5) => {
            "; put the second first (\"0 \" for second 0), or parse it in the classic \
             (five-field crontab) dialect"
        }
        (Dialect::Classic, 6) => "; a six-field expression with seconds first is the Spin dialect",
        (_, 7) => "; the trigger has no year field",
        _ => "",
    };
    whole(format!("{expression:?} has {written} fields; {}{hint}", shape(dialect)))
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;

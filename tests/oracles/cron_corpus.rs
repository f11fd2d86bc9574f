//! The random cases tests/oracles/cron.rs puts to croniter: expressions from field values both
//! parsers read alike, in both dialects and the zones cron.rs names, and instants near those
//! zones' changes.

use crate::cron::{FROM, TO, ZONES};
use traffic_cop::schedule::cron::Dialect;
use traffic_cop::schedule::ZonedCron;
use traffic_cop::zone::Zone;

// Only what croner (our grammar) and croniter read alike: no `#`, `W`, `nL`, and no list that
// covers a whole day field (croniter reads it as `*`, croner does not).
const SECONDS: [&str; 9] = ["0", "0", "0", "30", "*/15", "*/7", "10,40", "5/20", "*"];
const MINUTES: [&str; 11] =
    ["0", "0", "30", "*/7", "*/15", "5,35", "*", "0-10", "45", "59", "15-45/10"];
const HOURS: [&str; 14] =
    ["*", "*", "*", "2", "1-3", "*/5", "0", "3", "9-17", "2,14", "0-23", "*/2", "1", "23"];
const DAYS: [&str; 14] =
    ["*", "*", "*", "*", "1", "15", "29", "30", "31", "L", "1-31/10", "*/2", "15,L", "?"];
const MONTHS: [&str; 12] =
    ["*", "*", "*", "*", "JAN", "FEB", "2", "MAR,OCT", "*/3", "APR-SEP", "11", "DEC"];
const WEEKDAYS: [&str; 13] =
    ["*", "*", "*", "*", "MON-FRI", "1,3,5", "MON", "SUN", "0", "SAT-SUN", "7", "TUE,THU", "?"];
/// Day and month together: February 29th, the 31st, the last day.
const DATES: [(&str, &str); 6] =
    [("29", "FEB"), ("29", "2"), ("L", "FEB"), ("31", "*"), ("31", "JAN,MAR"), ("L", "*")];
const NICKNAMES: [&str; 5] = ["@hourly", "@daily", "@weekly", "@monthly", "@yearly"];

pub(crate) struct Job {
    pub(crate) expression: String,
    pub(crate) dialect: Dialect,
    pub(crate) zone: &'static str,
    pub(crate) cron: ZonedCron,
}

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// xorshift64: uniform enough for picking cases.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    pub(crate) fn between(&mut self, from: i64, to: i64) -> i64 {
        from + self.below((to - from) as u64) as i64
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    pub(crate) fn job(&mut self) -> Job {
        loop {
            let dialect = if self.below(2) == 0 { Dialect::Spin } else { Dialect::Classic };
            let (day, month) = if self.below(6) == 0 {
                self.pick(&DATES)
            } else {
                (self.pick(&DAYS), self.pick(&MONTHS))
            };
            let (minute, hour, weekday) =
                (self.pick(&MINUTES), self.pick(&HOURS), self.pick(&WEEKDAYS));
            let mut expression = format!("{minute} {hour} {day} {month} {weekday}");
            if self.below(40) == 0 {
                expression = self.pick(&NICKNAMES).to_string();
            } else if dialect == Dialect::Spin {
                expression = format!("{} {expression}", self.pick(&SECONDS));
            }
            let zone = self.pick(&ZONES);
            // Ours refuses what never matches (the 31st of February): pick another.
            let name = (zone != "UTC").then_some(zone);
            if let Ok(cron) = ZonedCron::new(&expression, name, dialect) {
                return Job { expression, dialect, zone, cron };
            }
        }
    }

    /// Two in three within three hours or two days of one of the zone's changes, if any.
    pub(crate) fn instant(&mut self, zone: &str) -> i64 {
        let changes = Zone::named(zone).expect("a zone").transitions(FROM + 2 * 86_400, TO);
        if changes.is_empty() || self.below(3) == 0 {
            return self.between(FROM, TO);
        }
        let around = if self.below(2) == 0 { 3 * 3600 } else { 2 * 86_400 };
        self.pick(&changes) + self.between(-around, around)
    }
}

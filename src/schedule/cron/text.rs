//! Croner 2.2.0's text pipeline, step for step (`pattern.rs:61-119`): everything that happens to
//! the expression before a field is read. Its quirks are the trigger's behaviour, so they are
//! kept on purpose:
//!
//! - every `?` becomes `*`, in any field (`pattern.rs:67`);
//! - `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@hourly` expand to five fields;
//!   with seconds required, `"0 "` is put in front of *any* expression that contains `@`, even
//!   one that is not a nickname (`pattern.rs:70-74`, `:197-201`), so in the Spin dialect a
//!   five-field expression with an `@` somewhere reads as six fields;
//! - weekday names, then month names, are replaced by their numbers as plain substrings of the
//!   whole lower-cased expression, in a fixed order (`pattern.rs:205-267`): names work in any
//!   field and in any case (`JAN` in the day-of-week field is 1, Monday), `MON-SUN` is `1-7`, and
//!   `MONDAY` becomes `1day`, which no field accepts.

/// The names croner replaces, in its order: weekdays first (`-sun` before `sun`, so that a range
/// ending on Sunday ends on 7, not 0), then months.
const NAMES: [(&str, &str); 20] = [
    ("-sun", "-7"),
    ("sun", "0"),
    ("mon", "1"),
    ("tue", "2"),
    ("wed", "3"),
    ("thu", "4"),
    ("fri", "5"),
    ("sat", "6"),
    ("jan", "1"),
    ("feb", "2"),
    ("mar", "3"),
    ("apr", "4"),
    ("may", "5"),
    ("jun", "6"),
    ("jul", "7"),
    ("aug", "8"),
    ("sep", "9"),
    ("oct", "10"),
    ("nov", "11"),
    ("dec", "12"),
];

/// The nicknames and the five fields each stands for (`pattern.rs:188-195`).
const NICKNAMES: [(&str, &str); 6] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

/// The nicknames as a user would read them in a message.
pub(super) const NICKNAME_LIST: &str = "@yearly, @annually, @monthly, @weekly, @daily, @hourly";

/// Whether `text` (already trimmed) is one of croner's nicknames, in any ASCII case.
pub(super) fn is_nickname(text: &str) -> bool {
    NICKNAMES.iter().any(|(name, _)| text.eq_ignore_ascii_case(name))
}

/// The expression as croner's field parser sees it: `?` made `*`, a nickname expanded (and
/// `"0 "` put in front of anything with an `@` when `seconds_required`), lower-cased, names
/// replaced by numbers. The caller splits the result at whitespace.
///
/// Croner lower-cases with Unicode rules; this uses ASCII rules. The two differ only on
/// non-ASCII letters, and only two of those lower-case to ASCII at all: the Kelvin sign to `k`
/// (in no name) and `İ` to `i` followed by a combining dot, which can complete `fri` but
/// leaves the dot behind. A non-ASCII character fails every number, so it is accepted only in
/// text croner ignores (after the `W` of `15W…`, between `#` and a final `L`) — where both
/// spellings are equally ignored. So which expressions parse, and to what, is the same; this
/// saves the Unicode case tables in the component. The differential test throws both
/// characters at croner to pin this.
pub(super) fn normalize(expression: &str, seconds_required: bool) -> String {
    let mut text = expression.replace('?', "*");
    if text.contains('@') {
        let trimmed = text.trim();
        let expanded = NICKNAMES
            .iter()
            .find(|(name, _)| trimmed.eq_ignore_ascii_case(name))
            .map_or(trimmed, |(_, fields)| fields);
        text = if seconds_required { format!("0 {expanded}") } else { expanded.to_string() };
    }
    let mut text = text.trim().to_ascii_lowercase();
    for (name, number) in NAMES {
        // Replacing in this order, each over the result of the last, is what makes `satue`
        // read `sa2` (Tuesday is replaced before Saturday), as it does in croner.
        if text.contains(name) {
            text = text.replace(name, number);
        }
    }
    text
}

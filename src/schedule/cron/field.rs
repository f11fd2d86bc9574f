//! One field's grammar, as croner 2.2.0's `CronComponent::parse` reads it (`component.rs:227-453`),
//! into bitmasks. The text arrives lower-cased with names already replaced (see `text.rs`).
//!
//! A field is `*` or a comma list (empty items are skipped, so `,` alone selects nothing). Each
//! item is read by the first rule that applies: it contains `/` (a step), `-` (a range), `w`
//! (closest weekday), is `l` (last day of the month), or is a number with an optional `#n` or
//! `L` suffix. Numbers are `u8`s as Rust's `str::parse` reads them, so `05` and `+5` are
//! accepted; that is the trigger's parser, so it is this one's too.

/// What kind of mark an item puts on its values (croner's `ALL_BIT`, `LAST_BIT`, `NTH_*_BIT`).
#[derive(Clone, Copy)]
enum Mark {
    /// The value itself: the plain meaning of a field.
    All,
    /// Day of week only: the last such weekday of the month (`5L`, `5#L`). Croner lets a range
    /// or step in *any* field carry it (`1-5#L`) and then never looks at it there.
    Last,
    /// Day of week only: the nth (index 0..5 for 1..=5) such weekday of the month (`1#2`).
    Nth(usize),
}

/// A field's bounds and which of croner's optional features it supports.
pub(super) struct Spec {
    pub name: &'static str,
    pub min: u8,
    pub max: u8,
    /// `#n` and `nL` (day of week).
    pub nth: bool,
    /// `nW` (day of month).
    pub closest: bool,
}

/// One parsed field: bit `v` of a mask stands for value `v`.
#[derive(Default)]
pub(super) struct Bits {
    pub all: u64,
    pub last: u64,
    pub nth: [u64; 5],
    pub closest: u64,
    /// A lone `L` item: the last day of the month in the day-of-month field. Croner accepts it in
    /// every field (`component.rs:77` makes the feature universal) and ignores it elsewhere.
    pub last_day: bool,
}

/// What is wrong with one item of a field: the item as croner reads it (lower-cased, names
/// replaced) and a phrase saying what to change.
pub(super) struct Problem {
    pub item: String,
    pub what: String,
}

impl Problem {
    fn at(item: &str, what: impl Into<String>) -> Problem {
        Problem { item: item.to_string(), what: what.into() }
    }
}

/// Reads one field.
pub(super) fn parse(spec: &Spec, field: &str) -> Result<Bits, Problem> {
    let mut bits = Bits::default();
    if field == "*" {
        bits.all = span(spec.min, spec.max);
        return Ok(bits);
    }
    for item in field.split(',').map(str::trim).filter(|item| !item.is_empty()) {
        if item.contains('/') {
            step(spec, &mut bits, item)?;
        } else if item.contains('-') {
            range(spec, &mut bits, item)?;
        } else if let Some(w) = item.find('w') {
            // Whatever follows the `w` is ignored, as in croner (`component.rs:319-336`).
            let day = number(&item[..w], item)?;
            if !spec.closest {
                return Err(Problem::at(item, "W (closest weekday) belongs in day-of-month"));
            }
            in_bounds(spec, day, item)?;
            bits.closest |= 1 << day;
        } else if item == "l" {
            bits.last_day = true;
        } else {
            // Croner's rewriting (`component.rs:253-259`): `5L` becomes `5#L`, and so does every
            // other `L` in the item (`5LL` is `5#L#L`, which reads as `5#L`).
            let mut item = item.replace('l', "L");
            if item.ends_with('L') && !item.contains('#') {
                item = item.replace('L', "#L");
            }
            if !spec.nth && item.contains('#') {
                let what = "# (nth weekday) and nL (last weekday) belong in day-of-week; in \
                            day-of-month, L alone is the last day";
                return Err(Problem::at(&item, what));
            }
            let mark = mark(&item)?;
            let value = number(before_hash(&item), &item)?;
            in_bounds(spec, value, &item)?;
            set(spec, &mut bits, value, mark, &item)?;
        }
    }
    Ok(bits)
}

/// `*/s`, `a-b/s` and `a/s` (from `a` to the field's maximum), with an optional mark suffix.
fn step(spec: &Spec, bits: &mut Bits, item: &str) -> Result<(), Problem> {
    let mark = mark(item)?;
    let mut parts = before_hash(item).split('/');
    let (Some(span_text), Some(step_text), None) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(Problem::at(item, "a step has one / (like */15 or 0-30/5)"));
    };
    let step = number(step_text, item)?;
    if step == 0 {
        return Err(Problem::at(item, "the step after / must be at least 1"));
    }
    let (start, end) = if span_text == "*" {
        (spec.min, spec.max)
    } else if span_text.contains('-') {
        bounds(span_text, item)?
    } else {
        (number(span_text, item)?, spec.max)
    };
    if start < spec.min || end > spec.max || start > end {
        return Err(out_of_bounds(spec, item));
    }
    let mut value = start;
    while value <= end {
        set(spec, bits, value, mark, item)?;
        // Croner steps in `u8` and refuses to overflow it even past the end (`component.rs:447`):
        // `59/200` is an error although 259 would end the loop anyway.
        value = value.checked_add(step).ok_or_else(|| {
            Problem::at(item, "the step runs past 255, which the trigger's parser refuses")
        })?;
    }
    Ok(())
}

/// `a-b` (no wrap-around: `a` must not exceed `b`), with an optional mark suffix.
fn range(spec: &Spec, bits: &mut Bits, item: &str) -> Result<(), Problem> {
    let mark = mark(item)?;
    let (start, end) = bounds(before_hash(item), item)?;
    if start > end {
        return Err(Problem::at(
            item,
            format!(
                "a range must run upwards ({start} is after {end}); ranges do not wrap \
             around, so list both parts instead"
            ),
        ));
    }
    if start < spec.min || end > spec.max {
        return Err(out_of_bounds(spec, item));
    }
    (start..=end).try_for_each(|value| set(spec, bits, value, mark, item))
}

/// The two numbers of `a-b`.
fn bounds(text: &str, item: &str) -> Result<(u8, u8), Problem> {
    let mut parts = text.split('-').map(str::trim);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(start), Some(end), None) => Ok((number(start, item)?, number(end, item)?)),
        _ => Err(Problem::at(item, "a range has one - (like 1-5)")),
    }
}

/// The mark an item's suffix asks for (`component.rs:282-311`): a final `L` wins over anything
/// between `#` and it (`5#2L` reads as `5L`), else `#n` with n in 1..=5.
fn mark(item: &str) -> Result<Mark, Problem> {
    if item.ends_with(['L', 'l']) {
        return Ok(Mark::Last);
    }
    let Some(hash) = item.find('#') else { return Ok(Mark::All) };
    match item[hash + 1..].parse::<u8>() {
        Ok(nth @ 1..=5) => Ok(Mark::Nth(usize::from(nth - 1))),
        _ => Err(Problem::at(item, "after # comes which weekday of the month, 1 to 5")),
    }
}

fn before_hash(item: &str) -> &str {
    item.find('#').map_or(item, |hash| &item[..hash])
}

fn set(spec: &Spec, bits: &mut Bits, value: u8, mark: Mark, item: &str) -> Result<(), Problem> {
    let bit = 1u64 << value;
    match mark {
        Mark::All => bits.all |= bit,
        Mark::Last => bits.last |= bit,
        Mark::Nth(_) if !spec.nth => {
            return Err(Problem::at(item, "# (nth weekday) belongs in day-of-week"));
        }
        Mark::Nth(index) => bits.nth[index] |= bit,
    }
    Ok(())
}

fn number(text: &str, item: &str) -> Result<u8, Problem> {
    text.parse::<u8>().map_err(|_| {
        if text.is_empty() {
            Problem::at(item, "a number is missing")
        } else if text == "*" {
            Problem::at(
                item,
                "* stands alone or before a step (*/15); it cannot be part of a list or range",
            )
        } else if text.contains(['l', 'L', 'w']) {
            let what = format!(
                "{text:?} is not a number; L and W follow a single value (L, 15W, 5L, 5#L) and \
                 never start or end a range or step"
            );
            Problem::at(item, what)
        } else if text.bytes().any(|b| b.is_ascii_alphabetic()) {
            let what = format!(
                "{text:?} is not a number; names are three letters (Mon, Jan), and only L, W \
                 and # are special"
            );
            Problem::at(item, what)
        } else {
            Problem::at(item, format!("{text:?} is not a number from 0 to 255"))
        }
    })
}

fn in_bounds(spec: &Spec, value: u8, item: &str) -> Result<(), Problem> {
    if value < spec.min || value > spec.max {
        return Err(out_of_bounds(spec, item));
    }
    Ok(())
}

fn out_of_bounds(spec: &Spec, item: &str) -> Problem {
    Problem::at(item, format!("{} runs from {} to {}", spec.name, spec.min, spec.max))
}

/// Bits `min..=max` set.
pub(super) fn span(min: u8, max: u8) -> u64 {
    (u64::MAX >> (63 - max)) & (u64::MAX << min)
}

//! The expressions the differential test throws at both parsers: hand-written ones (written
//! for the Spin dialect; the test also reads each without its seconds field in the classic
//! dialect), ones that must be refused, and a seeded generator of valid-looking ones.

/// Expressions croner accepts (a few, marked, it refuses), each for a reason.
pub const ACCEPTED: &[&str] = &[
    // The everyday ones.
    "0 0 9 * * Mon-Fri",
    "0 0 3 1 * *",
    "0 0 0 29 2 *",
    "0 0 12 31 * *",
    "0 0 0 L * *",
    "0 0 0 L 2 *",
    "0 30 8 * * 5L",
    "0 0 0 * * 1#2",
    "0 0 0 * * 0#5",
    "0 0 9 15W * *",
    "0 0 0 1,15,L * *",
    "0 0 0 13 * FRI",
    "0 0 0 1-7 * 1",
    "0 0 0 29 2 1",
    // Steps that do not divide the field, `a/s` to the maximum, ranges with steps.
    "*/7 * * * * *",
    "5/15 * * * * *",
    "0 10-50/20 * * * *",
    "0 0 */5 * * *",
    "*/255 * * * * *",
    // Names in either case and in the "wrong" field (MON in month is 1, JAN in dow is Monday).
    "0 0 0 * JAN,jul *",
    "0 0 0 * * sun",
    "0 0 0 * * SAT-SUN",
    "0 0 0 * mon *",
    "0 0 0 * * jan",
    // Sunday as 0 and 7, in values, ranges, steps and nth.
    "0 0 0 * * 0",
    "0 0 0 * * 7",
    "0 0 0 * * 6-7",
    "0 0 0 * * 7#1",
    "0 0 0 * * 1/2",
    "0 0 0 * * */3",
    // `?` anywhere, nicknames in any case.
    "0 0 0 ? * ?",
    "? ? ? ? ? ?",
    "@daily",
    "@HOURLY",
    "@weekly",
    "@monthly",
    "@yearly",
    "@annually",
    // Croner's suffix rules: a final L wins over `#n`; marks on ranges and steps.
    "0 0 0 * * 5#L",
    "0 0 0 * * 5#2L",
    "0 0 0 * * 5LL",
    "0 0 0 * * 5#xL",
    "0 0 0 * * 1-5#L",
    "0 0 0 * * 1-7/2#2",
    "0 0 0 l * *",
    // W crossing month boundaries.
    "0 0 9 1W * *",
    "0 0 9 31W * *",
    "0 0 0 L,1W * 1-5",
    "0 0 0 31W 1,3,5 *",
    // Numbers as `str::parse::<u8>` reads them, empty list items, text ignored after `W`.
    "+5 05 0 * * *",
    "0 0 0 1,,2 * *",
    "0 0 0 15wfoo * *",
    // Unicode: whitespace, and the two letters whose lower case is ASCII (see `text.rs`).
    "\t0\t0  0 * * *\n",
    "0\u{a0}0 0 * * *",
    "0 0 0 15wİ * *",
    "0 0 0 * * 5#\u{212a}L",
    // An `@` puts "0 " in front in the Spin dialect: six fields become seven, five become six.
    "0 0 0 15w@ * *",
    "0 9 15w@ * *",
    // Refused by croner too: names replaced in order (`satue` is `sa2`), `u8` step overflow.
    "0 0 0 * * satue",
    "59/200 * * * * *",
];

/// Expressions both refuse, or that we alone refuse because they never match.
pub const REFUSED: &[&str] = &[
    "",
    "   ",
    "* * * * *",
    "0 0 0 * * * 2025",
    "@midnight",
    "@reboot",
    "@every 5m",
    "0 0 0 * * MONDAY",
    "0 0 0 1-5L * *",
    "0 0 0 L-2 * *",
    "0 0 0 LW * *",
    "0 0 0 * * FRI-MON",
    "1/255 * * * * *",
    "0 0 0 * * 1#2#3",
    "0 0 0 * * 1#",
    "0 0 0 * * #1",
    "0 0 0 * * 1#6",
    "0 0 0 */0 * *",
    "0 0 0 1-/2 * *",
    "0 0 0 1-2-3 * *",
    "0 0 0 1//2 * *",
    "0 0 0 *-5 * *",
    "0 0 0 ** * *",
    "0 0 0 5L * *",
    "0 0 0 * * 5W",
    "0 0 0 * 5W *",
    "0 0 0 0 * *",
    "0 0 24 * * *",
    "0 0 0 * 13 *",
    "0 0 0 * 0 *",
    "0 0 0 * * 8",
    "0 0 0 *,1 * *",
    "0 0 0 * * -1",
    "0 0 0 256 * *",
    "0 0 0 * * l#2",
    // Croner accepts these; they never match.
    "0 0 0 30 2 *",
    "0 0 0 31 4,6,9,11 *",
    "0 0 0 30W 2 *",
    "L * * * * *",
    "0 L * * * *",
    "0 0 L * * *",
    "0 0 0 * L *",
    "0 0 0 * , *",
    "0 0 0 * * L",
    ", 0 0 * * *",
    "0 0 0 * * 7L",
    "0 0 0 1 * 1#2",
];

/// A seeded xorshift generator: the same corpus on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A six-field expression of random items: mostly valid, some out of bounds, some never
/// matching.
pub fn random_expression(rng: &mut Rng) -> String {
    let bounds = [(0, 59), (0, 59), (0, 23), (1, 31), (1, 12), (0, 7)];
    let fields: Vec<String> = (0..6)
        .map(|field| {
            let (min, max) = bounds[field];
            if rng.below(3) == 0 {
                return "*".into();
            }
            let items: Vec<String> =
                (0..1 + rng.below(3) / 2).map(|_| item(rng, field, min, max)).collect();
            items.join(",")
        })
        .collect();
    fields.join(" ")
}

/// One item of field `field` (running `min..=max`) in any of the forms croner reads.
fn item(rng: &mut Rng, field: usize, min: u64, max: u64) -> String {
    // Now and then one past the maximum, which both must refuse.
    let value = |rng: &mut Rng| {
        let past = u64::from(rng.below(8) == 0);
        min + rng.below(max - min + 1 + past)
    };
    let names: &[&str] = match field {
        4 => &["Jan", "FEB", "mar", "Jun", "sep", "DEC"],
        5 => &["Sun", "MON", "tue", "Wed", "fri", "SAT"],
        _ => &[],
    };
    match rng.below(12) {
        2 => format!("{}-{}", value(rng), value(rng)),
        3 => {
            let largest = if rng.below(4) == 0 { 70 } else { max };
            format!("*/{}", 1 + rng.below(largest))
        }
        4 => format!("{}/{}", value(rng), 1 + rng.below(max)),
        5 => {
            let start = value(rng);
            format!("{start}-{}/{}", start + rng.below(max - min + 1), 1 + rng.below(12))
        }
        6 if !names.is_empty() => rng.pick(names).to_string(),
        7 if !names.is_empty() => format!("{}-{}", rng.pick(names), rng.pick(names)),
        8 if field == 3 => rng.pick(&["L", "15W", "1W", "31W", "30W", "l"]).to_string(),
        8 if field == 5 => format!("{}{}", value(rng), rng.pick(&["L", "#1", "#2", "#5", "#L"])),
        9 => "?".into(),
        _ => value(rng).to_string(),
    }
}

//! Percent-decoding, shared by the SharedKey canonical query (where `+` is a space) and the
//! run record's metadata values (where it is not). Lenient: a broken escape stays as written.

pub(crate) fn decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b'+', _, _) if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn broken_escapes_stay_and_plus_depends_on_the_context() {
        assert_eq!(super::decode("a%2Fb+c%zz%4", true), "a/b c%zz%4");
        assert_eq!(super::decode("a%2Fb+c%zz%4", false), "a/b+c%zz%4");
        assert_eq!(super::decode("%E3%83%AD%", false), "ロ%");
    }
}

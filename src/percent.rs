//! Percent-encoding and decoding, shared by every place a name or value crosses into a URL or a
//! header: blob paths, the List Blobs marker, the run record's metadata values, the SharedKey
//! canonical query and `Encoded` blob names in listings.
//!
//! The encoder writes uppercase hex, which is what the signing vectors (and the Azure SDK for
//! Python's `quote`) produce for the same inputs.

/// RFC 3986 unreserved characters: safe in any URL component. The List Blobs marker keeps only
/// these, as Python's `quote(value, safe="")` does.
pub(crate) fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~')
}

/// A blob path keeps its `/` separators: Python's `quote(name, safe="~/")`, and the encoded
/// form is what SharedKey signs.
pub(crate) fn path(byte: u8) -> bool {
    unreserved(byte) || byte == b'/'
}

/// Visible ASCII: a header value carries it as is; everything else (spaces, controls, non-ASCII)
/// is escaped so any text survives as a metadata value.
pub(crate) fn visible_ascii(byte: u8) -> bool {
    (0x21..=0x7e).contains(&byte)
}

/// A part of a run-record value whose parts are joined by `:`: visible ASCII but that.
pub(crate) fn record_part(byte: u8) -> bool {
    visible_ascii(byte) && byte != b':'
}

/// A text inside a list in a run-record value (the run history): visible ASCII but the list's
/// separators `:`, `,` and `;`.
pub(crate) fn list_part(byte: u8) -> bool {
    record_part(byte) && byte != b',' && byte != b';'
}

/// Escapes every byte of `text`'s UTF-8 for which `keep` is false as `%XX`. `%` itself is
/// always escaped, so [`decode`] gives `text` back whatever `keep` says.
pub(crate) fn encode(text: &str, keep: fn(u8) -> bool) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte != b'%' && keep(byte) {
            out.push(byte as char);
        } else {
            out.extend([
                '%',
                HEX[usize::from(byte >> 4)] as char,
                HEX[usize::from(byte & 15)] as char,
            ]);
        }
    }
    out
}

/// Decoding is lenient: a broken escape stays as written. `+` is a space only where the
/// context says so (the SharedKey canonical query), never in paths or metadata.
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
    use super::{encode, path, unreserved, visible_ascii};

    #[test]
    fn each_context_keeps_its_own_set_and_escapes_the_rest_in_uppercase() {
        let text = "a b/ü%~+!é\n";
        assert_eq!(encode(text, unreserved), "a%20b%2F%C3%BC%25~%2B%21%C3%A9%0A");
        assert_eq!(encode(text, path), "a%20b/%C3%BC%25~%2B%21%C3%A9%0A");
        assert_eq!(encode(text, visible_ascii), "a%20b/%C3%BC%25~+!%C3%A9%0A");
        for keep in [unreserved, path, visible_ascii] {
            assert_eq!(super::decode(&encode(text, keep), false), text);
        }
    }

    #[test]
    fn broken_escapes_stay_and_plus_depends_on_the_context() {
        assert_eq!(super::decode("a%2Fb+c%zz%4", true), "a/b c%zz%4");
        assert_eq!(super::decode("a%2Fb+c%zz%4", false), "a/b+c%zz%4");
        assert_eq!(super::decode("%E3%83%AD%", false), "ロ%");
    }
}

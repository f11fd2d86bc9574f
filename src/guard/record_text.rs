//! How the run record writes text into metadata values (visible ASCII, percent-encoded), and
//! how much of a name or a free text it keeps: the bottom of the record's files, used by the
//! model (`record`), the codec (`record_keys`) and the calls that fit what they write.

/// The most bytes a name (holder, who asked) takes encoded, and a free text (outcome, reason):
/// with the history's 2 KiB they keep the whole record under Azure's 8 KiB of metadata however
/// the text is written (a character can take 12 bytes encoded), leaving room for a newer build.
pub(crate) const NAME_BYTES: usize = 256;
pub(crate) const TEXT_BYTES: usize = 800;

/// The longest prefix of `value` whose encoding takes at most `bytes`: what the record keeps.
pub(crate) fn fit(value: &str, bytes: usize) -> String {
    let mut used = 0;
    let mut kept = String::new();
    for c in value.chars() {
        let mut buffer = [0; 4];
        used += text(c.encode_utf8(&mut buffer)).len();
        if used > bytes {
            break;
        }
        kept.push(c);
    }
    kept
}

pub(super) fn text(value: &str) -> String {
    crate::percent::encode(value, crate::percent::record_part)
}

pub(super) fn untext(value: &str) -> String {
    crate::percent::decode(value, false)
}

//! A small structural XML reader for the two documents the service sends us: List Blobs'
//! `EnumerationResults` and the `Error` body. Callers match on the element path, so a metadata
//! key or a blob name that happens to read `NextMarker` or `Blob` is only ever data.
//!
//! Hand-written rather than a crate because the documents are small and fixed in shape and the
//! component's size matters. It checks what the paths depend on (one root, balanced tags,
//! bounded depth) and rejects DTDs, so no entity expansion can be smuggled in.

use std::borrow::Cow;

/// Deeper than any answer the service gives (EnumerationResults > Blobs > Blob > Metadata >
/// key is five); the bound keeps a hostile body from growing the path without limit.
const MAX_DEPTH: usize = 16;

/// What [`walk`] reports for the element at the end of the path.
pub(crate) enum Node<'t> {
    /// The start tag, with its raw attribute text (read it with [`attribute`]).
    Open { attributes: &'t str },
    /// The end tag, with the entity-decoded text directly inside the element since its last
    /// child (for a leaf element: all of its text).
    Close { text: &'t str },
}

/// The body is not a single well-formed element tree.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NotXml;

/// Calls `visit` with the path of element names from the root for every start and end tag,
/// in document order. Stops at the first structural error; what was visited before stays
/// visited, so a lenient caller can use it.
pub(crate) fn walk<'a>(
    document: &'a str,
    visit: &mut dyn FnMut(&[&'a str], &Node<'_>),
) -> Result<(), NotXml> {
    let mut rest = document.trim_start_matches('\u{feff}');
    let mut path: Vec<&'a str> = Vec::new();
    let mut text = String::new();
    let mut root_seen = false;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            outside_text(rest, &path, &mut text)?;
            break;
        };
        outside_text(&rest[..lt], &path, &mut text)?;
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<?") {
            rest = skip_past(after, "?>")?;
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = skip_past(after, "-->")?;
        } else if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>").ok_or(NotXml)?;
            if path.is_empty() {
                return Err(NotXml);
            }
            text.push_str(&after[..end]);
            rest = &after[end + 3..];
        } else if rest.starts_with("<!") {
            // A DTD: never part of the service's answers.
            return Err(NotXml);
        } else if let Some(after) = rest.strip_prefix("</") {
            let end = after.find('>').ok_or(NotXml)?;
            if path.last().copied() != Some(after[..end].trim_end()) {
                return Err(NotXml);
            }
            visit(&path, &Node::Close { text: &text });
            text.clear();
            path.pop();
            rest = &after[end + 1..];
        } else {
            let end = tag_end(rest).ok_or(NotXml)?;
            let inner = &rest[1..end];
            let (inner, empty) = match inner.strip_suffix('/') {
                Some(inner) => (inner, true),
                None => (inner, false),
            };
            let name_end = inner.find(|c: char| c.is_ascii_whitespace()).unwrap_or(inner.len());
            let name = &inner[..name_end];
            let bad_name = name.is_empty() || name.contains(['<', '&', '"', '\'', '=', '/']);
            if bad_name || path.len() >= MAX_DEPTH || (path.is_empty() && root_seen) {
                return Err(NotXml);
            }
            root_seen = true;
            path.push(name);
            text.clear();
            visit(&path, &Node::Open { attributes: &inner[name_end..] });
            if empty {
                visit(&path, &Node::Close { text: "" });
                path.pop();
            }
            rest = &rest[end + 1..];
        }
    }
    if path.is_empty() && root_seen {
        Ok(())
    } else {
        Err(NotXml)
    }
}

/// Character data: kept inside an element, and only whitespace is allowed outside the root.
fn outside_text(raw: &str, path: &[&str], text: &mut String) -> Result<(), NotXml> {
    if path.is_empty() {
        return if raw.trim().is_empty() { Ok(()) } else { Err(NotXml) };
    }
    text.push_str(&decode_entities(raw));
    Ok(())
}

fn skip_past<'a>(text: &'a str, terminator: &str) -> Result<&'a str, NotXml> {
    let end = text.find(terminator).ok_or(NotXml)?;
    Ok(&text[end + terminator.len()..])
}

/// The index of the `>` closing the start tag at the head of `text`; a `>` inside a quoted
/// attribute value does not count.
fn tag_end(text: &str) -> Option<usize> {
    let mut quote = None;
    for (at, byte) in text.bytes().enumerate() {
        match (quote, byte) {
            (None, b'"' | b'\'') => quote = Some(byte),
            (Some(open), _) if byte == open => quote = None,
            (None, b'>') => return Some(at),
            (None, b'<') if at > 0 => return None,
            _ => {}
        }
    }
    None
}

/// The decoded value of attribute `name` in a start tag's raw attribute text.
pub(crate) fn attribute(attributes: &str, name: &str) -> Option<String> {
    let mut rest = attributes;
    loop {
        rest = rest.trim_start();
        let eq = rest.find('=')?;
        let key = rest[..eq].trim();
        let value = rest[eq + 1..].trim_start();
        let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let end = value[1..].find(quote)? + 1;
        if key == name {
            return Some(decode_entities(&value[1..end]).into_owned());
        }
        rest = &value[end + 1..];
    }
}

/// Replaces the five named entities and numeric character references (`&#65;`, `&#x41;`).
/// Lenient: anything else that starts with `&` stays as written.
pub(crate) fn decode_entities(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // The longest reference is `&#x10FFFF;` (10 bytes); `;` is ASCII, so any index found
        // is a character boundary.
        let end = rest.bytes().take(11).position(|b| b == b';');
        let decoded = end.and_then(|end| Some((reference(&rest[1..end])?, end + 1)));
        match decoded {
            Some((c, length)) => {
                out.push(c);
                rest = &rest[length..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn reference(name: &str) -> Option<char> {
    let code = match name {
        "lt" => return Some('<'),
        "gt" => return Some('>'),
        "amp" => return Some('&'),
        "quot" => return Some('"'),
        "apos" => return Some('\''),
        _ => {
            let number = name.strip_prefix('#')?;
            let (digits, radix) = match number.strip_prefix(['x', 'X']) {
                Some(hex) => (hex, 16),
                None => (number, 10),
            };
            // from_str_radix would also take a sign.
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            u32::from_str_radix(digits, radix).ok()?
        }
    };
    // XML forbids NUL even as a reference; surrogates and out-of-range values are not chars.
    char::from_u32(code).filter(|c| *c != '\0')
}

#[cfg(test)]
#[path = "xml_tests.rs"]
mod tests;

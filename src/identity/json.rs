//! Just enough JSON for token answers: the top-level string and number members of one object.
//! Nested values are skipped; anything malformed reads as no object at all.

/// The object's top-level members whose values are strings (unescaped) or numbers (as written).
pub fn members(text: &str) -> Option<Vec<(String, String)>> {
    let mut reader = Reader { bytes: text.trim().as_bytes(), at: 0 };
    reader.expect(b'{')?;
    let mut out = Vec::new();
    reader.skip_space();
    if reader.peek() == Some(b'}') {
        return Some(out);
    }
    loop {
        reader.skip_space();
        let key = reader.string()?;
        reader.skip_space();
        reader.expect(b':')?;
        reader.skip_space();
        match reader.peek()? {
            b'"' => out.push((key, reader.string()?)),
            b'-' | b'0'..=b'9' => out.push((key, reader.number())),
            _ => reader.skip_value()?,
        }
        reader.skip_space();
        match reader.next()? {
            b',' => continue,
            b'}' => return Some(out),
            _ => return None,
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn number(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) {
            self.at += 1;
        }
        String::from_utf8_lossy(&self.bytes[start..self.at]).into_owned()
    }

    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.next()? {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => match self.next()? {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'b' | b'f' => out.push(b' '),
                    b'u' => {
                        let hex =
                            std::str::from_utf8(self.bytes.get(self.at..self.at + 4)?).ok()?;
                        self.at += 4;
                        let unit = u32::from_str_radix(hex, 16).ok()?;
                        // Surrogate pairs are not worth decoding in an error text.
                        let ch = char::from_u32(unit).unwrap_or('\u{FFFD}');
                        out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    other => out.push(other),
                },
                byte => out.push(byte),
            }
        }
    }

    /// Skips an object, array or literal, strings inside included.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.at += 1;
                }
                b',' | b'}' if depth == 0 => return Some(()),
                _ => self.at += 1,
            }
            if depth == 0 && matches!(self.peek(), Some(b',' | b'}')) {
                return Some(());
            }
        }
    }
}

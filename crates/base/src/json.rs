//! A small, lenient JSON reader for rt-app files.
//!
//! rt-app reads its files with json-c and people write them with `workgen` in mind, so real
//! files carry C comments (`/* */`, `//`), trailing commas and repeated keys whose order is
//! the order of events. `serde_json` accepts none of that, hence this reader: it keeps every
//! object as an ordered list of `(key, value, position)` with duplicates, records the line and
//! column of every value for error messages, never panics and bounds its recursion.
//!
//! It accepts what json-c's tokener accepts without `JSON_TOKENER_STRICT` (the mode
//! `json_object_from_file` uses, `json_tokener.c`): comments, a trailing comma in objects and
//! arrays, strings and keys in single quotes, raw control characters (line breaks) inside
//! strings, `true`/`false`/`null` in any case, `NaN` and `Infinity`, nesting up to json-c's
//! default depth of 32, and anything after the first complete value (`parse_json_c` says
//! where it starts: json-c stops reading there). It refuses what json-c refuses: a missing
//! ':' or ',', an empty element (`[1,,2]`), a byte order mark, unknown escapes.

/// A place in the text: 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// A JSON value. Objects keep their keys in file order, duplicates included.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A number written without fraction or exponent that fits an `i64`.
    Int(i64),
    /// Any other number, with its text as written (messages echo it, not a rounding of it).
    Float(f64, Box<str>),
    Str(String),
    /// Elements with the position where each starts.
    Array(Vec<(Value, Pos)>),
    /// Members with the position where each key starts.
    Object(Vec<(String, Value, Pos)>),
}

impl Value {
    /// A short description for "found …" in error messages.
    pub fn describe(&self) -> String {
        match self {
            Value::Null => "null".to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(_, text) => text.to_string(),
            Value::Str(s) => quote(s),
            Value::Array(_) => "an array".to_string(),
            Value::Object(_) => "an object".to_string(),
        }
    }
}

/// Quotes a string for a message, cut short so that a huge value cannot flood the terminal.
pub fn quote(s: &str) -> String {
    const MAX_CHARS: usize = 40;
    if s.chars().count() > MAX_CHARS {
        let cut: String = s.chars().take(MAX_CHARS).collect();
        format!("{:?}…", cut)
    } else {
        format!("{:?}", s)
    }
}

/// A syntax error: where, what the reader expected there and what it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub pos: Pos,
    pub expected: String,
    pub found: String,
}

/// json-c's default depth (`JSON_TOKENER_DEFAULT_DEPTH`): a value nested in this many
/// objects and arrays is refused. It also keeps hostile input from overflowing the stack of
/// this recursive reader.
pub const MAX_DEPTH: usize = 32;

/// Parses the first JSON value of the text as json-c does, and where non-blank text after
/// it starts, if any (json-c ignores it).
pub fn parse_json_c(text: &str) -> Result<(Value, Option<Pos>), JsonError> {
    let mut r = Reader {
        s: text.as_bytes(),
        i: 0,
        line: 1,
        column: 1,
    };
    if text.starts_with('\u{feff}') {
        return Err(JsonError {
            pos: r.pos(),
            expected: "a value (json-c refuses a byte order mark)".to_string(),
            found: "a UTF-8 byte order mark".to_string(),
        });
    }
    r.skip_blank()?;
    let v = r.value(0)?;
    r.skip_blank()?;
    let rest = (r.i < r.s.len()).then(|| r.pos());
    Ok((v, rest))
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    line: u32,
    column: u32,
}

impl Reader<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Moves past one byte, keeping line and column (a column per character: UTF-8
    /// continuation bytes do not count).
    fn bump(&mut self) {
        if let Some(&b) = self.s.get(self.i) {
            self.i += 1;
            if b == b'\n' {
                self.line = self.line.saturating_add(1);
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                self.column = self.column.saturating_add(1);
            }
        }
    }

    /// What is at the current position, for "found …".
    fn found_here(&self) -> String {
        match self.char_here() {
            None => "end of input".to_string(),
            Some(c) => format!("{:?}", c),
        }
    }

    fn char_here(&self) -> Option<char> {
        // The input came from a &str and `i` only ever stops on character boundaries, but
        // stay total anyway: a bad slice is reported as a replacement character.
        let rest = self.s.get(self.i..)?;
        if rest.is_empty() {
            return None;
        }
        let end = rest.len().min(4);
        (1..=end)
            .find_map(|n| std::str::from_utf8(&rest[..n]).ok())
            .and_then(|s| s.chars().next())
            .or(Some('\u{fffd}'))
    }

    fn error_here(&self, expected: &str) -> JsonError {
        JsonError {
            pos: self.pos(),
            expected: expected.to_string(),
            found: self.found_here(),
        }
    }

    /// Skips white space and comments.
    fn skip_blank(&mut self) -> Result<(), JsonError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.bump(),
                Some(b'/') => {
                    let start = self.pos();
                    match self.s.get(self.i + 1) {
                        Some(b'/') => {
                            while !matches!(self.peek(), None | Some(b'\n')) {
                                self.bump();
                            }
                        }
                        Some(b'*') => {
                            self.bump();
                            self.bump();
                            loop {
                                match self.peek() {
                                    None => {
                                        return Err(JsonError {
                                            pos: start,
                                            expected: "\"*/\" to close this comment".to_string(),
                                            found: "end of input".to_string(),
                                        })
                                    }
                                    Some(b'*') if self.s.get(self.i + 1) == Some(&b'/') => {
                                        self.bump();
                                        self.bump();
                                        break;
                                    }
                                    Some(_) => self.bump(),
                                }
                            }
                        }
                        _ => return Err(self.error_here("a value")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(Value::Str),
            Some(b'-')
                if matches!(self.s.get(self.i + 1), Some(b'i' | b'I'))
                    && self.word_is(self.i + 1, "infinity") =>
            {
                self.bump();
                self.literal(
                    "infinity",
                    Value::Float(f64::NEG_INFINITY, "-Infinity".into()),
                )
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't' | b'T') => self.literal("true", Value::Bool(true)),
            Some(b'f' | b'F') => self.literal("false", Value::Bool(false)),
            Some(b'n' | b'N') if self.word_is(self.i, "nan") => {
                self.literal("nan", Value::Float(f64::NAN, "NaN".into()))
            }
            Some(b'n' | b'N') => self.literal("null", Value::Null),
            Some(b'i' | b'I') => {
                self.literal("infinity", Value::Float(f64::INFINITY, "Infinity".into()))
            }
            _ => Err(self.error_here("a value")),
        }
    }

    /// Refuses a member or element nested in `depth` objects and arrays when json-c would
    /// (it refuses a value at its maximum depth, so an empty innermost object may be one
    /// level deeper than one with members).
    fn check_depth(&self, depth: usize) -> Result<(), JsonError> {
        if depth >= MAX_DEPTH {
            return Err(JsonError {
                pos: self.pos(),
                expected: format!(
                    "values nested in at most {} objects and arrays (json-c's depth)",
                    MAX_DEPTH - 1
                ),
                found: "deeper nesting".to_string(),
            });
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        let depth = depth + 1;
        self.bump(); // '{'
        let mut members = Vec::new();
        loop {
            self.skip_blank()?;
            match self.peek() {
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(members));
                }
                Some(b'"' | b'\'') => {}
                _ => {
                    let expected = if members.is_empty() {
                        "a quoted key or '}'"
                    } else {
                        "a quoted key or '}' after ','"
                    };
                    return Err(self.error_here(expected));
                }
            }
            let key_pos = self.pos();
            let key = self.string(self.s[self.i])?;
            self.skip_blank()?;
            if self.peek() != Some(b':') {
                return Err(self.error_here("':' after the key"));
            }
            self.bump();
            self.skip_blank()?;
            self.check_depth(depth)?;
            let v = self.value(depth)?;
            members.push((key, v, key_pos));
            self.skip_blank()?;
            match self.peek() {
                // A trailing comma before '}' is accepted: the next turn sees the '}'.
                Some(b',') => self.bump(),
                Some(b'}') => {}
                _ => return Err(self.error_here("',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        let depth = depth + 1;
        self.bump(); // '['
        let mut items = Vec::new();
        loop {
            self.skip_blank()?;
            if self.peek() == Some(b']') {
                self.bump();
                return Ok(Value::Array(items));
            }
            if !matches!(
                self.peek(),
                Some(
                    b'{' | b'[' | b'"' | b'\'' | b'-' | b'0'
                        ..=b'9' | b't' | b'T' | b'f' | b'F' | b'n' | b'N' | b'i' | b'I'
                )
            ) {
                return Err(self.error_here("a value or ']'"));
            }
            self.check_depth(depth)?;
            let pos = self.pos();
            let v = self.value(depth)?;
            items.push((v, pos));
            self.skip_blank()?;
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {}
                _ => return Err(self.error_here("',' or ']'")),
            }
        }
    }

    /// Whether the text at `at` is `word` in any case (json-c's non-strict literals).
    fn word_is(&self, at: usize, word: &str) -> bool {
        self.s
            .get(at..at + word.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(word.as_bytes()))
    }

    /// `word` (lower case) in any case, not followed by a letter, digit or '_'.
    fn literal(&mut self, word: &str, v: Value) -> Result<Value, JsonError> {
        let w = word.as_bytes();
        if self.word_is(self.i, word) {
            let after = self.s.get(self.i + w.len()).copied();
            if !matches!(after, Some(b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_')) {
                for _ in 0..w.len() {
                    self.bump();
                }
                return Ok(v);
            }
        }
        Err(self.error_here("a value"))
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.i;
        let start_pos = self.pos();
        if self.peek() == Some(b'-') {
            self.bump();
        }
        let digits = |r: &mut Self| {
            let from = r.i;
            while matches!(r.peek(), Some(b'0'..=b'9')) {
                r.bump();
            }
            r.i > from
        };
        if !digits(self) {
            return Err(self.error_here("a digit"));
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.bump();
            if !digits(self) {
                return Err(self.error_here("a digit after '.'"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integral = false;
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            if !digits(self) {
                return Err(self.error_here("a digit in the exponent"));
            }
        }
        // The slice holds only ASCII digits, signs, '.' and 'e', so it is valid UTF-8.
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if integral {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Int(i));
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f, text.into())),
            _ => Err(JsonError {
                pos: start_pos,
                expected: "a number of finite size".to_string(),
                found: text.to_string(),
            }),
        }
    }

    /// A string between `quote`s (json-c takes '"' or '\''), raw control characters
    /// included, as json-c keeps them.
    fn string(&mut self, quote: u8) -> Result<String, JsonError> {
        let start = self.pos();
        self.bump(); // the quote
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => {
                    return Err(JsonError {
                        pos: start,
                        expected: format!("{:?} to close the string starting here", quote as char),
                        found: "end of input".to_string(),
                    })
                }
                Some(q) if q == quote => {
                    self.bump();
                    // The bytes come from a &str and escapes push whole characters.
                    return Ok(String::from_utf8(out)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()));
                }
                Some(b'\\') => {
                    self.bump();
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.bump();
                            let c = self.unicode_escape()?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                            continue;
                        }
                        _ => {
                            return Err(self.error_here(
                                "an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
                            ))
                        }
                    };
                    self.bump();
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(b) => {
                    out.push(b);
                    self.bump();
                }
            }
        }
    }

    /// Reads the XXXX of `\uXXXX` (the `\u` is consumed), pairing UTF-16 surrogates.
    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) {
            if self.peek() == Some(b'\\') && self.s.get(self.i + 1) == Some(&b'u') {
                self.bump();
                self.bump();
                let lo = self.hex4()?;
                if (0xDC00..0xE000).contains(&lo) {
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return Ok(char::from_u32(c).unwrap_or('\u{fffd}'));
                }
            }
            return Ok('\u{fffd}');
        }
        Ok(char::from_u32(hi).unwrap_or('\u{fffd}'))
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(self.error_here("four hex digits after \\u")),
            };
            v = v * 16 + u32::from(d);
            self.bump();
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One JSON value filling the whole text.
    fn parse(text: &str) -> Result<Value, JsonError> {
        let (v, rest) = parse_json_c(text)?;
        match rest {
            Some(pos) => Err(JsonError {
                pos,
                expected: "end of input after the top-level value".to_string(),
                found: "more text".to_string(),
            }),
            None => Ok(v),
        }
    }

    fn obj(v: &Value) -> &[(String, Value, Pos)] {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object: {v:?}"),
        }
    }

    #[test]
    fn keeps_duplicate_keys_in_order_with_comments_and_trailing_commas() {
        let v = parse("{ /* c */ \"run\": 1, // x\n \"sleep\": 2,\n \"run\": 3, \"a\": [1, 2,], }")
            .unwrap();
        let keys: Vec<_> = obj(&v).iter().map(|(k, _, _)| k.as_str()).collect();
        assert_eq!(keys, ["run", "sleep", "run", "a"]);
        assert_eq!(obj(&v)[2].1, Value::Int(3));
        assert_eq!(obj(&v)[1].2, Pos { line: 2, column: 2 });
    }

    #[test]
    fn numbers_strings_and_literals() {
        let text =
            r#"{"a": -12, "b": 1.5e3, "c": "x\"\u00e9\ud83d\ude00", "d": [true, false, null], "#;
        let v = parse(&format!("{text}\"e\": 99999999999999999999}}")).unwrap();
        let m = obj(&v);
        assert_eq!(m[0].1, Value::Int(-12));
        assert_eq!(m[1].1, Value::Float(1500.0, "1.5e3".into()));
        assert_eq!(m[1].1.describe(), "1.5e3", "a number is echoed as written");
        assert_eq!(m[2].1, Value::Str("x\"é😀".to_string()));
        assert_eq!(
            m[3].1,
            Value::Array(vec![
                (
                    Value::Bool(true),
                    Pos {
                        line: 1,
                        column: 60
                    }
                ),
                (
                    Value::Bool(false),
                    Pos {
                        line: 1,
                        column: 66
                    }
                ),
                (
                    Value::Null,
                    Pos {
                        line: 1,
                        column: 73
                    }
                ),
            ])
        );
        assert_eq!(m[4].1, Value::Float(1e20, "99999999999999999999".into()));
    }

    #[test]
    fn errors_point_at_the_mistake() {
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!(e.pos, Pos { line: 3, column: 3 });
        assert_eq!(e.expected, "',' or '}'");
        assert_eq!(e.found, "'\"'");

        let e = parse("{\"a\": tru}").unwrap_err();
        assert_eq!((e.pos.column, e.found.as_str()), (7, "'t'"));

        let e = parse("{\"a\": \"open\n}").unwrap_err();
        assert_eq!(e.pos, Pos { line: 1, column: 7 }, "where the string opens");
        assert_eq!(e.found, "end of input");

        let e = parse("{} /* never closed").unwrap_err();
        assert_eq!(e.pos.column, 4);
        assert_eq!(e.found, "end of input");

        let e = parse("{\"é\": x}").unwrap_err();
        assert_eq!(e.pos.column, 7, "columns count characters");

        assert!(parse("").is_err());
        assert!(parse("{} {}").is_err());
        assert!(
            parse("\u{feff}{}").is_err(),
            "json-c refuses a byte order mark"
        );
        assert!(parse("{'a': 'b\\'}").is_err(), "no \\' escape in json-c");
        assert!(parse("[1,,2]").is_err());
        assert!(parse("{,}").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        let e = parse(&deep).unwrap_err();
        assert!(e.expected.contains("depth"), "{e:?}");
    }

    /// json-c's tokener refuses a value at depth JSON_TOKENER_DEFAULT_DEPTH - 1 = 31 and
    /// above (the top-level value is at depth 0): 32 nested arrays are read when the
    /// innermost is empty, not when it holds a value; 33 are refused.
    #[test]
    fn nesting_is_bounded_where_json_c_bounds_it() {
        let nest = |n: usize, inner: &str| format!("{}{inner}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&nest(32, "")).is_ok());
        assert!(parse(&nest(31, "1")).is_ok());
        assert!(parse(&nest(32, "1")).is_err());
        assert!(parse(&nest(33, "")).is_err());
        let obj = |n: usize| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
        assert!(parse(&obj(31)).is_ok());
        assert!(parse(&obj(32)).is_err());
    }

    /// What json-c's tokener accepts outside strict mode.
    #[test]
    fn accepts_what_json_c_accepts() {
        let v = parse(
            "{'a': 'it\"s', \"b\": [TRUE, False, Null, NaN, -Infinity, infinity], \"c\": \"x\ny\"}",
        )
        .unwrap();
        let m = obj(&v);
        assert_eq!(
            m[0],
            (
                "a".to_string(),
                Value::Str("it\"s".to_string()),
                Pos { line: 1, column: 2 }
            )
        );
        let Value::Array(b) = &m[1].1 else { panic!() };
        assert_eq!(b[0].0, Value::Bool(true));
        assert_eq!(b[1].0, Value::Bool(false));
        assert_eq!(b[2].0, Value::Null);
        assert!(matches!(b[3].0, Value::Float(f, _) if f.is_nan()));
        assert!(matches!(b[4].0, Value::Float(f, _) if f == f64::NEG_INFINITY));
        assert!(matches!(b[5].0, Value::Float(f, _) if f == f64::INFINITY));
        assert_eq!(m[2].1, Value::Str("x\ny".to_string()));
        // json-c stops after the first value.
        let (v, rest) = parse_json_c("{\"a\": 1}\n garbage").unwrap();
        assert_eq!(obj(&v).len(), 1);
        assert_eq!(rest, Some(Pos { line: 2, column: 2 }));
        assert_eq!(parse_json_c("{} /* c */ \n").unwrap().1, None);
    }

    proptest! {
        #[test]
        fn never_panics_on_strings(s in ".*") {
            let _ = parse(&s);
        }

        #[test]
        fn never_panics_on_json_like_text(s in "[{}\\[\\]\",:/*a-z0-9 \\n\\\\.eE+-]{0,200}") {
            let _ = parse(&s);
        }

        #[test]
        fn never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse(&String::from_utf8_lossy(&b));
        }
    }
}

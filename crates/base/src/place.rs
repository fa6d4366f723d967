//! One reader for the places of TOML and JSON documents: experiment files, platform files and
//! the `[reproduce]` tables read through it, and the rt-app grammar builds its errors with its
//! helpers (`place`, `integer`, `did_you_mean`).
//!
//! A [`Doc`] is a file's text parsed into a tree of [`Node`]s that keep where each value (or
//! its key) starts, whichever the format. An [`At`] is a node and its key path
//! (`freq_domains[1].opps[3].freq_khz`); its typed getters either give the value or an
//! [`InputError`] naming the file, the place — the key path and `line L column C` — what was
//! expected there and what was found, the value as written. Tables check their keys, with a
//! "did you mean" for a near miss.
//!
//! TOML's integers are 64-bit signed; a decimal integer above `i64::MAX` that fits a `u64`
//! (`seed = 18446744073709551615`) is read as written all the same (see [`Doc::parse_toml`]),
//! so that a file takes what the command line takes.

use crate::error::InputError;
use crate::json::{self, Pos};
use std::path::Path;

/// The formats a [`Doc`] is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

/// A parsed document and the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    file: String,
    format: Format,
    root: Node,
}

/// A value and where it (or, in a table, its key) starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Kind,
    pub pos: Option<Pos>,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Null,
    Bool(bool),
    /// Every integer either format holds: TOML's `i64` and the `u64`s beyond it, JSON's.
    Int(i128),
    /// A number with a fraction or an exponent, and its text as written.
    Float(f64, Box<str>),
    Str(String),
    /// A TOML date or time, as written.
    Datetime(String),
    Array(Vec<Node>),
    /// Members in file order (each key once: both readers refuse a repeated key).
    Table(Vec<(String, Node)>),
}

/// The place of a value for an error: its key path and `line L column C`, either alone when
/// the other is unknown, `top level` when both are.
pub fn place(path: &str, pos: Option<Pos>) -> String {
    match (path.is_empty(), pos) {
        (true, None) => "top level".to_string(),
        (false, None) => path.to_string(),
        (true, Some(p)) => format!("line {} column {}", p.line, p.column),
        (false, Some(p)) => format!("{path} (line {} column {})", p.line, p.column),
    }
}

/// `path.key`, or `key` at the top.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        let mut s = String::with_capacity(path.len() + 1 + key.len());
        s.push_str(path);
        s.push('.');
        s.push_str(key);
        s
    }
}

/// What an integer in `lo..=hi` is called in `expected`: `WHAT (an integer from LO to HI)`,
/// with an end at `i64`'s bounds or beyond left open.
pub fn integer(what: &str, lo: i128, hi: i128) -> String {
    let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
    match (lo <= min, hi >= max) {
        (true, true) => format!("{what} (an integer)"),
        (true, false) => format!("{what} (an integer of at most {hi})"),
        (false, true) => format!("{what} (an integer of at least {lo})"),
        (false, false) => format!("{what} (an integer from {lo} to {hi})"),
    }
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a likely
/// typo: at most one edit for words of up to four characters, two for longer ones (the
/// bound rustc and git use for their suggestions is of the same order). Ties go to the
/// earlier candidate, so the answer does not depend on anything but the list's order.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = if word.chars().count() <= 4 { 1 } else { 2 };
    let mut best: Option<(usize, &str)> = None;
    for &c in candidates {
        let d = edit_distance(word, c);
        if d <= limit && best.map_or(true, |(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance over characters counting insertions, deletions, substitutions and swaps of
/// two neighbours (the optimal-string-alignment variant of Damerau–Levenshtein: `mdoe` is
/// one edit from `mode`), with three rows of memory.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j - 1] + cost).min(prev[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

/// The text of the file at `path`, `what` saying what it should be. Text that is not UTF-8
/// is refused at the line and column of its first bad byte.
pub fn read_text(path: &Path, what: &str) -> Result<String, InputError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::new(&file, "file", format!("a readable {what}"), e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // The prefix is valid UTF-8 by construction.
        let good = std::str::from_utf8(good).unwrap_or("");
        InputError::new(
            &file,
            place("", Some(end_pos(good))),
            "UTF-8 text",
            "a byte that is not UTF-8",
        )
    })
}

/// The line and column just after `text` (where the next character would be).
fn end_pos(text: &str) -> Pos {
    let line = text.matches('\n').count() + 1;
    let column = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Pos {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

/// A JSON syntax error (`json.rs`) as an input error at its line and column.
pub fn json_syntax_error(file: &str, e: json::JsonError) -> InputError {
    InputError::new(file, place("", Some(e.pos)), e.expected, e.found)
}

/// The most decimal integers beyond `i64` a TOML document may hold: each is found by parsing
/// the document again, so they are bounded to keep a hostile file from costing quadratic
/// time.
const MAX_BIG_INTEGERS: usize = 64;

impl Doc {
    /// Reads and parses the file at `path` (`what` says what it should be): JSON when its
    /// name ends in `.json` or its text starts with `{`, else TOML.
    pub fn read(path: &Path, what: &str) -> Result<Doc, InputError> {
        let text = read_text(path, what)?;
        Doc::parse(&text, &path.display().to_string())
    }

    /// Parses `text` as JSON when `file` ends in `.json` or the text starts with `{`, else
    /// as TOML; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Doc, InputError> {
        if file.ends_with(".json") || text.trim_start().starts_with('{') {
            Doc::parse_json(text, file)
        } else {
            Doc::parse_toml(text, file)
        }
    }

    /// Parses TOML. A decimal integer too large for TOML's `i64` but not for a `u64` is read
    /// all the same: it stands in the text for a hexadecimal zero of the same length (so
    /// every place keeps its line and column) while it is parsed, and takes its value back in
    /// the tree.
    pub fn parse_toml(text: &str, file: &str) -> Result<Doc, InputError> {
        let lines = Lines::new(text);
        let mut parsed = std::borrow::Cow::Borrowed(text);
        let mut big: Vec<(usize, u64)> = Vec::new();
        let doc = loop {
            match toml_edit::ImDocument::parse(parsed.as_ref()) {
                Ok(doc) => break doc,
                Err(e) => {
                    let literal = e
                        .span()
                        .filter(|_| big.len() < MAX_BIG_INTEGERS)
                        .and_then(|span| big_integer(&parsed, span));
                    match literal {
                        Some((span, value)) => {
                            let zero = format!("0x{}", "0".repeat(span.len() - 2));
                            parsed.to_mut().replace_range(span.clone(), &zero);
                            big.push((span.start, value));
                        }
                        None => return Err(toml_syntax_error(file, &lines, &e)),
                    }
                }
            }
        };
        let reader = TomlReader {
            text: parsed.as_ref(),
            lines: &lines,
            big: &big,
        };
        Ok(Doc {
            file: file.to_string(),
            format: Format::Toml,
            root: Node {
                value: reader.table(doc.as_table()),
                pos: None,
            },
        })
    }

    /// Parses JSON with `json.rs` (json-c's leniency: comments, trailing commas), refusing
    /// text after the value and a key repeated in an object.
    pub fn parse_json(text: &str, file: &str) -> Result<Doc, InputError> {
        let (value, rest) = json::parse_json_c(text).map_err(|e| json_syntax_error(file, e))?;
        if let Some(pos) = rest {
            return Err(InputError::new(
                file,
                place("", Some(pos)),
                "the end of the text after the top-level value",
                "more text",
            ));
        }
        let root = from_json(value, None, file, "")?;
        Ok(Doc {
            file: file.to_string(),
            format: Format::Json,
            root,
        })
    }

    /// A document of one table built by hand (an experiment made from a plain workload).
    pub fn empty(file: &str) -> Doc {
        Doc {
            file: file.to_string(),
            format: Format::Toml,
            root: Node {
                value: Kind::Table(Vec::new()),
                pos: None,
            },
        }
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The top-level value, at the empty path.
    pub fn root(&self) -> At<'_> {
        At {
            doc: self,
            node: &self.root,
            path: String::new(),
        }
    }

    /// The top-level value, to change (an experiment's workload keys replaced).
    pub fn root_mut(&mut self) -> &mut Node {
        &mut self.root
    }

    /// `path` (`cpus[1].llc`, `numa_distance[0][1]`) with the line and column of the value
    /// there, if the document has one: for errors found after reading, from the path alone.
    pub fn place_of(&self, path: &str) -> String {
        place(path, self.find(path).and_then(|n| n.pos))
    }

    fn find(&self, path: &str) -> Option<&Node> {
        let mut node = &self.root;
        for part in path.split('.').filter(|p| !p.is_empty()) {
            let (key, indices) = part.split_once('[').map_or((part, ""), |(k, i)| (k, i));
            if !key.is_empty() {
                let Kind::Table(entries) = &node.value else {
                    return None;
                };
                node = &entries.iter().find(|(k, _)| k == key)?.1;
            }
            for index in indices.split('[').filter(|i| !i.is_empty()) {
                let i: usize = index.trim_end_matches(']').parse().ok()?;
                let Kind::Array(items) = &node.value else {
                    return None;
                };
                node = items.get(i)?;
            }
        }
        Some(node)
    }
}

/// Line starts of a text, to turn TOML's byte offsets into lines and columns.
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Lines<'t> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// Line and column (in characters, both from 1) of byte `offset`.
    fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }
}

/// The span and value of the integer literal at `span` if it is a decimal one too large for
/// `i64` that fits a `u64` (the only integer error the TOML parser is then given again).
fn big_integer(text: &str, span: std::ops::Range<usize>) -> Option<(std::ops::Range<usize>, u64)> {
    // The error's span covers the literal; extend it over the literal's characters both ways
    // in case it covers a part.
    let bytes = text.as_bytes();
    let is_part = |b: u8| b.is_ascii_digit() || b == b'_' || b == b'+';
    let mut start = span.start.min(bytes.len());
    while start > 0 && is_part(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = span.end.max(start).min(bytes.len());
    while end < bytes.len() && is_part(bytes[end]) {
        end += 1;
    }
    let literal = text.get(start..end)?;
    let digits = literal.strip_prefix('+').unwrap_or(literal);
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let value: u64 = digits.replace('_', "").parse().ok()?;
    // Only what TOML itself refuses (and `0x0` needs three characters).
    (value > i64::MAX as u64 && literal.len() >= 3).then_some((start..end, value))
}

/// A TOML parser's complaint as an input error at its line and column. Its message often
/// carries a line saying what it expected (``expected `,` or `}` ``): that becomes
/// `expected`, the rest `found`.
fn toml_syntax_error(file: &str, lines: &Lines, e: &toml_edit::TomlError) -> InputError {
    let pos = e.span().map(|s| lines.pos(s.start));
    let mut expected = None;
    let mut found = Vec::new();
    for line in e.message().lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.strip_prefix("expected ") {
            Some(what) if expected.is_none() => expected = Some(format!("{what} (TOML syntax)")),
            _ => found.push(line),
        }
    }
    let found = if found.is_empty() {
        "something else".to_string()
    } else {
        found.join("; ")
    };
    InputError::new(
        file,
        place("", pos),
        expected.unwrap_or_else(|| "valid TOML".to_string()),
        found,
    )
}

struct TomlReader<'r> {
    /// The text parsed (with big integers standing as zeros).
    text: &'r str,
    lines: &'r Lines<'r>,
    /// Byte offset → value of the integers beyond `i64`.
    big: &'r [(usize, u64)],
}

impl TomlReader<'_> {
    fn pos(&self, span: Option<std::ops::Range<usize>>) -> Option<Pos> {
        span.map(|s| self.lines.pos(s.start))
    }

    fn table(&self, t: &dyn toml_edit::TableLike) -> Kind {
        Kind::Table(
            t.iter()
                .map(|(k, item)| {
                    let key_pos = t.key(k).and_then(|key| self.pos(key.span()));
                    let mut node = self.item(item);
                    node.pos = key_pos.or(node.pos);
                    (k.to_string(), node)
                })
                .collect(),
        )
    }

    fn item(&self, item: &toml_edit::Item) -> Node {
        use toml_edit::Item;
        match item {
            Item::None => Node {
                value: Kind::Null,
                pos: None,
            },
            Item::Value(v) => self.value(v),
            Item::Table(t) => Node {
                value: self.table(t),
                pos: self.pos(t.span()),
            },
            Item::ArrayOfTables(a) => Node {
                value: Kind::Array(
                    a.iter()
                        .map(|t| Node {
                            value: self.table(t),
                            pos: self.pos(t.span()),
                        })
                        .collect(),
                ),
                pos: self.pos(a.span()),
            },
        }
    }

    fn value(&self, v: &toml_edit::Value) -> Node {
        use toml_edit::Value;
        let span = v.span();
        let value = match v {
            Value::String(s) => Kind::Str(s.value().clone()),
            Value::Integer(i) => {
                let at = span.as_ref().map(|s| s.start);
                match self.big.iter().find(|(o, _)| Some(*o) == at) {
                    Some((_, big)) => Kind::Int(i128::from(*big)),
                    None => Kind::Int(i128::from(*i.value())),
                }
            }
            Value::Float(f) => {
                let text = span
                    .as_ref()
                    .and_then(|s| self.text.get(s.clone()))
                    .map_or_else(|| f.value().to_string(), str::to_string);
                Kind::Float(*f.value(), text.into())
            }
            Value::Boolean(b) => Kind::Bool(*b.value()),
            Value::Datetime(d) => Kind::Datetime(d.value().to_string()),
            Value::Array(a) => Kind::Array(a.iter().map(|v| self.value(v)).collect()),
            Value::InlineTable(t) => self.table(t),
        };
        Node {
            value,
            pos: self.pos(span),
        }
    }
}

/// A JSON value as a node at `pos`; a key repeated in an object is an error (json-c would
/// keep the last: a file meant for schedlab says each thing once).
fn from_json(v: json::Value, pos: Option<Pos>, file: &str, path: &str) -> Result<Node, InputError> {
    let value = match v {
        json::Value::Null => Kind::Null,
        json::Value::Bool(b) => Kind::Bool(b),
        json::Value::Int(i) => Kind::Int(i.into()),
        // An integer beyond i64 is still an integer (a u64 cost, say).
        json::Value::Float(f, text) => match text.parse::<i128>() {
            Ok(i) => Kind::Int(i),
            Err(_) => Kind::Float(f, text),
        },
        json::Value::Str(s) => Kind::Str(s),
        json::Value::Array(items) => Kind::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, (v, p))| from_json(v, Some(p), file, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        json::Value::Object(members) => {
            let mut entries: Vec<(String, Node)> = Vec::with_capacity(members.len());
            for (k, v, p) in members {
                let at = join(path, &k);
                if entries.iter().any(|(seen, _)| *seen == k) {
                    return Err(InputError::new(
                        file,
                        place(&at, Some(p)),
                        "each key once",
                        format!("a second {}", json::quote(&k)),
                    ));
                }
                let node = from_json(v, Some(p), file, &at)?;
                entries.push((k, node));
            }
            Kind::Table(entries)
        }
    };
    Ok(Node { value, pos })
}

impl Node {
    /// How the value reads after "found" in a message: scalars as written, containers by
    /// their kind.
    pub fn describe(&self, format: Format) -> String {
        match &self.value {
            Kind::Null => "null".to_string(),
            Kind::Bool(b) => format!("the boolean {b}"),
            Kind::Int(i) => format!("the integer {i}"),
            Kind::Float(_, text) => format!("the number {text}"),
            Kind::Str(s) => format!("the string {}", json::quote(s)),
            Kind::Datetime(d) => format!("the date-time {d}"),
            Kind::Array(items) if items.len() == 1 => "an array of 1 item".to_string(),
            Kind::Array(items) => format!("an array of {} items", items.len()),
            Kind::Table(_) if format == Format::Json => "an object".to_string(),
            Kind::Table(_) => "a table".to_string(),
        }
    }

    /// A scalar as the text a command-line switch takes (`--set KEY=VALUE`): a string as
    /// it is, a number as written, a boolean as `true`/`false`; none for the others.
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Kind::Str(s) => Some(s.clone()),
            Kind::Int(i) => Some(i.to_string()),
            Kind::Float(_, text) => Some(text.to_string()),
            Kind::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// The member `key` of a table.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Kind::Table(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, n)| n),
            _ => None,
        }
    }

    /// Sets member `key` of a table (replacing it where it is, else last).
    pub fn set(&mut self, key: &str, node: Node) {
        if let Kind::Table(entries) = &mut self.value {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, n)) => *n = node,
                None => entries.push((key.to_string(), node)),
            }
        }
    }
}

/// A node of a document and its key path: where a reader is, and what its errors name.
#[derive(Debug, Clone)]
pub struct At<'d> {
    doc: &'d Doc,
    node: &'d Node,
    path: String,
}

/// A table's members, checked against the keys it may have.
#[derive(Debug, Clone)]
pub struct Table<'d> {
    at: At<'d>,
    entries: &'d [(String, Node)],
}

impl<'d> At<'d> {
    pub fn node(&self) -> &'d Node {
        self.node
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn file(&self) -> &'d str {
        &self.doc.file
    }

    /// The key path and line and column, as errors name it.
    pub fn place(&self) -> String {
        place(&self.path, self.node.pos)
    }

    pub fn error(&self, expected: impl Into<String>, found: impl Into<String>) -> InputError {
        InputError::new(&self.doc.file, self.place(), expected, found)
    }

    /// The error of a value that is not what `expected` says: found is the value.
    pub fn mismatch(&self, expected: impl Into<String>) -> InputError {
        self.error(expected, self.describe())
    }

    pub fn describe(&self) -> String {
        self.node.describe(self.doc.format)
    }

    pub fn is_null(&self) -> bool {
        self.node.value == Kind::Null
    }

    fn child(&self, path: String, node: &'d Node) -> At<'d> {
        At {
            doc: self.doc,
            node,
            path,
        }
    }

    /// The value as a table whose keys are all in `keys` (an unknown one is an error, with a
    /// near key suggested); `what` says what the table is, for the error of another value.
    pub fn table(&self, keys: &[&str], what: &str) -> Result<Table<'d>, InputError> {
        let t = self.any_table(what)?;
        if let Some((key, node)) = t.entries.iter().find(|(k, _)| !keys.contains(&k.as_str())) {
            let found = match did_you_mean(key, keys) {
                Some(near) => format!(
                    "the unknown key {} (did you mean {near:?}?)",
                    json::quote(key)
                ),
                None => format!("the unknown key {}", json::quote(key)),
            };
            return Err(self
                .child(join(&self.path, key), node)
                .error(format!("one of the keys {}", keys.join(", ")), found));
        }
        Ok(t)
    }

    /// The value as a table of any keys (`what` says what it should be).
    pub fn any_table(&self, what: &str) -> Result<Table<'d>, InputError> {
        match &self.node.value {
            Kind::Table(entries) => Ok(Table {
                at: self.clone(),
                entries,
            }),
            _ => {
                let kind = if self.doc.format == Format::Json {
                    "an object"
                } else {
                    "a table"
                };
                let expected = if what.is_empty() {
                    kind.to_string()
                } else {
                    format!("{kind} {what}")
                };
                Err(self.mismatch(expected))
            }
        }
    }

    /// The items of an array, each at its own place (`cpus[3]`).
    pub fn items(&self, expected: &str) -> Result<Vec<At<'d>>, InputError> {
        match &self.node.value {
            Kind::Array(items) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, n)| self.child(format!("{}[{i}]", self.path), n))
                .collect()),
            _ => Err(self.mismatch(expected)),
        }
    }

    /// Each item of an array read by `item`.
    pub fn list<T>(
        &self,
        expected: &str,
        item: impl Fn(&At<'d>) -> Result<T, InputError>,
    ) -> Result<Vec<T>, InputError> {
        self.items(expected)?.iter().map(item).collect()
    }

    pub fn str(&self, expected: &str) -> Result<&'d str, InputError> {
        match &self.node.value {
            Kind::Str(s) => Ok(s),
            _ => Err(self.mismatch(expected)),
        }
    }

    /// A string that must be one of `choices` (a near one is suggested).
    pub fn choice<'c>(&self, choices: &[&'c str], expected: &str) -> Result<&'c str, InputError> {
        let s = self.str(expected)?;
        match choices.iter().find(|c| **c == s) {
            Some(c) => Ok(c),
            None => Err(self.error(
                expected,
                match did_you_mean(s, choices) {
                    Some(near) => format!("{} (did you mean {near:?}?)", self.describe()),
                    None => self.describe(),
                },
            )),
        }
    }

    pub fn bool(&self, expected: &str) -> Result<bool, InputError> {
        match &self.node.value {
            Kind::Bool(b) => Ok(*b),
            _ => Err(self.mismatch(expected)),
        }
    }

    /// An integer that fits `T` (`u64` up to 18446744073709551615); `expected` says what it
    /// is and its range.
    pub fn int<T: TryFrom<i128>>(&self, expected: &str) -> Result<T, InputError> {
        match &self.node.value {
            Kind::Int(i) => T::try_from(*i).map_err(|_| self.mismatch(expected)),
            _ => Err(self.mismatch(expected)),
        }
    }

    /// An integer in `lo..=hi`, called `what` (`expected` says the range, see [`integer`]).
    pub fn int_in(&self, lo: i128, hi: i128, what: &str) -> Result<i128, InputError> {
        match &self.node.value {
            Kind::Int(i) if (lo..=hi).contains(i) => Ok(*i),
            _ => Err(self.mismatch(integer(what, lo, hi))),
        }
    }

    /// A number; an integer is one too (`power_mw = 33`).
    pub fn float(&self, expected: &str) -> Result<f64, InputError> {
        match &self.node.value {
            Kind::Int(i) => Ok(*i as f64),
            Kind::Float(f, _) => Ok(*f),
            _ => Err(self.mismatch(expected)),
        }
    }

    /// A scalar as a command-line switch's text (see [`Node::scalar_text`]).
    pub fn scalar(&self, expected: &str) -> Result<String, InputError> {
        self.node
            .scalar_text()
            .ok_or_else(|| self.mismatch(expected))
    }
}

impl<'d> Table<'d> {
    /// The table itself.
    pub fn at(&self) -> &At<'d> {
        &self.at
    }

    pub fn get(&self, key: &str) -> Option<At<'d>> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(k, n)| self.at.child(join(&self.at.path, k), n))
    }

    pub fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// A key that must be there; missing, the error names it at the table's line.
    pub fn req(&self, key: &str, expected: &str) -> Result<At<'d>, InputError> {
        self.get(key)
            .ok_or_else(|| self.error_at(key, expected, "nothing: the key is missing"))
    }

    /// An error about `key` of this table, whether or not it is there.
    pub fn error_at(
        &self,
        key: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> InputError {
        match self.get(key) {
            Some(at) => at.error(expected, found),
            None => InputError::new(
                &self.at.doc.file,
                place(&join(&self.at.path, key), self.at.node.pos),
                expected,
                found,
            ),
        }
    }

    /// The members in file order.
    pub fn entries(&self) -> impl Iterator<Item = (&'d str, At<'d>)> + '_ {
        self.entries
            .iter()
            .map(|(k, n)| (k.as_str(), self.at.child(join(&self.at.path, k), n)))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The scalars of nested tables under their dotted keys (`cpufreq.rate_limit_us = 2000`,
    /// `[set.cgroup."/bg"]`), in file order: the `--set` switches a table spells.
    pub fn flatten(&self) -> Vec<(String, At<'d>)> {
        let mut out = Vec::new();
        self.flatten_into("", &mut out);
        out
    }

    fn flatten_into(&self, prefix: &str, out: &mut Vec<(String, At<'d>)>) {
        for (k, at) in self.entries() {
            let key = join(prefix, k);
            match &at.node.value {
                Kind::Table(entries) => Table { at, entries }.flatten_into(&key, out),
                _ => out.push((key, at)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml(text: &str) -> Doc {
        Doc::parse_toml(text, "t.toml").unwrap()
    }

    #[test]
    fn toml_places_name_the_key_path_line_and_column() {
        let doc = toml("name = \"x\"\n\n[[cpus]]\nllc = 1\n\n[[cpus]]\nllc = \"two\"\n");
        let root = doc.root().table(&["name", "cpus"], "").unwrap();
        let cpus = root.get("cpus").unwrap().items("cpus").unwrap();
        let e = cpus[1]
            .table(&["llc"], "")
            .unwrap()
            .req("llc", "")
            .unwrap()
            .int::<u32>("an LLC id")
            .unwrap_err();
        assert_eq!(e.place, "cpus[1].llc (line 7 column 1)");
        assert_eq!(e.found, "the string \"two\"");
        let e = cpus[0]
            .table(&["llc"], "")
            .unwrap()
            .req("size", "a size")
            .unwrap_err();
        assert_eq!(
            e.place, "cpus[0].size (line 3 column 1)",
            "the table's line"
        );
        assert_eq!(doc.place_of("cpus[1].llc"), "cpus[1].llc (line 7 column 1)");
    }

    #[test]
    fn unknown_keys_are_refused_with_a_suggestion() {
        let doc = toml("[a]\ncolour = 1\n");
        let a = doc.root().table(&["a"], "").unwrap().get("a").unwrap();
        let e = a.table(&["color", "size"], "").unwrap_err();
        assert_eq!(e.place, "a.colour (line 2 column 1)");
        assert!(e.found.contains("did you mean \"color\""), "{e}");
        assert!(e.expected.contains("color, size"), "{e}");
    }

    #[test]
    fn integers_beyond_i64_are_read_as_written() {
        let doc = toml("seed = 18446744073709551615\nother = 1_0\nnext = 9223372036854775808\n");
        let t = doc.root().any_table("").unwrap();
        assert_eq!(t.get("seed").unwrap().int::<u64>("").unwrap(), u64::MAX);
        assert_eq!(t.get("other").unwrap().int::<u64>("").unwrap(), 10);
        assert_eq!(t.get("next").unwrap().int::<u64>("").unwrap(), 1 << 63);
        assert_eq!(t.get("next").unwrap().place(), "next (line 3 column 1)");
        // Beyond u64 it is the parser's error, at the literal.
        let e = Doc::parse_toml("x = 18446744073709551616\n", "t.toml").unwrap_err();
        assert_eq!(e.place, "line 1 column 5", "{e}");
        let e = Doc::parse_toml("x = -9223372036854775809\n", "t.toml").unwrap_err();
        assert!(e.place.starts_with("line 1"), "{e}");
    }

    #[test]
    fn typed_getters_say_what_they_expected_and_found() {
        let doc = toml("a = 1e3\nb = -1\nc = \"performanse\"\n");
        let t = doc.root().any_table("").unwrap();
        let e = t.get("a").unwrap().int_in(0, 10, "a count").unwrap_err();
        assert_eq!(e.expected, "a count (an integer from 0 to 10)");
        assert_eq!(e.found, "the number 1e3", "as written");
        let e = t.get("b").unwrap().int::<u64>("a size").unwrap_err();
        assert_eq!(e.found, "the integer -1");
        let e = t
            .get("c")
            .unwrap()
            .choice(&["performance", "powersave"], "a governor")
            .unwrap_err();
        assert!(e.found.contains("did you mean \"performance\""), "{e}");
        assert_eq!(t.get("a").unwrap().float("").unwrap(), 1000.0);
    }

    #[test]
    fn json_documents_read_the_same_and_refuse_repeats() {
        let doc = Doc::parse_json("{\"a\": {\"b\": [1, 2.5]}}", "t.json").unwrap();
        let a = doc.root().any_table("").unwrap().get("a").unwrap();
        let b = a
            .any_table("")
            .unwrap()
            .get("b")
            .unwrap()
            .items("")
            .unwrap();
        let e = b[1].int::<u32>("an id").unwrap_err();
        assert_eq!(e.place, "a.b[1] (line 1 column 17)");
        assert_eq!(e.found, "the number 2.5");
        let e = Doc::parse_json("{\"a\": 1, \"a\": 2}", "t.json").unwrap_err();
        assert_eq!(e.place, "a (line 1 column 10)");
        let e = Doc::parse_json("{} x", "t.json").unwrap_err();
        assert_eq!(e.place, "line 1 column 4");
        let e = Doc::parse_json("[1] ", "t.json").unwrap();
        assert!(e
            .root()
            .any_table("")
            .unwrap_err()
            .expected
            .contains("an object"));
    }

    #[test]
    fn syntax_errors_are_one_line_at_their_place() {
        let e = Doc::parse_toml("a = = 1\n", "t.toml").unwrap_err();
        assert!(e.place.starts_with("line 1 column"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }

    #[test]
    fn flatten_spells_dotted_switches() {
        let doc =
            toml("[set]\ncpufreq.rate_limit_us = 2000\n[set.cgroup.\"/bg\"]\ncpu.weight = 5\n");
        let set = doc.root().any_table("").unwrap().get("set").unwrap();
        let flat: Vec<String> = set
            .any_table("")
            .unwrap()
            .flatten()
            .iter()
            .map(|(k, at)| format!("{k}={}", at.scalar("").unwrap()))
            .collect();
        assert_eq!(
            flat,
            ["cpufreq.rate_limit_us=2000", "cgroup./bg.cpu.weight=5"]
        );
    }

    #[test]
    fn bad_utf8_is_refused_at_its_line_and_column() {
        let dir = std::env::temp_dir().join(format!("place-utf8-{}", std::process::id()));
        std::fs::write(&dir, b"a = 1\nb = \"\xff\"\n").unwrap();
        let e = read_text(&dir, "TOML file").unwrap_err();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(e.place, "line 2 column 6");
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("slep", "sleep"), 1);
        assert_eq!(edit_distance("sleep", "slep"), 1);
        assert_eq!(edit_distance("prority", "priority"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("frag", ""), 4);
        assert_eq!(edit_distance("mdoe", "mode"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }

    #[test]
    fn suggests_only_close_candidates() {
        let keys = ["duration", "calibration", "ftrace", "instance", "sleep"];
        assert_eq!(did_you_mean("duraton", &keys), Some("duration"));
        assert_eq!(did_you_mean("instances", &keys), Some("instance"));
        assert_eq!(did_you_mean("slep", &keys), Some("sleep"));
        assert_eq!(did_you_mean("frag", &keys), None);
        assert_eq!(did_you_mean("xyz", &keys), None);
    }
}

//! A small EDN reader: the value language of Jepsen's and Knossos' histories, read into
//! [`Edn`] values that turn into JSON (the printer is in `edn_writer`).
//!
//! The reader keeps the line every form starts on, so that an error can say where, and
//! refuses rather than overflows: nesting is capped at [`MAX_DEPTH`], integers must fit
//! in 64 bits and floats must be finite.

use super::HistoryError;
use serde_json::{Map, Number, Value};
use std::path::Path;

/// The deepest nesting of collections, tags and discards the reader accepts.
pub const MAX_DEPTH: usize = 64;

/// An EDN value.
#[derive(Debug, Clone, PartialEq)]
pub enum Edn {
    /// `nil`.
    Nil,
    /// `true` or `false`.
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// A finite float.
    Float(f64),
    /// A string.
    Str(String),
    /// A character literal such as `\a`.
    Char(char),
    /// A keyword, by its name without the colon.
    Keyword(String),
    /// A symbol.
    Symbol(String),
    /// `(...)`.
    List(Vec<Edn>),
    /// `[...]`.
    Vector(Vec<Edn>),
    /// `#{...}`.
    Set(Vec<Edn>),
    /// `{...}`, entries in the order written.
    Map(Vec<(Edn, Edn)>),
    /// `#tag value`, such as `#inst "..."` or a record `#jepsen.history.Op{...}`.
    Tagged(String, Box<Edn>),
}

/// What is wrong with a piece of text, and the 1-based line where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdnError {
    /// The 1-based line.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

impl EdnError {
    /// The error as a malformed history at `path`.
    pub fn at(self, path: &Path) -> HistoryError {
        HistoryError::Malformed {
            path: path.to_path_buf(),
            line: self.line,
            message: self.message,
        }
    }
}

/// Whether `c` ends a symbol, keyword or number.
pub(super) fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '(' | ')' | '[' | ']' | '{' | '}' | '"' | ';')
}

/// The name of the collection a closing bracket ends.
fn collection_name(close: char) -> &'static str {
    match close {
        ')' => "list",
        ']' => "vector",
        _ => "map",
    }
}

/// Reads EDN text form by form, counting lines.
pub struct Parser<'a> {
    text: &'a str,
    pos: usize,
    line: u64,
    /// The top-level vector or list being read item by item: its closing bracket and first line.
    open: Option<(char, u64)>,
}

impl<'a> Parser<'a> {
    /// A reader at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Parser {
            text,
            pos: 0,
            line: 1,
            open: None,
        }
    }

    /// The next item of a history with the line it starts on: a top-level form, or an
    /// element of a top-level vector or list (Knossos wraps a whole history in one).
    pub fn next_item(&mut self) -> Result<Option<(u64, Edn)>, EdnError> {
        loop {
            let depth = usize::from(self.open.is_some());
            let Some(c) = self.skip_blank(depth)? else {
                return match self.open {
                    Some((close, line)) => Err(unterminated(collection_name(close), line)),
                    None => Ok(None),
                };
            };
            match (self.open, c) {
                (None, '[') => self.open_items(']'),
                (None, '(') => self.open_items(')'),
                (Some((close, _)), c) if c == close => {
                    self.bump();
                    self.open = None;
                }
                _ => {
                    let line = self.line;
                    return self.form(depth).map(|form| Some((line, form)));
                }
            }
        }
    }

    fn open_items(&mut self, close: char) {
        self.open = Some((close, self.line));
        self.bump();
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn fail<T>(&self, message: impl Into<String>) -> Result<T, EdnError> {
        Err(EdnError {
            line: self.line,
            message: message.into(),
        })
    }

    /// Skips whitespace, commas, `;` comments and `#_` discarded forms; peeks at what follows.
    fn skip_blank(&mut self, depth: usize) -> Result<Option<char>, EdnError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() || c == ',' => {
                    self.bump();
                }
                Some(';') => self.skip_comment(),
                Some('#') if self.rest().starts_with("#_") => {
                    self.pos += 2;
                    self.form(depth + 1)?;
                }
                next => return Ok(next),
            }
        }
    }

    fn skip_comment(&mut self) {
        let end = self.rest().find('\n').unwrap_or(self.rest().len());
        self.pos += end;
    }

    /// One form, nested `depth` collections deep.
    fn form(&mut self, depth: usize) -> Result<Edn, EdnError> {
        if depth > MAX_DEPTH {
            return self.fail(format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        let Some(c) = self.skip_blank(depth)? else {
            return self.fail("expected a value, found the end of the input");
        };
        match c {
            '(' => self.sequence(')', depth).map(Edn::List),
            '[' => self.sequence(']', depth).map(Edn::Vector),
            '{' => self.map(depth),
            '"' => self.string().map(Edn::Str),
            '\\' => self.character().map(Edn::Char),
            '#' => self.dispatch(depth),
            ')' | ']' | '}' => self.fail(format!("unexpected `{c}`: nothing open to close")),
            _ => self.atom(),
        }
    }

    /// The forms up to `close`, the opening bracket being next.
    fn sequence(&mut self, close: char, depth: usize) -> Result<Vec<Edn>, EdnError> {
        let start = self.line;
        self.bump();
        let mut items = Vec::new();
        loop {
            match self.skip_blank(depth + 1)? {
                None => return Err(unterminated(collection_name(close), start)),
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some(c @ (')' | ']' | '}')) => {
                    return self.fail(format!(
                        "expected `{close}` to close the {} started on line {start}, found `{c}`",
                        collection_name(close)
                    ))
                }
                Some(_) => items.push(self.form(depth + 1)?),
            }
        }
    }

    fn map(&mut self, depth: usize) -> Result<Edn, EdnError> {
        let start = self.line;
        let mut forms = self.sequence('}', depth)?.into_iter();
        let mut entries = Vec::with_capacity(forms.len() / 2);
        while let Some(key) = forms.next() {
            let Some(value) = forms.next() else {
                return Err(EdnError {
                    line: start,
                    message: format!("the map started on line {start} has a key without a value"),
                });
            };
            entries.push((key, value));
        }
        Ok(Edn::Map(entries))
    }

    /// A string, the opening quote being next.
    fn string(&mut self) -> Result<String, EdnError> {
        let start = self.line;
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(unterminated("string", start)),
                Some('"') => return Ok(out),
                Some('\\') => out.push(self.escape()?),
                Some(c) => out.push(c),
            }
        }
    }

    /// The character an escape in a string stands for, its backslash just read.
    fn escape(&mut self) -> Result<char, EdnError> {
        match self.bump() {
            Some('t') => Ok('\t'),
            Some('r') => Ok('\r'),
            Some('n') => Ok('\n'),
            Some('b') => Ok('\u{8}'),
            Some('f') => Ok('\u{c}'),
            Some(c @ ('\\' | '"')) => Ok(c),
            Some('u') => self.unicode_escape(),
            Some(c) => self.fail(format!("invalid escape `\\{c}` in a string")),
            None => self.fail("the input ends inside a string"),
        }
    }

    /// The character of `\uXXXX`, the `\u` just read.
    fn unicode_escape(&mut self) -> Result<char, EdnError> {
        let hex = self
            .rest()
            .get(..4)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        let Some(hex) = hex else {
            return self.fail("`\\u` must be followed by four hexadecimal digits");
        };
        self.pos += 4;
        match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            Some(c) => Ok(c),
            None => self.fail(format!("`\\u{hex}` is not a character")),
        }
    }

    /// A character literal, the backslash being next.
    fn character(&mut self) -> Result<char, EdnError> {
        self.bump();
        let start = self.pos;
        let Some(first) = self.bump() else {
            return self.fail("a `\\` at the end of the input is not a character");
        };
        self.token();
        let name = &self.text[start..self.pos];
        let named = match name {
            "newline" => Some('\n'),
            "space" => Some(' '),
            "tab" => Some('\t'),
            "return" => Some('\r'),
            "backspace" => Some('\u{8}'),
            "formfeed" => Some('\u{c}'),
            _ if name.len() == first.len_utf8() => Some(first),
            _ => name
                .strip_prefix('u')
                .filter(|hex| hex.len() == 4)
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .and_then(char::from_u32),
        };
        match named {
            Some(c) => Ok(c),
            None => self.fail(format!("invalid character literal `\\{name}`")),
        }
    }

    /// What follows a `#` (other than `#_`): a set or a tagged value.
    fn dispatch(&mut self, depth: usize) -> Result<Edn, EdnError> {
        self.bump();
        match self.peek() {
            Some('{') => self.sequence('}', depth).map(Edn::Set),
            Some(c) if c.is_alphabetic() => {
                let tag = self.token().to_string();
                let value = self.form(depth + 1)?;
                Ok(Edn::Tagged(tag, Box::new(value)))
            }
            Some(c) => self.fail(format!("`#{c}` is not EDN")),
            None => self.fail("a `#` at the end of the input"),
        }
    }

    /// Advances over the characters up to the next delimiter and returns them.
    fn token(&mut self) -> &'a str {
        let start = self.pos;
        let len = self.rest().find(is_delimiter).unwrap_or(self.rest().len());
        self.pos += len;
        &self.text[start..self.pos]
    }

    /// `nil`, a boolean, a number, a keyword or a symbol.
    fn atom(&mut self) -> Result<Edn, EdnError> {
        let token = self.token();
        match token {
            "nil" => Ok(Edn::Nil),
            "true" => Ok(Edn::Bool(true)),
            "false" => Ok(Edn::Bool(false)),
            _ if starts_number(token) => self.number(token),
            _ => match token.strip_prefix(':') {
                Some(name) if name.is_empty() || name.starts_with(':') => {
                    self.fail(format!("invalid keyword `{token}`"))
                }
                Some(name) => Ok(Edn::Keyword(name.to_string())),
                None => Ok(Edn::Symbol(token.to_string())),
            },
        }
    }

    fn number(&self, token: &str) -> Result<Edn, EdnError> {
        let integer = token.strip_suffix('N').unwrap_or(token);
        if is_integer(integer) {
            return match integer.parse() {
                Ok(n) => Ok(Edn::Int(n)),
                Err(_) => self.fail(format!("the integer `{token}` does not fit in 64 bits")),
            };
        }
        let float = token.strip_suffix('M').unwrap_or(token);
        let float_chars =
            |b: u8| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E');
        match float.parse::<f64>() {
            Ok(x) if x.is_finite() && float.bytes().all(float_chars) => Ok(Edn::Float(x)),
            Ok(_) if float.bytes().all(float_chars) => {
                self.fail(format!("the number `{token}` is out of range"))
            }
            _ => self.fail(format!("invalid number `{token}`")),
        }
    }
}

/// An error for a form opened on `line` and never closed.
fn unterminated(what: &str, line: u64) -> EdnError {
    EdnError {
        line,
        message: format!("unterminated {what} started on line {line}"),
    }
}

fn starts_number(token: &str) -> bool {
    let unsigned = token.strip_prefix(['+', '-']).unwrap_or(token);
    unsigned.starts_with(|c: char| c.is_ascii_digit())
}

fn is_integer(token: &str) -> bool {
    let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Reads the one form that makes up `text` (a field of a log line on `line`).
pub fn parse_form(text: &str, line: u64) -> Result<Edn, EdnError> {
    let mut parser = Parser {
        text,
        pos: 0,
        line,
        open: None,
    };
    let form = parser.form(0)?;
    match parser.skip_blank(0)? {
        None => Ok(form),
        Some(_) => parser.fail(format!("unexpected text after the value in `{text}`")),
    }
}

impl Edn {
    /// A keyword.
    pub fn keyword(name: &str) -> Edn {
        Edn::Keyword(name.to_string())
    }

    /// The value under keyword `name` of a (possibly tagged) map.
    pub fn get(&self, name: &str) -> Option<&Edn> {
        let Edn::Map(entries) = self.untagged() else {
            return None;
        };
        entries
            .iter()
            .find(|(key, _)| matches!(key, Edn::Keyword(k) if k == name))
            .map(|(_, value)| value)
    }

    /// The value under any tags.
    pub fn untagged(&self) -> &Edn {
        match self {
            Edn::Tagged(_, value) => value.untagged(),
            value => value,
        }
    }

    /// As text: a string itself, a keyword or symbol by its name, anything else as printed.
    pub fn to_text(&self) -> String {
        match self {
            Edn::Str(s) | Edn::Keyword(s) | Edn::Symbol(s) => s.clone(),
            Edn::Char(c) => c.to_string(),
            other => other.to_string(),
        }
    }

    /// The value printed for an error message, cut short when long.
    pub fn describe(&self) -> String {
        const LIMIT: usize = 60;
        let text = self.to_string();
        match text.char_indices().nth(LIMIT) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    }

    /// As JSON: nil is null, keywords and symbols their names, collections arrays, maps
    /// objects keyed by [`Edn::to_text`], tags dropped.
    pub fn to_json(&self) -> Value {
        match self {
            Edn::Nil => Value::Null,
            Edn::Bool(b) => Value::Bool(*b),
            Edn::Int(n) => Value::from(*n),
            // The reader only makes finite floats, which JSON can hold.
            Edn::Float(x) => Number::from_f64(*x).map_or(Value::Null, Value::Number),
            Edn::Str(_) | Edn::Char(_) | Edn::Keyword(_) | Edn::Symbol(_) => {
                Value::String(self.to_text())
            }
            Edn::List(items) | Edn::Vector(items) | Edn::Set(items) => {
                Value::Array(items.iter().map(Edn::to_json).collect())
            }
            Edn::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.to_text(), value.to_json()))
                    .collect::<Map<_, _>>(),
            ),
            Edn::Tagged(_, value) => value.to_json(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn items(text: &str) -> Result<Vec<(u64, Edn)>, EdnError> {
        let mut parser = Parser::new(text);
        let mut out = Vec::new();
        while let Some(item) = parser.next_item()? {
            out.push(item);
        }
        Ok(out)
    }

    fn one(text: &str) -> Edn {
        parse_form(text, 1).expect("valid EDN")
    }

    fn error(text: &str) -> EdnError {
        match items(text) {
            Err(e) => e,
            Ok(forms) => panic!("expected an error, read {forms:?}"),
        }
    }

    #[test]
    fn reads_scalars() {
        assert_eq!(one("nil"), Edn::Nil);
        assert_eq!(one("true"), Edn::Bool(true));
        assert_eq!(one("-42"), Edn::Int(-42));
        assert_eq!(one("+7N"), Edn::Int(7));
        assert_eq!(one("2.5"), Edn::Float(2.5));
        assert_eq!(one("1e3"), Edn::Float(1000.0));
        assert_eq!(one("1.5M"), Edn::Float(1.5));
        assert_eq!(one(":timed-out"), Edn::keyword("timed-out"));
        assert_eq!(one(":jepsen/op"), Edn::keyword("jepsen/op"));
        assert_eq!(one("foo.bar"), Edn::Symbol("foo.bar".into()));
        assert_eq!(one(r#""a\"b\n\u0041""#), Edn::Str("a\"b\nA".into()));
        assert_eq!(one(r"\newline"), Edn::Char('\n'));
        assert_eq!(one(r"\x"), Edn::Char('x'));
        assert_eq!(one(r"\u00e9"), Edn::Char('é'));
    }

    #[test]
    fn reads_collections_tags_and_discards() {
        assert_eq!(
            one("{:a [1 (2)], \"b\" #{nil}}").to_json(),
            json!({"a": [1, [2]], "b": [null]})
        );
        assert_eq!(one("#inst \"2017\"").to_json(), json!("2017"));
        assert_eq!(one("[1 #_ 2 #_#_ 3 4 5]").to_json(), json!([1, 5]));
        assert_eq!(
            one("#jepsen.history.Op{:f :read}").get("f"),
            Some(&Edn::keyword("read"))
        );
    }

    #[test]
    fn items_flatten_a_top_level_vector_and_keep_their_lines() {
        let text = "; a comment\n[{:a 1}\n ; another\n {:a 2}]\n{:a 3}\n";
        let lines: Vec<u64> = items(text)
            .expect("valid")
            .iter()
            .map(|(l, _)| *l)
            .collect();
        assert_eq!(lines, [2, 4, 5]);
    }

    #[test]
    fn an_unterminated_vector_names_the_line_it_started_on() {
        let e = error("{:a 1}\n{:b [1 2\n\n");
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("unterminated vector started on line 2"),
            "{e:?}"
        );
    }

    #[test]
    fn an_unterminated_top_level_list_names_its_first_line() {
        let e = error("\n({:a 1}\n{:a 2}");
        assert_eq!((e.line, e.message.contains("list")), (2, true), "{e:?}");
    }

    #[test]
    fn a_mismatched_bracket_names_both_lines() {
        let e = error("{:a 1}\n{:b [1\n 2}");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("started on line 2"), "{e:?}");
    }

    #[test]
    fn a_map_with_an_odd_number_of_forms_is_refused() {
        assert_eq!(error("\n{:a 1 :b}").line, 2);
    }

    #[test]
    fn refuses_what_it_cannot_hold() {
        assert!(error("9223372036854775808").message.contains("64 bits"));
        assert_eq!(one("-9223372036854775808"), Edn::Int(i64::MIN));
        assert!(error("1e999").message.contains("out of range"));
        assert!(error("1/2").message.contains("invalid number"));
        assert!(error("::auto").message.contains("invalid keyword"));
        assert!(error("##Inf").message.contains("not EDN"));
        assert!(error(r#""\uD800""#).message.contains("not a character"));
        assert!(error(r#""\q""#).message.contains("invalid escape"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        for open in ["[", "(", "{:a ", "#{", "#_", "#t "] {
            let text = format!("\n{}", open.repeat(10_000));
            let e = error(&text);
            assert_eq!(e.line, 2, "{open}: {e:?}");
            assert!(
                e.message.contains("nesting deeper than 64"),
                "{open}: {e:?}"
            );
        }
    }
}

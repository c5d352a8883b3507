//! Writes histories as Jepsen EDN, one operation map per line, so that Jepsen's and
//! Knossos' tools can check what this one recorded: the EDN printer, and JSON values
//! and ops turned into EDN.

use super::edn::{is_delimiter, Edn};
use crate::op::{Op, Process};
use serde_json::Value;
use std::fmt;
use std::io::{self, Write};

/// Writes ops as Jepsen EDN, one map per line, that Jepsen's tools can read.
pub fn write_edn(ops: &[Op], out: &mut impl Write) -> io::Result<()> {
    for op in ops {
        let line = format!("{}\n", op_map(op));
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// `{:index 0, :time 10, :process 3, :type :invoke, :f :add, :key "views/home", :value 1}`,
/// then the optional fields that are present.
fn op_map(op: &Op) -> Edn {
    let process = match &op.process {
        Process::Client(n) => Edn::natural(*n),
        Process::Named(name) => Edn::keyword_or_string(name),
    };
    let mut entries = vec![
        ("index", Edn::natural(op.index)),
        ("time", Edn::natural(op.time)),
        ("process", process),
        ("type", Edn::keyword(op.kind.as_str())),
        ("f", Edn::keyword_or_string(op.f.as_str())),
    ];
    let string = |s: &Option<String>| s.clone().map(Edn::Str);
    let optional = [
        ("key", string(&op.key)),
        ("value", Some(Edn::from_json(&op.value))),
        ("node", string(&op.node)),
        ("cl", string(&op.cl)),
        ("error", string(&op.error)),
        ("tombstones", op.tombstones.map(Edn::natural)),
        ("retry-of", op.retry_of.map(Edn::natural)),
    ];
    entries.extend(optional.into_iter().filter_map(|(k, v)| Some((k, v?))));
    Edn::Map(
        entries
            .into_iter()
            .map(|(name, value)| (Edn::keyword(name), value))
            .collect(),
    )
}

impl Edn {
    /// A keyword when `name` can be written as one, else a string.
    pub fn keyword_or_string(name: &str) -> Edn {
        let valid = !name.is_empty()
            && !name.starts_with(':')
            && !name.contains(|c| is_delimiter(c) || c == '\\');
        if valid {
            Edn::keyword(name)
        } else {
            Edn::Str(name.to_string())
        }
    }

    /// From JSON: null is nil, arrays vectors, objects maps with string keys.
    pub fn from_json(value: &Value) -> Edn {
        match value {
            Value::Null => Edn::Nil,
            Value::Bool(b) => Edn::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Edn::Int(i),
                (None, Some(u)) => Edn::natural(u),
                (None, None) => n.as_f64().map_or(Edn::Nil, Edn::Float),
            },
            Value::String(s) => Edn::Str(s.clone()),
            Value::Array(items) => Edn::Vector(items.iter().map(Edn::from_json).collect()),
            Value::Object(entries) => Edn::Map(
                entries
                    .iter()
                    .map(|(key, value)| (Edn::Str(key.clone()), Edn::from_json(value)))
                    .collect(),
            ),
        }
    }

    /// A non-negative integer; past `i64::MAX` it is printed as its digits, which Clojure
    /// reads as a big integer and this reader refuses as out of range.
    pub fn natural(n: u64) -> Edn {
        i64::try_from(n).map_or_else(|_| Edn::Symbol(n.to_string()), Edn::Int)
    }
}

impl fmt::Display for Edn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Edn::Nil => f.write_str("nil"),
            Edn::Bool(b) => write!(f, "{b}"),
            Edn::Int(n) => write!(f, "{n}"),
            // `{:?}` keeps the `.0` of a whole float, so that it reads back as a float.
            Edn::Float(x) => write!(f, "{x:?}"),
            Edn::Str(s) => write_string(f, s),
            Edn::Char(c) => write_char(f, *c),
            Edn::Keyword(name) => write!(f, ":{name}"),
            Edn::Symbol(name) => f.write_str(name),
            Edn::List(items) => write_items(f, "(", items, ")"),
            Edn::Vector(items) => write_items(f, "[", items, "]"),
            Edn::Set(items) => write_items(f, "#{", items, "}"),
            Edn::Map(entries) => {
                f.write_str("{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    let separator = if i == 0 { "" } else { ", " };
                    write!(f, "{separator}{key} {value}")?;
                }
                f.write_str("}")
            }
            Edn::Tagged(tag, value) => write!(f, "#{tag} {value}"),
        }
    }
}

fn write_items(f: &mut fmt::Formatter<'_>, open: &str, items: &[Edn], close: &str) -> fmt::Result {
    f.write_str(open)?;
    for (i, item) in items.iter().enumerate() {
        let separator = if i == 0 { "" } else { " " };
        write!(f, "{separator}{item}")?;
    }
    f.write_str(close)
}

fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c if c.is_control() => write!(f, "\\u{:04X}", u32::from(c))?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

fn write_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    match c {
        '\n' => f.write_str("\\newline"),
        ' ' => f.write_str("\\space"),
        '\t' => f.write_str("\\tab"),
        '\r' => f.write_str("\\return"),
        c if c.is_control() => write!(f, "\\u{:04X}", u32::from(c)),
        c => write!(f, "\\{c}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HistoryBuilder;
    use crate::history::edn::parse_form;
    use crate::history::{parse_history, Format, ReadOptions};
    use crate::op::{OpType, F};
    use serde_json::json;
    use std::path::Path;

    fn history() -> Vec<Op> {
        let mut h = HistoryBuilder::on("views/home");
        let first = h.add(3, 1);
        h.added(3, 1, OpType::Info);
        h.retry(4, 1, first);
        h.read(5);
        h.read_ok(5, 7);
        h.delete(6);
        let mut ops = h.ops().to_vec();
        ops[1].error = Some("write_timeout".into());
        ops[4].node = Some("n1".into());
        ops[4].cl = Some("QUORUM".into());
        ops[4].tombstones = Some(0);
        let mut nemesis = Op::new(
            Process::nemesis(),
            OpType::Info,
            F::Other("start-partition".into()),
            None,
            json!({"n1": ["n2", "n3"], "odd \"name\"\n": 1.5}),
        );
        nemesis.index = ops.len() as u64;
        nemesis.time = 99;
        ops.push(nemesis);
        ops
    }

    fn one(text: &str) -> Edn {
        parse_form(text, 1).expect("valid EDN")
    }

    fn written(ops: &[Op]) -> String {
        let mut out = Vec::new();
        write_edn(ops, &mut out).expect("write to memory");
        String::from_utf8(out).expect("EDN is UTF-8")
    }

    #[test]
    fn writes_one_jepsen_map_per_line() {
        let text = written(&history());
        assert_eq!(
            text.lines().next(),
            Some(
                r#"{:index 0, :time 0, :process 3, :type :invoke, :f :add, :key "views/home", :value 1}"#
            )
        );
        assert!(text.contains(r#":error "write_timeout""#), "{text}");
        assert!(text.contains(":retry-of 0}"), "{text}");
        assert!(
            text.contains(":process :nemesis, :type :info, :f :start-partition, :value {"),
            "{text}"
        );
        assert_eq!(text.lines().count(), history().len());
    }

    #[test]
    fn what_it_writes_reads_back_as_the_same_ops() {
        let ops = history();
        let text = written(&ops);
        for format in [None, Some(Format::Edn)] {
            let (read, warnings) = parse_history(
                text.as_bytes(),
                Path::new("h.edn"),
                format,
                ReadOptions::default(),
            )
            .expect("reads back");
            assert_eq!(read, ops);
            assert!(warnings.is_empty());
        }
    }

    #[test]
    fn a_name_that_is_not_a_keyword_is_written_as_a_string_and_reads_back() {
        let mut op = history()[0].clone();
        op.process = Process::Named("worker 1".into());
        op.f = F::Other("odd f".into());
        let text = written(std::slice::from_ref(&op));
        assert!(text.contains(r#":process "worker 1""#), "{text}");
        // A named actor's ops alone are no client operations: the history is accepted so.
        let alone = ReadOptions {
            allow_empty: true,
            ..ReadOptions::default()
        };
        let (read, _) =
            parse_history(text.as_bytes(), Path::new("h.edn"), None, alone).expect("reads back");
        assert_eq!(read, [op]);
    }

    #[test]
    fn prints_what_it_reads() {
        let text = r#"{:a [1 2.0 "q\"\\\n\u0001"], "k" #{nil true}, :c (\a \space), :t #inst "x"}"#;
        let printed = one(text).to_string();
        assert_eq!(one(&printed), one(text));
        assert!(printed.contains("2.0"), "{printed}");
    }

    #[test]
    fn json_round_trips_through_edn() {
        let value = json!({"a": [1, -2, 2.5, null, true, "s\"\t"], "b": {"c": u64::MAX}});
        let edn = Edn::from_json(&value);
        assert_eq!(edn.to_json()["a"], value["a"]);
        assert!(
            parse_form(&edn.to_string(), 1).is_err(),
            "u64::MAX is out of range"
        );
        let small = json!({"a": [1, 2.5, "x"], "b": {}});
        assert_eq!(one(&Edn::from_json(&small).to_string()).to_json(), small);
    }

    #[test]
    fn names_that_are_not_keywords_are_written_as_strings() {
        assert_eq!(Edn::keyword_or_string("kill"), Edn::keyword("kill"));
        assert_eq!(Edn::keyword_or_string("a b"), Edn::Str("a b".into()));
        assert_eq!(Edn::keyword_or_string(""), Edn::Str(String::new()));
    }
}

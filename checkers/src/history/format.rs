//! Which format a history file is in, how to tell from its content, and reading any of
//! them into [`Op`]s, through the one conversion from an EDN operation map that the
//! EDN, porcupine-kv and Jepsen log readers share.

use super::edn::{EdnError, Parser};
use super::edn_op::op_from_edn;
use super::wellformed::{admit_at, finish_at, long_line, LinedOps, Pairing, ReadOptions};
use super::{jepsen_log, HistoryError, JsonlReader};
use crate::op::Op;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use thiserror::Error;

/// A history file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Our own `history.jsonl`: one JSON operation per line.
    Jsonl,
    /// Jepsen's `history.edn` (one map per line) or Knossos' data (one vector or list of maps).
    Edn,
    /// Jepsen's text log, whose `jepsen.util` lines are operations.
    JepsenLog,
    /// Porcupine's key-value histories: one EDN map per line, each with a `:key`.
    PorcupineKv,
}

impl Format {
    /// Every format, in the order they are listed to users.
    pub const ALL: [Format; 4] = [
        Format::Jsonl,
        Format::Edn,
        Format::JepsenLog,
        Format::PorcupineKv,
    ];

    /// The name used on the command line and in the peer histories' MANIFEST.tsv.
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Edn => "edn",
            Format::JepsenLog => "jepsen-log",
            Format::PorcupineKv => "porcupine-kv",
        }
    }

    /// The names of every format, comma separated.
    fn names() -> String {
        Format::ALL.map(Format::name).join(", ")
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is none of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown history format `{0}`; expected one of: {names}", names = Format::names())]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|format| format.name() == name)
            .ok_or_else(|| UnknownFormat(name.to_string()))
    }
}

/// Guesses the format from the first non-blank, non-comment content.
pub fn detect(text: &str) -> Option<Format> {
    let (_, first) = first_content(text)?;
    if looks_like_json(first) {
        Some(Format::Jsonl)
    } else if looks_like_log(first) {
        Some(Format::JepsenLog)
    } else if first.starts_with(['{', '[', '(', '#']) {
        Some(if first_map_is_porcupine_kv(text) {
            Format::PorcupineKv
        } else {
            Format::Edn
        })
    } else {
        None
    }
}

/// The first line that is neither blank nor a `;` comment, with its 1-based number.
fn first_content(text: &str) -> Option<(u64, &str)> {
    (1..)
        .zip(text.lines())
        .map(|(number, line)| (number, line.trim_start()))
        .find(|(_, line)| !line.is_empty() && !line.starts_with(';'))
}

fn looks_like_json(line: &str) -> bool {
    line.strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with('"'))
}

fn looks_like_log(line: &str) -> bool {
    const LEVELS: [&str; 5] = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"];
    let level = line
        .split_whitespace()
        .next()
        .is_some_and(|w| LEVELS.contains(&w));
    let dated = line.len() > 5
        && line.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && line.as_bytes()[4] == b'-';
    level || dated || line.contains("jepsen.util")
}

/// Porcupine's maps have a `:key` and no `:index`; Jepsen's (and ours) have an `:index`.
fn first_map_is_porcupine_kv(text: &str) -> bool {
    matches!(Parser::new(text).next_item(),
        Ok(Some((_, form))) if form.get("key").is_some() && form.get("index").is_none())
}

/// The format of a history file, told from its first 64 KiB; none when they do not tell.
pub fn detect_file(path: &Path) -> Result<Option<Format>, HistoryError> {
    use std::io::Read;
    let io = |source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut head = Vec::with_capacity(64 * 1024);
    std::fs::File::open(path)
        .map_err(io)?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .map_err(io)?;
    // The cut may fall inside a character: detect from the valid prefix.
    let text = match std::str::from_utf8(&head) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    Ok(detect(text))
}

/// Reads a whole history file in the given format, or detects it from the content, held
/// to `options`.
pub fn read_history(
    path: &Path,
    format: Option<Format>,
    options: ReadOptions,
) -> Result<(Vec<Op>, Vec<String>), HistoryError> {
    let bytes = std::fs::read(path).map_err(|source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_history(&bytes, path, format, options)
}

/// Parses history text (the same as [`read_history`], from memory); `path` names it in errors.
pub fn parse_history(
    text: &[u8],
    path: &Path,
    format: Option<Format>,
    options: ReadOptions,
) -> Result<(Vec<Op>, Vec<String>), HistoryError> {
    if format == Some(Format::Jsonl) {
        return read_jsonl(text, path, options);
    }
    let text = decode(text).map_err(|e| e.at(path))?;
    let mut pairing = Pairing::new(options);
    long_line(&pairing, text, path)?;
    let (ops, mut warnings) = match format.or_else(|| detect(text)) {
        Some(Format::Jsonl) => return read_jsonl(text.as_bytes(), path, options),
        Some(Format::Edn) => read_edn(text, path, false)?,
        Some(Format::PorcupineKv) => read_edn(text, path, true)?,
        Some(Format::JepsenLog) => jepsen_log::read_ops(text, path)?,
        None => match first_content(text) {
            None => (Vec::new(), Vec::new()),
            Some((line, _)) => {
                return Err(EdnError {
                    line,
                    message: format!(
                        "cannot tell the format of this history; name it: one of {}",
                        Format::names()
                    ),
                }
                .at(path))
            }
        },
    };
    let mut kept = Vec::with_capacity(ops.len());
    for (line, op) in ops {
        if admit_at(&mut pairing, &op, (path, line), &mut warnings)? {
            kept.push(op);
        }
    }
    finish_at(&pairing, path)?;
    Ok((kept, warnings))
}

fn decode(bytes: &[u8]) -> Result<&str, EdnError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        EdnError {
            line: 1 + before.iter().filter(|&&b| b == b'\n').count() as u64,
            message: "the text is not valid UTF-8".to_string(),
        }
    })
}

fn read_jsonl(
    text: &[u8],
    path: &Path,
    options: ReadOptions,
) -> Result<(Vec<Op>, Vec<String>), HistoryError> {
    let mut reader = JsonlReader::new(text, path).with_options(options);
    let ops = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((ops, reader.warnings().to_vec()))
}

/// Reads EDN operation maps, one after another or inside one top-level vector or list,
/// each with the line it starts on.
fn read_edn(text: &str, path: &Path, require_key: bool) -> Result<LinedOps, HistoryError> {
    let mut parser = Parser::new(text);
    let mut ops = Vec::new();
    while let Some((line, form)) = parser.next_item().map_err(|e| e.at(path))? {
        let op = op_from_edn(&form, ops.len() as u64)
            .and_then(|op| match op.key {
                None if require_key => Err("a porcupine-kv operation needs a `:key`".to_string()),
                _ => Ok(op),
            })
            .map_err(|message| EdnError { line, message }.at(path))?;
        ops.push((line, op));
    }
    Ok((ops, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{OpType, Process, F};
    use serde_json::json;

    fn parse(text: &str, format: Option<Format>) -> Result<Vec<Op>, String> {
        parse_history(
            text.as_bytes(),
            Path::new("h"),
            format,
            ReadOptions::default(),
        )
        .map(|(ops, _)| ops)
        .map_err(|e| e.to_string())
    }

    #[test]
    fn format_names_round_trip_and_unknown_names_list_the_valid_ones() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>(), Ok(format));
            assert_eq!(format.to_string(), format.name());
        }
        let e = "yaml".parse::<Format>().expect_err("unknown").to_string();
        assert!(
            e.contains("`yaml`") && e.contains("jsonl, edn, jepsen-log, porcupine-kv"),
            "{e}"
        );
    }

    #[test]
    fn detects_each_format_from_its_first_content() {
        let cases = [
            ("\n{\"index\":0}\n", Some(Format::Jsonl)),
            ("INFO  jepsen.util - 4\t:invoke\t:read\tnil\n", Some(Format::JepsenLog)),
            ("2016-09-14 10:26:32,447{GMT}\tINFO\t[jepsen worker 0] jepsen.util: 0\t:invoke\t:read\tnil", Some(Format::JepsenLog)),
            ("; comment\n[{:process 4, :type :invoke, :f :read}]", Some(Format::Edn)),
            ("({:key \"a\"})", Some(Format::PorcupineKv)),
            ("{:process 0, :key \"0\"}\n", Some(Format::PorcupineKv)),
            ("#jepsen.history.Op{:index 0}", Some(Format::Edn)),
            ("{:index 0, :process 0, :key \"0\"}\n", Some(Format::Edn)),
            ("", None),
            ("  \n; only a comment\n", None),
            ("hello", None),
        ];
        for (text, format) in cases {
            assert_eq!(detect(text), format, "{text:?}");
        }
    }

    #[test]
    fn an_empty_or_comment_only_file_is_an_error_unless_allowed() {
        let allowed = ReadOptions {
            allow_empty: true,
            ..ReadOptions::default()
        };
        for text in ["", "\n; nothing yet\n"] {
            let e = parse(text, None).expect_err("no operations");
            assert!(e.starts_with("h: no operations"), "{e}");
            let read = parse_history(text.as_bytes(), Path::new("h"), None, allowed);
            assert_eq!(read.expect("allowed").0, Vec::new());
        }
        for format in Format::ALL {
            let e = parse("", Some(format)).expect_err("no operations");
            assert!(e.contains("no operations"), "{format}: {e}");
        }
    }

    #[test]
    fn every_format_pairs_completions_with_invokes_and_bounds_lines() {
        let orphan = [
            (Format::Edn, "{:process 0, :type :invoke, :f :read}\n{:process 1, :type :ok, :f :read}"),
            (Format::JepsenLog, "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 1\t:ok\t:read\t3"),
            (Format::PorcupineKv, "{:process 0, :type :invoke, :f :get, :key \"1\"}\n{:process 0, :type :invoke, :f :get, :key \"1\"}"),
        ];
        for (format, text) in orphan {
            let e = parse(text, Some(format)).expect_err("unpaired");
            assert!(e.starts_with("h:2: "), "{format}: {e}");
            let lenient = ReadOptions {
                lenient: true,
                ..ReadOptions::default()
            };
            let (ops, warnings) =
                parse_history(text.as_bytes(), Path::new("h"), Some(format), lenient)
                    .expect("lenient");
            assert_eq!((ops.len(), warnings.len()), (1, 1), "{format}");
        }
        let small = ReadOptions {
            max_line_bytes: 40,
            ..ReadOptions::default()
        };
        let long = format!(
            "{{:process 0, :type :invoke, :f :read, :value \"{}\"}}",
            "x".repeat(50)
        );
        let e = parse_history(long.as_bytes(), Path::new("h"), None, small).expect_err("too long");
        assert!(
            e.to_string()
                .starts_with("h:1: the line is longer than 40 bytes"),
            "{e}"
        );
    }

    #[test]
    fn undetectable_content_names_its_line_and_the_formats() {
        let e = parse("\n\nhello\n", None).expect_err("undetectable");
        assert!(e.starts_with("h:3: ") && e.contains("porcupine-kv"), "{e}");
    }

    #[test]
    fn maps_every_field_of_an_edn_op() {
        let text = r#"{:index 9, :time 5, :process :nemesis, :type :info, :f :start-partition,
                       :key 7, :value {:n1 [:n2 "n3"]}, :node "n1", :cl :QUORUM, :error [:x nil],
                       :tombstones 3, :retry-of 1, :op-index 44}"#;
        let alone = ReadOptions {
            allow_empty: true,
            ..ReadOptions::default()
        };
        let (ops, _) = parse_history(text.as_bytes(), Path::new("h"), Some(Format::Edn), alone)
            .expect("valid");
        let op = &ops[0];
        assert_eq!(op.index, 0, "index is the position in the file");
        assert_eq!(op.time, 5);
        assert_eq!(op.process, Process::nemesis());
        assert_eq!(op.kind, OpType::Info);
        assert_eq!(op.f, F::Other("start-partition".into()));
        assert_eq!(op.key.as_deref(), Some("7"));
        assert_eq!(op.value, json!({"n1": ["n2", "n3"]}));
        assert_eq!(op.node.as_deref(), Some("n1"));
        assert_eq!(op.cl.as_deref(), Some("QUORUM"));
        assert_eq!(op.error.as_deref(), Some("[:x nil]"));
        assert_eq!((op.tombstones, op.retry_of), (Some(3), Some(1)));
    }

    #[test]
    fn a_keyword_error_is_its_name() {
        let text = "{:process 1, :type :invoke, :f :write}\n{:process 1, :type :info, :f :write, :error :timed-out}";
        let op = &parse(text, None).expect("valid")[1];
        assert_eq!(
            (op.error.as_deref(), &op.value),
            (Some("timed-out"), &json!(null))
        );
    }

    #[test]
    fn each_missing_field_is_named_with_the_line() {
        for field in ["process", "type", "f"] {
            let map = ["process 1", "type :ok", "f :read"]
                .iter()
                .filter(|entry| !entry.starts_with(field))
                .map(|entry| format!(":{entry}"))
                .collect::<Vec<_>>()
                .join(", ");
            let e = parse(
                &format!("[{{:process 0, :type :ok, :f :read}}\n {{{map}}}]"),
                None,
            )
            .expect_err("missing field");
            assert!(
                e.starts_with("h:2: ") && e.contains(&format!("no `:{field}`")),
                "{e}"
            );
        }
    }

    #[test]
    fn bad_field_values_are_named() {
        let cases = [
            ("{:process -1, :type :ok, :f :read}", "`:process`"),
            ("{:process 1, :type \"ok\", :f :read}", "`:type`"),
            ("{:process 1, :type :ok, :f 3}", "`:f`"),
            ("{:process 1, :type :ok, :f :read, :time -5}", "`:time`"),
            ("{:process 1, :type :ok, :f :read, :key [1]}", "`:key`"),
            ("[1 2]", "expected an operation map"),
        ];
        for (text, needle) in cases {
            let e = parse(text, Some(Format::Edn)).expect_err(text);
            assert!(e.starts_with("h:1: ") && e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn porcupine_kv_ops_need_a_key() {
        let text = "{:process 0, :type :invoke, :f :get, :key \"1\", :value nil}\n{:process 0, :type :ok, :f :get, :value \"\"}";
        let e = parse(text, Some(Format::PorcupineKv)).expect_err("no key");
        assert!(e.starts_with("h:2: ") && e.contains(":key"), "{e}");
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let e = parse_history(
            b"{:process 0}\n{:f \xff}",
            Path::new("h"),
            None,
            ReadOptions::default(),
        )
        .expect_err("invalid UTF-8")
        .to_string();
        assert!(e.starts_with("h:2: ") && e.contains("UTF-8"), "{e}");
    }
}

//! Our own history format: one JSON operation per line, written as the run goes.

use super::wellformed::{admit_at, finish_at, Pairing, ReadOptions};
use super::HistoryError;
use crate::op::Op;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// Reads a `history.jsonl` one operation at a time, checking each line as it goes.
///
/// A last line without its newline that does not parse is the mark of a run that was
/// killed mid-write: it is skipped and noted in [`JsonlReader::warnings`]. Every line is
/// held to [`ReadOptions`]: bounded length, completions paired with invokes, and at least
/// one operation in all.
pub struct JsonlReader<R> {
    input: R,
    path: PathBuf,
    line: u64,
    next_index: u64,
    buf: Vec<u8>,
    done: bool,
    warnings: Vec<String>,
    options: ReadOptions,
    pairing: Pairing,
}

impl JsonlReader<BufReader<File>> {
    /// Opens a history file.
    pub fn open(path: &Path) -> Result<Self, HistoryError> {
        let file = File::open(path).map_err(|source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::new(BufReader::new(file), path))
    }
}

impl<R: BufRead> JsonlReader<R> {
    /// Reads a history from any buffered input; `path` names it in errors.
    pub fn new(input: R, path: &Path) -> Self {
        JsonlReader {
            input,
            path: path.to_path_buf(),
            line: 0,
            next_index: 0,
            buf: Vec::new(),
            done: false,
            warnings: Vec::new(),
            options: ReadOptions::default(),
            pairing: Pairing::default(),
        }
    }

    /// The same reader, holding the history to `options`.
    pub fn with_options(mut self, options: ReadOptions) -> Self {
        self.options = options;
        self.pairing = Pairing::new(options);
        self
    }

    /// What was tolerated while reading, such as a truncated last line.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn malformed(&self, message: String) -> HistoryError {
        HistoryError::Malformed {
            path: self.path.clone(),
            line: self.line,
            message,
        }
    }

    fn next_op(&mut self) -> Option<Result<Op, HistoryError>> {
        loop {
            self.buf.clear();
            self.line += 1;
            // One byte past the limit (and its newline) is enough to know a line is too long.
            let limit = self.options.max_line_bytes.saturating_add(2) as u64;
            match Read::by_ref(&mut self.input)
                .take(limit)
                .read_until(b'\n', &mut self.buf)
            {
                Ok(0) => return self.end(),
                Ok(_) => {}
                Err(source) => {
                    return Some(Err(HistoryError::Io {
                        path: self.path.clone(),
                        source,
                    }))
                }
            }
            let complete = self.buf.ends_with(b"\n");
            let content = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            if let Some(message) = self.pairing.too_long(content.len()) {
                return Some(Err(self.malformed(message)));
            }
            let Ok(text) = std::str::from_utf8(content) else {
                return Some(Err(self.malformed("the line is not valid UTF-8".into())));
            };
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            let op = match serde_json::from_str::<Op>(text) {
                Ok(op) => op,
                Err(_) if !complete => {
                    self.warnings.push(format!(
                        "{}:{}: ignored a truncated last line (the run was probably killed while writing it)",
                        self.path.display(),
                        self.line
                    ));
                    return self.end();
                }
                Err(e) => return Some(Err(self.malformed(e.to_string()))),
            };
            if op.index != self.next_index {
                return Some(Err(self.malformed(format!(
                    "expected index {}, found {}",
                    self.next_index, op.index
                ))));
            }
            if let Some(message) = op.shape_error() {
                return Some(Err(self.malformed(message)));
            }
            self.next_index += 1;
            let at = (self.path.as_path(), self.line);
            match admit_at(&mut self.pairing, &op, at, &mut self.warnings) {
                Ok(true) => return Some(Ok(op)),
                Ok(false) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// The end of the input: nothing more, or the error for a history that cannot be used.
    fn end(&mut self) -> Option<Result<Op, HistoryError>> {
        finish_at(&self.pairing, &self.path).err().map(Err)
    }
}

impl<R: BufRead> Iterator for JsonlReader<R> {
    type Item = Result<Op, HistoryError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_op();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// Reads a whole history file into memory, with the reader's warnings.
pub fn read_jsonl(
    path: &Path,
    options: ReadOptions,
) -> Result<(Vec<Op>, Vec<String>), HistoryError> {
    let mut reader = JsonlReader::open(path)?.with_options(options);
    let ops = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((ops, reader.warnings().to_vec()))
}

/// Writes operations one line each, flushing every line so that a killed run leaves a readable prefix.
pub struct JsonlWriter<W: Write> {
    output: W,
    path: PathBuf,
}

impl JsonlWriter<File> {
    /// Creates (or truncates) a history file.
    pub fn create(path: &Path) -> Result<Self, HistoryError> {
        let file = File::create(path).map_err(|source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(JsonlWriter {
            output: file,
            path: path.to_path_buf(),
        })
    }
}

impl<W: Write> JsonlWriter<W> {
    /// Writes to any output; `path` names it in errors.
    pub fn new(output: W, path: &Path) -> Self {
        JsonlWriter {
            output,
            path: path.to_path_buf(),
        }
    }

    /// Appends one operation as a line and flushes it.
    pub fn write(&mut self, op: &Op) -> Result<(), HistoryError> {
        let mut line = serde_json::to_vec(op).map_err(|e| HistoryError::Io {
            path: self.path.clone(),
            source: e.into(),
        })?;
        line.push(b'\n');
        self.output
            .write_all(&line)
            .and_then(|()| self.output.flush())
            .map_err(|source| HistoryError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// The underlying output.
    pub fn into_inner(self) -> W {
        self.output
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{OpType, Process, F};
    use serde_json::json;

    fn read(text: &str) -> (Result<Vec<Op>, HistoryError>, Vec<String>) {
        let mut reader = JsonlReader::new(text.as_bytes(), Path::new("h.jsonl"));
        let ops = reader.by_ref().collect::<Result<Vec<_>, _>>();
        (ops, reader.warnings().to_vec())
    }

    fn error_of(text: &str) -> String {
        match read(text).0 {
            Err(e) => e.to_string(),
            Ok(ops) => panic!("expected an error, read {} ops", ops.len()),
        }
    }

    const GOOD: &str = concat!(
        r#"{"index":0,"time":10,"process":3,"type":"invoke","f":"add","key":"views/home","value":1}"#,
        "\n",
        r#"{"index":1,"time":12,"process":3,"type":"ok","f":"add","key":"views/home","value":1,"node":"n2"}"#,
        "\n",
        r#"{"index":2,"time":13,"process":"nemesis","type":"info","f":"kill","value":["n1"]}"#,
        "\n",
    );

    #[test]
    fn reads_the_design_example() {
        let (ops, warnings) = read(GOOD);
        let ops = ops.expect("valid history");
        assert!(warnings.is_empty());
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[1].node.as_deref(), Some("n2"));
        assert_eq!(ops[1].kind, OpType::Ok);
        assert_eq!(ops[2].process, Process::nemesis());
        assert_eq!(ops[2].f, F::Other("kill".into()));
    }

    #[test]
    fn written_ops_read_back_identically() {
        let (ops, _) = read(GOOD);
        let ops = ops.expect("valid history");
        let mut writer = JsonlWriter::new(Vec::new(), Path::new("h.jsonl"));
        for op in &ops {
            writer.write(op).expect("write to memory");
        }
        let text = String::from_utf8(writer.into_inner()).expect("utf-8");
        assert_eq!(read(&text).0.expect("reads back"), ops);
    }

    #[test]
    fn bad_json_names_the_line() {
        let text = format!("{GOOD}{{\"index\":3, oops}}\n");
        assert!(
            error_of(&text).starts_with("h.jsonl:4: "),
            "{}",
            error_of(&text)
        );
    }

    #[test]
    fn unknown_type_names_the_line_and_the_variant() {
        let line =
            r#"{"index":0,"time":1,"process":1,"type":"maybe","f":"add","key":"a/b","value":1}"#;
        let err = error_of(&format!("{line}\n"));
        assert!(err.starts_with("h.jsonl:1: "), "{err}");
        assert!(err.contains("maybe"), "{err}");
    }

    #[test]
    fn missing_field_names_the_line_and_the_field() {
        let line = r#"{"index":0,"time":1,"type":"invoke","f":"add","key":"a/b","value":1}"#;
        let err = error_of(&format!("{line}\n"));
        assert!(err.starts_with("h.jsonl:1: "), "{err}");
        assert!(err.contains("process"), "{err}");
    }

    #[test]
    fn an_add_without_an_integer_delta_is_rejected() {
        let line = r#"{"index":0,"time":1,"process":1,"type":"invoke","f":"add","key":"a/b","value":"one"}"#;
        let err = error_of(&format!("{line}\n"));
        assert!(err.contains("integer delta"), "{err}");
    }

    #[test]
    fn an_index_out_of_order_is_rejected() {
        let line = r#"{"index":5,"time":1,"process":1,"type":"invoke","f":"read","key":"a/b","value":null}"#;
        let err = error_of(&format!("{line}\n"));
        assert!(err.contains("expected index 0, found 5"), "{err}");
    }

    #[test]
    fn a_truncated_last_line_is_tolerated_with_a_warning() {
        let text = format!("{GOOD}{{\"index\":3,\"time\":20,\"proc");
        let (ops, warnings) = read(&text);
        assert_eq!(ops.expect("prefix is readable").len(), 3);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("h.jsonl:4"), "{}", warnings[0]);
    }

    #[test]
    fn a_history_without_operations_is_an_error_unless_allowed() {
        let truncated = "{\"index\":0,\"time\":20,\"proc";
        for text in ["", "\n\n", truncated] {
            let err = error_of(text);
            assert!(err.starts_with("h.jsonl: no operations"), "{err}");
        }
        let allowed = ReadOptions {
            allow_empty: true,
            ..ReadOptions::default()
        };
        let mut reader =
            JsonlReader::new("".as_bytes(), Path::new("h.jsonl")).with_options(allowed);
        assert!(reader.next().is_none());
    }

    #[test]
    fn a_completion_without_an_invoke_names_its_line_unless_lenient() {
        let orphan = r#"{"index":3,"time":14,"process":7,"type":"ok","f":"add","key":"views/home","value":1}"#;
        let text = format!("{GOOD}{orphan}\n");
        let err = error_of(&text);
        assert!(
            err.starts_with("h.jsonl:4: ") && err.contains("no invoke"),
            "{err}"
        );
        let lenient = ReadOptions {
            lenient: true,
            ..ReadOptions::default()
        };
        let mut reader =
            JsonlReader::new(text.as_bytes(), Path::new("h.jsonl")).with_options(lenient);
        let ops = reader
            .by_ref()
            .collect::<Result<Vec<_>, _>>()
            .expect("lenient");
        assert_eq!(ops.len(), 3);
        assert!(
            reader.warnings()[0].starts_with("h.jsonl:4: "),
            "{:?}",
            reader.warnings()
        );
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_naming_it() {
        let long = format!(
            r#"{{"index":3,"time":14,"process":7,"type":"invoke","f":"add","key":"a/{}","value":1}}"#,
            "k".repeat(300)
        );
        let text = format!("{GOOD}{long}\n");
        let small = ReadOptions {
            max_line_bytes: 200,
            ..ReadOptions::default()
        };
        let mut reader =
            JsonlReader::new(text.as_bytes(), Path::new("h.jsonl")).with_options(small);
        let err = reader
            .by_ref()
            .collect::<Result<Vec<_>, _>>()
            .expect_err("too long");
        assert!(
            err.to_string()
                .starts_with("h.jsonl:4: the line is longer than 200"),
            "{err}"
        );
        assert!(read(&text).0.is_ok(), "within the default 1 MiB");
    }

    #[test]
    fn a_truncated_line_in_the_middle_is_an_error() {
        let text = format!("{{\"index\":0,\"time\":20,\"proc\n{GOOD}");
        assert!(error_of(&text).starts_with("h.jsonl:1: "));
    }

    #[test]
    fn a_missing_file_is_an_io_error_naming_it() {
        let err = JsonlReader::open(Path::new("/nonexistent/history.jsonl"))
            .err()
            .expect("missing file");
        assert!(err.to_string().contains("/nonexistent/history.jsonl"));
    }

    #[test]
    fn invoke_values_default_to_null() {
        let line = r#"{"index":0,"time":1,"process":1,"type":"invoke","f":"read","key":"a/b"}"#;
        let (ops, _) = read(&format!("{line}\n"));
        assert_eq!(ops.expect("valid")[0].value, json!(null));
    }
}

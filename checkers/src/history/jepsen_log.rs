//! Jepsen's text log (`jepsen.log`, Porcupine's etcd data): the `jepsen.util` lines are
//! operations, `INFO  jepsen.util - 4<TAB>:invoke<TAB>:read<TAB>nil`: process, type, f and
//! value (EDN), separated by tabs. Every other line is skipped.

use super::edn::{parse_form, Edn, EdnError};
use super::edn_op::op_from_edn;
use super::wellformed::LinedOps;
use super::HistoryError;
use std::path::Path;

/// The fields of an operation line, in order.
const FIELDS: [&str; 4] = ["process", "type", "f", "value"];

/// Reads the operations of a Jepsen log, each with its line, with a warning when it has none.
pub(super) fn read_ops(text: &str, path: &Path) -> Result<LinedOps, HistoryError> {
    let mut ops = Vec::new();
    let mut skipped = 0;
    for (number, line) in (1..).zip(text.lines()) {
        let Some(fields) = op_fields(line) else {
            skipped += usize::from(!line.trim().is_empty());
            continue;
        };
        let op = op_map(&fields, number)
            .and_then(|map| {
                op_from_edn(&map, ops.len() as u64).map_err(|message| EdnError {
                    line: number,
                    message,
                })
            })
            .map_err(|e| e.at(path))?;
        ops.push((number, op));
    }
    let mut warnings = Vec::new();
    if ops.is_empty() && skipped > 0 {
        warnings.push(format!(
            "{}: none of its {skipped} lines is a `jepsen.util` operation (process, type, f and value separated by tabs)",
            path.display()
        ));
    }
    Ok((ops, warnings))
}

/// The tab-separated fields after `jepsen.util`, the first cut to the process; `None`
/// for a line that is not an operation.
fn op_fields(line: &str) -> Option<Vec<&str>> {
    let (_, rest) = line.split_once("jepsen.util")?;
    let mut fields: Vec<&str> = rest.splitn(FIELDS.len(), '\t').collect();
    if fields.len() < 2 {
        return None;
    }
    // `jepsen.util - 4` here, `jepsen.util: 4` in older logs.
    let process = fields[0].split_whitespace().last();
    fields[0] = process.filter(|p| !matches!(*p, "-" | ":")).unwrap_or("");
    Some(fields)
}

/// The operation map of a line's fields. A `:timed-out` in the value column is the
/// error, not a value; a timed-out read is indeterminate even when logged as `:fail`.
fn op_map(fields: &[&str], line: u64) -> Result<Edn, EdnError> {
    let field = |i: usize| match fields.get(i).filter(|text| !text.trim().is_empty()) {
        Some(text) => parse_form(text, line),
        None => Err(missing(FIELDS[i], line)),
    };
    let (process, mut kind, f, mut value) = (field(0)?, field(1)?, field(2)?, field(3)?);
    let mut error = Edn::Nil;
    if kind != Edn::keyword("invoke") && value == Edn::keyword("timed-out") {
        if kind == Edn::keyword("fail") && f == Edn::keyword("read") {
            kind = Edn::keyword("info");
        }
        error = std::mem::replace(&mut value, Edn::Nil);
    }
    let entries = [process, kind, f, value, error];
    let keys = FIELDS
        .iter()
        .chain(&["error"])
        .map(|name| Edn::keyword(name));
    Ok(Edn::Map(keys.zip(entries).collect()))
}

fn missing(name: &str, line: u64) -> EdnError {
    EdnError {
        line,
        message: format!(
            "the operation has no `:{name}`: expected {} separated by tabs",
            FIELDS.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Op;
    use crate::op::{OpType, Process, F};
    use serde_json::json;

    fn read(text: &str) -> Result<(Vec<Op>, Vec<String>), String> {
        read_ops(text, Path::new("j.log"))
            .map(|(ops, warnings)| (ops.into_iter().map(|(_, op)| op).collect(), warnings))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_operation_lines_and_skips_the_rest() {
        let text = "INFO  jepsen.core - Running test\n\
                    INFO  jepsen.util - 2\t:invoke\t:cas\t[3 0]\n\
                    INFO  jepsen.util - :nemesis\t:info\t:start\t{\"n1\" [:n2]}\n\
                    2016-09-14 10:26:32,447{GMT}\tINFO\t[jepsen worker 0] jepsen.util: 2\t:ok\t:cas\t[3 0]\r\n";
        let (ops, warnings) = read(text).expect("valid");
        assert!(warnings.is_empty());
        assert_eq!(ops.len(), 3);
        assert_eq!((ops[0].index, &ops[0].value), (0, &json!([3, 0])));
        assert_eq!(ops[1].process, Process::nemesis());
        assert_eq!(ops[1].value, json!({"n1": ["n2"]}));
        assert_eq!(
            (ops[2].kind, ops[2].f.clone()),
            (OpType::Ok, F::Other("cas".into()))
        );
    }

    #[test]
    fn a_timed_out_read_that_failed_is_indeterminate() {
        let (ops, _) = read("INFO  jepsen.util - 4\t:fail\t:read\t:timed-out\n").expect("valid");
        assert_eq!(ops[0].kind, OpType::Info);
        assert_eq!(
            (ops[0].error.as_deref(), &ops[0].value),
            (Some("timed-out"), &json!(null))
        );
    }

    #[test]
    fn a_timed_out_write_keeps_its_type_and_loses_the_bogus_value() {
        let (ops, _) = read("INFO  jepsen.util - 4\t:info\t:write\t:timed-out\n").expect("valid");
        assert_eq!(ops[0].kind, OpType::Info);
        assert_eq!(
            (ops[0].error.as_deref(), &ops[0].value),
            (Some("timed-out"), &json!(null))
        );
    }

    #[test]
    fn a_line_with_a_missing_field_names_it() {
        let e = read("\nINFO  jepsen.util - 4\t:invoke\n").expect_err("missing f");
        assert!(e.starts_with("j.log:2: ") && e.contains("no `:f`"), "{e}");
        let e = read("INFO  jepsen.util - 4\t:invoke\t:read\n").expect_err("missing value");
        assert!(e.contains("no `:value`"), "{e}");
        let e = read("INFO  jepsen.util -\t:invoke\t:read\tnil\n").expect_err("missing process");
        assert!(e.contains("no `:process`"), "{e}");
    }

    #[test]
    fn trailing_text_after_a_value_is_an_error() {
        let e = read("INFO  jepsen.util - 4\t:ok\t:read\t3 4\n").expect_err("two values");
        assert!(
            e.starts_with("j.log:1: ") && e.contains("after the value"),
            "{e}"
        );
    }

    #[test]
    fn a_log_without_operations_warns() {
        let (ops, warnings) = read("INFO  jepsen.core - Running\nhello\n").expect("readable");
        assert!(ops.is_empty());
        assert!(warnings[0].contains("none of its 2 lines"), "{warnings:?}");
    }
}

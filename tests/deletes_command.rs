//! `checker check` and `checker lin` on small histories with deletes, each answer derived by
//! hand in its comment: both give the one verdict docs/history-format.md's model gives, and
//! each names the read.

use crate::process::run;
use serde_json::{json, Value};
use std::path::Path;

/// One event: client, type, f, key, value.
type Event = (u64, &'static str, &'static str, &'static str, Value);

/// Writes `events` as a history.jsonl, numbered in order.
fn history(dir: &Path, name: &str, events: &[Event]) -> String {
    let lines: Vec<String> = events
        .iter()
        .enumerate()
        .map(|(i, (process, kind, f, key, value))| {
            json!({"index": i, "time": i * 1000, "process": process, "type": kind, "f": f,
                   "key": key, "value": value})
            .to_string()
        })
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").expect("write history");
    path.to_str().expect("utf-8").to_string()
}

/// `check --json` and `lin --model counter --json` on one history: exit codes and documents.
fn both(path: &str, extra: &[&str]) -> ((i32, Value), (i32, Value)) {
    let json_of = |args: Vec<&str>| {
        let out = run(&args);
        let code = out.status.code().expect("exited");
        let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert!(doc.is_object(), "{args:?}: {out:?}");
        (code, doc)
    };
    let mut check = vec!["check", path, "--json"];
    check.extend(extra);
    let mut lin = vec!["lin", path, "--model", "counter", "--json"];
    lin.extend(extra);
    (json_of(check), json_of(lin))
}

/// Both checkers say invalid; the counter checker's first error is the read completed at
/// `index`, the linearizability failure looks at its invoke `invoke`, and the summary says
/// `says`.
fn invalid_at(path: &str, index: u64, invoke: u64, says: &str) {
    let ((check_code, results), (lin_code, lin)) = both(path, &[]);
    assert_eq!((check_code, lin_code), (1, 1), "{results:#} {lin:#}");
    let errors = &results["checkers"]["counter"]["errors"];
    assert_eq!(errors[0]["index"], index, "{errors:#}");
    assert_eq!(results["checkers"]["linearizable"]["valid"], false);
    let window = &lin["failures"][0]["window"];
    let named = window
        .as_array()
        .is_some_and(|w| w.contains(&json!(invoke)));
    assert!(named, "the failure should look at {invoke}: {lin:#}");
    let out = run(&["check", path]);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains(says), "{summary}");
}

#[test]
fn a_read_of_0_after_a_completed_delete_is_absent_as_zero() {
    // add 3, delete, then a read: the counter is absent, so the read must return null.
    let dir = tempfile::tempdir().expect("temp dir");
    let events: Vec<Event> = vec![
        (0, "invoke", "add", "c/x", json!(3)),
        (0, "ok", "add", "c/x", json!(3)),
        (0, "invoke", "delete", "c/x", Value::Null),
        (0, "ok", "delete", "c/x", Value::Null),
        (1, "invoke", "read", "c/x", Value::Null),
        (1, "ok", "read", "c/x", json!(0)),
    ];
    let path = history(dir.path(), "zero.jsonl", &events);
    let says =
        "read at index 5 of c/x returned 0 (allowed absent): 0 where the counter must be absent";
    invalid_at(&path, 5, 4, says);
    let ((_, results), _) = both(&path, &[]);
    assert_eq!(results["checkers"]["counter"]["absent_as_zero"], 1);
    // To a target that cannot tell absent from 0 the read is right.
    let ((check, results), (lin, _)) = both(&path, &["--absent-is-zero"]);
    assert_eq!((check, lin), (0, 0), "{results:#}");
    assert_eq!(results["absent_is_zero"], true);
}

#[test]
fn a_null_read_of_a_counter_at_0_is_zero_as_absent() {
    // add 2, add -2, then a read: the counter exists and holds 0, so null is wrong.
    let dir = tempfile::tempdir().expect("temp dir");
    let events: Vec<Event> = vec![
        (0, "invoke", "add", "c/x", json!(2)),
        (0, "ok", "add", "c/x", json!(2)),
        (0, "invoke", "add", "c/x", json!(-2)),
        (0, "ok", "add", "c/x", json!(-2)),
        (1, "invoke", "read", "c/x", Value::Null),
        (1, "ok", "read", "c/x", Value::Null),
    ];
    let path = history(dir.path(), "null.jsonl", &events);
    let says =
        "read at index 5 of c/x returned null (allowed 0): null where the counter must exist";
    invalid_at(&path, 5, 4, says);
    let ((check, _), (lin, _)) = both(&path, &["--absent-is-zero"]);
    assert_eq!((check, lin), (0, 0));
}

#[test]
fn a_read_in_the_gap_after_a_delete_is_an_overcount_not_a_resurrection() {
    // add 5, delete, then add 5 in flight (it never completes) and a read of 2. The read may
    // find the counter absent or 5; 2 is 2 above absent (as 0): an overcount by 2, and no
    // resurrection, since 2 is not above every allowed value.
    let dir = tempfile::tempdir().expect("temp dir");
    let events: Vec<Event> = vec![
        (0, "invoke", "add", "c/x", json!(5)),
        (0, "ok", "add", "c/x", json!(5)),
        (0, "invoke", "delete", "c/x", Value::Null),
        (0, "ok", "delete", "c/x", Value::Null),
        (2, "invoke", "add", "c/x", json!(5)),
        (1, "invoke", "read", "c/x", Value::Null),
        (1, "ok", "read", "c/x", json!(2)),
    ];
    let path = history(dir.path(), "gap.jsonl", &events);
    let says = "read at index 6 of c/x returned 2 (allowed absent or 5): overcount by 2";
    invalid_at(&path, 6, 5, says);
    let ((_, results), _) = both(&path, &[]);
    let checkers = &results["checkers"];
    assert_eq!(checkers["counter"]["overcount"]["max"], 2);
    assert_eq!(checkers["resurrection"]["reads"], 0);
    assert_eq!(
        checkers["counter"]["errors"][0]["allowed"],
        json!({"absent": true, "counts": [[5, 5]]})
    );
}

#[test]
fn a_column_delete_that_timed_out_keeps_the_bounds_tight() {
    // add -3 ok; add +1 begins; a column delete begins and times out; the +1 completes;
    // a read. The delete never struck (-2), struck before the +1 (1) or after it (absent):
    // -3 would need the +1 undone with the delete unstruck, which no order gives.
    let dir = tempfile::tempdir().expect("temp dir");
    let column = json!({"scope": "column"});
    let events: Vec<Event> = vec![
        (0, "invoke", "add", "c/x", json!(-3)),
        (0, "ok", "add", "c/x", json!(-3)),
        (0, "invoke", "add", "c/x", json!(1)),
        (1, "invoke", "delete", "c/x", column.clone()),
        (1, "info", "delete", "c/x", column),
        (0, "ok", "add", "c/x", json!(1)),
        (2, "invoke", "read", "c/x", Value::Null),
        (2, "ok", "read", "c/x", json!(-3)),
    ];
    let path = history(dir.path(), "column.jsonl", &events);
    let says = "read at index 7 of c/x returned -3 (allowed absent or -2 or 1): undercount by 1";
    invalid_at(&path, 7, 6, says);
    let ((_, results), _) = both(&path, &[]);
    assert_eq!(
        results["checkers"]["counter"]["errors"][0]["allowed"],
        json!({"absent": true, "counts": [[-2, -2], [1, 1]]})
    );
}

#[test]
fn a_partition_delete_is_checked_per_partition() {
    // p/a +3 and p/b +4, then the partition p is deleted: both counters are absent after it.
    // Reads of null for both pass; a read of 4 for p/b brings the deleted count back.
    let dir = tempfile::tempdir().expect("temp dir");
    let events = |b: Value| -> Vec<Event> {
        vec![
            (0, "invoke", "add", "p/a", json!(3)),
            (0, "ok", "add", "p/a", json!(3)),
            (0, "invoke", "add", "p/b", json!(4)),
            (0, "ok", "add", "p/b", json!(4)),
            (0, "invoke", "delete", "p", Value::Null),
            (0, "ok", "delete", "p", Value::Null),
            (1, "invoke", "read", "p/a", Value::Null),
            (1, "ok", "read", "p/a", Value::Null),
            (1, "invoke", "read", "p/b", Value::Null),
            (1, "ok", "read", "p/b", b),
        ]
    };
    let good = history(dir.path(), "good.jsonl", &events(Value::Null));
    let ((check, results), (lin, doc)) = both(&good, &[]);
    assert_eq!((check, lin), (0, 0), "{results:#} {doc:#}");
    assert_eq!(doc["keys"], 1, "one partition, checked whole");
    let bad = history(dir.path(), "bad.jsonl", &events(json!(4)));
    invalid_at(
        &bad,
        9,
        8,
        "p/b deleted at index 4 (up to 4 deleted by then): 4 back in 1 reads, indices 9..=9",
    );
    let ((_, results), _) = both(&bad, &[]);
    assert_eq!(results["checkers"]["resurrection"]["events"], 1);
}

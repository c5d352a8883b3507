//! `checker check` on hand-written histories: verdicts, exit codes, and errors that name the line.

use crate::process::run;
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write history");
    path.to_str().expect("utf-8").to_string()
}

// +1 ok, then a read: only 1 is legal.
const ADD_THEN_READ: &str = r#"{"index":0,"time":1,"process":0,"type":"invoke","f":"add","key":"a/b","value":1}
{"index":1,"time":2,"process":0,"type":"ok","f":"add","key":"a/b","value":1}
{"index":2,"time":3,"process":1,"type":"invoke","f":"read","key":"a/b","value":null}
"#;

#[test]
fn a_valid_history_exits_0_and_an_overcount_exits_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = write(
        dir.path(),
        "good.jsonl",
        &format!(
            "{ADD_THEN_READ}{}\n",
            r#"{"index":3,"time":4,"process":1,"type":"ok","f":"read","key":"a/b","value":1}"#
        ),
    );
    let bad = write(
        dir.path(),
        "bad.jsonl",
        &format!(
            "{ADD_THEN_READ}{}\n",
            r#"{"index":3,"time":4,"process":1,"type":"ok","f":"read","key":"a/b","value":3}"#
        ),
    );
    assert_eq!(run(&["check", &good]).status.code(), Some(0));
    let out = run(&["check", &bad, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(results["valid"], false);
    assert_eq!(results["checkers"]["counter"]["overcount"]["max"], 2);
    assert_eq!(results["checkers"]["counter"]["errors"][0]["index"], 3);
    assert!(
        !dir.path().join("results.json").exists(),
        "a bare history writes nothing"
    );
}

#[test]
fn a_malformed_history_exits_254_naming_the_file_and_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(dir.path(), "h.jsonl", &format!("{ADD_THEN_READ}not json\n"));
    let out = run(&["check", &path]);
    assert_eq!(out.status.code(), Some(254));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("h.jsonl:4:"), "{stderr}");
}

#[test]
fn a_missing_path_exits_254() {
    let out = run(&["check", "/nonexistent/run"]);
    assert_eq!(out.status.code(), Some(254));
}

#[test]
fn a_truncated_last_line_is_checked_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let read_ok =
        r#"{"index":3,"time":4,"process":1,"type":"ok","f":"read","key":"a/b","value":1}"#;
    let path = write(
        dir.path(),
        "h.jsonl",
        &format!("{ADD_THEN_READ}{read_ok}\n{{\"index\":4,\"ti"),
    );
    let out = run(&["check", &path]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("truncated"));
}

#[test]
fn a_jepsen_edn_history_is_checked_like_our_own() {
    // Jepsen's counter run from the peer histories: 287 ok adds of 1, valid.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/checkers/tests/data/peer-histories/jepsen/counter.edn"
    );
    let out = run(&["check", path, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(results["checkers"]["counter"]["increments"], 287);
    assert_eq!(results["checkers"]["linearizable"]["valid"], true);
}

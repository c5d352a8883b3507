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

#[test]
fn a_history_that_cannot_be_trusted_exits_254_from_check_and_lin_naming_the_problem() {
    // Nothing, a truncated line alone, an ok without its invoke, a 2 MB line.
    let dir = tempfile::tempdir().expect("temp dir");
    let orphan = r#"{"index":0,"time":1,"process":0,"type":"ok","f":"add","key":"a/b","value":1}"#;
    let long = format!(
        r#"{{"index":0,"time":1,"process":0,"type":"invoke","f":"add","key":"a/{}","value":1}}"#,
        "k".repeat(2 << 20)
    );
    let cases = [
        ("empty.jsonl", String::new(), "no operations"),
        (
            "truncated.jsonl",
            r#"{"index":0,"time":1,"pro"#.to_string(),
            "no operations",
        ),
        (
            "orphan.jsonl",
            format!("{orphan}\n"),
            "orphan.jsonl:1: a `ok` completion of process 0 with no invoke",
        ),
        (
            "long.jsonl",
            format!("{long}\n"),
            "longer than 1048576 bytes",
        ),
    ];
    for (name, text, needle) in cases {
        let path = write(dir.path(), name, &text);
        for args in [
            vec!["check", &path],
            vec!["lin", &path, "--model", "counter"],
        ] {
            let out = run(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(254), "{args:?}: {stderr}");
            assert!(stderr.contains(needle), "{args:?}: {stderr}");
        }
    }
    // Asked for, each is read: empty as valid, the orphan skipped with a warning.
    let empty = write(dir.path(), "empty.jsonl", "");
    assert_eq!(
        run(&["check", &empty, "--allow-empty"]).status.code(),
        Some(0)
    );
    let orphan = write(
        dir.path(),
        "orphan.jsonl",
        &format!(
            "{ADD_THEN_READ}{}\n",
            r#"{"index":3,"time":4,"process":7,"type":"ok","f":"add","key":"a/b","value":1}"#
        ),
    );
    let out = run(&["check", &orphan, "--lenient"]);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("orphan.jsonl:4: a `ok` completion of process 7"),
        "{summary}"
    );
    assert!(summary.contains("skipped (--lenient)"), "{summary}");
}

#[test]
fn random_bytes_never_pass() {
    use rand::{Rng, SeedableRng};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for i in 0..20 {
        let len = rng.gen_range(0..2_000);
        let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let path = dir.path().join(format!("r{i}"));
        std::fs::write(&path, &bytes).expect("write");
        let path = path.to_str().expect("utf-8");
        for args in [vec!["check", path], vec!["lin", path, "--model", "counter"]] {
            let out = run(&args);
            assert_ne!(out.status.code(), Some(0), "{args:?} passed random bytes");
        }
    }
}

#[test]
fn a_run_folder_with_a_corrupt_run_json_is_reported_not_ignored() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "history.jsonl",
        &format!(
            "{ADD_THEN_READ}{}\n",
            r#"{"index":3,"time":4,"process":1,"type":"ok","f":"read","key":"a/b","value":1}"#
        ),
    );
    let folder = dir.path().to_str().expect("utf-8");
    assert_eq!(
        run(&["check", folder]).status.code(),
        Some(0),
        "no run.json: checked alone"
    );
    write(dir.path(), "run.json", "{\"seed\": ");
    let out = run(&["check", folder]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(254), "{stderr}");
    assert!(stderr.contains("run.json"), "{stderr}");
}

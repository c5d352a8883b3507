//! Every exit code docs/results.md lists, one test each, from the real binary: 0 valid,
//! 1 invalid, 2 unknown, 254 bad arguments or unreadable input, 255 internal error (130, a
//! soak stopped by a signal, is pinned in run_command.rs).

use crate::process::run;
use std::path::Path;

/// An add of 1, then a read of `read`, then the final reads: `final_read` is the completion
/// type of the one final read (`ok` with 1, or `fail`).
fn history(dir: &Path, read: i64, final_read: &str) -> String {
    let ops = [
        r#"{"index":0,"time":1,"process":0,"type":"invoke","f":"add","key":"a/b","value":1}"#.to_string(),
        r#"{"index":1,"time":2,"process":0,"type":"ok","f":"add","key":"a/b","value":1}"#.to_string(),
        r#"{"index":2,"time":3,"process":0,"type":"invoke","f":"read","key":"a/b","value":null}"#.to_string(),
        format!(r#"{{"index":3,"time":4,"process":0,"type":"ok","f":"read","key":"a/b","value":{read}}}"#),
        r#"{"index":4,"time":5,"process":"nemesis","type":"info","f":"final-reads","value":null}"#.to_string(),
        r#"{"index":5,"time":6,"process":1,"type":"invoke","f":"read","key":"a/b","value":null,"node":"n1"}"#.to_string(),
        format!(r#"{{"index":6,"time":7,"process":1,"type":"{final_read}","f":"read","key":"a/b","value":1,"node":"n1"}}"#),
    ];
    let path = dir.join(format!("h-{read}-{final_read}.jsonl"));
    std::fs::write(&path, ops.join("\n") + "\n").expect("write history");
    path.to_str().expect("utf-8").to_string()
}

fn code(args: &[&str]) -> (Option<i32>, String) {
    let out = run(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn exit_0_for_a_valid_history() {
    let dir = tempfile::tempdir().expect("temp dir");
    assert_eq!(code(&["check", &history(dir.path(), 1, "ok")]).0, Some(0));
}

#[test]
fn exit_1_for_a_violation() {
    let dir = tempfile::tempdir().expect("temp dir");
    assert_eq!(code(&["check", &history(dir.path(), 4, "ok")]).0, Some(1));
}

#[test]
fn exit_2_when_a_checker_cannot_decide() {
    // The one final read failed: whether the nodes converged is unknown.
    let dir = tempfile::tempdir().expect("temp dir");
    let (code, stderr) = code(&["check", &history(dir.path(), 1, "fail")]);
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn exit_254_for_bad_arguments_and_unreadable_input_of_every_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing");
    let missing = missing.to_str().expect("utf-8");
    let file = dir.path().join("file");
    std::fs::write(&file, "x").expect("file");
    let under_a_file = format!("{}/results", file.display());
    let cases: Vec<Vec<&str>> = vec![
        vec!["check", missing],
        vec!["lin", missing, "--model", "counter"],
        vec!["export", missing],
        vec!["report", missing],
        vec!["replay", missing],
        vec!["serve", "--dir", missing],
        vec!["run", "--workload", missing],
        vec![
            "run",
            "--workload",
            "hot-counter",
            "--seed",
            "9007199254740992",
        ],
        vec![
            "run",
            "--workload",
            "hot-counter",
            "--results",
            &under_a_file,
        ],
        vec!["soak", "--duration", "soon"],
        vec!["soak", "--duration", "1s", "--budget", missing],
        vec!["node", "--id", "n1", "--settings", missing],
        vec!["no-such-command"],
    ];
    for args in cases {
        let (code, stderr) = code(&args);
        assert_eq!(code, Some(254), "{args:?}: {stderr}");
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
    }
}

#[test]
fn export_to_a_place_that_cannot_hold_a_file_names_it_and_the_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("file");
    std::fs::write(&file, "x").expect("file");
    let under_a_file = format!("{}/out.edn", file.display());
    let input = history(dir.path(), 3, "ok");
    let (code, stderr) = code(&["export", &input, "--output", &under_a_file]);
    assert_eq!(code, Some(254), "{stderr}");
    assert!(stderr.contains(&under_a_file), "{stderr}");
    assert!(stderr.contains("give --output a file"), "{stderr}");
}

#[test]
fn exit_255_for_an_internal_error() {
    // A node that cannot bind its address is no bad input, but the machine refusing.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let (code, stderr) = code(&["node", "--id", "n1", "--listen", &addr]);
    assert_eq!(code, Some(255), "{stderr}");
    assert!(stderr.contains("Address already in use"), "{stderr}");
}

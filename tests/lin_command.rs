//! `checker lin` and `checker export` on peer histories and our own.

use crate::process::run;
use std::path::PathBuf;

fn peer(path: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("checkers/tests/data/peer-histories");
    dir.join(path).to_str().expect("utf-8").to_string()
}

#[test]
fn a_valid_peer_history_exits_0_and_an_invalid_one_1_with_an_explanation_page() {
    let out = run(&["lin", &peer("porcupine/kv/c10-ok.txt"), "--model", "kv"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("why.html");
    let out = run(&[
        "lin",
        &peer("porcupine/etcd/etcd_000.log"),
        "--model",
        "cas-register",
        "--html",
        page.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("cannot follow it"), "{stdout}");
    let html = std::fs::read_to_string(&page).expect("page written");
    assert!(html.contains("Not linearizable") && html.contains("<svg"));
}

#[test]
fn init_and_format_are_taken_from_the_flags() {
    // Jepsen's counter starts at 0 (--init 0), and the EDN format is named, not detected.
    let counter = peer("jepsen/counter.edn");
    let out = run(&[
        "lin", &counter, "--model", "counter", "--init", "0", "--format", "edn", "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(result["valid"], true);
    assert_eq!(result["model"], "counter");
}

#[test]
fn bad_arguments_and_unreadable_histories_exit_254() {
    let counter = peer("jepsen/counter.edn");
    assert_eq!(
        run(&["lin", &counter, "--model", "queue"]).status.code(),
        Some(254)
    );
    assert_eq!(
        run(&["lin", &counter, "--model", "counter", "--init", "[1 2]"])
            .status
            .code(),
        Some(254)
    );
    assert_eq!(
        run(&["lin", &counter, "--model", "counter", "--format", "csv"])
            .status
            .code(),
        Some(254)
    );
    assert_eq!(
        run(&["lin", &counter, "--model", "counter", "--time-limit", "-1"])
            .status
            .code(),
        Some(254)
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = dir.path().join("bad.edn");
    std::fs::write(
        &bad,
        "{:process 1, :type :invoke, :f :read}\n{:process 1, :type :sideways, :f :read}\n",
    )
    .expect("write");
    let out = run(&["lin", bad.to_str().expect("utf-8"), "--model", "register"]);
    assert_eq!(out.status.code(), Some(254));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad.edn:2"),
        "{out:?}"
    );
    // A register model cannot check counter ops: the message names the op.
    let out = run(&["lin", &counter, "--model", "register"]);
    assert_eq!(out.status.code(), Some(254));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("add"),
        "{out:?}"
    );
}

#[test]
fn an_exported_history_reads_back_with_the_same_verdict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let edn = dir.path().join("counter.edn");
    let counter = peer("jepsen/counter.edn");
    let out = run(&[
        "export",
        &counter,
        "--format",
        "edn",
        "-o",
        edn.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let original = run(&[
        "lin", &counter, "--model", "counter", "--init", "0", "--json",
    ]);
    let exported = run(&[
        "lin",
        edn.to_str().expect("utf-8"),
        "--model",
        "counter",
        "--init",
        "0",
        "--json",
    ]);
    let a: serde_json::Value = serde_json::from_slice(&original.stdout).expect("JSON");
    let b: serde_json::Value = serde_json::from_slice(&exported.stdout).expect("JSON");
    assert_eq!(
        (a["valid"].clone(), a["ops"].clone()),
        (b["valid"].clone(), b["ops"].clone())
    );
}

/// A history no search can settle quickly: `adds` concurrent adds of distinct amounts and a
/// read of an odd sum inside their range, which no subset of these even amounts makes: no
/// bound rules it out, so every subset must be tried.
fn subset_sum_history(dir: &std::path::Path, adds: u64) -> String {
    let mut lines = Vec::new();
    let mut index = 0;
    let mut push = |process: u64, kind: &str, f: &str, value: serde_json::Value| {
        lines.push(
            serde_json::json!({"index": index, "time": index, "process": process, "type": kind,
                "f": f, "key": "c/hard", "value": value})
            .to_string(),
        );
        index += 1;
    };
    for p in 0..adds {
        push(p, "invoke", "add", serde_json::json!(2 * (p + 1)));
    }
    push(adds, "invoke", "read", serde_json::Value::Null);
    push(adds, "ok", "read", serde_json::json!(adds * (adds + 1) - 1));
    for p in 0..adds {
        push(p, "ok", "add", serde_json::json!(2 * (p + 1)));
    }
    let path = dir.join("hard.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("history written");
    path.to_str().expect("utf-8").to_string()
}

#[test]
fn past_the_memory_or_time_limit_the_answer_is_unknown_with_the_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    let hard = subset_sum_history(dir.path(), 60);
    let lin = |limit: &[&str]| {
        let mut args = vec!["lin", &hard, "--model", "counter", "--init", "0", "--json"];
        args.extend(limit);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(result["valid"], "unknown");
        result["reason"].as_str().unwrap_or_default().to_string()
    };
    // The process holds a few MB before searching; 64 MB of resident memory is soon passed.
    assert_eq!(lin(&["--memory-limit", "64"]), "memory limit");
    assert_eq!(lin(&["--time-limit", "0.3"]), "time limit");
    let out = run(&["lin", &hard, "--model", "counter", "--memory-limit", "0"]);
    assert_eq!(out.status.code(), Some(254), "{out:?}");
}

#[test]
fn a_counter_history_streamed_says_what_it_says_read_whole() {
    // Without --html a JSONL counter history is streamed through the spill; with it, read
    // whole (the page draws the failing key's ops).
    let dir = tempfile::tempdir().expect("temp dir");
    let hard = subset_sum_history(dir.path(), 8);
    let page = dir.path().join("page.html");
    let page = page.to_str().expect("utf-8");
    let base = ["lin", &hard, "--model", "counter", "--init", "0", "--json"];
    let streamed = run(&base);
    let whole = run(&[&base[..], &["--html", page]].concat());
    assert_eq!(streamed.status.code(), Some(1), "{streamed:?}");
    assert_eq!(whole.status.code(), Some(1), "{whole:?}");
    let result = |out: &std::process::Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        v["elapsed_ms"] = serde_json::Value::Null;
        v
    };
    assert_eq!(result(&streamed), result(&whole));
    assert!(std::path::Path::new(page).exists(), "the page was drawn");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("the folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".lin-spill"))
        .collect();
    assert!(left.is_empty(), "the spill left {left:?}");
}

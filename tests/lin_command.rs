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

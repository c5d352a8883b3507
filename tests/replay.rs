//! The same seed draws the same run: two runs of `--seed 3` give every client the same op
//! sequence, and `replay` says so.

use crate::process::{only_run_folder, run};
use checker::driver::sequences;
use std::path::Path;

/// Runs hot-counter with `seed` for `seconds` into `results`; its exit must be a verdict.
fn run_seed(seed: &str, seconds: &str, results: &Path) {
    let out = run(&[
        "run",
        "--workload",
        "hot-counter",
        "--seed",
        seed,
        "--time-limit",
        seconds,
        "--results",
        results.to_str().expect("utf-8"),
    ]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
}

#[test]
fn the_same_seed_gives_every_client_the_same_ops_and_replay_says_so() {
    let first = tempfile::tempdir().expect("temp dir");
    let again = tempfile::tempdir().expect("temp dir");
    run_seed("3", "4", first.path());
    let original = only_run_folder(first.path());
    let out = run(&[
        "replay",
        original.to_str().expect("utf-8"),
        "--results",
        again.path().to_str().expect("utf-8"),
    ]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("all 10 clients drew the same ops as the original"),
        "{stderr}"
    );
    let replayed = only_run_folder(again.path());
    let drawn = |dir: &Path| {
        sequences::per_client(&dir.join("history.jsonl"), 10, false)
            .expect("history reads")
            .expect("numbered per client")
    };
    let (a, b) = (drawn(&original), drawn(&replayed));
    let agreement = sequences::compare(&a, &b);
    assert!(agreement.all_match(), "{agreement:?}");
    // Enough ops per client that a shared source, drawn in arrival order, would differ.
    assert!(agreement.compared > 200, "{agreement:?}");
    assert!(a.iter().all(|ops| ops.len() > 10), "{a:?}");
    // Another seed draws other ops: the comparison can tell.
    let other = tempfile::tempdir().expect("temp dir");
    run_seed("4", "2", other.path());
    let c = drawn(&only_run_folder(other.path()));
    assert!(!sequences::compare(&a, &c).all_match());
}

//! The linearizability checker as `check` runs it, streaming the history into spill files,
//! against the same checker over the history held whole: the same result, explanations
//! included, on generated histories with deletes of every scope, retries and timeouts, each
//! as generated and with one read pushed outside what any order allows; and the spill
//! leaves nothing behind in its scratch folder.

use super::ideal_histories::{completion_of, ideal_history, ok_reads, EVERY_SCOPE};
use checkers::linear::{self, LinOptions, LinResult, ModelKind, Window};
use checkers::results::{check, CheckOptions};
use checkers::{Op, OpType, Process, Validity, F};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// Histories the test generates.
const HISTORIES: u64 = 300;

fn options() -> LinOptions {
    LinOptions {
        time_limit: Some(Duration::from_secs(60)),
        threads: 1,
        all_partitions: true,
        ..LinOptions::default()
    }
}

/// The result of the streamed checker, spilling under `scratch`.
fn streamed(ops: &[Op], scratch: &Path) -> LinResult {
    streamed_with(ops, scratch, options())
}

/// The result of the streamed checker with `lin`'s options.
fn streamed_with(ops: &[Op], scratch: &Path, lin: LinOptions) -> LinResult {
    let options = CheckOptions {
        linearizable: Some(lin),
        scratch: Some(scratch.to_path_buf()),
        ..CheckOptions::default()
    };
    let results = check(ops.iter().cloned().map(Ok), &options).expect("a well-formed history");
    let mut lin = results.checkers.linearizable.expect("asked for");
    lin.elapsed_ms = 0;
    lin
}

/// The result of the checker over the history held whole.
fn whole(ops: &[Op]) -> LinResult {
    let mut lin = linear::check(ModelKind::Counter, ops, &options()).expect("a counter history");
    lin.elapsed_ms = 0;
    lin
}

#[test]
fn the_streamed_check_says_what_the_whole_history_says() {
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let nothing = streamed(&[], scratch.path());
    assert_eq!(nothing, whole(&[]), "no ops");
    assert_eq!(nothing.valid, Validity::Valid, "no ops");
    let (mut valid, mut invalid) = (0, 0);
    for seed in 0..HISTORIES {
        let ops = ideal_history(seed, EVERY_SCOPE);
        let mut bad = ops.clone();
        if let Some(&read) = ok_reads(&ops).get(seed as usize % 3) {
            let done = completion_of(&ops, read);
            bad[done].value = json!(1_000);
        }
        for (what, history) in [("ideal", &ops), ("one read out of bounds", &bad)] {
            let (streamed, whole) = (streamed(history, scratch.path()), whole(history));
            assert_eq!(streamed, whole, "seed {seed}, {what}");
            // Every partition searched windowed, in windows of a few ops.
            let windowed = streamed_with(history, scratch.path(), tiny_windows(seed));
            assert_eq!(windowed, whole, "seed {seed}, {what}, windowed");
            match whole.valid {
                Validity::Valid => valid += 1,
                Validity::Invalid => invalid += 1,
                Validity::Unknown => panic!("seed {seed}, {what}: the search gave up"),
            }
        }
        let left: Vec<_> = std::fs::read_dir(scratch.path())
            .expect("the scratch folder")
            .collect();
        assert!(left.is_empty(), "seed {seed}: the spill left {left:?}");
    }
    assert!(valid >= HISTORIES, "{valid} valid");
    assert!(invalid >= HISTORIES / 2, "{invalid} invalid");
}

/// Options that search every partition windowed (the generic search even where the sweep
/// would answer), in windows of a few ops.
fn tiny_windows(seed: u64) -> LinOptions {
    LinOptions {
        generic: true,
        window: Window {
            from: 0,
            chunk: 1 + seed as usize % 5,
            margin: 2 + seed as usize % 9,
        },
        ..options()
    }
}

#[test]
fn a_history_the_model_rejects_is_unknown_with_the_same_reason() {
    let mut ops = ideal_history(3, EVERY_SCOPE);
    let read = ok_reads(&ops)[0];
    let done = completion_of(&ops, read);
    ops[done].value = json!("seven");
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let streamed = streamed(&ops, scratch.path());
    let error = linear::check(ModelKind::Counter, &ops, &options()).expect_err("rejected");
    assert_eq!(streamed.valid, Validity::Unknown);
    assert_eq!(streamed.reason, Some(error.to_string()));
}

#[test]
fn an_op_unlike_the_usual_ones_is_described_as_the_history_says_it() {
    // An add whose ok answers the new total (not the delta), then a column delete with its
    // scope, then a read of `null` that the add forbids: the sentence that says why names
    // the add as the history wrote it, and the delete is said as written too.
    let steps = [
        (F::Add, json!(1), json!(5)),
        (F::Read, Value::Null, Value::Null),
        (F::Delete, json!({"scope": "column"}), Value::Null),
        (F::Read, Value::Null, json!(1)),
    ];
    let mut ops = Vec::new();
    for (f, invoked, returned) in steps {
        for (kind, value) in [(OpType::Invoke, invoked), (OpType::Ok, returned)] {
            let key = Some("p/x".to_string());
            let mut op = Op::new(Process::Client(0), kind, f.clone(), key, value);
            op.index = ops.len() as u64;
            op.time = op.index;
            ops.push(op);
        }
    }
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let (streamed, whole) = (streamed(&ops, scratch.path()), whole(&ops));
    assert_eq!(streamed, whole);
    assert_eq!(whole.valid, Validity::Invalid);
    let because = &whole.failures[0].because;
    assert!(because.contains("[0] p0 add 1 → 5"), "{because}");
}

#[test]
fn the_model_rejects_the_op_a_whole_history_names_first() {
    // Two ops the counter model does not know, completing in the other order than they
    // were invoked: the error names the one invoked first, as for the history held whole.
    let mut ops = Vec::new();
    for (process, kind) in [
        (1, OpType::Invoke),
        (2, OpType::Invoke),
        (2, OpType::Ok),
        (1, OpType::Ok),
    ] {
        let key = Some("p/x".to_string());
        let f = F::Other("cas".into());
        let mut op = Op::new(Process::Client(process), kind, f, key, Value::Null);
        op.index = ops.len() as u64;
        ops.push(op);
    }
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let error = linear::check(ModelKind::Counter, &ops, &options()).expect_err("rejected");
    assert_eq!(
        streamed(&ops, scratch.path()).reason,
        Some(error.to_string())
    );
    assert!(error.to_string().contains("index 0"), "{error}");
}

#[test]
fn a_retry_long_after_its_attempt_gets_the_verdict_of_the_history_held_whole() {
    // An add times out, ten thousand reads of the old value pass, then a retry of the add
    // succeeds: the spill cannot join the retry while streaming and reads its group back
    // whole. A final read of 1 is linearizable; a read of 2 is not.
    for (last, verdict) in [(1, Validity::Valid), (2, Validity::Invalid)] {
        let mut ops = Vec::new();
        let mut push = |process, kind, f: F, value: Value, retry_of: Option<u64>| {
            let key = Some("p/x".to_string());
            let mut op = Op::new(Process::Client(process), kind, f, key, value);
            op.index = ops.len() as u64;
            op.time = op.index;
            op.retry_of = retry_of;
            ops.push(op);
        };
        push(0, OpType::Invoke, F::Add, json!(1), None);
        push(0, OpType::Info, F::Add, json!(1), None);
        for _ in 0..10_000 {
            push(1, OpType::Invoke, F::Read, Value::Null, None);
            push(1, OpType::Ok, F::Read, Value::Null, None);
        }
        push(8, OpType::Invoke, F::Add, json!(1), Some(0));
        push(8, OpType::Ok, F::Add, json!(1), None);
        push(1, OpType::Invoke, F::Read, Value::Null, None);
        push(1, OpType::Ok, F::Read, json!(last), None);
        let scratch = tempfile::tempdir().expect("a temporary folder");
        let (streamed, whole) = (streamed(&ops, scratch.path()), whole(&ops));
        assert_eq!(streamed, whole, "last read {last}");
        assert_eq!(whole.valid, verdict, "last read {last}");
    }
}

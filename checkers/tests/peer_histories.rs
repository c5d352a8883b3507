//! Every history in tests/data/peer-histories/MANIFEST.tsv gets the verdict its own project's
//! suite asserts (Knossos, Porcupine, Jepsen).

use checkers::history::{read_history, Format, ReadOptions};
use checkers::linear::{check, LinOptions, ModelKind, Val};
use checkers::{Op, OpType, Process, Validity, F};
use serde_json::json;
use std::path::PathBuf;

/// The peer histories vendored in this crate (sources and licences in their README).
pub fn peer_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/peer-histories")
}

/// One manifest row: the file, its format, the model with its initial value, the verdict.
pub struct Row {
    pub path: PathBuf,
    pub format: Format,
    pub model: ModelKind,
    pub init: Val,
    pub valid: bool,
}

/// Reads MANIFEST.tsv; `cas-register(0)` names the model and its initial value.
pub fn manifest() -> Vec<Row> {
    let dir = peer_dir();
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv"))
        .expect("tests/data/peer-histories/MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 4, "manifest line {line:?}");
            let (name, init) = match cols[2].split_once('(') {
                Some((name, rest)) => (name, rest.trim_end_matches(')')),
                None => (cols[2], "nil"),
            };
            Row {
                path: dir.join(cols[0]),
                format: cols[1].parse().expect("format"),
                model: name.parse().expect("model"),
                init: init.parse().expect("init"),
                valid: cols[3] == "valid",
            }
        })
        .collect()
}

#[test]
fn every_peer_history_gets_its_expected_verdict() {
    let rows = manifest();
    assert!(
        rows.len() >= 30,
        "the manifest lists {} histories",
        rows.len()
    );
    let mut wrong = Vec::new();
    for row in &rows {
        let (ops, _) =
            read_history(&row.path, Some(row.format), ReadOptions::default()).expect("readable");
        let options = LinOptions {
            init: row.init.clone(),
            time_limit: Some(std::time::Duration::from_secs(60)),
            ..LinOptions::default()
        };
        let result = check(row.model, &ops, &options).expect("checkable");
        let expected = if row.valid {
            Validity::Valid
        } else {
            Validity::Invalid
        };
        if result.valid != expected {
            wrong.push(format!(
                "{}: expected {expected:?}, got {:?}",
                row.path.display(),
                result.valid
            ));
        }
        if !row.valid {
            let failure = result
                .failures
                .first()
                .expect("an invalid history is explained");
            assert!(failure.failing_op.is_some(), "{}", row.path.display());
            assert!(!failure.window.is_empty(), "{}", row.path.display());
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn counter_histories_get_their_verdict_from_the_accuracy_checker_too() {
    // Jepsen's own counter checker asserts these valid; ours must agree. Jepsen's file holds
    // adds only, so a final read is appended once everything has returned: it must see the
    // sum of the ok adds exactly (all deltas ±1 and every add returned, so the bound is
    // exact), one more is an overcount of 1, one less an undercount of 1.
    let rows: Vec<Row> = manifest()
        .into_iter()
        .filter(|r| r.model == ModelKind::Counter)
        .collect();
    assert!(!rows.is_empty(), "the manifest lists a counter history");
    for row in rows {
        let (ops, _) =
            read_history(&row.path, Some(row.format), ReadOptions::default()).expect("readable");
        let expected = if row.valid {
            Validity::Valid
        } else {
            Validity::Invalid
        };
        assert_eq!(
            checkers::counter::check(&ops).valid,
            expected,
            "{}",
            row.path.display()
        );
        let ok_adds: i64 = ops
            .iter()
            .filter(|op| op.f == F::Add && op.kind == OpType::Ok)
            .filter_map(|op| op.delta())
            .sum();
        assert!(ok_adds > 100, "{}: {ok_adds}", row.path.display());
        let with_read = |value: i64| {
            let mut ops = ops.clone();
            let key = ops[0].key.clone();
            for (kind, value) in [(OpType::Invoke, json!(null)), (OpType::Ok, json!(value))] {
                let mut op = Op::new(Process::Client(1_000), kind, F::Read, key.clone(), value);
                op.index = ops.len() as u64;
                ops.push(op);
            }
            checkers::counter::check(&ops)
        };
        assert_eq!(with_read(ok_adds).valid, Validity::Valid);
        assert_eq!(with_read(ok_adds + 1).overcount.max, 1);
        assert_eq!(with_read(ok_adds - 1).undercount.max, 1);
    }
}

/// The ops of `history` whose invokes are at `calls`, with their completions.
pub fn sub_history(history: &[Op], calls: &[u64]) -> Vec<Op> {
    let mut keep = vec![false; history.len()];
    for &call in calls {
        let at = history
            .iter()
            .position(|op| op.index == call)
            .expect("a core op is in the history");
        keep[at] = true;
        let process = &history[at].process;
        if let Some(done) = history[at + 1..]
            .iter()
            .position(|op| op.process == *process)
        {
            keep[at + 1 + done] = true;
        }
    }
    history
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(op, _)| op.clone())
        .collect()
}

#[test]
fn every_invalid_peer_history_has_a_small_minimal_core_that_fails_on_its_own() {
    for row in manifest().into_iter().filter(|r| !r.valid) {
        let (ops, _) =
            read_history(&row.path, Some(row.format), ReadOptions::default()).expect("readable");
        let options = LinOptions {
            init: row.init.clone(),
            ..LinOptions::default()
        };
        let result = check(row.model, &ops, &options).expect("checkable");
        let failure = &result.failures[0];
        let name = row.path.display();
        assert!(failure.core_minimal, "{name}: {failure:?}");
        assert!(
            (1..=12).contains(&failure.core.len()),
            "{name}: a core of {} ops",
            failure.core.len()
        );
        assert!(
            failure
                .because
                .starts_with(&format!("These {} ops", failure.core.len()))
                || (failure.core.len() == 1 && failure.because.starts_with("This op")),
            "{name}: {}",
            failure.because
        );
        let core = sub_history(&ops, &failure.core);
        let alone = check(row.model, &core, &options).expect("checkable");
        assert_eq!(alone.valid, Validity::Invalid, "{name}: the core alone");
    }
}

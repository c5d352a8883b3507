//! The read-back that streams a group's records against the one that holds them sorted: the
//! same model and partitions on random histories with retries in time, retries too late to
//! join, retries of ops still open, timeouts, failures and ops never completed.

use super::frontier::GRACE;
use super::*;
use crate::linear::search::Source;
use crate::linear::Window;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

/// A random counter history of `ops` client ops by 8 processes over a few counters, with
/// every kind of ending; its retries follow the op they retry at once, except in one
/// history in four, where some retry an op long ago or one still open.
fn history(seed: u64, ops: usize) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    let late = seed.is_multiple_of(4);
    // Partition `p` is deleted whole now and then.
    let keys = ["p/a", "p/b", "p/c", "q/a", "r/x", "s/y", "t/z"];
    let mut history: Vec<Op> = Vec::new();
    // Per process: its open invoke's place in the history, and the next process number.
    let mut open: Vec<Option<usize>> = vec![None; 8];
    let mut process: Vec<u64> = (0..8).collect();
    let mut ended: Vec<usize> = Vec::new();
    let push = |history: &mut Vec<Op>, mut op: Op| {
        op.index = history.len() as u64;
        op.time = op.index;
        history.push(op);
    };
    let mut started = 0;
    while started < ops || open.iter().any(Option::is_some) {
        let c = rng.gen_range(0..8);
        match open[c] {
            None if started < ops => {
                started += 1;
                let key = keys[rng.gen_range(0..keys.len())].to_string();
                let (f, value) = match rng.gen_range(0..10) {
                    0..=5 => (F::Add, json!(rng.gen_range(1..4))),
                    6..=8 => (F::Read, Value::Null),
                    _ => (F::Delete, Value::Null),
                };
                let key = match f {
                    F::Delete if rng.gen_bool(0.3) => "p".to_string(),
                    _ => key,
                };
                let mut op = Op::new(
                    Process::Client(process[c]),
                    OpType::Invoke,
                    f,
                    Some(key),
                    value,
                );
                // A retry: mostly of an op that just ended, sometimes of one long ago (past
                // the grace) or of one still open.
                if !ended.is_empty() && rng.gen_bool(0.15) {
                    let back = match rng.gen_range(0..10) {
                        0 if late => ended.len() - 1 - rng.gen_range(0..ended.len()),
                        _ => ended.len() - 1,
                    };
                    let original = &history[ended[back]];
                    op.retry_of = Some(original.index);
                    op.f = original.f.clone();
                    op.key = original.key.clone();
                    op.value = original.value.clone();
                    if rng.gen_bool(0.1) {
                        // A retry on another counter of partition `p`.
                        op.key = Some(keys[rng.gen_range(0..3)].to_string());
                    }
                } else if late && rng.gen_bool(0.01) {
                    let others: Vec<usize> = open.iter().flatten().copied().collect();
                    op.retry_of = others.first().map(|&i| history[i].index);
                }
                open[c] = Some(history.len());
                push(&mut history, op);
            }
            None => {}
            Some(at) => {
                if started >= ops && rng.gen_bool(0.02) {
                    open[c] = None; // never completes
                    continue;
                }
                let invoke = history[at].clone();
                let mut done = invoke.clone();
                done.retry_of = None;
                done.kind = match rng.gen_range(0..10) {
                    0 => OpType::Info,
                    1 => OpType::Fail,
                    _ => OpType::Ok,
                };
                if done.f == F::Read && done.kind == OpType::Ok {
                    done.value = json!(rng.gen_range(0..20));
                }
                push(&mut history, done);
                ended.push(at);
                open[c] = None;
                if history.last().is_some_and(|d| d.kind == OpType::Info) {
                    process[c] += 8;
                }
            }
        }
    }
    history
}

/// Every group read back both ways: the same model and partitions; whether it was streamed.
fn both_ways(spill: &Spill) -> Vec<bool> {
    let mut streamed = Vec::new();
    let mut pulled_ops = 0;
    for files in spill.groups() {
        let plan = spill.plan(&files, None, Reading::default());
        let Some(plan) = plan.expect("the files read back") else {
            streamed.push(false);
            continue;
        };
        let spilled = spill.spilled(&files);
        let read = stream::partitions(&spilled, &plan, &spill.names, &[]);
        let Some(parts) = read.expect("the files read back") else {
            streamed.push(false);
            continue;
        };
        // Each partition pulled on its own, a few ops at a time, holds the same ops.
        for counters in plan.long(&spill.names, 0, |_| true) {
            let first = counters.iter().position(|&c| c);
            let name = first.and_then(|c| spill.names.get(c));
            let key = name.map(|n| plan.model.partition_of(n));
            let held = parts
                .iter()
                .find(|p| p.key == key)
                .map_or(&[][..], |p| &p.ops);
            let mut stream = stream::OpStream::open(&spilled, &plan, &spill.names, counters)
                .expect("the files read back");
            let mut pulled = Vec::new();
            while stream.fill(7, &mut pulled).expect("the files read back") {}
            let (a, b) = (format!("{pulled:?}"), format!("{held:?}"));
            assert_eq!(a, b, "group {files:?}, key {key:?}");
            pulled_ops += pulled.len();
        }
        let model = plan.model;
        let records = spill.load(&files).expect("the files read back");
        let (held_model, held) = spill.partitions(&records, None, &LinOptions::default());
        assert_eq!(model, held_model, "group {files:?}");
        assert_eq!(parts.len(), held.len(), "group {files:?}");
        for (a, b) in parts.iter().zip(&held) {
            assert_eq!(a.key, b.key, "group {files:?}");
            assert_eq!(a.ops.len(), b.ops.len(), "group {files:?}, key {:?}", a.key);
            for (x, y) in a.ops.iter().zip(&b.ops) {
                assert_eq!(format!("{x:?}"), format!("{y:?}"), "key {:?}", a.key);
            }
        }
        streamed.push(true);
    }
    let any_streamed = streamed.iter().any(|&s| s);
    assert!(
        !any_streamed || pulled_ops > 0,
        "groups streamed, but no op pulled"
    );
    streamed
}

fn spilled(history: &[Op]) -> (tempfile::TempDir, Spill) {
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let mut spill = Spill::new(Some(scratch.path()));
    history.iter().for_each(|op| spill.observe(op));
    spill.finish_writing();
    (scratch, spill)
}

#[test]
fn streamed_groups_hold_the_same_partitions_as_groups_held_whole() {
    let (mut streamed, mut whole) = (0, 0);
    for seed in 0..40 {
        let history = history(seed, 3_000);
        let (_scratch, spill) = spilled(&history);
        for was in both_ways(&spill) {
            if was {
                streamed += 1;
            } else {
                whole += 1;
            }
        }
    }
    assert!(streamed > 40, "{streamed} groups streamed");
    assert!(whole > 0, "no group read back whole");
}

#[test]
fn a_retry_past_the_grace_sends_its_group_back_to_being_read_whole() {
    let mut history = Vec::new();
    let mut push = |process, kind, f, retry_of| {
        history.push(at(history.len() as u64, process, kind, f, retry_of));
    };
    push(0, OpType::Invoke, F::Add, None);
    push(0, OpType::Info, F::Add, None);
    for _ in 0..GRACE {
        push(1, OpType::Invoke, F::Read, None);
        push(1, OpType::Ok, F::Read, None);
    }
    push(8, OpType::Invoke, F::Add, Some(0));
    push(8, OpType::Ok, F::Add, None);
    let (_scratch, spill) = spilled(&history);
    assert_eq!(both_ways(&spill), [false]);
    // Within the grace, the same retry is joined while streaming.
    let mut near = history[..20].to_vec();
    near.extend(history[history.len() - 2..].iter().cloned());
    for (i, op) in near.iter_mut().enumerate() {
        op.index = i as u64;
    }
    let (_scratch, spill) = spilled(&near);
    assert_eq!(both_ways(&spill), [true]);
}

/// A client op on counter `k` at `index`.
fn at(index: u64, process: u64, kind: OpType, f: F, retry_of: Option<u64>) -> Op {
    let value = match f {
        F::Add => json!(1),
        _ => Value::Null,
    };
    let mut op = Op::new(Process::Client(process), kind, f, Some("k".into()), value);
    op.index = index;
    op.time = index;
    op.retry_of = retry_of;
    op
}

#[test]
fn indices_out_of_order_send_every_group_back_to_being_read_whole() {
    // A retry joined while it was written, then an op called before it: a low mark that
    // assumed increasing indices would hand on the retried add before its retry is read.
    let history = [
        at(1, 0, OpType::Invoke, F::Add, None),
        at(2, 0, OpType::Info, F::Add, None),
        at(95, 1, OpType::Invoke, F::Add, Some(1)),
        at(100, 1, OpType::Ok, F::Add, None),
        at(60, 2, OpType::Invoke, F::Read, None),
        at(5000, 3, OpType::Invoke, F::Read, None),
        at(5001, 3, OpType::Ok, F::Read, None),
        at(70, 4, OpType::Invoke, F::Read, None),
        at(80, 4, OpType::Ok, F::Read, None),
    ];
    let (_scratch, spill) = spilled(&history);
    assert_eq!(both_ways(&spill), [false]);
    // In order, the same ops are streamed.
    let mut sorted = history.to_vec();
    sorted.sort_by_key(|op| op.index);
    let (_scratch, spill) = spilled(&sorted);
    assert_eq!(both_ways(&spill), [true]);
}

#[test]
fn an_op_never_completed_holding_too_many_ops_in_flight_sends_its_group_back_whole() {
    // The op never completed keeps every later op in flight until the end.
    let ops = |n: u64| {
        let mut history = vec![at(0, 0, OpType::Invoke, F::Read, None)];
        for i in 0..n {
            history.push(at(1 + 2 * i, 1, OpType::Invoke, F::Add, None));
            history.push(at(2 + 2 * i, 1, OpType::Ok, F::Add, None));
        }
        history
    };
    let (_scratch, spill) = spilled(&ops(1_000));
    assert_eq!(both_ways(&spill), [true]);
    let (_scratch, spill) = spilled(&ops(stream::IN_FLIGHT as u64 + 1));
    assert_eq!(both_ways(&spill), [false]);
}

#[test]
fn a_long_partition_whose_stream_overflows_is_searched_held_whole() {
    // An op never completed keeps every later op in flight: the window's stream gives up,
    // and the partition is read back whole.
    let mut history = vec![at(0, 0, OpType::Invoke, F::Read, None)];
    let n = stream::IN_FLIGHT as u64 + 1;
    for i in 0..n {
        history.push(at(1 + 2 * i, 1, OpType::Invoke, F::Add, None));
        history.push(at(2 + 2 * i, 1, OpType::Ok, F::Add, None));
    }
    history.push(at(1 + 2 * n, 2, OpType::Invoke, F::Delete, None));
    history.push(at(2 + 2 * n, 2, OpType::Ok, F::Delete, None));
    let options = |window| LinOptions {
        all_partitions: true,
        window,
        ..LinOptions::default()
    };
    let every = Window {
        from: 0,
        chunk: 1 << 10,
        margin: 1 << 8,
    };
    let (_scratch, spill) = spilled(&history);
    let windowed = spill.finish(&options(every)).expect("a counter history");
    let (_scratch, spill) = spilled(&history);
    let held = spill
        .finish(&options(Window::default()))
        .expect("a counter history");
    assert_eq!(windowed.valid, Validity::Valid, "{windowed:?}");
    assert_eq!(
        (windowed.keys, windowed.ops),
        (1, n as usize + 1),
        "the read never completed is left out"
    );
    assert_eq!(
        (held.keys, held.ops, held.valid),
        (1, n as usize + 1, Validity::Valid)
    );
}

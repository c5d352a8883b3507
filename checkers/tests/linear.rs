//! The linearizability checker on hand-built histories and, as a property, against a
//! brute-force enumeration of every order.

use checkers::linear::{check, LinOptions, ModelKind, Val};
use checkers::{Op, OpType, Process, Validity, F};
use proptest::prelude::*;
use serde_json::{json, Value};

/// An op with its own process, called at `call` and returning at `ret` (None: unknown).
#[derive(Debug, Clone)]
struct Spec {
    f: &'static str,
    value: Value,
    output: Value,
    call: u64,
    ret: Option<u64>,
    failed: bool,
    key: Option<&'static str>,
}

fn spec(f: &'static str, value: Value, output: Value, call: u64, ret: Option<u64>) -> Spec {
    Spec {
        f,
        value,
        output,
        call,
        ret,
        failed: false,
        key: None,
    }
}

/// Lays the specs out as a history: events in time order, indices in file order.
fn history(specs: &[Spec]) -> Vec<Op> {
    let mut events: Vec<(u64, u8, usize)> = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        events.push((s.call * 2, 0, i));
        if let Some(r) = s.ret {
            events.push((r * 2 + 1, 1, i));
        }
    }
    events.sort();
    events
        .iter()
        .enumerate()
        .map(|(index, &(_, is_ret, i))| {
            let s = &specs[i];
            let (kind, value) = match (is_ret, s.failed) {
                (0, _) => (OpType::Invoke, s.value.clone()),
                (_, true) => (OpType::Fail, s.value.clone()),
                _ => (OpType::Ok, s.output.clone()),
            };
            let mut op = Op::new(
                Process::Client(i as u64),
                kind,
                F::from(s.f.to_string()),
                s.key.map(String::from),
                value,
            );
            op.index = index as u64;
            op
        })
        .collect()
}

fn verdict(kind: ModelKind, init: Val, specs: &[Spec]) -> Validity {
    let options = LinOptions {
        init,
        ..LinOptions::default()
    };
    check(kind, &history(specs), &options)
        .expect("valid ops")
        .valid
}

#[test]
fn a_read_of_the_last_write_is_linearizable() {
    // write 1 [0,1], read → 1 [2,3]: the only order works.
    let specs = [
        spec("write", json!(1), json!(1), 0, Some(1)),
        spec("read", json!(null), json!(1), 2, Some(3)),
    ];
    assert_eq!(
        verdict(ModelKind::Register, Val::Nil, &specs),
        Validity::Valid
    );
}

#[test]
fn a_stale_read_after_a_completed_write_is_not() {
    // write 1 [0,1], write 2 [2,3], read → 1 [4,5]: the read must follow both writes.
    let specs = [
        spec("write", json!(1), json!(1), 0, Some(1)),
        spec("write", json!(2), json!(2), 2, Some(3)),
        spec("read", json!(null), json!(1), 4, Some(5)),
    ];
    let options = LinOptions::default();
    let result = check(ModelKind::Register, &history(&specs), &options).expect("valid ops");
    assert_eq!(result.valid, Validity::Invalid);
    let failure = &result.failures[0];
    // The two writes linearize; the read (invoke at index 4) cannot follow them.
    assert_eq!(failure.linearized, vec![0, 2]);
    assert_eq!(failure.failing_op, Some(4));
    assert!(
        failure.window.contains(&4) && failure.window.contains(&2),
        "{:?}",
        failure.window
    );
}

#[test]
fn a_concurrent_write_may_be_read_or_not() {
    // write 1 [0,1]; write 2 [2,5] concurrent with read → 1 [3,4] and read → 2 [3,6].
    let specs = [
        spec("write", json!(1), json!(1), 0, Some(1)),
        spec("write", json!(2), json!(2), 2, Some(5)),
        spec("read", json!(null), json!(1), 3, Some(4)),
        spec("read", json!(null), json!(2), 3, Some(6)),
    ];
    assert_eq!(
        verdict(ModelKind::Register, Val::Nil, &specs),
        Validity::Valid
    );
}

#[test]
fn a_timed_out_write_may_take_effect_later() {
    // write 1 [0,1], write 2 [2,∞) (info), read → 2 [10,11], read → 2 [12,13].
    let specs = [
        spec("write", json!(1), json!(1), 0, Some(1)),
        spec("write", json!(2), Value::Null, 2, None),
        spec("read", json!(null), json!(2), 10, Some(11)),
        spec("read", json!(null), json!(2), 12, Some(13)),
    ];
    assert_eq!(
        verdict(ModelKind::Register, Val::Nil, &specs),
        Validity::Valid
    );
}

#[test]
fn a_failed_write_never_took_effect() {
    // write 1 [0,1], write 2 failed [2,3], read → 2 [4,5]: nothing wrote 2.
    let mut failed = spec("write", json!(2), json!(2), 2, Some(3));
    failed.failed = true;
    let specs = [
        spec("write", json!(1), json!(1), 0, Some(1)),
        failed,
        spec("read", json!(null), json!(2), 4, Some(5)),
    ];
    assert_eq!(
        verdict(ModelKind::Register, Val::Nil, &specs),
        Validity::Invalid
    );
}

#[test]
fn a_cas_needs_the_expected_value() {
    // init 0; cas [0 1] ok, then cas [0 2] ok: the second cannot succeed.
    let specs = [
        spec("cas", json!([0, 1]), json!([0, 1]), 0, Some(1)),
        spec("cas", json!([0, 2]), json!([0, 2]), 2, Some(3)),
    ];
    assert_eq!(
        verdict(ModelKind::CasRegister, Val::Int(0), &specs),
        Validity::Invalid
    );
    let specs = [
        spec("cas", json!([0, 1]), json!([0, 1]), 0, Some(1)),
        spec("cas", json!([1, 2]), json!([1, 2]), 2, Some(3)),
    ];
    assert_eq!(
        verdict(ModelKind::CasRegister, Val::Int(0), &specs),
        Validity::Valid
    );
}

#[test]
fn counters_are_checked_per_key() {
    // a: +1 ok, read 1; b: +5 ok, read 4 (illegal) → one illegal key out of two.
    let mut specs = vec![
        spec("add", json!(1), json!(1), 0, Some(1)),
        spec("read", json!(null), json!(1), 2, Some(3)),
        spec("add", json!(5), json!(5), 4, Some(5)),
        spec("read", json!(null), json!(4), 6, Some(7)),
    ];
    for (i, s) in specs.iter_mut().enumerate() {
        s.key = Some(if i < 2 { "c/a" } else { "c/b" });
    }
    let result =
        check(ModelKind::Counter, &history(&specs), &LinOptions::default()).expect("valid ops");
    assert_eq!((result.keys, result.illegal_keys), (2, 1));
    assert_eq!(result.failures[0].key.as_deref(), Some("c/b"));
}

#[test]
fn the_first_illegal_partition_decides_and_the_rest_are_not_searched_unless_asked() {
    // c/big: +1, +1, read 5 (illegal, the biggest, so searched first); c/bad: +1, read 3
    // (illegal too); c/a and c/b: +1, read 1 (legal).
    let mut specs = Vec::new();
    let mut at = 0;
    let mut add = |key: &'static str, ops: &[(&'static str, i64)]| {
        for &(f, v) in ops {
            let (value, output) = match f {
                "add" => (json!(v), json!(v)),
                _ => (json!(null), json!(v)),
            };
            let mut s = spec(f, value, output, at, Some(at + 1));
            s.key = Some(key);
            specs.push(s);
            at += 2;
        }
    };
    add("c/big", &[("add", 1), ("add", 1), ("read", 5)]);
    add("c/bad", &[("add", 1), ("read", 3)]);
    add("c/a", &[("add", 1), ("read", 1)]);
    add("c/b", &[("add", 1), ("read", 1)]);
    let ops = history(&specs);
    let first = LinOptions {
        threads: 1,
        ..LinOptions::default()
    };
    let result = check(ModelKind::Counter, &ops, &first).expect("valid ops");
    assert_eq!(result.valid, Validity::Invalid);
    assert_eq!(
        (result.keys, result.illegal_keys, result.not_searched_keys),
        (4, 1, 3)
    );
    assert_eq!(result.failures[0].key.as_deref(), Some("c/big"));
    let all = LinOptions {
        all_partitions: true,
        ..first
    };
    let result = check(ModelKind::Counter, &ops, &all).expect("valid ops");
    assert_eq!(
        (result.keys, result.illegal_keys, result.not_searched_keys),
        (4, 2, 0)
    );
}

#[test]
fn a_deleted_counter_reads_null() {
    // +3 ok, delete ok, read → null: legal; read → 3 after the delete: not.
    let specs = [
        spec("add", json!(3), json!(3), 0, Some(1)),
        spec("delete", Value::Null, Value::Null, 2, Some(3)),
        spec("read", Value::Null, Value::Null, 4, Some(5)),
    ];
    let mut keyed: Vec<Spec> = specs.to_vec();
    keyed.iter_mut().for_each(|s| s.key = Some("c/x"));
    assert_eq!(
        verdict(ModelKind::Counter, Val::Nil, &keyed),
        Validity::Valid
    );
    keyed[2].output = json!(3);
    assert_eq!(
        verdict(ModelKind::Counter, Val::Nil, &keyed),
        Validity::Invalid
    );
}

#[test]
fn a_partition_delete_makes_every_counter_of_it_absent_and_is_checked_per_partition() {
    // p/a +3 ok and p/b +4 ok; a delete of p runs concurrently with a read of p/a (3 or
    // null) and is followed by a read of p/b (null). The whole partition is one object:
    // the read of p/b must come after the delete, so it cannot return 4.
    let keyed = |key, s: Spec| Spec {
        key: Some(key),
        ..s
    };
    let specs = |b: Value| {
        vec![
            keyed("p/a", spec("add", json!(3), json!(3), 0, Some(1))),
            keyed("p/b", spec("add", json!(4), json!(4), 2, Some(3))),
            keyed("p", spec("delete", Value::Null, Value::Null, 4, Some(6))),
            keyed("p/a", spec("read", Value::Null, json!(3), 5, Some(7))),
            keyed("p/b", spec("read", Value::Null, b, 8, Some(9))),
        ]
    };
    let options = LinOptions::default();
    let result = check(ModelKind::Counter, &history(&specs(Value::Null)), &options).expect("ok");
    assert_eq!((result.valid, result.keys), (Validity::Valid, 1));
    let result = check(ModelKind::Counter, &history(&specs(json!(4))), &options).expect("ok");
    assert_eq!(result.valid, Validity::Invalid);
    assert_eq!(result.failures[0].key.as_deref(), Some("p"));
    // An initial value applies to single counters: with a partition delete it is refused.
    let options = LinOptions {
        init: Val::Int(0),
        ..LinOptions::default()
    };
    let refused = check(ModelKind::Counter, &history(&specs(Value::Null)), &options);
    assert!(refused.is_err_and(|e| e.message.contains("drop --init")));
}

#[test]
fn absent_and_zero_differ_unless_the_target_cannot_tell_them_apart() {
    // +2 ok, -2 ok, then a read: the counter exists at 0, so null is not linearizable,
    // unless null and 0 are one value.
    let specs: Vec<Spec> = [
        spec("add", json!(2), json!(2), 0, Some(1)),
        spec("add", json!(-2), json!(-2), 2, Some(3)),
        spec("read", Value::Null, Value::Null, 4, Some(5)),
    ]
    .into_iter()
    .map(|s| Spec {
        key: Some("c/x"),
        ..s
    })
    .collect();
    let strict = LinOptions::default();
    let lenient = LinOptions {
        reading: checkers::ideal::Reading {
            absent_is_zero: true,
        },
        ..LinOptions::default()
    };
    let ops = history(&specs);
    let verdict = |o: &LinOptions| check(ModelKind::Counter, &ops, o).expect("ok").valid;
    assert_eq!(verdict(&strict), Validity::Invalid);
    assert_eq!(verdict(&lenient), Validity::Valid);
}

#[test]
fn the_time_limit_gives_unknown_not_a_guess() {
    // 200 concurrent writes of distinct values and reads that match none: exponential.
    let mut specs: Vec<Spec> = (0..40)
        .map(|i| spec("write", json!(i), json!(i), 0, Some(1000)))
        .collect();
    specs.extend((0..40).map(|_| spec("read", json!(null), json!(999), 1, Some(1001))));
    let options = LinOptions {
        time_limit: Some(std::time::Duration::from_millis(1)),
        ..LinOptions::default()
    };
    let result = check(ModelKind::Register, &history(&specs), &options).expect("valid ops");
    assert!(
        matches!(result.valid, Validity::Unknown | Validity::Invalid),
        "{:?}",
        result.valid
    );
    if result.valid == Validity::Unknown {
        assert_eq!(result.reason.as_deref(), Some("time limit"));
    }
}

#[test]
fn the_memory_limit_gives_unknown_not_a_crash() {
    // Forty concurrent adds of distinct even amounts and a read of an odd sum inside their
    // range (no bound rules it out): the search must try subsets of the adds, and a 64 KiB
    // cache cannot hold them.
    let mut specs: Vec<Spec> = (1..=40)
        .map(|i| spec("add", json!(2 * i), json!(2 * i), 0, Some(1000)))
        .collect();
    specs.push(spec("read", json!(null), json!(1001), 1, Some(1001)));
    let options = LinOptions {
        init: Val::Int(0),
        memory_limit: 64 << 10,
        ..LinOptions::default()
    };
    let result = check(ModelKind::Counter, &history(&specs), &options).expect("valid ops");
    assert_eq!(result.valid, Validity::Unknown);
    assert_eq!(result.reason.as_deref(), Some("memory limit"));
}

/// Tries every order: an op may go next when no op with a known return ended before it was
/// called; ops with unknown returns may also never take effect.
fn brute_force(kind: ModelKind, init: &Val, specs: &[Spec]) -> bool {
    let live: Vec<&Spec> = specs.iter().filter(|s| !s.failed).collect();
    let mut used = vec![false; live.len()];
    let state = match (kind, init) {
        (ModelKind::Counter, Val::Int(n)) => json!(n),
        (_, Val::Int(n)) => json!(n),
        _ => Value::Null,
    };
    explore(kind, &live, &mut used, state)
}

fn explore(kind: ModelKind, ops: &[&Spec], used: &mut [bool], state: Value) -> bool {
    explore_from(kind, ops, used, state.clone(), !state.is_null())
}

/// `nil_unknown`: the register started with a value, so a nil read constrains nothing.
fn explore_from(
    kind: ModelKind,
    ops: &[&Spec],
    used: &mut [bool],
    state: Value,
    nil_unknown: bool,
) -> bool {
    if (0..ops.len()).all(|i| used[i] || ops[i].ret.is_none()) {
        return true;
    }
    for i in 0..ops.len() {
        if used[i] {
            continue;
        }
        let blocked = (0..ops.len())
            .any(|j| !used[j] && j != i && ops[j].ret.is_some_and(|r| r < ops[i].call));
        if blocked {
            continue;
        }
        if let Some(next) = apply(kind, &state, ops[i], nil_unknown) {
            used[i] = true;
            if explore_from(kind, ops, used, next, nil_unknown) {
                return true;
            }
            used[i] = false;
        }
    }
    false
}

fn apply(kind: ModelKind, state: &Value, s: &Spec, nil_unknown: bool) -> Option<Value> {
    let known = s.ret.is_some();
    let unconstrained_read = nil_unknown && kind != ModelKind::Counter && s.output.is_null();
    match (kind, s.f) {
        (ModelKind::Counter, "add") => Some(json!(
            state.as_i64().unwrap_or(0) + s.value.as_i64().expect("delta")
        )),
        (ModelKind::Counter, "delete") => Some(Value::Null),
        (_, "read") if !known || unconstrained_read => Some(state.clone()),
        (_, "read") => (s.output == *state).then(|| state.clone()),
        (_, "write") => Some(s.value.clone()),
        (_, "cas") if s.value[0] == *state => Some(s.value[1].clone()),
        (_, "cas") => (!known).then(|| state.clone()),
        _ => unreachable!("generated ops only"),
    }
}

fn random_spec(kind: ModelKind) -> impl Strategy<Value = Spec> {
    let fs: &'static [&'static str] = match kind {
        ModelKind::Counter => &["add", "delete", "read", "read"],
        ModelKind::CasRegister => &["write", "cas", "read", "read"],
        _ => &["write", "read", "read"],
    };
    (0..fs.len(), 0i64..3, 0i64..3, 0u64..12, 1u64..6, 0u8..8).prop_map(
        move |(f, a, b, call, len, outcome)| {
            let f = fs[f];
            let value = match f {
                "cas" => json!([a, b]),
                "read" | "delete" => Value::Null,
                _ => json!(a),
            };
            let output = match (f, kind, a) {
                ("read", ModelKind::Counter, 0) => Value::Null,
                ("read", _, 2) if kind != ModelKind::Counter => Value::Null,
                ("read", _, _) => json!(b),
                _ => value.clone(),
            };
            Spec {
                f,
                value,
                output,
                call,
                ret: (outcome != 0).then_some(call + len),
                failed: outcome == 1 && f != "read",
                key: (kind == ModelKind::Counter).then_some("c/x"),
            }
        },
    )
}

fn agrees_with_brute_force(
    kind: ModelKind,
    init: Val,
    specs: Vec<Spec>,
) -> Result<(), TestCaseError> {
    let expected = brute_force(kind, &init, &specs);
    let got = verdict(kind, init, &specs);
    prop_assert_eq!(got == Validity::Valid, expected, "{:?}", specs);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn register_verdicts_equal_brute_force(specs in prop::collection::vec(random_spec(ModelKind::Register), 0..8)) {
        agrees_with_brute_force(ModelKind::Register, Val::Nil, specs)?;
    }

    #[test]
    fn cas_register_verdicts_equal_brute_force(specs in prop::collection::vec(random_spec(ModelKind::CasRegister), 0..8)) {
        agrees_with_brute_force(ModelKind::CasRegister, Val::Int(0), specs)?;
    }

    #[test]
    fn counter_verdicts_equal_brute_force(specs in prop::collection::vec(random_spec(ModelKind::Counter), 0..8)) {
        agrees_with_brute_force(ModelKind::Counter, Val::Nil, specs)?;
    }

    /// Without deletes, where the counter model refutes reads out of bounds first.
    #[test]
    fn counter_verdicts_without_deletes_equal_brute_force(specs in prop::collection::vec(random_spec(ModelKind::Counter), 0..9)) {
        let specs: Vec<Spec> = specs.into_iter().filter(|s| s.f != "delete").collect();
        agrees_with_brute_force(ModelKind::Counter, Val::Int(0), specs.clone())?;
        agrees_with_brute_force(ModelKind::Counter, Val::Nil, specs)?;
    }
}

#[test]
fn a_retry_and_its_original_take_effect_at_most_once() {
    // +1 timed out, its retry +1 ok: one intended increment. A read of 1 is explained; a
    // read of 2 needs both attempts to have taken effect: the retry overcount.
    for (value, expected) in [(1, Validity::Valid), (2, Validity::Invalid)] {
        let mut h = checkers::builder::HistoryBuilder::on("c/x");
        let original = h.add(1, 1);
        h.added(1, 1, OpType::Info);
        h.retry(2, 1, original);
        h.added(2, 1, OpType::Ok);
        h.read(3);
        h.read_ok(3, value);
        let result = check(ModelKind::Counter, h.ops(), &LinOptions::default()).expect("valid ops");
        assert_eq!(result.valid, expected, "read {value}");
    }
}

//! The counter and resurrection checkers on hand-built histories with deletes, each answer
//! derived in its comment. Indices are positions: the builder numbers ops 0, 1, 2, ...

use checkers::builder::HistoryBuilder;
use checkers::counter::{check, CounterResult, ReadBounds};
use checkers::{OpType, Validity, F};
use serde_json::{json, Value};

fn checked(h: &HistoryBuilder) -> CounterResult {
    check(h.ops())
}

fn delete_invoke(h: &mut HistoryBuilder, process: u64) -> u64 {
    h.push(process, OpType::Invoke, F::Delete, Value::Null)
}

fn the_error(result: &CounterResult) -> &ReadBounds {
    assert_eq!(result.errors.len(), 1, "{:?}", result.errors);
    &result.errors[0]
}

/// +5 ok, then a read during which a delete runs, returning `value`.
fn delete_during_read(value: Value) -> CounterResult {
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 5); // 0
    h.added(1, 5, OpType::Ok); // 1
    h.read(2); // 2
    delete_invoke(&mut h, 3); // 3
    h.push(3, OpType::Ok, F::Delete, Value::Null); // 4
    h.push(2, OpType::Ok, F::Read, value); // 5
    checked(&h)
}

#[test]
fn a_delete_during_a_read_allows_the_count_before_it_or_absent() {
    // The read may fall before the delete (5) or after it (absent): nothing between.
    for value in [Value::Null, json!(5)] {
        let result = delete_during_read(value.clone());
        assert_eq!(result.valid, Validity::Valid, "{value}");
    }
    // 3 is 3 above absent (as 0) and 2 below 5: an undercount of 2, relative 2/5.
    let result = delete_during_read(json!(3));
    let error = the_error(&result);
    assert_eq!((error.lower, error.upper, error.undercount()), (0, 5, 2));
    assert_eq!(error.allowed.to_string(), "absent or 5");
    assert_eq!((result.undercount.reads, result.undercount.max), (1, 2));
    assert!((result.undercount.max_relative - 0.4).abs() < 1e-9);
    // 6 is one above the highest allowed value.
    assert_eq!(delete_during_read(json!(6)).overcount.max, 1);
    // 0 is neither: the counter either holds 5 or is absent.
    let result = delete_during_read(json!(0));
    assert_eq!(
        (result.absent_as_zero, result.valid),
        (1, Validity::Invalid)
    );
    assert_eq!(the_error(&result).index, 5);
}

#[test]
fn an_add_racing_a_delete_may_land_on_either_side() {
    // +2 ok; then +1 and a delete overlap; then a read. The +1 lands before the delete
    // (erased: absent) or after it (1); the delete certainly erased the 2.
    let history = |value: Value| {
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 2); // 0
        h.added(1, 2, OpType::Ok); // 1
        h.add(1, 1); // 2
        delete_invoke(&mut h, 2); // 3
        h.added(1, 1, OpType::Ok); // 4
        h.push(2, OpType::Ok, F::Delete, Value::Null); // 5
        h.read(3); // 6
        h.push(3, OpType::Ok, F::Read, value); // 7
        checked(&h)
    };
    assert_eq!(history(Value::Null).valid, Validity::Valid);
    assert_eq!(history(json!(1)).valid, Validity::Valid);
    assert_eq!(history(json!(0)).absent_as_zero, 1);
    // 3 = the erased 2 plus the 1: the deleted count came back.
    let result = history(json!(3));
    assert_eq!(result.resurrection.reads, 1);
    assert_eq!(the_error(&result).overcount(), 2);
}

#[test]
fn a_timed_out_delete_may_strike_at_any_later_point_or_never() {
    // +3 ok; a delete times out; +1 ok; a read. The delete never happened (4), struck
    // before the +1 (1), or after it (absent). 2 is one over 1 (and two under 4).
    let history = |value: Value| {
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 3); // 0
        h.added(1, 3, OpType::Ok); // 1
        delete_invoke(&mut h, 2); // 2
        h.push(2, OpType::Info, F::Delete, Value::Null); // 3
        h.add(1, 1); // 4
        h.added(1, 1, OpType::Ok); // 5
        h.read(3); // 6
        h.push(3, OpType::Ok, F::Read, value); // 7
        checked(&h)
    };
    for value in [Value::Null, json!(1), json!(4)] {
        assert_eq!(history(value.clone()).valid, Validity::Valid, "{value}");
    }
    assert_eq!(history(json!(0)).absent_as_zero, 1);
    let result = history(json!(2));
    let error = the_error(&result);
    assert_eq!(error.allowed.to_string(), "absent or 1 or 4");
    assert_eq!(error.overcount(), 1);
    // No delete definitely completed, so this is no resurrection.
    assert_eq!(result.resurrection.reads, 0);
}

#[test]
fn reads_after_the_same_delete_are_one_resurrection_event() {
    // +2 ok; delete ok (it removed up to 2); +1 ok; two reads of 3 on n1 and n2: each
    // allows only 1, so each brought back the deleted 2: one event, two reads, magnitude 2.
    // Then a second delete (it removed the 1) and a read of 3 on n1: it
    // allows only absent, 3 over, explained by the 2 + 1 both deletes removed: a second
    // event, magnitude 3.
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 2); // 0
    h.added(1, 2, OpType::Ok); // 1
    h.delete(1); // 2, 3
    h.add(1, 1); // 4
    h.added(1, 1, OpType::Ok); // 5
    for (i, node) in ["n1", "n2"].iter().enumerate() {
        h.read(2 + i as u64); // 6, 8
        h.read_ok(2 + i as u64, 3); // 7, 9
        h.last_mut().expect("read").node = Some(node.to_string());
    }
    h.delete(1); // 10, 11
    h.read(4); // 12
    h.read_ok(4, 3); // 13
    h.last_mut().expect("read").node = Some("n1".into());
    let result = checked(&h);
    assert_eq!((result.overcount.reads, result.valid), (0, Validity::Valid));
    let r = &result.resurrection;
    assert_eq!(
        (r.events, r.reads, r.max_magnitude, r.valid),
        (2, 3, 3, Validity::Invalid)
    );
    let first = r
        .list
        .iter()
        .find(|e| e.delete == 2)
        .expect("the first delete's event");
    assert_eq!((first.reads, first.first_read, first.last_read), (2, 7, 9));
    assert_eq!((first.magnitude, first.deleted_count), (2, 2));
    assert_eq!(first.nodes, vec!["n1".to_string(), "n2".to_string()]);
    let second = r
        .list
        .iter()
        .find(|e| e.delete == 10)
        .expect("the second delete's event");
    assert_eq!(
        (second.reads, second.magnitude, second.deleted_count),
        (1, 3, 3)
    );
    assert_eq!(result.keys["c/x"].resurrected, 3);
}

#[test]
fn a_retry_overcount_after_a_delete_is_not_a_resurrection() {
    // +4 ok; delete ok; +1 times out and its retry completes ok: one intended +1, so a
    // read allows 1. Reading 2 is the retry counted twice (1 over, within the retried 1):
    // a plain overcount. Reading 3 is more than a retry explains: a resurrection.
    let history = |value: i64| {
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 4); // 0
        h.added(1, 4, OpType::Ok); // 1
        h.delete(1); // 2, 3
        let original = h.add(2, 1); // 4
        h.added(2, 1, OpType::Info); // 5
        h.retry(3, 1, original); // 6
        h.added(3, 1, OpType::Ok); // 7
        h.read(4); // 8
        h.read_ok(4, value); // 9
        checked(&h)
    };
    let result = history(2);
    assert_eq!((result.overcount.reads, result.overcount.max), (1, 1));
    assert_eq!(result.resurrection.reads, 0);
    let result = history(3);
    assert_eq!((result.overcount.reads, result.resurrection.reads), (0, 1));
}

#[test]
fn an_error_names_the_adds_behind_its_bound_and_the_settled_past() {
    // +1 ok (settled before the read begins); the read begins; +1 runs and completes ok;
    // the read returns 4. Allowed {1, 2}; 2 over the upper bound 2, which counts the add
    // invoked at 3 and the settled past through index 1.
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 1); // 0
    h.added(1, 1, OpType::Ok); // 1
    h.read(2); // 2
    h.add(1, 1); // 3
    h.added(1, 1, OpType::Ok); // 4
    h.read_ok(2, 4); // 5
    let result = checked(&h);
    let error = the_error(&result);
    assert_eq!((error.lower, error.upper, error.overcount()), (1, 2, 2));
    assert_eq!(error.bound_ops, vec![3]);
    assert_eq!(error.settled_through, Some(1));
    assert_eq!(error.after_delete, None);
    assert!(
        (result.overcount.max_relative - 1.0).abs() < 1e-9,
        "2 over a bound of 2"
    );
}

#[test]
fn a_partition_delete_racing_a_scan_allows_each_cell_before_or_after_it() {
    // q/a +2 and q/b +3 ok; a scan begins; the partition q is deleted; the scan returns.
    // Each cell may be read before the delete or after: q/a 2 or absent, q/b 3 or absent;
    // a cell the scan leaves out reads as absent.
    let history = |cells: Value| {
        let mut h = HistoryBuilder::on("q/a");
        h.add(1, 2);
        h.added(1, 2, OpType::Ok);
        h.key("q/b");
        h.add(1, 3);
        h.added(1, 3, OpType::Ok);
        h.key("q");
        h.push(2, OpType::Invoke, F::Scan, Value::Null);
        h.delete(3);
        h.push(2, OpType::Ok, F::Scan, cells);
        checked(&h)
    };
    let result = history(json!({"a": 2}));
    assert_eq!((result.reads, result.valid), (2, Validity::Valid));
    let result = history(json!({"a": 1, "b": 3}));
    assert_eq!(the_error(&result).key, "q/a");
}

#[test]
fn a_retry_of_a_long_forgotten_timeout_counts_as_an_op_of_its_own() {
    // 10,300 adds of +1 time out, one after another, then a retry of one of them completes
    // ok, then a read of 10,301. Joined with its original the retry allows at most 10,300:
    // one over. Timeouts float once 200 events have passed, and the checker remembers the
    // last 10,000 that floated: the first is forgotten, so its retry is judged on its own
    // and 10,301 is allowed (bounds widen, never narrow); the last one is still in play and
    // the read is one over.
    let history = |retried: usize| {
        let mut h = HistoryBuilder::on("c/x");
        let originals: Vec<u64> = (0..10_300u64)
            .map(|p| {
                let invoke = h.add(p, 1);
                h.added(p, 1, OpType::Info);
                invoke
            })
            .collect();
        h.retry(20_000, 1, originals[retried]);
        h.added(20_000, 1, OpType::Ok);
        h.read(20_001);
        h.read_ok(20_001, 10_301);
        checked(&h)
    };
    assert_eq!(history(0).valid, Validity::Valid);
    let result = history(10_299);
    assert_eq!((result.overcount.reads, result.overcount.max), (1, 1));
}

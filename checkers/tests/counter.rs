//! The counter checker on hand-built histories whose answers are derived in each comment.

use checkers::builder::HistoryBuilder;
use checkers::counter::{check, CounterResult};
use checkers::{OpType, Validity, F};

fn checked(h: &HistoryBuilder) -> CounterResult {
    check(h.ops())
}

/// (lower, upper, overcount, undercount) of the only error, or of nothing.
fn only_error(result: &CounterResult) -> (i64, i64, i64, i64) {
    assert_eq!(result.errors.len(), 1, "errors: {:?}", result.errors);
    let e = &result.errors[0];
    (e.lower, e.upper, e.overcount(), e.undercount())
}

#[test]
fn sequential_adds_then_an_exact_read_is_valid() {
    // +1 ok, +2 ok, then a read: only 3 is legal, and 3 was read.
    let mut h = HistoryBuilder::on("views/home");
    h.add(1, 1);
    h.added(1, 1, OpType::Ok);
    h.add(1, 2);
    h.added(1, 2, OpType::Ok);
    h.read(1);
    h.read_ok(1, 3);
    let result = checked(&h);
    assert_eq!(result.valid, Validity::Valid);
    assert_eq!(result.reads, 1);
    assert_eq!(result.overcount.reads + result.undercount.reads, 0);
}

#[test]
fn sequential_read_above_the_sum_is_an_overcount() {
    // +1 ok, +2 ok, then a read of 4: the bounds are [3, 3], so the read is 1 over.
    let mut h = HistoryBuilder::on("views/home");
    h.add(1, 1);
    h.added(1, 1, OpType::Ok);
    h.add(1, 2);
    h.added(1, 2, OpType::Ok);
    h.read(1);
    let read = h.read_ok(1, 4);
    let result = checked(&h);
    assert_eq!(result.valid, Validity::Invalid);
    assert_eq!(only_error(&result), (3, 3, 1, 0));
    assert_eq!(result.errors[0].index, read);
    assert_eq!(result.overcount.reads, 1);
    assert_eq!((result.overcount.max, result.overcount.sum), (1, 1));
}

#[test]
fn an_add_concurrent_with_a_read_may_or_may_not_be_seen() {
    // The read is invoked, then +5 is invoked and completes, then the read completes:
    // the add may be ordered before or after the read, so [0, 5]. Both 0 and 5 are fine,
    // 6 is one over.
    for (value, over) in [(0, 0), (5, 0), (6, 1)] {
        let mut h = HistoryBuilder::on("c/x");
        h.read(1);
        h.add(2, 5);
        h.added(2, 5, OpType::Ok);
        h.read_ok(1, value);
        let result = checked(&h);
        assert_eq!(result.overcount.sum, over, "value {value}");
        assert_eq!(result.undercount.reads, 0, "value {value}");
    }
}

#[test]
fn an_add_that_completes_after_the_read_is_still_concurrent() {
    // +2 is invoked before the read and completes after it: [0, 2]; reading 2 is legal.
    let mut h = HistoryBuilder::on("c/x");
    h.add(2, 2);
    h.read(1);
    h.read_ok(1, 2);
    h.added(2, 2, OpType::Ok);
    assert_eq!(checked(&h).valid, Validity::Valid);
}

#[test]
fn an_info_add_may_count_in_every_later_read() {
    // +3 timed out (info): it may take effect any time after its call, or never, so every
    // later read allows absent or 3; 3 and null are fine, 4 is one over.
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 3);
    h.added(1, 3, OpType::Info);
    h.read(2);
    h.read_ok(2, 3);
    h.read(2);
    h.push(2, OpType::Ok, F::Read, serde_json::Value::Null);
    h.read(2);
    h.read_ok(2, 4);
    let result = checked(&h);
    assert_eq!(result.reads, 3);
    assert_eq!(only_error(&result), (0, 3, 1, 0));
}

#[test]
fn an_add_that_never_completed_may_count() {
    // +4 is invoked and the history ends before it completes: like info, [0, 4].
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 4);
    h.read(2);
    h.read_ok(2, 4);
    assert_eq!(checked(&h).valid, Validity::Valid);
}

#[test]
fn a_read_that_counts_a_failed_add_is_an_overcount() {
    // +1 ok, then +2 failed (certainly not applied): a later read allows only 1; 3 is 2 over.
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 1);
    h.added(1, 1, OpType::Ok);
    h.add(1, 2);
    h.added(1, 2, OpType::Fail);
    h.read(1);
    h.read_ok(1, 3);
    assert_eq!(only_error(&checked(&h)), (1, 1, 2, 0));
}

#[test]
fn a_failed_add_concurrent_with_a_read_does_not_widen_it() {
    // The read is concurrent with +2, which failed: the bounds stay [0, 0]; reading 2 is 2 over.
    let mut h = HistoryBuilder::on("c/x");
    h.read(1);
    h.add(2, 2);
    h.added(2, 2, OpType::Fail);
    h.read_ok(1, 2);
    assert_eq!(only_error(&checked(&h)), (0, 0, 2, 0));
}

#[test]
fn negative_deltas_lower_the_lower_bound() {
    // +10 ok, then -4 concurrent with the read: [6, 10]. 6 and 10 are fine; 5 is one under,
    // 11 one over.
    for (value, over, under) in [(6, 0, 0), (10, 0, 0), (5, 0, 1), (11, 1, 0)] {
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 10);
        h.added(1, 10, OpType::Ok);
        h.add(2, -4);
        h.read(3);
        h.read_ok(3, value);
        h.added(2, -4, OpType::Ok);
        let result = checked(&h);
        assert_eq!(result.overcount.sum, over, "value {value}");
        assert_eq!(result.undercount.sum, under, "value {value}");
    }
}

#[test]
fn an_info_decrement_may_count_too() {
    // +5 ok, -2 info, then a read: [3, 5]; 2 is one under.
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 5);
    h.added(1, 5, OpType::Ok);
    h.add(1, -2);
    h.added(1, -2, OpType::Info);
    h.read(2);
    h.read_ok(2, 2);
    assert_eq!(only_error(&checked(&h)), (3, 5, 0, 1));
}

#[test]
fn a_read_that_misses_completed_adds_is_an_undercount() {
    // Three +1 ok before the read: only 3 is legal; reading 1 is 2 under, null 3 under.
    let mut h = HistoryBuilder::on("c/x");
    for _ in 0..3 {
        h.add(1, 1);
        h.added(1, 1, OpType::Ok);
    }
    h.read(2);
    h.read_ok(2, 1);
    h.read(2);
    h.push(2, OpType::Ok, checkers::F::Read, serde_json::Value::Null);
    let result = checked(&h);
    assert_eq!(result.undercount.reads, 2);
    assert_eq!((result.undercount.max, result.undercount.sum), (3, 5));
    assert_eq!(result.keys["c/x"].undercount.reads, 2);
}

#[test]
fn a_retry_and_its_original_count_at_most_once() {
    // +1 timed out, its retry +1 completed ok: one intended increment, so a later read
    // allows exactly 1 (the retry took effect for sure; the original may have instead, but
    // not as well). Reading 2 is the retry overcount: 1 over.
    let mut h = HistoryBuilder::on("c/x");
    let original = h.add(1, 1);
    h.added(1, 1, OpType::Info);
    h.retry(2, 1, original);
    h.added(2, 1, OpType::Ok);
    h.read(3);
    h.read_ok(3, 2);
    h.read(3);
    h.read_ok(3, 1);
    let result = checked(&h);
    assert_eq!(result.reads, 2);
    assert_eq!(only_error(&result), (1, 1, 1, 0));
}

#[test]
fn a_retry_concurrent_with_a_read_counts_once() {
    // +1 info, then a read is invoked, then a retry of it runs and completes ok, then the
    // read completes: the one intended increment may or may not be seen, [0, 1].
    let mut h = HistoryBuilder::on("c/x");
    let original = h.add(1, 1);
    h.added(1, 1, OpType::Info);
    h.read(3);
    h.retry(2, 1, original);
    h.added(2, 1, OpType::Ok);
    h.read_ok(3, 2);
    assert_eq!(only_error(&checked(&h)), (0, 1, 1, 0));
}

#[test]
fn keys_are_checked_separately() {
    // +1 ok on a/x, +7 ok on a/y; reads of 1 and 7 are exact, a read of 8 on a/x is 7 over.
    let mut h = HistoryBuilder::on("a/x");
    h.add(1, 1);
    h.added(1, 1, OpType::Ok);
    h.key("a/y");
    h.add(1, 7);
    h.added(1, 7, OpType::Ok);
    h.read(2);
    h.read_ok(2, 7);
    h.key("a/x");
    h.read(2);
    h.read_ok(2, 1);
    h.read(2);
    h.read_ok(2, 8);
    let result = checked(&h);
    assert_eq!(result.reads, 3);
    assert_eq!(only_error(&result), (1, 1, 7, 0));
    assert_eq!(result.keys["a/x"].overcount.reads, 1);
    assert_eq!(result.keys["a/y"].overcount.reads, 0);
}

#[test]
fn a_read_after_a_definite_delete_that_sees_the_old_count_is_a_resurrection() {
    // +1 ok, delete ok, then a read: only the empty counter (0) is allowed. Reading 1
    // brings back the whole pre-delete count: a resurrection of magnitude 1, not an
    // overcount.
    let mut h = HistoryBuilder::on("c/x");
    h.add(1, 1);
    h.added(1, 1, OpType::Ok);
    let delete = h.delete(1) - 1;
    h.read(1);
    h.read_ok(1, 1);
    let result = checked(&h);
    assert_eq!(result.valid, Validity::Valid, "no plain overcount");
    assert_eq!(result.resurrection.valid, Validity::Invalid);
    assert_eq!((result.overcount.reads, result.unchecked_reads), (0, 0));
    assert_eq!(result.errors[0].after_delete, Some(delete));
    assert!(result.errors[0].resurrection);
    assert_eq!(
        (
            result.resurrection.events,
            result.resurrection.max_magnitude
        ),
        (1, 1)
    );
}

#[test]
fn failed_and_timed_out_reads_are_not_judged() {
    let mut h = HistoryBuilder::on("c/x");
    h.read(1);
    h.push(1, OpType::Fail, checkers::F::Read, serde_json::Value::Null);
    h.read(2);
    h.push(2, OpType::Info, checkers::F::Read, serde_json::Value::Null);
    let result = checked(&h);
    assert_eq!(result.reads, 0);
    assert_eq!(result.valid, Validity::Valid);
}

#[test]
fn a_partition_delete_empties_every_counter_of_the_partition() {
    // +5 on views/home, then the whole partition `views` is deleted, then a read: only 0
    // is allowed. Null is right; 5 is the old count come back.
    let history = |value: serde_json::Value| {
        let mut h = HistoryBuilder::on("views/home");
        h.add(1, 5);
        h.added(1, 5, OpType::Ok);
        h.key("views");
        h.delete(1);
        h.key("views/home");
        h.read(2);
        h.push(2, OpType::Ok, checkers::F::Read, value);
        checked(&h)
    };
    let result = history(serde_json::Value::Null);
    assert_eq!((result.reads, result.valid), (1, Validity::Valid));
    let result = history(serde_json::json!(5));
    assert_eq!(result.resurrection.events, 1);
    assert_eq!(result.resurrection.list[0].magnitude, 5);
}

/// A scan of partition `q` on `process` returning `cells`.
fn scan(h: &mut HistoryBuilder, process: u64, cells: serde_json::Value) {
    h.key("q");
    h.push(
        process,
        OpType::Invoke,
        checkers::F::Scan,
        serde_json::Value::Null,
    );
    h.push(process, OpType::Ok, checkers::F::Scan, cells);
}

fn two_counters() -> HistoryBuilder {
    // +2 on q/a and +3 on q/b, both ok before any scan.
    let mut h = HistoryBuilder::on("q/a");
    h.add(1, 2);
    h.added(1, 2, OpType::Ok);
    h.key("q/b");
    h.add(1, 3);
    h.added(1, 3, OpType::Ok);
    h
}

#[test]
fn every_cell_of_a_scan_is_judged() {
    // Exact cells: two reads checked, valid.
    let mut h = two_counters();
    scan(&mut h, 2, serde_json::json!({"a": 2, "b": 3}));
    let result = checked(&h);
    assert_eq!((result.reads, result.valid), (2, Validity::Valid));
    // q/b one over, then q/b missing (absent counts as 0: 3 under).
    let mut h = two_counters();
    scan(&mut h, 2, serde_json::json!({"a": 2, "b": 4}));
    assert_eq!(only_error(&checked(&h)), (3, 3, 1, 0));
    let mut h = two_counters();
    scan(&mut h, 2, serde_json::json!({"a": 2}));
    assert_eq!(only_error(&checked(&h)), (3, 3, 0, 3));
}

#[test]
fn a_scan_cell_no_add_ever_named_is_a_phantom_overcount() {
    // q/c was never added to: any count there is over the bound 0.
    let mut h = two_counters();
    scan(&mut h, 2, serde_json::json!({"a": 2, "b": 3, "c": 4}));
    let result = checked(&h);
    assert_eq!(result.overcount.reads, 1);
    assert_eq!(result.errors[0].key, "q/c");
}

#[test]
fn a_counter_created_during_the_scan_is_judged_against_the_adds_concurrent_with_it() {
    // The scan begins, +5 on the new q/d runs and completes, the scan returns d: the add
    // may or may not be seen, so 0 or 5 is allowed and 6 is one over.
    let history = |d: i64| {
        let mut h = two_counters();
        h.key("q");
        h.push(
            2,
            OpType::Invoke,
            checkers::F::Scan,
            serde_json::Value::Null,
        );
        h.key("q/d");
        h.add(3, 5);
        h.added(3, 5, OpType::Ok);
        h.key("q");
        let cells = serde_json::json!({"a": 2, "b": 3, "d": d});
        h.push(2, OpType::Ok, checkers::F::Scan, cells);
        checked(&h)
    };
    let result = history(5);
    assert_eq!((result.reads, result.valid), (3, Validity::Valid));
    assert_eq!(only_error(&history(6)), (0, 5, 1, 0));
}

#[test]
fn a_scan_after_a_delete_allows_the_deleted_counter_only_empty() {
    // q/a (2) is deleted, then a scan: q/a must be absent or 0, q/b still 3.
    let mut h = two_counters();
    h.key("q/a");
    h.delete(1);
    scan(&mut h, 2, serde_json::json!({"b": 3}));
    let result = checked(&h);
    assert_eq!((result.reads, result.valid), (2, Validity::Valid));
    let mut h = two_counters();
    h.key("q/a");
    h.delete(1);
    scan(&mut h, 2, serde_json::json!({"a": 2, "b": 3}));
    assert_eq!(checked(&h).resurrection.reads, 1);
}

//! Sums past `i64`: the counter checker keeps true sums, reports a read some legal order
//! gives a sum outside `i64` as an overflow (not an over- or undercount), and the
//! linearizability model neither wraps nor panics. Each answer is derived in its comment;
//! the property runs histories of an ideal counter read through a 64-bit wrap.

use super::ideal_histories::{
    brute_force, completion_of, ideal_history, ok_reads, wrapped, EXACT, GENERAL, HUGE,
};
use checkers::builder::HistoryBuilder;
use checkers::counter::{check, CounterChecker, CounterResult, Sum};
use checkers::ideal::fits_64_bits;
use checkers::linear::{self, LinOptions, ModelKind};
use checkers::{Op, OpType, Validity, F};
use serde_json::{json, Value};

const MAX: i64 = i64::MAX;

/// `i64::MAX` as a true sum.
fn max() -> Sum {
    Sum::from(MAX)
}

/// `process` adds `delta`, ok, alone.
fn add_ok(h: &mut HistoryBuilder, process: u64, delta: i64) {
    h.add(process, delta);
    h.added(process, delta, OpType::Ok);
}

fn checked(h: &HistoryBuilder) -> CounterResult {
    check(h.ops())
}

/// The counter model's verdict on `ops`.
fn linearizable(ops: &[Op]) -> linear::LinResult {
    let options = LinOptions {
        threads: 1,
        ..LinOptions::default()
    };
    linear::check(ModelKind::Counter, ops, &options).expect("a counter history")
}

#[test]
fn two_adds_of_i64_max_then_the_wrapped_read_is_an_overflow_not_an_undercount() {
    // MAX + MAX = 2^64 - 2: the only value any order allows, past i64. A 64-bit counter
    // wraps it to -2. Kept in i64 with saturation the bound was MAX, and -2 an undercount.
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    add_ok(&mut h, 1, MAX);
    h.read(1);
    let read = h.read_ok(1, -2);
    let result = checked(&h);
    assert_eq!(result.valid, Validity::Invalid);
    assert_eq!(result.overflow_reads, 1);
    assert_eq!((result.overcount.reads, result.undercount.reads), (0, 0));
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    let overflow = &result.overflows[0];
    assert_eq!((overflow.index, overflow.value), (read, Some(-2)));
    assert_eq!((overflow.lower, overflow.upper), (2 * max(), 2 * max()));
    assert_eq!(overflow.key, "c/x");
    assert!(overflow
        .finding()
        .contains("18446744073709551614, past i64::MAX"));
    assert_eq!(result.keys["c/x"].overflow_reads, 1);
    assert_eq!(result.increments, 2 * max());
}

#[test]
fn an_overflow_is_written_with_its_sums_as_strings_past_i64() {
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    add_ok(&mut h, 1, MAX);
    h.read(1);
    h.read_ok(1, -2);
    let result = checked(&h);
    let json = serde_json::to_value(&result).expect("serde_json::Value holds every figure");
    assert_eq!(json["overflow_reads"], 1);
    assert_eq!(json["increments"], "18446744073709551614");
    let overflow = &json["overflows"][0];
    assert_eq!(overflow["lower"], "18446744073709551614");
    assert_eq!(overflow["upper"], "18446744073709551614");
    assert_eq!(overflow["value"], -2);
    assert_eq!(
        overflow["allowed"],
        json!({"absent": false, "counts": [["18446744073709551614", "18446744073709551614"]]})
    );
    let back: CounterResult =
        serde_json::from_str(&serde_json::to_string(&result).expect("writes")).expect("reads");
    assert_eq!(back.overflows, result.overflows);
    assert_eq!(back.increments, result.increments);
}

/// MAX ok, then an add of `delta` concurrent with a read of MAX that ends `outcome`.
fn max_then_a_racing_add(delta: i64, outcome: OpType) -> CounterResult {
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    h.add(2, delta);
    h.read(1);
    h.read_ok(1, MAX);
    h.added(2, delta, outcome);
    checked(&h)
}

#[test]
fn a_racing_add_that_may_take_the_sum_past_i64_is_an_overflow_even_for_an_allowed_read() {
    // MAX, and +1 racing the read, timed out or ok: the read may see MAX or MAX + 1. MAX + 1
    // leaves i64, so some legal order drove the counter past what 64 bits hold.
    for outcome in [OpType::Info, OpType::Ok] {
        let result = max_then_a_racing_add(1, outcome);
        assert_eq!(result.valid, Validity::Invalid, "{outcome:?}");
        assert_eq!(result.overflow_reads, 1);
        let overflow = &result.overflows[0];
        assert_eq!((overflow.lower, overflow.upper), (max(), max() + 1));
        assert_eq!(overflow.value, Some(MAX));
        assert_eq!(result.overcount.reads + result.undercount.reads, 0);
    }
}

#[test]
fn a_racing_add_that_keeps_every_sum_inside_i64_is_judged_as_usual() {
    // MAX and a racing -1 allow MAX - 1 or MAX; a failed +1 never happened, so only MAX.
    // Both inside i64: no overflow, and the read of MAX is valid.
    for (delta, outcome) in [(-1, OpType::Info), (-1, OpType::Ok), (1, OpType::Fail)] {
        let result = max_then_a_racing_add(delta, outcome);
        assert_eq!(result.valid, Validity::Valid, "{delta} {outcome:?}");
        assert_eq!(result.overflow_reads, 0);
        assert!(result.overflows.is_empty());
    }
}

#[test]
fn a_sum_that_leaves_i64_and_comes_back_reads_exactly() {
    // MAX + MAX + MIN = MAX - 1, inside i64 again: the read of MAX - 1 is right, one of MAX
    // is one over. Saturating i64 sums gave MAX + MAX = MAX, then MAX + MIN = -1.
    for (value, valid, over) in [(MAX - 1, Validity::Valid, 0), (MAX, Validity::Invalid, 1)] {
        let mut h = HistoryBuilder::on("c/x");
        add_ok(&mut h, 1, MAX);
        add_ok(&mut h, 1, MAX);
        add_ok(&mut h, 1, i64::MIN);
        h.read(1);
        h.read_ok(1, value);
        let result = checked(&h);
        assert_eq!(result.valid, valid, "read {value}");
        assert_eq!((result.overflow_reads, result.overcount.reads), (0, over));
        assert_eq!(result.increments, max() - 1);
    }
}

#[test]
fn a_sum_below_i64_min_is_an_overflow_too() {
    // MIN - 1 wraps to MAX.
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, i64::MIN);
    add_ok(&mut h, 1, -1);
    h.read(1);
    h.read_ok(1, MAX);
    let result = checked(&h);
    assert_eq!(
        (result.valid, result.overflow_reads),
        (Validity::Invalid, 1)
    );
    let overflow = &result.overflows[0];
    assert_eq!(
        (overflow.lower, overflow.upper),
        (Sum::from(i64::MIN) - 1, Sum::from(i64::MIN) - 1)
    );
    assert!(overflow.finding().contains("past i64::MIN"));
    assert_eq!(result.overcount.reads, 0);
}

#[test]
fn a_scan_cell_past_i64_is_an_overflow_of_its_counter() {
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    add_ok(&mut h, 1, MAX);
    h.key("c");
    h.push(1, OpType::Invoke, F::Scan, Value::Null);
    h.push(1, OpType::Ok, F::Scan, json!({"x": -2}));
    let result = checked(&h);
    assert_eq!(
        (result.valid, result.overflow_reads),
        (Validity::Invalid, 1)
    );
    assert_eq!(result.overflows[0].key, "c/x");
    assert_eq!(result.keys["c/x"].overflow_reads, 1);
}

#[test]
fn the_earliest_overflows_are_kept_and_every_one_counted() {
    // Every one of 250 reads after two adds of MAX overflows; 100 are listed, first first.
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    add_ok(&mut h, 1, MAX);
    let first = h.read(1) + 1;
    h.read_ok(1, -2);
    for _ in 1..250 {
        h.read(1);
        h.read_ok(1, -2);
    }
    let result = checked(&h);
    assert_eq!(result.overflow_reads, 250);
    assert_eq!(result.overflows.len(), checkers::counter::OVERFLOWS_KEPT);
    assert_eq!(result.overflows[0].index, first);
    assert!(result.overflows.windows(2).all(|w| w[0].index < w[1].index));
}

#[test]
fn error_sums_past_i64_are_kept() {
    // The counter holds 0; two reads of -MAX are each MAX under: MAX + MAX in all.
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, 0);
    for _ in 0..2 {
        h.read(1);
        h.read_ok(1, -MAX);
    }
    let result = checked(&h);
    assert_eq!((result.undercount.reads, result.undercount.max), (2, MAX));
    assert_eq!(result.undercount.sum, 2 * max());
    assert_eq!(result.overflow_reads, 0);
}

#[test]
fn the_counter_model_keeps_true_sums_and_no_read_fits_one_past_i64() {
    // Two adds of MAX then a read of the wrapped -2: no order explains it (the sum is
    // 2^64 - 2), and the explanation says the sum is past i64. Wrapping sums accepted it.
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    add_ok(&mut h, 1, MAX);
    h.read(1);
    h.read_ok(1, -2);
    let result = linearizable(h.ops());
    assert_eq!(result.valid, Validity::Invalid);
    let state = &result.failures[0].state;
    assert!(
        state.starts_with("18446744073709551614 (past i64"),
        "{state}"
    );
    // Back inside i64, MAX + MAX + MIN reads as MAX - 1.
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    add_ok(&mut h, 1, MAX);
    add_ok(&mut h, 1, i64::MIN);
    h.read(1);
    h.read_ok(1, MAX - 1);
    assert_eq!(linearizable(h.ops()).valid, Validity::Valid);
}

#[test]
fn the_counter_model_of_a_partition_keeps_true_sums_too() {
    // A partition delete makes the model hold the partition's cells; the same sums apply.
    let mut h = HistoryBuilder::on("c");
    h.delete(1);
    h.key("c/x");
    for _ in 0..3 {
        add_ok(&mut h, 1, MAX);
    }
    h.read(1);
    h.read_ok(1, MAX - 2);
    let result = linearizable(h.ops());
    assert_eq!(result.valid, Validity::Invalid);
    let state = &result.failures[0].state;
    assert!(
        state.contains("c/x = 27670116110564327421 (past i64"),
        "{state}"
    );
}

#[test]
fn a_racing_add_past_i64_is_ordered_after_the_read_by_the_model() {
    // MAX, and +1 racing a read of MAX: the order with the read first explains it.
    let mut h = HistoryBuilder::on("c/x");
    add_ok(&mut h, 1, MAX);
    h.add(2, 1);
    h.read(1);
    h.read_ok(1, MAX);
    h.added(2, 1, OpType::Ok);
    assert_eq!(linearizable(h.ops()).valid, Validity::Valid);
}

/// Whether any state of `truth` is a sum a 64-bit counter cannot hold.
fn leaves_64_bits(truth: &std::collections::BTreeSet<checkers::ideal::State>) -> bool {
    truth.iter().flatten().any(|sum| !fits_64_bits(*sum))
}

#[test]
fn a_read_overflows_exactly_when_some_order_takes_its_sum_past_i64() {
    // Histories of an ideal counter with deltas of ±3·2^61, read through a 64-bit wrap:
    // every read whose true sums (brute force) all fit in i64 reads right; any other is an
    // overflow and nothing else; no read is ever an over- or undercount.
    let (mut overflowing, mut fitting) = (0, 0);
    for seed in 0..300 {
        let ops = ideal_history(seed, HUGE);
        let mut checker = CounterChecker::keeping_reads();
        ops.iter().for_each(|op| checker.observe(op));
        let result = checker.finish();
        let reads = ok_reads(&ops);
        let mut expected = 0;
        for &read in &reads {
            let truth = brute_force(&ops, read);
            let bounds = result
                .read_bounds
                .iter()
                .find(|r| r.invoke_index == read as u64)
                .expect("judged");
            let overflows = leaves_64_bits(&truth);
            assert_eq!(
                bounds.leaves_64_bits(),
                overflows,
                "seed {seed}, read {read}: {truth:?}"
            );
            if overflows {
                expected += 1;
                overflowing += 1;
            } else {
                fitting += 1;
                let returned = ops[completion_of(&ops, read)].value.as_i64();
                let truth: Vec<Option<i64>> = truth.iter().map(|s| s.map(wrapped)).collect();
                assert!(truth.contains(&returned), "seed {seed}, read {read}");
            }
        }
        assert_eq!(result.overflow_reads, expected, "seed {seed}");
        assert!(result.errors.is_empty(), "seed {seed}: {:?}", result.errors);
        let valid = if expected > 0 {
            Validity::Invalid
        } else {
            Validity::Valid
        };
        assert_eq!(result.valid, valid, "seed {seed}");
    }
    assert!(
        overflowing > 100 && fitting > 100,
        "{overflowing} overflowing, {fitting} fitting"
    );
}

#[test]
fn small_deltas_never_overflow() {
    for seed in 0..300 {
        for shape in [EXACT, GENERAL] {
            let result = check(&ideal_history(seed, shape));
            assert_eq!((result.overflow_reads, result.overflows.len()), (0, 0));
            assert!(result.increments.unsigned_abs() < 1_000);
        }
    }
}

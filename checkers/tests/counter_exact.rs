//! The counter checker against brute force: small random histories of an ideal counter with
//! deletes, timeouts, failures and ops that never complete. Every legal order of each history
//! is enumerated; the checker must allow every value some order gives a read (soundness) and,
//! when the exact set is cheap (deltas ±1, no timed-out delete), nothing else (tightness).

use super::ideal_histories::{
    brute_force, completion_of, ideal_history, ok_reads, EVERY_SCOPE, EXACT, GENERAL, HUGE,
    LARGE_DELTAS,
};
use checkers::counter::{CounterChecker, Misread, ReadBounds};
use checkers::ideal::Reading;
use checkers::ideal::{State, Sum};
use checkers::{Op, OpType, F};
use proptest::prelude::*;
use serde_json::json;
use std::collections::BTreeSet;

/// The checker's bounds for the read invoked at `read`, with that read returning `value`.
pub fn checked_read(ops: &[Op], read: usize, value: Option<i64>) -> ReadBounds {
    let mut ops = ops.to_vec();
    let completion = completion_of(&ops, read);
    ops[completion].value = json!(value);
    let mut checker = CounterChecker::keeping_reads();
    ops.iter().for_each(|op| checker.observe(op));
    checker
        .finish()
        .read_bounds
        .into_iter()
        .find(|r| r.invoke_index == read as u64)
        .expect("the read was judged")
}

/// The states the checker allows the read invoked at `read`.
fn checker_allows(ops: &[Op], read: usize) -> BTreeSet<State> {
    let bounds = checked_read(ops, read, Some(0));
    let allowed = &bounds.allowed;
    let counts = allowed.counts.ranges().iter().flat_map(|&(lo, hi)| lo..=hi);
    let absent = allowed.absent.then_some(None);
    counts.map(Some).chain(absent).collect()
}

/// How many cases a property runs: `COUNTER_CASES` for a longer run.
fn cases(default: u32) -> u32 {
    std::env::var("COUNTER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    #[test]
    fn ideal_histories_with_deletes_are_never_accused(seed in any::<u64>(), exact in any::<bool>()) {
        let ops = ideal_history(seed, if exact { EXACT } else { GENERAL });
        let mut checker = CounterChecker::new();
        ops.iter().for_each(|op| checker.observe(op));
        let result = checker.finish();
        prop_assert!(
            result.errors.is_empty() && result.resurrection.events == 0,
            "accused {:?} in {:#?}", result.errors, ops
        );
    }

    #[test]
    fn a_read_found_to_fit_at_once_is_judged_as_its_full_bounds_judge_it(
        seed in any::<u64>(),
        shape in 0..4usize,
        absent_is_zero in any::<bool>(),
        nudges in prop::collection::vec(-3i64..=3, 1..8),
    ) {
        // Without its reads kept, the checker stops at the first placement that explains
        // a read; kept, every read gets its full bounds. Reads nudged off the truth (and
        // some made null) must come out the same either way.
        let shape = [GENERAL, EVERY_SCOPE, HUGE, LARGE_DELTAS][shape];
        let mut ops = ideal_history(seed, shape);
        for (i, read) in ok_reads(&ops).into_iter().enumerate() {
            let at = completion_of(&ops, read);
            let nudge = nudges[i % nudges.len()];
            ops[at].value = match (ops[at].value.as_i64(), nudge) {
                (_, -3) => serde_json::Value::Null,
                (Some(v), d) => json!(v.wrapping_add(d)),
                (None, d) => json!(d),
            };
        }
        let reading = Reading { absent_is_zero };
        let run = |mut checker: CounterChecker| {
            checker = checker.reading(reading);
            ops.iter().for_each(|op| checker.observe(op));
            checker.finish()
        };
        let fast = run(CounterChecker::new());
        let mut full = run(CounterChecker::keeping_reads());
        prop_assert!(!full.read_bounds.is_empty() || ok_reads(&ops).is_empty());
        full.read_bounds.clear();
        prop_assert_eq!(fast, full, "{:#?}", ops);
    }

    #[test]
    fn the_checker_allows_exactly_what_some_order_allows_when_that_is_cheap(seed in any::<u64>()) {
        let ops = ideal_history(seed, EXACT);
        for read in ok_reads(&ops) {
            let truth = brute_force(&ops, read);
            let allowed = checker_allows(&ops, read);
            prop_assert_eq!(&allowed, &truth, "read {} of {:#?}", read, ops);
        }
    }

    #[test]
    fn the_checker_never_flags_a_value_some_order_allows(seed in any::<u64>()) {
        let ops = ideal_history(seed, GENERAL);
        for read in ok_reads(&ops) {
            let truth = brute_force(&ops, read);
            let allowed = checker_allows(&ops, read);
            prop_assert!(truth.is_subset(&allowed), "read {} allows {:?}, checker {:?} in {:#?}", read, truth, allowed, ops);
        }
    }
}

#[test]
fn an_altered_read_is_flagged_by_exactly_its_distance_from_the_truth() {
    // `null`, and every count from 4 below the lowest true count (absent as 0) to 4 above
    // the highest, for every read of 200 exact-shape histories: flagged iff no order allows
    // it; a 0 where only absent fits and a `null` where 0 fits are misreads of existence,
    // anything else is off by the distance to the nearest state an order allows.
    for seed in 0..200 {
        let ops = ideal_history(seed, EXACT);
        for read in ok_reads(&ops) {
            let truth = brute_force(&ops, read);
            let small = |t: &State| i64::try_from(t.unwrap_or(0)).expect("small sums");
            let numbers: Vec<i64> = truth.iter().map(small).collect();
            let lo = *numbers.iter().min().expect("some order");
            let hi = *numbers.iter().max().expect("some order");
            let returned = std::iter::once(None).chain((lo - 4..=hi + 4).map(Some));
            for value in returned {
                let expected = if truth.contains(&value.map(Sum::from)) {
                    None
                } else if value.is_none() && truth.contains(&Some(0)) {
                    Some(Misread::ZeroAsAbsent)
                } else if value == Some(0) && truth.contains(&None) {
                    Some(Misread::AbsentAsZero)
                } else {
                    let v = value.unwrap_or(0);
                    let distance = numbers.iter().map(|t| (t - v).abs()).min();
                    distance.map(|d| {
                        let below = numbers.iter().any(|t| *t == v - d);
                        if below {
                            Misread::Over(d, v - d)
                        } else {
                            Misread::Under(d, v + d)
                        }
                    })
                };
                let bounds = checked_read(&ops, read, value);
                assert_eq!(
                    bounds.misread(),
                    expected,
                    "seed {seed}, read {read} returning {value:?}: truth {truth:?}"
                );
            }
        }
    }
}

/// How often the checker lets through a value no order allows, on general histories.
/// Run with `cargo test -p checkers --release -- --ignored tightness --nocapture`.
#[test]
#[ignore]
fn tightness_on_general_histories() {
    let n = cases(20_000) as u64;
    for (name, shape) in [
        ("deltas up to 3", LARGE_DELTAS),
        ("and timed-out deletes", GENERAL),
    ] {
        let (mut reads, mut loose_reads, mut extra_values, mut true_values) = (0u64, 0, 0, 0);
        let (mut retries, mut partition_deletes) = (0, 0);
        for seed in 0..n {
            let ops = ideal_history(seed, shape);
            retries += ops.iter().filter(|op| op.retry_of.is_some()).count();
            partition_deletes += (ops.iter())
                .filter(|op| {
                    op.f == F::Delete && op.kind == OpType::Invoke && op.key.as_deref() == Some("c")
                })
                .count();
            for read in ok_reads(&ops) {
                let truth = brute_force(&ops, read);
                let allowed = checker_allows(&ops, read);
                assert!(
                    truth.is_subset(&allowed),
                    "unsound at seed {seed}, read {read}"
                );
                reads += 1;
                true_values += truth.len() as u64;
                let extra = allowed.len() as u64 - truth.len() as u64;
                extra_values += extra;
                loose_reads += u64::from(extra > 0);
            }
        }
        println!(
            "{name}: {n} histories ({retries} retries, {partition_deletes} partition deletes), \
             {reads} reads: {loose_reads} reads ({:.2}%) allow a value no order gives; \
             {extra_values} such values against {true_values} true ones ({:.2}%)",
            100.0 * loose_reads as f64 / reads.max(1) as f64,
            100.0 * extra_values as f64 / true_values.max(1) as f64,
        );
    }
}

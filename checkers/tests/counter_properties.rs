//! Property tests: histories of an ideal counter, generated with a known linearization,
//! are never accused; a read pushed past its bound is always caught by exactly that much.

use checkers::counter::check;
use checkers::{Op, OpType, Process, Validity, F};
use proptest::prelude::*;
use serde_json::json;

/// One step of the schedule: which process moves next, and the choices it makes.
#[derive(Debug, Clone)]
struct Step {
    process: usize,
    is_add: bool,
    delta: i64,
    outcome: u8,
    applies_if_info: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (0..4usize, any::<bool>(), -3i64..=5, 0u8..6, any::<bool>()).prop_map(
        |(process, is_add, delta, outcome, applies_if_info)| Step {
            process,
            is_add,
            delta,
            outcome,
            applies_if_info,
        },
    )
}

/// Where a process is in its current op.
enum Phase {
    Idle,
    Invoked,
    TookEffect(Option<i64>),
}

/// Runs an ideal counter under a random interleaving: every op takes effect (or not) at a
/// point between its invoke and its completion, and a retry after a timeout takes effect
/// only if its original did not, so every read is within bounds by construction.
fn ideal_history(steps: &[Step]) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut counter: Option<i64> = None;
    let mut phases: Vec<Phase> = (0..4).map(|_| Phase::Idle).collect();
    let mut ids: Vec<u64> = (0..4).collect();
    let mut current: Vec<Option<Step>> = vec![None; 4];
    // (invoke index, applied) of each process's last timed-out add, to retry.
    let mut timed_out: Vec<Option<(u64, i64, bool)>> = vec![None; 4];
    let mut next_id = 4;
    let push = |ops: &mut Vec<Op>, p: u64, kind, f, value, retry_of| {
        let mut op = Op::new(Process::Client(p), kind, f, Some("c/x".into()), value);
        op.index = ops.len() as u64;
        op.time = op.index;
        op.retry_of = retry_of;
        ops.push(op);
        ops.len() as u64 - 1
    };
    for s in steps {
        let p = s.process;
        match std::mem::replace(&mut phases[p], Phase::Idle) {
            Phase::Idle => {
                let mut s = s.clone();
                let retry = timed_out[p].take();
                if let Some((_, delta, _)) = retry {
                    s.is_add = true;
                    s.delta = delta;
                }
                // A read step with `applies_if_info` set scans the partition instead.
                let (f, value) = if s.is_add {
                    (F::Add, json!(s.delta))
                } else if s.applies_if_info {
                    (F::Scan, json!(null))
                } else {
                    (F::Read, json!(null))
                };
                let index = push(
                    &mut ops,
                    ids[p],
                    OpType::Invoke,
                    f,
                    value,
                    retry.map(|r| r.0),
                );
                // Remember whether the original already took effect, for the retry's turn.
                timed_out[p] = retry.map(|(_, d, applied)| (index, d, applied));
                current[p] = Some(s);
                phases[p] = Phase::Invoked;
            }
            Phase::Invoked => {
                let op = current[p].clone().expect("invoked");
                let original_applied = timed_out[p].is_some_and(|r| r.2);
                let effect = if op.is_add {
                    let applies = match op.outcome {
                        0 => false,
                        1 => op.applies_if_info,
                        _ => true,
                    } && !original_applied;
                    if applies {
                        let sum = checkers::ideal::add(counter.map(i128::from), op.delta);
                        counter = sum.map(|s| i64::try_from(s).expect("small deltas"));
                    }
                    Some(i64::from(applies))
                } else {
                    counter
                };
                phases[p] = Phase::TookEffect(effect);
            }
            Phase::TookEffect(effect) => {
                let op = current[p].take().expect("invoked");
                let retry = timed_out[p].take();
                if op.is_add {
                    let applied = effect == Some(1) || retry.is_some_and(|r| r.2);
                    let kind = match op.outcome {
                        0 => OpType::Fail,
                        1 => OpType::Info,
                        _ => OpType::Ok,
                    };
                    push(&mut ops, ids[p], kind, F::Add, json!(op.delta), None);
                    if kind == OpType::Info {
                        let invoke = ops
                            .iter()
                            .rev()
                            .find(|o| {
                                o.process == Process::Client(ids[p]) && o.kind == OpType::Invoke
                            })
                            .map(|o| o.index)
                            .expect("invoke recorded");
                        timed_out[p] = Some((invoke, op.delta, applied));
                        ids[p] = next_id;
                        next_id += 1;
                    }
                } else {
                    // A scan leaves an absent counter out.
                    let (f, value) = if op.applies_if_info {
                        let cells = effect.map_or(json!({}), |n| json!({ "x": n }));
                        (F::Scan, cells)
                    } else {
                        (F::Read, json!(effect))
                    };
                    push(&mut ops, ids[p], OpType::Ok, f, value, None);
                }
            }
        }
    }
    for op in ops.iter_mut().filter(|op| op.f == F::Scan) {
        op.key = Some("c".into());
    }
    ops
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ideal_counters_are_never_accused(steps in prop::collection::vec(step(), 0..80)) {
        let ops = ideal_history(&steps);
        let result = check(&ops);
        prop_assert_eq!(result.valid, Validity::Valid, "errors {:?} in {:#?}", result.errors, ops);
    }

    #[test]
    fn a_read_past_its_upper_bound_is_caught_by_exactly_that_much(
        steps in prop::collection::vec(step(), 1..80),
        extra in 1i64..5,
        which in any::<prop::sample::Index>(),
    ) {
        let mut ops = ideal_history(&steps);
        let reads: Vec<usize> = ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o.f == F::Read && o.kind == OpType::Ok)
            .map(|(i, _)| i)
            .collect();
        prop_assume!(!reads.is_empty());
        let i = reads[which.index(reads.len())];
        let mut bounds = checkers::counter::CounterChecker::keeping_reads();
        ops.iter().for_each(|op| bounds.observe(op));
        let upper = bounds.finish().read_bounds.iter().find(|r| r.index == i as u64).expect("read checked").upper;
        ops[i].value = json!(upper + extra);
        let result = check(&ops);
        prop_assert_eq!(result.valid, Validity::Invalid);
        prop_assert_eq!(result.overcount.reads, 1);
        prop_assert_eq!(result.overcount.max, extra);
    }
}

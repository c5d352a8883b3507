//! A minimal witness of a violation: the smallest set of a failing partition's ops found that
//! is itself not linearizable, while removing any one op from it makes it linearizable (delta
//! debugging, Zeller's ddmin, over the partition, within a budget).

use super::model::Model;
use super::partition::LinOp;
use super::search::{search_alone, Verdict};
use std::time::Instant;

/// The core found: positions in the partition's ops, whether it is known to be minimal, and
/// the state it fails from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Core<S> {
    /// The core's ops, as positions in the partition, in call order.
    pub ops: Vec<usize>,
    /// Whether every op was tried out and found needed; `false` when the budget ran out.
    pub minimal: bool,
    /// The state the core cannot be ordered from: the model's `any_state` when the
    /// violation does not depend on the initial value, else the initial state.
    pub from: S,
}

struct Reducer<'a, M: Model> {
    model: &'a M,
    from: M::State,
    ops: &'a [LinOp<M::Input>],
    deadline: Instant,
    memory_limit: usize,
    unsure: bool,
}

impl<M: Model> Reducer<'_, M> {
    /// Whether `subset` fails on its own; a search that gave up (the budget ran out) counts
    /// as passing, so the op stays, and the core is then not known to be minimal.
    fn fails(&mut self, subset: &[usize]) -> bool {
        let ops: Vec<LinOp<M::Input>> = subset.iter().map(|&i| self.ops[i].clone()).collect();
        let (from, deadline) = (self.from.clone(), Some(self.deadline));
        match search_alone(self.model, from, &ops, deadline, self.memory_limit) {
            Verdict::NotLinearizable { .. } => true,
            Verdict::Linearizable => false,
            Verdict::Unknown(_) | Verdict::NotSearched => {
                self.unsure = true;
                false
            }
        }
    }

    /// The shortest prefix (ops in call order) that fails on its own, by bisection; the
    /// whole partition is known to fail.
    fn shortest_failing_prefix(&mut self, all: &[usize]) -> Vec<usize> {
        let (mut lo, mut hi) = (1, all.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.fails(&all[..mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        all[..hi].to_vec()
    }

    /// ddmin: drops chunks while what is left still fails, down to single ops, until no
    /// single op can go; with whether that last pass over single ops was made.
    fn ddmin(&mut self, mut set: Vec<usize>) -> (Vec<usize>, bool) {
        let mut chunks = 2;
        if set.len() < 2 {
            return (set, true);
        }
        while Instant::now() < self.deadline {
            let size = set.len().div_ceil(chunks);
            let mut reduced = false;
            for start in (0..set.len()).step_by(size) {
                let rest: Vec<usize> = set[..start]
                    .iter()
                    .chain(&set[(start + size).min(set.len())..])
                    .copied()
                    .collect();
                if self.fails(&rest) {
                    set = rest;
                    chunks = (chunks - 1).max(2);
                    reduced = true;
                    break;
                }
            }
            if set.len() < 2 {
                return (set, true);
            }
            if !reduced {
                if size == 1 {
                    return (set, true);
                }
                chunks = (chunks * 2).min(set.len());
            }
        }
        (set, false)
    }
}

/// Finds a core of `ops`, a partition found not linearizable from `init`, before
/// `deadline`. When the model has a state that stands for any initial one and the partition
/// is not linearizable from it either, the core is one that fails from any initial value:
/// otherwise a lone read of a value nothing in the core writes would always do, which is
/// minimal but says nothing a person can check.
///
/// A subset of a partition is checked with the partition's own model, which stays exact on
/// it (`Model::for_partition` may only learn what holds for every subset).
pub fn core<M: Model>(
    model: &M,
    init: M::State,
    ops: &[LinOp<M::Input>],
    deadline: Instant,
    memory_limit: usize,
) -> Core<M::State> {
    let mut reducer = Reducer {
        model,
        from: init.clone(),
        ops,
        deadline,
        memory_limit,
        unsure: false,
    };
    let all: Vec<usize> = (0..ops.len()).collect();
    if let Some(any) = model.any_state() {
        reducer.from = any;
        if !reducer.fails(&all) {
            reducer.from = init;
        }
        reducer.unsure = false;
    }
    // An op the model refutes on its own (`Model::refute`) is often a core by itself.
    if let Some(i) = model.refute(&reducer.from, ops) {
        if reducer.fails(&[i]) {
            return Core {
                ops: vec![i],
                minimal: !reducer.unsure,
                from: reducer.from,
            };
        }
    }
    let prefix = reducer.shortest_failing_prefix(&all);
    let (ops, tried_every_op) = reducer.ddmin(prefix);
    Core {
        ops,
        minimal: tried_every_op && !reducer.unsure,
        from: reducer.from,
    }
}

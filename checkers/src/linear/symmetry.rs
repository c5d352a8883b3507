//! Symmetry reduction for the search: ops with equal inputs are interchangeable.

use super::events::Events;
use super::partition::LinOp;
use rustc_hash::FxHasher;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};

/// Ops with equal inputs are interchangeable: of those that could be linearized next, trying
/// the one that returns first is enough (swapping two such ops in any linearization keeps it
/// one). This is what keeps a hot counter's many identical `add 1`s from exploding.
pub struct Classes {
    /// By op: its class (32-bit, as a partition has fewer than 2^32 ops).
    class: Vec<u32>,
    best: Vec<usize>,
    stamp: Vec<u64>,
    generation: u64,
}

impl Classes {
    /// Groups the ops by equal input.
    pub fn new<I: Eq + Hash>(ops: &[LinOp<I>]) -> Self {
        let mut ids: HashMap<&I, u32, BuildHasherDefault<FxHasher>> = HashMap::default();
        let class: Vec<u32> = ops
            .iter()
            .map(|op| {
                let next = ids.len() as u32;
                *ids.entry(&op.input).or_insert(next)
            })
            .collect();
        Classes {
            best: vec![0; ids.len()],
            stamp: vec![0; ids.len()],
            class,
            generation: 0,
        }
    }

    /// Finds, for every class, the op that returns first among those callable now: the calls
    /// before the first return in the list.
    pub fn refresh<I>(&mut self, events: &Events, ops: &[LinOp<I>]) {
        self.generation += 1;
        let order = |i: usize| (ops[i].ret().unwrap_or(u64::MAX), i);
        let mut entry = events.first();
        while entry != events.tail && entry.is_multiple_of(2) {
            let (op, c) = (entry / 2, self.class[entry / 2] as usize);
            if self.stamp[c] != self.generation || order(op) < order(self.best[c]) {
                self.stamp[c] = self.generation;
                self.best[c] = op;
            }
            entry = events.after(entry);
        }
    }

    /// The class of `op`, numbered from 0.
    pub fn class_of(&self, op: usize) -> usize {
        self.class[op] as usize
    }

    /// Whether `op` is the one of its class worth trying now.
    pub fn worth_trying(&self, op: usize) -> bool {
        let c = self.class[op] as usize;
        self.stamp[c] != self.generation || self.best[c] == op
    }
}

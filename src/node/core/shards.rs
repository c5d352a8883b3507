//! A counter as Cassandra keeps it: one shard per node that led increments, merged by clock.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One node's part of a counter: its logical clock and its running count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Microsecond-based logical clock; the higher clock wins a merge.
    pub clock: u64,
    /// Everything this node's increments added up to.
    pub count: i64,
}

impl Shard {
    /// Whether `self` should replace `current` when both are versions of one node's shard:
    /// the higher clock wins; on equal clocks the larger count wins (as Cassandra's
    /// `CounterContext` does for an "invalid global counter shard").
    pub fn supersedes(&self, current: &Shard) -> bool {
        (self.clock, self.count) > (current.clock, current.count)
    }
}

/// A counter: the shards of the nodes that led its increments, by node id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    /// Shards by the id of the node that owns them.
    pub shards: BTreeMap<String, Shard>,
}

impl Counter {
    /// The counter's value: the sum of its shards, wrapping past `i64` as Cassandra's does.
    pub fn value(&self) -> i64 {
        self.shards
            .values()
            .fold(0, |sum, s| sum.wrapping_add(s.count))
    }

    /// Merges one node's shard; returns whether anything changed.
    pub fn merge_shard(&mut self, node: &str, shard: Shard) -> bool {
        match self.shards.get_mut(node) {
            Some(current) if !shard.supersedes(current) => false,
            Some(current) => {
                *current = shard;
                true
            }
            None => {
                self.shards.insert(node.to_string(), shard);
                true
            }
        }
    }

    /// Merges another version shard by shard; returns whether anything changed.
    pub fn merge(&mut self, other: &Counter) -> bool {
        let mut changed = false;
        for (node, shard) in &other.shards {
            changed |= self.merge_shard(node, *shard);
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(shards: &[(&str, u64, i64)]) -> Counter {
        let mut c = Counter::default();
        for (node, clock, count) in shards {
            c.merge_shard(
                node,
                Shard {
                    clock: *clock,
                    count: *count,
                },
            );
        }
        c
    }

    #[test]
    fn the_value_is_the_sum_of_the_shards() {
        assert_eq!(
            counter(&[("n1", 5, 3), ("n2", 9, -1), ("n3", 1, 10)]).value(),
            12
        );
    }

    #[test]
    fn the_higher_clock_wins_and_replaying_is_harmless() {
        let mut a = counter(&[("n1", 5, 3), ("n2", 9, 4)]);
        let b = counter(&[("n1", 7, 5), ("n2", 2, 1)]);
        assert!(a.merge(&b));
        assert_eq!(a, counter(&[("n1", 7, 5), ("n2", 9, 4)]));
        assert!(!a.merge(&b), "a second merge changes nothing");
        assert_eq!(a.value(), 9);
    }

    #[test]
    fn on_equal_clocks_the_larger_count_wins_whichever_side_merges() {
        let mut a = counter(&[("n1", 5, 3)]);
        let mut b = counter(&[("n1", 5, 4)]);
        let (a0, b0) = (a.clone(), b.clone());
        a.merge(&b0);
        b.merge(&a0);
        assert_eq!(a, b);
        assert_eq!(a.value(), 4);
    }
}

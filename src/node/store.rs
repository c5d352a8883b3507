//! A node's counters and the rules that change them, synchronous and deterministic: the
//! caller passes the time in, so the rules can be tested without a clock or a network.

use super::shards::{Counter, Shard};
use std::collections::HashMap;

/// Every counter a node holds, keyed by `partition/cell`.
#[derive(Debug)]
pub struct Store {
    node: String,
    counters: HashMap<String, Counter>,
}

impl Store {
    /// An empty store for the node `node`.
    pub fn new(node: &str) -> Self {
        Store {
            node: node.to_string(),
            counters: HashMap::new(),
        }
    }

    /// The id of the node that owns this store.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The leader's increment: reads its own shard, sets `clock = max(now, old clock + 1)`,
    /// adds `delta`, stores the result and returns the shard to replicate.
    pub fn lead_add(&mut self, key: &str, delta: i64, now_micros: u64) -> Shard {
        let counter = self.counters.entry(key.to_string()).or_default();
        let old = counter
            .shards
            .get(&self.node)
            .copied()
            .unwrap_or(Shard { clock: 0, count: 0 });
        let shard = Shard {
            clock: now_micros.max(old.clock + 1),
            count: old.count + delta,
        };
        counter.shards.insert(self.node.clone(), shard);
        shard
    }

    /// Applies a shard replicated from `owner`; returns whether it changed anything.
    pub fn apply_shard(&mut self, key: &str, owner: &str, shard: Shard) -> bool {
        self.counters
            .entry(key.to_string())
            .or_default()
            .merge_shard(owner, shard)
    }

    /// Merges a whole counter (a read repair); returns whether it changed anything.
    pub fn repair(&mut self, key: &str, counter: &Counter) -> bool {
        if counter.shards.is_empty() {
            return false;
        }
        self.counters
            .entry(key.to_string())
            .or_default()
            .merge(counter)
    }

    /// The counter as this node knows it; `None` when it has never heard of it.
    pub fn counter(&self, key: &str) -> Option<&Counter> {
        self.counters.get(key).filter(|c| !c.shards.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leader_clock_follows_time_and_never_goes_back() {
        let mut store = Store::new("n1");
        assert_eq!(
            store.lead_add("a/b", 2, 1_000),
            Shard {
                clock: 1_000,
                count: 2
            }
        );
        // The clock stepped back (skew, NTP): the shard's clock still moves forward.
        assert_eq!(
            store.lead_add("a/b", 3, 900),
            Shard {
                clock: 1_001,
                count: 5
            }
        );
        assert_eq!(
            store.lead_add("a/b", -1, 5_000),
            Shard {
                clock: 5_000,
                count: 4
            }
        );
        assert_eq!(store.counter("a/b").map(Counter::value), Some(4));
    }

    #[test]
    fn a_leader_adds_to_its_own_shard_only() {
        let mut store = Store::new("n2");
        store.apply_shard(
            "a/b",
            "n1",
            Shard {
                clock: 10,
                count: 7,
            },
        );
        store.lead_add("a/b", 1, 20);
        let counter = store.counter("a/b").expect("exists");
        assert_eq!(
            counter.shards["n1"],
            Shard {
                clock: 10,
                count: 7
            }
        );
        assert_eq!(
            counter.shards["n2"],
            Shard {
                clock: 20,
                count: 1
            }
        );
        assert_eq!(counter.value(), 8);
    }

    #[test]
    fn a_stale_replicated_shard_is_ignored() {
        let mut store = Store::new("n2");
        assert!(store.apply_shard(
            "a/b",
            "n1",
            Shard {
                clock: 10,
                count: 7
            }
        ));
        assert!(!store.apply_shard("a/b", "n1", Shard { clock: 9, count: 6 }));
        assert_eq!(store.counter("a/b").map(Counter::value), Some(7));
    }

    #[test]
    fn an_unknown_counter_is_absent() {
        let store = Store::new("n1");
        assert!(store.counter("a/b").is_none());
    }
}

//! The counter cache: the leader's own shard per counter, kept across writes and, as in
//! Cassandra, not invalidated by deletes, so a cached shard can outlive its tombstone.

use super::shards::Shard;
use std::collections::{HashMap, VecDeque};

/// A bounded map of counter key to this node's own shard; the oldest entry goes first.
#[derive(Debug, Default)]
pub struct CounterCache {
    entries: HashMap<String, Shard>,
    order: VecDeque<String>,
    capacity: usize,
}

impl CounterCache {
    /// A cache holding at most `capacity` counters (0: disabled).
    pub fn new(capacity: usize) -> Self {
        CounterCache {
            capacity,
            ..CounterCache::default()
        }
    }

    /// The cached shard of `key`.
    pub fn get(&self, key: &str) -> Option<Shard> {
        self.entries.get(key).copied()
    }

    /// Caches `shard` for `key`, evicting the oldest entry when full.
    pub fn put(&mut self, key: &str, shard: Shard) {
        if self.capacity == 0 {
            return;
        }
        if self.entries.insert(key.to_string(), shard).is_none() {
            self.order.push_back(key.to_string());
            while self.order.len() > self.capacity {
                if let Some(old) = self.order.pop_front() {
                    self.entries.remove(&old);
                }
            }
        }
    }

    /// Changes the capacity, evicting what no longer fits (0 empties and disables it).
    pub fn resize(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.order.len() > capacity {
            if let Some(old) = self.order.pop_front() {
                self.entries.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_entry_is_evicted_and_a_zero_capacity_caches_nothing() {
        let mut cache = CounterCache::new(2);
        for (i, key) in ["a", "b", "c"].iter().enumerate() {
            cache.put(
                key,
                Shard {
                    clock: i as u64,
                    count: 1,
                },
            );
        }
        assert!(cache.get("a").is_none());
        assert!(cache.get("b").is_some() && cache.get("c").is_some());
        let mut off = CounterCache::new(0);
        off.put("a", Shard { clock: 1, count: 1 });
        assert!(off.get("a").is_none());
    }
}

//! A node's counters and the rules that change them, synchronous and deterministic: the
//! caller passes the time in (µs on this node's clock), so every rule can be tested without a
//! clock or a network. Data lives in a memtable and immutable flushed segments; a read merges
//! them, applying every tombstone before merging any counter cell.

use super::cache::CounterCache;
use super::cells::{CounterCell, Partition, Row, Table, Tombstone};
use super::shards::{Counter, Shard};
use crate::api::{ClusterSettings, DeleteScope};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The store's knobs, with Cassandra's names in docs/nodes.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSettings {
    /// `gc_grace_seconds`, in µs: how long a tombstone must live before compaction may purge it.
    pub gc_grace: u64,
    /// Counter cache capacity in counters; 0 disables it.
    pub counter_cache: usize,
    /// `tombstone_warn_threshold`.
    pub tombstone_warn: u64,
    /// `tombstone_failure_threshold`.
    pub tombstone_fail: u64,
    /// `commitlog_total_space`, in bytes: a write that takes the commit log past it flushes
    /// the memtable, which empties the log.
    pub commitlog_total_space: u64,
}

impl StoreSettings {
    /// The store's part of the cluster's settings.
    pub fn of(settings: &ClusterSettings) -> Self {
        StoreSettings {
            gc_grace: (settings.gc_grace_s * 1e6) as u64,
            counter_cache: if settings.counter_cache {
                settings.counter_cache_capacity
            } else {
                0
            },
            tombstone_warn: settings.tombstone_warn_threshold,
            tombstone_fail: settings.tombstone_failure_threshold,
            commitlog_total_space: settings.commitlog_total_space_mb.saturating_mul(1 << 20),
        }
    }
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings::of(&ClusterSettings::default())
    }
}

/// A read of one replica: its merged view of a partition and the tombstones it scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    /// The partition as this replica sees it, purgeable tombstones left out.
    pub partition: Partition,
    /// Tombstones the read went over (dead cells and row deletions without live data; not
    /// partition deletions, not purgeable ones).
    pub tombstones: u64,
}

/// The fragment a delete of `scope` writes, stamped `now` by the coordinator.
pub fn tombstone(scope: DeleteScope, partition: &str, cell: Option<&str>, now: u64) -> Table {
    let t = Some(Tombstone {
        at: now,
        local: now,
    });
    let mut p = Partition::default();
    match (scope, cell) {
        (DeleteScope::Partition, _) | (_, None) => p.deletion = t,
        (DeleteScope::Row, Some(c)) => {
            p.rows.insert(
                c.to_string(),
                Row {
                    row_deletion: t,
                    ..Row::default()
                },
            );
        }
        (DeleteScope::Column, Some(c)) => {
            p.rows.insert(
                c.to_string(),
                Row {
                    cell_deletion: t,
                    ..Row::default()
                },
            );
        }
    }
    Table::single(partition, p)
}

/// Merges versions of one partition: every tombstone first, then only the counter cells no
/// tombstone shadows, so an old cell never rides on a newer one past a deletion.
pub fn merge_versions<'a>(versions: impl Iterator<Item = &'a Partition> + Clone) -> Partition {
    let mut merged = Partition::default();
    for version in versions.clone() {
        let mut tombstones = version.clone();
        for row in tombstones.rows.values_mut() {
            row.counter = None;
        }
        merged.merge(&tombstones);
    }
    for version in versions {
        let mut live = Partition::default();
        for (cell, row) in &version.rows {
            let Some(counter) = &row.counter else {
                continue;
            };
            let kept = merged.rows.get(cell).is_none_or(|r| {
                r.cell_deletion.is_none()
                    && Tombstone::newest(merged.deletion, r.row_deletion)
                        .is_none_or(|t| counter.timestamp > t.at)
            }) && merged.deletion.is_none_or(|t| counter.timestamp > t.at);
            if kept {
                live.rows.insert(
                    cell.clone(),
                    Row {
                        counter: Some(counter.clone()),
                        ..Row::default()
                    },
                );
            }
        }
        merged.merge(&live);
    }
    merged
}

/// Every counter one node holds.
#[derive(Debug)]
pub struct Store {
    node: String,
    settings: StoreSettings,
    memtable: Table,
    segments: Vec<Table>,
    cache: CounterCache,
}

impl Store {
    /// An empty store for the node `node`.
    pub fn new(node: &str, settings: StoreSettings) -> Self {
        Store {
            node: node.to_string(),
            cache: CounterCache::new(settings.counter_cache),
            settings,
            memtable: Table::default(),
            segments: Vec::new(),
        }
    }

    /// A store recovered from flushed segments and a replayed commit log.
    pub fn recover(
        node: &str,
        settings: StoreSettings,
        segments: Vec<Table>,
        log: &[Table],
    ) -> Self {
        let mut store = Store::new(node, settings);
        store.segments = segments;
        for fragment in log {
            store.apply(fragment);
        }
        store
    }

    /// The current settings.
    pub fn settings(&self) -> &StoreSettings {
        &self.settings
    }

    /// Changes the settings at run time.
    pub fn set_settings(&mut self, settings: StoreSettings) {
        self.cache.resize(settings.counter_cache);
        self.settings = settings;
    }

    /// The leader's increment: [`Store::lead_fragment`], applied at once.
    #[cfg(test)]
    pub fn lead_add(
        &mut self,
        partition: &str,
        cell: &str,
        delta: i64,
        now: u64,
        timestamp: u64,
    ) -> Table {
        let fragment = self.lead_fragment(partition, cell, delta, now, timestamp);
        self.lead_apply(&fragment);
        fragment
    }

    /// The leader's increment, not yet applied: reads its own shard (from the counter cache
    /// when it has it, else from the store with tombstones applied), sets
    /// `clock = max(now, old clock + 1)` on its own clock, adds `delta`, and writes the cell
    /// with the coordinator's `timestamp` (which decides it against row and partition
    /// deletions): the fragment to log, apply and replicate.
    pub fn lead_fragment(
        &self,
        partition: &str,
        cell: &str,
        delta: i64,
        now: u64,
        timestamp: u64,
    ) -> Table {
        let key = format!("{partition}/{cell}");
        let own = self
            .cache
            .get(&key)
            .or_else(|| {
                let view = self.view(partition);
                view.rows
                    .get(cell)?
                    .counter
                    .as_ref()?
                    .counter
                    .shards
                    .get(&self.node)
                    .copied()
            })
            .unwrap_or(Shard { clock: 0, count: 0 });
        let shard = Shard {
            clock: now.max(own.clock + 1),
            count: own.count.wrapping_add(delta),
        };
        let mut counter = Counter::default();
        counter.merge_shard(&self.node, shard);
        let row = Row {
            counter: Some(CounterCell { counter, timestamp }),
            ..Row::default()
        };
        let mut p = Partition::default();
        p.rows.insert(cell.to_string(), row);
        Table::single(partition, p)
    }

    /// Applies a fragment of [`Store::lead_fragment`] and puts its shard in the counter cache.
    pub fn lead_apply(&mut self, fragment: &Table) {
        for (partition, p) in &fragment.partitions {
            for (cell, row) in &p.rows {
                let shard = row
                    .counter
                    .as_ref()
                    .and_then(|c| c.counter.shards.get(&self.node));
                if let Some(&shard) = shard {
                    self.cache.put(&format!("{partition}/{cell}"), shard);
                }
            }
        }
        self.apply(fragment);
    }

    /// Applies a replicated write, a delete or a repair to the memtable.
    pub fn apply(&mut self, fragment: &Table) {
        self.memtable.merge(fragment);
    }

    /// This node's merged view of a partition, every tombstone included.
    fn view(&self, partition: &str) -> Partition {
        let versions: Vec<&Partition> = std::iter::once(&self.memtable)
            .chain(&self.segments)
            .filter_map(|t| t.partitions.get(partition))
            .collect();
        merge_versions(versions.iter().copied())
    }

    /// Reads a partition (or one cell of it) at `now`, counting the tombstones it goes over.
    pub fn read(&self, partition: &str, cell: Option<&str>, now: u64) -> Scanned {
        let mut view = self.view(partition);
        if let Some(cell) = cell {
            view.rows.retain(|c, _| c == cell);
        }
        let gc = self.settings.gc_grace;
        let live = |t: &Option<Tombstone>| t.filter(|t| !t.purgeable(now, gc));
        view.deletion = live(&view.deletion);
        let mut tombstones = 0;
        for row in view.rows.values_mut() {
            row.row_deletion = live(&row.row_deletion);
            row.cell_deletion = live(&row.cell_deletion);
            let dead = row.cell_deletion.is_some()
                || (row.row_deletion.is_some() && row.counter.is_none());
            tombstones += u64::from(dead);
        }
        view.rows.retain(|_, row| !row.is_empty());
        Scanned {
            partition: view,
            tombstones,
        }
    }

    /// Moves the memtable into a new immutable segment.
    pub fn flush(&mut self) -> Option<Table> {
        if self.memtable.partitions.is_empty() {
            return None;
        }
        let segment = std::mem::take(&mut self.memtable);
        self.segments.push(segment.clone());
        Some(segment)
    }

    /// Compacts every segment into one at `now`: shadowed data goes, and a tombstone is
    /// purged once it is older than gc_grace and no older data for its key lives outside the
    /// compaction (in the memtable). Returns the new segment and how many tombstones went.
    pub fn compact(&mut self, now: u64) -> (Table, usize) {
        let keys: Vec<String> = self
            .segments
            .iter()
            .flat_map(|s| s.partitions.keys().cloned())
            .collect();
        let mut compacted = Table::default();
        let mut purged = 0;
        for key in keys {
            if compacted.partitions.contains_key(&key) {
                continue;
            }
            let versions: Vec<&Partition> = self
                .segments
                .iter()
                .filter_map(|t| t.partitions.get(&key))
                .collect();
            let mut merged = merge_versions(versions.iter().copied());
            purged += self.purge(&key, &mut merged, now);
            if !merged.is_empty() {
                compacted.partitions.insert(key, merged);
            }
        }
        self.segments = vec![compacted.clone()];
        (compacted, purged)
    }

    /// Drops the purgeable tombstones of one compacted partition; returns how many.
    fn purge(&self, key: &str, merged: &mut Partition, now: u64) -> usize {
        let gc = self.settings.gc_grace;
        let outside = self.memtable.partitions.get(key);
        let older_outside = |cell: Option<&str>, at: u64, any_age: bool| {
            outside.is_some_and(|p| {
                p.rows.iter().any(|(c, row)| {
                    cell.is_none_or(|cell| cell == c)
                        && row
                            .counter
                            .as_ref()
                            .is_some_and(|k| any_age || k.timestamp <= at)
                })
            })
        };
        let mut purged = 0;
        if merged
            .deletion
            .is_some_and(|t| t.purgeable(now, gc) && !older_outside(None, t.at, false))
        {
            merged.deletion = None;
            purged += 1;
        }
        for (cell, row) in merged.rows.iter_mut() {
            if row
                .row_deletion
                .is_some_and(|t| t.purgeable(now, gc) && !older_outside(Some(cell), t.at, false))
            {
                row.row_deletion = None;
                purged += 1;
            }
            if row
                .cell_deletion
                .is_some_and(|t| t.purgeable(now, gc) && !older_outside(Some(cell), t.at, true))
            {
                row.cell_deletion = None;
                purged += 1;
            }
        }
        merged.rows.retain(|_, row| !row.is_empty());
        purged
    }

    /// Everything this node holds, merged, purgeable tombstones left out: what repair sends.
    pub fn dump(&self, now: u64) -> Table {
        let keys: std::collections::BTreeSet<&String> = std::iter::once(&self.memtable)
            .chain(&self.segments)
            .flat_map(|t| t.partitions.keys())
            .collect();
        let mut table = Table::default();
        for key in keys {
            let scanned = self.read(key, None, now);
            if !scanned.partition.is_empty() {
                table.partitions.insert(key.clone(), scanned.partition);
            }
        }
        table
    }

    /// The node's true state per counter, for tests and the checkers' oracle.
    pub fn oracle(&self, now: u64) -> serde_json::Value {
        let mut counters = BTreeMap::new();
        for (partition, data) in &self.dump(now).partitions {
            for (cell, row) in &data.rows {
                let key = format!("{partition}/{cell}");
                counters.insert(
                    key.clone(),
                    serde_json::json!({
                        "value": row.counter.as_ref().map(|c| c.counter.value()),
                        "shards": row.counter.as_ref().map(|c| &c.counter.shards),
                        "timestamp": row.counter.as_ref().map(|c| c.timestamp),
                        "partition_deletion": data.deletion,
                        "row_deletion": row.row_deletion,
                        "cell_deletion": row.cell_deletion,
                        "cache": self.cache.get(&key),
                    }),
                );
            }
        }
        serde_json::json!({
            "node": self.node,
            "counters": counters,
            "memtable_partitions": self.memtable.partitions.len(),
            "segments": self.segments.len(),
        })
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;

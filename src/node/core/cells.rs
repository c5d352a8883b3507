//! What a table holds for counters: live counter cells and the three kinds of tombstones CQL
//! can write, with Cassandra's rules for which shadows which.
//!
//! - A partition or row tombstone shadows a counter cell whose timestamp is not newer than
//!   the tombstone's (so a deleting coordinator whose clock is ahead hides later increments).
//! - A cell (column) tombstone beats a counter cell whatever the timestamps
//!   (CASSANDRA-7346): increments after it stay invisible while it lives.
//!
//! Applying anything to a table drops what it shadows *in that table*, as Cassandra's merge
//! does; other tables keep their data until a read merges them or compaction purges them.

use super::shards::Counter;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A deletion: when it was marked (the coordinator's clock) and when it was written locally
/// (gc_grace counts from there), both in µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tombstone {
    /// Cassandra's `markedForDeleteAt`: data stamped at or before it is shadowed.
    pub at: u64,
    /// Cassandra's `localDeletionTime`: the tombstone may be purged `gc_grace` after it.
    pub local: u64,
}

impl Tombstone {
    /// Whether compaction may drop it at `now`.
    pub fn purgeable(&self, now: u64, gc_grace: u64) -> bool {
        now >= self.local.saturating_add(gc_grace)
    }

    /// The newer of two optional tombstones.
    pub fn newest(a: Option<Tombstone>, b: Option<Tombstone>) -> Option<Tombstone> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if (y.at, y.local) > (x.at, x.local) {
                y
            } else {
                x
            }),
            (x, None) => x,
            (None, y) => y,
        }
    }
}

/// A counter cell: shards, stamped with the newest write's timestamp.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterCell {
    /// The shards.
    pub counter: Counter,
    /// The newest write's timestamp, µs.
    pub timestamp: u64,
}

impl CounterCell {
    /// Merges another cell: shard by shard, newest timestamp.
    pub fn merge(&mut self, other: &CounterCell) {
        self.counter.merge(&other.counter);
        self.timestamp = self.timestamp.max(other.timestamp);
    }
}

/// One row: a counter cell and the tombstones that may shadow it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// The live counter cell, if any survives in this table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterCell>,
    /// A row deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_deletion: Option<Tombstone>,
    /// A cell (column) deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_deletion: Option<Tombstone>,
}

impl Row {
    /// Whether nothing is left in it.
    pub fn is_empty(&self) -> bool {
        self.counter.is_none() && self.row_deletion.is_none() && self.cell_deletion.is_none()
    }

    /// Drops the counter cell if a tombstone here or the partition's shadows it.
    fn shadow(&mut self, partition_deletion: Option<Tombstone>) {
        let shadowing = Tombstone::newest(partition_deletion, self.row_deletion).map(|t| t.at);
        let shadowed = self.counter.as_ref().is_some_and(|cell| {
            self.cell_deletion.is_some() || shadowing.is_some_and(|at| cell.timestamp <= at)
        });
        if shadowed {
            self.counter = None;
        }
    }

    /// Merges another row's data.
    fn merge(&mut self, other: &Row) {
        if let Some(cell) = &other.counter {
            self.counter
                .get_or_insert_with(CounterCell::default)
                .merge(cell);
        }
        self.row_deletion = Tombstone::newest(self.row_deletion, other.row_deletion);
        self.cell_deletion = Tombstone::newest(self.cell_deletion, other.cell_deletion);
    }
}

/// One partition: its deletion and its rows by cell name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// A partition deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion: Option<Tombstone>,
    /// Rows by cell name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rows: BTreeMap<String, Row>,
}

impl Partition {
    /// Whether nothing is left in it.
    pub fn is_empty(&self) -> bool {
        self.deletion.is_none() && self.rows.is_empty()
    }

    /// Merges another partition's data and drops what is now shadowed.
    pub fn merge(&mut self, other: &Partition) {
        self.deletion = Tombstone::newest(self.deletion, other.deletion);
        for (cell, row) in &other.rows {
            self.rows.entry(cell.clone()).or_default().merge(row);
        }
        let deletion = self.deletion;
        for row in self.rows.values_mut() {
            row.shadow(deletion);
        }
        self.rows.retain(|_, row| !row.is_empty());
    }
}

/// A memtable or a flushed segment: partitions by key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// Partitions by partition key.
    pub partitions: BTreeMap<String, Partition>,
}

impl Table {
    /// Merges data into the table, dropping what it shadows here.
    pub fn merge(&mut self, other: &Table) {
        for (key, partition) in &other.partitions {
            self.merge_partition(key, partition);
        }
    }

    /// Merges one partition's data.
    pub fn merge_partition(&mut self, key: &str, partition: &Partition) {
        let mine = self.partitions.entry(key.to_string()).or_default();
        mine.merge(partition);
        if mine.is_empty() {
            self.partitions.remove(key);
        }
    }

    /// A table holding one partition.
    pub fn single(key: &str, partition: Partition) -> Table {
        let mut table = Table::default();
        table.partitions.insert(key.to_string(), partition);
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::core::shards::Shard;

    fn cell(node: &str, clock: u64, count: i64, timestamp: u64) -> Row {
        let mut counter = Counter::default();
        counter.merge_shard(node, Shard { clock, count });
        Row {
            counter: Some(CounterCell { counter, timestamp }),
            ..Row::default()
        }
    }

    fn tomb(at: u64) -> Option<Tombstone> {
        Some(Tombstone { at, local: at })
    }

    fn partition(rows: &[(&str, Row)], deletion: Option<Tombstone>) -> Partition {
        Partition {
            deletion,
            rows: rows
                .iter()
                .map(|(c, r)| (c.to_string(), r.clone()))
                .collect(),
        }
    }

    #[test]
    fn a_row_deletion_shadows_cells_not_newer_than_it() {
        let mut p = partition(&[("a", cell("n1", 5, 6, 100))], None);
        p.merge(&partition(
            &[(
                "a",
                Row {
                    row_deletion: tomb(100),
                    ..Row::default()
                },
            )],
            None,
        ));
        assert!(
            p.rows["a"].counter.is_none(),
            "a cell at the deletion's timestamp is shadowed"
        );
        p.merge(&partition(&[("a", cell("n1", 200, 6, 200))], None));
        assert_eq!(
            p.rows["a"].counter.as_ref().map(|c| c.counter.value()),
            Some(6)
        );
    }

    #[test]
    fn a_partition_deletion_from_a_clock_ahead_hides_later_increments() {
        // The deleter's clock is at 1_000_000 while the incrementer's is at 500.
        let mut p = partition(&[], tomb(1_000_000));
        p.merge(&partition(&[("a", cell("n2", 500, 1, 500))], None));
        assert!(p.rows.get("a").is_none_or(|r| r.counter.is_none()));
    }

    #[test]
    fn a_cell_deletion_beats_counter_cells_whatever_their_timestamps() {
        let mut p = partition(
            &[(
                "a",
                Row {
                    cell_deletion: tomb(10),
                    ..Row::default()
                },
            )],
            None,
        );
        p.merge(&partition(&[("a", cell("n1", 99, 4, 99))], None));
        assert!(p.rows["a"].counter.is_none());
        assert!(p.rows["a"].cell_deletion.is_some());
    }

    #[test]
    fn tombstones_purge_after_gc_grace_from_their_local_time() {
        let t = Tombstone {
            at: 10,
            local: 1_000,
        };
        assert!(!t.purgeable(1_999, 1_000));
        assert!(t.purgeable(2_000, 1_000));
    }
}

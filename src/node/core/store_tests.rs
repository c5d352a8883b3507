//! The store's rules, one mechanism per test, with the time passed in.

use super::*;

const S: u64 = 1_000_000;

fn store(node: &str, cache: usize, gc_grace_s: u64) -> Store {
    Store::new(
        node,
        StoreSettings {
            gc_grace: gc_grace_s * S,
            counter_cache: cache,
            tombstone_warn: 2,
            tombstone_fail: 4,
            ..StoreSettings::default()
        },
    )
}

fn value(store: &Store, partition: &str, cell: &str, now: u64) -> Option<i64> {
    let scanned = store.read(partition, Some(cell), now);
    scanned
        .partition
        .rows
        .get(cell)?
        .counter
        .as_ref()
        .map(|c| c.counter.value())
}

#[test]
fn the_counter_cache_brings_a_deleted_count_back() {
    // Cassandra 3.11, RF 1: +6, delete the row, +6 reads 12 with the cache (6 without).
    for (cache, expected) in [(100, 12), (0, 6)] {
        let mut s = store("n1", cache, 10);
        s.lead_add("views", "home", 6, 10, 10);
        s.apply(&tombstone(DeleteScope::Row, "views", Some("home"), 20));
        assert_eq!(value(&s, "views", "home", 25), None);
        s.lead_add("views", "home", 6, 30, 30);
        assert_eq!(
            value(&s, "views", "home", 35),
            Some(expected),
            "cache {cache}"
        );
    }
}

#[test]
fn increments_after_a_column_delete_are_invisible_while_it_lives() {
    let mut s = store("n1", 0, 10);
    s.lead_add("views", "home", 5, 10, 10);
    s.apply(&tombstone(DeleteScope::Column, "views", Some("home"), 20));
    s.lead_add("views", "home", 3, 30, 30);
    assert_eq!(value(&s, "views", "home", 40), None);
    // Past gc_grace, flushed and compacted, the tombstone goes; new increments show again.
    s.flush();
    let (_, purged) = s.compact(20 + 10 * S);
    assert_eq!(purged, 1);
    s.lead_add("views", "home", 2, 20 + 10 * S + 1, 20 + 10 * S + 1);
    assert_eq!(value(&s, "views", "home", 20 + 10 * S + 2), Some(2));
}

#[test]
fn a_row_delete_from_a_clock_ahead_hides_later_increments_until_they_pass_it() {
    let mut s = store("n1", 0, 10);
    s.lead_add("views", "home", 5, 100, 100);
    // The deleting coordinator's clock is 1000 µs ahead.
    s.apply(&tombstone(DeleteScope::Row, "views", Some("home"), 1_100));
    s.lead_add("views", "home", 1, 200, 200);
    assert_eq!(
        value(&s, "views", "home", 300),
        None,
        "stamped 200 <= 1100: lost"
    );
    s.lead_add("views", "home", 1, 1_200, 1_200);
    assert_eq!(
        value(&s, "views", "home", 1_300),
        Some(1),
        "stamped after the delete"
    );
}

#[test]
fn a_partition_delete_shadows_every_cell_of_it() {
    let mut s = store("n1", 0, 10);
    s.lead_add("q", "a", 1, 10, 10);
    s.lead_add("q", "b", 2, 10, 10);
    s.apply(&tombstone(DeleteScope::Partition, "q", None, 20));
    assert!(s.read("q", None, 30).partition.rows.is_empty());
}

#[test]
fn a_replica_that_missed_a_delete_resurrects_the_counter_after_gc_grace() {
    // n1 and n2 both hold +5; n2 (only) gets the delete; n2 flushes and compacts after
    // gc_grace, which purges the tombstone and the shadowed count; then repair sends n1's
    // data to n2: the counter is back.
    let mut n1 = store("n1", 0, 10);
    let mut n2 = store("n2", 0, 10);
    let write = n1.lead_add("views", "home", 5, 10, 10);
    n2.apply(&write);
    n2.apply(&tombstone(DeleteScope::Row, "views", Some("home"), 20));
    n2.flush();
    let (_, purged) = n2.compact(20 + 10 * S);
    assert_eq!(purged, 1);
    n2.apply(&n1.dump(20 + 10 * S));
    assert_eq!(value(&n2, "views", "home", 21 + 10 * S), Some(5));
}

#[test]
fn repair_inside_gc_grace_spreads_the_delete_instead() {
    let mut n1 = store("n1", 0, 10);
    let mut n2 = store("n2", 0, 10);
    let write = n1.lead_add("views", "home", 5, 10, 10);
    n2.apply(&write);
    n2.apply(&tombstone(DeleteScope::Row, "views", Some("home"), 20));
    n2.flush();
    let now = 20 + 5 * S;
    assert_eq!(n2.compact(now).1, 0, "inside gc_grace nothing is purged");
    n1.apply(&n2.dump(now));
    n2.apply(&n1.dump(now));
    assert_eq!(value(&n1, "views", "home", now), None);
    assert_eq!(value(&n2, "views", "home", now), None);
}

#[test]
fn a_tombstone_is_not_purged_while_older_data_lives_outside_the_compaction() {
    let mut s = store("n1", 0, 10);
    s.apply(&tombstone(DeleteScope::Row, "views", Some("home"), 100));
    s.flush();
    // Older data (stamped 50) arrives late into the memtable, outside the compaction.
    let mut late = Store::new("n2", StoreSettings::default());
    s.apply(&late.lead_add("views", "home", 7, 50, 50));
    assert_eq!(s.compact(100 + 10 * S).1, 0);
    assert_eq!(
        value(&s, "views", "home", 101 + 10 * S),
        None,
        "still shadowed"
    );
}

#[test]
fn reads_and_scans_count_tombstones_but_not_purgeable_ones() {
    // The queue anti-pattern: cells created and deleted in one partition.
    let mut s = store("n1", 0, 10);
    for i in 0..5 {
        let cell = format!("item{i}");
        s.lead_add("queue", &cell, 1, 10 + i, 10 + i);
        s.apply(&tombstone(DeleteScope::Row, "queue", Some(&cell), 20 + i));
    }
    s.lead_add("queue", "item9", 1, 30, 30);
    let scan = s.read("queue", None, 40);
    assert_eq!(scan.tombstones, 5);
    assert_eq!(
        scan.partition
            .rows
            .values()
            .filter(|r| r.counter.is_some())
            .count(),
        1
    );
    assert_eq!(s.read("queue", Some("item0"), 40).tombstones, 1);
    assert_eq!(
        s.read("queue", None, 30 + 10 * S).tombstones,
        0,
        "all purgeable by then"
    );
}

#[test]
fn a_store_recovers_from_its_segments_and_log() {
    let mut s = store("n1", 0, 10);
    s.lead_add("views", "home", 5, 10, 10);
    let segment = s.flush().expect("something to flush");
    let write = s.lead_add("views", "home", 2, 20, 20);
    let recovered = Store::recover("n1", s.settings().clone(), vec![segment], &[write]);
    assert_eq!(value(&recovered, "views", "home", 30), Some(7));
}

#[test]
fn merging_versions_never_lets_an_old_cell_ride_past_a_delete() {
    // Version A holds an old cell (ts 10), B the row delete (ts 20), C a new cell (ts 30).
    // In any order the merge holds only C's shard.
    let mut a = store("n1", 0, 10);
    let old = a.lead_add("p", "c", 5, 10, 10);
    let mut c = store("n2", 0, 10);
    let new = c.lead_add("p", "c", 1, 30, 30);
    let del = tombstone(DeleteScope::Row, "p", Some("c"), 20);
    let versions = [
        &new.partitions["p"],
        &old.partitions["p"],
        &del.partitions["p"],
    ];
    let merged = merge_versions(versions.iter().copied());
    assert_eq!(
        merged.rows["c"].counter.as_ref().map(|k| k.counter.value()),
        Some(1)
    );
}

#[test]
fn the_leaders_clock_moves_to_old_plus_one_when_its_clock_went_back() {
    let mut s = store("n1", 0, 10);
    s.lead_add("views", "home", 1, 1_000, 1_000);
    // The clock went back to 400: the shard's clock is old + 1, not 400.
    let write = s.lead_add("views", "home", 1, 400, 400);
    let cell = write.partitions["views"].rows["home"].counter.clone();
    let shard = cell.as_ref().map(|c| c.counter.shards["n1"]);
    assert_eq!(
        shard,
        Some(Shard {
            clock: 1_001,
            count: 2
        })
    );
    assert_eq!(value(&s, "views", "home", 2_000), Some(2));
}

#[test]
fn the_coordinators_timestamp_not_the_leaders_clock_decides_against_a_delete() {
    let mut s = store("n1", 0, 10);
    s.apply(&tombstone(DeleteScope::Row, "views", Some("home"), 500));
    // The leader's clock (900) is past the delete, the coordinator's stamp (300) is not.
    s.lead_add("views", "home", 5, 900, 300);
    assert_eq!(value(&s, "views", "home", 1_000), None, "shadowed");
    s.lead_add("views", "home", 5, 950, 600);
    assert!(
        value(&s, "views", "home", 1_000).is_some(),
        "a later stamp survives"
    );
}

#[test]
fn a_partition_deletion_is_not_counted_as_a_tombstone() {
    let mut s = store("n1", 0, 10);
    s.lead_add("queue", "a", 1, 10, 10);
    s.apply(&tombstone(DeleteScope::Partition, "queue", None, 20));
    let scan = s.read("queue", None, 30);
    assert_eq!(
        scan.tombstones, 0,
        "Cassandra does not count partition deletions"
    );
    assert!(scan.partition.deletion.is_some() && scan.partition.rows.is_empty());
    s.apply(&tombstone(DeleteScope::Row, "queue", Some("b"), 25));
    assert_eq!(s.read("queue", None, 30).tombstones, 1, "a row deletion is");
}

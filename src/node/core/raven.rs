//! A counter store as one RavenDB node keeps it, synchronous and deterministic: every node owns
//! one portion of a counter, a delete leaves a version-vector marker, replication merges states.
//!
//! The merge follows RavenDB's `CountersStorage`, including its one departure from a CRDT: a
//! live counter that beats a concurrent deletion keeps nothing of the deletion, so a merge of
//! three states can depend on their order (see the tests). Merging is commutative and
//! idempotent; re-replicating every changed state until nothing changes converges.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One node's slot of a counter: its running value and the etag of its last change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Portion {
    /// Everything this node's increments added up to since the counter was (re-)created here.
    pub value: i64,
    /// The owning node's etag of the change that produced this value.
    pub etag: u64,
}

impl Portion {
    /// The one of two versions of a node's slot that replication keeps: the higher etag, then
    /// (equal etags) the larger value, so that either order gives the same answer.
    fn newer(self, other: Portion) -> Portion {
        if (other.etag, other.value) > (self.etag, self.value) {
            other
        } else {
            self
        }
    }
}

/// A counter as one RavenDB node holds it: live portions per node id, or a deletion marker
/// carrying the version vector (node id -> etag) of what it deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum RavenCounter {
    /// A counter that exists: one portion per node id that incremented it.
    Live {
        /// The portions by the id of the node that owns them.
        portions: BTreeMap<String, Portion>,
    },
    /// A deleted counter: per node id, the highest etag the deletion had seen.
    Deleted {
        /// The deletion's version vector.
        vector: BTreeMap<String, u64>,
    },
}

impl RavenCounter {
    /// The value a read returns: the sum of the portions, `None` when deleted.
    pub fn value(&self) -> Option<i64> {
        match self {
            RavenCounter::Live { portions } => Some(
                portions
                    .values()
                    .fold(0, |sum, p| sum.wrapping_add(p.value)),
            ),
            RavenCounter::Deleted { .. } => None,
        }
    }

    /// The etag this state holds for `node` (0 when it holds none).
    fn version(&self, node: &str) -> u64 {
        match self {
            RavenCounter::Live { portions } => portions.get(node).map_or(0, |p| p.etag),
            RavenCounter::Deleted { vector } => vector.get(node).copied().unwrap_or(0),
        }
    }

    /// Every etag this state holds, by node id: what a deletion of it has seen.
    fn versions(&self) -> BTreeMap<String, u64> {
        match self {
            RavenCounter::Live { portions } => portions
                .iter()
                .map(|(id, p)| (id.clone(), p.etag))
                .collect(),
            RavenCounter::Deleted { vector } => vector.clone(),
        }
    }

    /// The merge of two states; the result is the same whichever of them is the local one.
    fn merged(&self, other: &RavenCounter) -> RavenCounter {
        match (self, other) {
            (RavenCounter::Live { portions: a }, RavenCounter::Live { portions: b }) => {
                RavenCounter::Live {
                    portions: newest_portions(a, b),
                }
            }
            (RavenCounter::Deleted { vector: a }, RavenCounter::Deleted { vector: b }) => {
                RavenCounter::Deleted {
                    vector: highest_etags(a, b),
                }
            }
            (RavenCounter::Live { portions }, deletion @ RavenCounter::Deleted { vector })
            | (deletion @ RavenCounter::Deleted { vector }, RavenCounter::Live { portions }) => {
                if saw_everything(vector, portions) {
                    deletion.clone()
                } else {
                    RavenCounter::Live {
                        portions: portions.clone(),
                    }
                }
            }
        }
    }
}

/// Live vs live: per node id, the newer portion.
fn newest_portions(
    a: &BTreeMap<String, Portion>,
    b: &BTreeMap<String, Portion>,
) -> BTreeMap<String, Portion> {
    let mut merged = a.clone();
    for (id, portion) in b {
        let kept = merged.get(id).map_or(*portion, |mine| mine.newer(*portion));
        merged.insert(id.clone(), kept);
    }
    merged
}

/// Deleted vs deleted: the vectors merged entry-wise by max.
fn highest_etags(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut merged = a.clone();
    for (id, etag) in b {
        let kept = merged.get(id).map_or(*etag, |mine| (*mine).max(*etag));
        merged.insert(id.clone(), kept);
    }
    merged
}

/// Whether a deletion with `vector` is strictly newer than a counter with `portions`: it had
/// seen every portion's etag (a missing entry counts as 0).
fn saw_everything(vector: &BTreeMap<String, u64>, portions: &BTreeMap<String, Portion>) -> bool {
    portions
        .iter()
        .all(|(id, p)| p.etag <= vector.get(id).copied().unwrap_or(0))
}

/// Every counter one node holds, the node's own etag sequence, and the order in which its
/// counters last changed (what replication sends, oldest change first).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RavenStore {
    node: String,
    /// The last etag this node issued; every etag it has seen for its own id is at most this.
    last_etag: u64,
    counters: BTreeMap<String, RavenCounter>,
    /// The number of the last local change (an increment, a delete or a merge that changed
    /// something); RavenDB's local document etag.
    last_change: u64,
    /// Each key's last change, by change number.
    changes: BTreeMap<u64, String>,
    /// Each key's last change number.
    changed: BTreeMap<String, u64>,
}

/// One changed counter, as replication sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The local change number.
    pub number: u64,
    /// `partition/cell`.
    pub key: String,
    /// The counter's whole state.
    pub counter: RavenCounter,
}

impl RavenStore {
    /// An empty store for node `node`.
    pub fn new(node: &str) -> Self {
        RavenStore {
            node: node.to_string(),
            last_etag: 0,
            counters: BTreeMap::new(),
            last_change: 0,
            changes: BTreeMap::new(),
            changed: BTreeMap::new(),
        }
    }

    /// An increment: changes only this node's portion (value += delta, etag = next etag of this
    /// node); a deleted (or missing) counter is re-created holding only the local portion
    /// (value = delta). Returns the counter's whole new state, to replicate.
    pub fn increment(&mut self, key: &str, delta: i64) -> RavenCounter {
        let etag = self.next_etag();
        let mut portions = match self.counters.remove(key) {
            Some(RavenCounter::Live { portions }) => portions,
            _ => BTreeMap::new(),
        };
        let old = portions.get(&self.node).map_or(0, |p| p.value);
        portions.insert(
            self.node.clone(),
            Portion {
                value: old.wrapping_add(delta),
                etag,
            },
        );
        self.put(key, RavenCounter::Live { portions })
    }

    /// A delete: replaces the counter with a deletion marker whose vector holds, per node, the
    /// highest etag of what it deleted, with this node's own entry bumped to a new etag.
    /// Deleting a missing counter leaves a marker too. Returns the new state, to replicate.
    pub fn delete(&mut self, key: &str) -> RavenCounter {
        let etag = self.next_etag();
        let mut vector = self
            .counters
            .get(key)
            .map(RavenCounter::versions)
            .unwrap_or_default();
        vector.insert(self.node.clone(), etag);
        self.put(key, RavenCounter::Deleted { vector })
    }

    /// Merges a state replicated from another node; returns whether the local state changed.
    pub fn merge(&mut self, key: &str, incoming: &RavenCounter) -> bool {
        self.last_etag = self.last_etag.max(incoming.version(&self.node));
        match self.merged(key, incoming) {
            Some(merged) => {
                self.put(key, merged);
                true
            }
            None => false,
        }
    }

    /// What merging `incoming` into `key` would leave, when that differs from what is held.
    pub fn merged(&self, key: &str, incoming: &RavenCounter) -> Option<RavenCounter> {
        let merged = match self.counters.get(key) {
            Some(local) => local.merged(incoming),
            None => incoming.clone(),
        };
        (self.counters.get(key) != Some(&merged)).then_some(merged)
    }

    /// The counters changed after change number `after`, oldest change first, at most
    /// `limit` of them: what a peer that acknowledged everything up to `after` is sent next.
    pub fn changes_after(&self, after: u64, limit: usize) -> Vec<Change> {
        self.changes
            .range(after.saturating_add(1)..)
            .take(limit)
            .filter_map(|(number, key)| {
                Some(Change {
                    number: *number,
                    key: key.clone(),
                    counter: self.counters.get(key)?.clone(),
                })
            })
            .collect()
    }

    /// A store restored from its journal: each key's last state, in the order they changed.
    pub fn restore(node: &str, states: impl IntoIterator<Item = (String, RavenCounter)>) -> Self {
        let mut store = RavenStore::new(node);
        for (key, counter) in states {
            store.last_etag = store.last_etag.max(counter.version(node));
            store.put(&key, counter);
        }
        store
    }

    /// The counter as this node holds it.
    pub fn get(&self, key: &str) -> Option<&RavenCounter> {
        self.counters.get(key)
    }

    /// Every counter, for replication catch-up and the oracle dump.
    pub fn counters(&self) -> &BTreeMap<String, RavenCounter> {
        &self.counters
    }

    /// Issues this node's next etag (it stops increasing only at `u64::MAX`).
    fn next_etag(&mut self) -> u64 {
        self.last_etag = self.last_etag.saturating_add(1);
        self.last_etag
    }

    /// Stores `counter` under `key` as the newest change and returns it.
    fn put(&mut self, key: &str, counter: RavenCounter) -> RavenCounter {
        self.counters.insert(key.to_string(), counter.clone());
        self.last_change += 1;
        if let Some(old) = self.changed.insert(key.to_string(), self.last_change) {
            self.changes.remove(&old);
        }
        self.changes.insert(self.last_change, key.to_string());
        counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn live(portions: &[(&str, i64, u64)]) -> RavenCounter {
        let portions = portions
            .iter()
            .map(|&(id, value, etag)| (id.to_string(), Portion { value, etag }))
            .collect();
        RavenCounter::Live { portions }
    }

    fn deleted(vector: &[(&str, u64)]) -> RavenCounter {
        let vector = vector
            .iter()
            .map(|&(id, etag)| (id.to_string(), etag))
            .collect();
        RavenCounter::Deleted { vector }
    }

    /// Sends `from`'s state of `key` to `to`; returns whether `to` changed.
    fn replicate(from: &RavenStore, to: &mut RavenStore, key: &str) -> bool {
        from.get(key).is_some_and(|state| to.merge(key, state))
    }

    fn value(store: &RavenStore, key: &str) -> Option<i64> {
        store.get(key).and_then(RavenCounter::value)
    }

    #[test]
    fn changes_come_oldest_first_once_per_key_and_a_merge_that_changes_counts() {
        let mut n1 = RavenStore::new("n1");
        n1.increment("a", 1);
        n1.increment("b", 1);
        n1.increment("a", 1);
        let keys =
            |changes: Vec<Change>| -> Vec<String> { changes.into_iter().map(|c| c.key).collect() };
        assert_eq!(keys(n1.changes_after(0, 10)), ["b", "a"]);
        assert_eq!(keys(n1.changes_after(0, 1)), ["b"]);
        let last = n1.changes_after(0, 10).last().map_or(0, |c| c.number);
        assert!(n1.changes_after(last, 10).is_empty());
        // A merge that changes a counter is a change to pass on; one that does not is not.
        assert!(n1.merge("c", &live(&[("n2", 4, 1)])));
        assert!(!n1.merge("c", &live(&[("n2", 4, 1)])));
        assert_eq!(keys(n1.changes_after(last, 10)), ["c"]);
    }

    #[test]
    fn a_delete_racing_an_increment_loses() {
        // n1 increments 5: n1 = {n1: 5@1}, replicated so n2 holds the same.
        let (mut n1, mut n2) = (RavenStore::new("n1"), RavenStore::new("n2"));
        n1.increment("x", 5);
        replicate(&n1, &mut n2, "x");
        // Concurrently n1 deletes: marker {n1: 2} (it saw n1@1, own entry bumped to 2), and n2
        // increments 3: {n1: 5@1, n2: 3@1} (n2's first etag).
        assert_eq!(n1.delete("x"), deleted(&[("n1", 2)]));
        assert_eq!(n2.increment("x", 3), live(&[("n1", 5, 1), ("n2", 3, 1)]));
        // Each way, n2's portion (etag 1) is above the marker's n2 entry (missing: 0), so the
        // delete had not seen it: the counter wins whole, n1's pre-delete 5 included: 5 + 3.
        assert!(replicate(&n2, &mut n1, "x"));
        assert!(!replicate(&n1, &mut n2, "x"));
        assert_eq!((value(&n1, "x"), value(&n2, "x")), (Some(8), Some(8)));
    }

    #[test]
    fn a_delete_that_saw_everything_wins() {
        // n1 increments 5: {n1: 5@1}; n2 gets it and deletes: marker {n1: 1, n2: 1}.
        let (mut n1, mut n2) = (RavenStore::new("n1"), RavenStore::new("n2"));
        n1.increment("x", 5);
        replicate(&n1, &mut n2, "x");
        assert_eq!(n2.delete("x"), deleted(&[("n1", 1), ("n2", 1)]));
        // n1's only portion has etag 1 <= the marker's n1 entry 1: the deletion is newer.
        assert!(replicate(&n2, &mut n1, "x"));
        assert_eq!((value(&n1, "x"), value(&n2, "x")), (None, None));
    }

    #[test]
    fn an_increment_after_a_delete_recreates_the_counter_with_only_the_local_portion() {
        // n1 holds {n1: 5@1, n2: 7@1}; it deletes (marker {n1: 2, n2: 1}) and increments 2:
        // the new counter is {n1: 2@3} alone, not 5 + 2 nor 7 + 2.
        let mut n1 = RavenStore::new("n1");
        n1.increment("x", 5);
        n1.merge("x", &live(&[("n2", 7, 1)]));
        assert_eq!(n1.delete("x"), deleted(&[("n1", 2), ("n2", 1)]));
        assert_eq!(n1.increment("x", 2), live(&[("n1", 2, 3)]));
        assert_eq!(value(&n1, "x"), Some(2));
    }

    #[test]
    fn two_deletes_merge_their_vectors() {
        // n1 increments 5 ({n1: 5@1}), n2 gets it and increments 3 ({n1: 5@1, n2: 3@1}).
        let (mut n1, mut n2) = (RavenStore::new("n1"), RavenStore::new("n2"));
        n1.increment("x", 5);
        replicate(&n1, &mut n2, "x");
        n2.increment("x", 3);
        // Both delete concurrently: n1 saw {n1: 1} and bumps to 2; n2 saw {n1: 1, n2: 1} and
        // bumps to 2. Entry-wise max, each way: {n1: 2, n2: 2}.
        assert_eq!(n1.delete("x"), deleted(&[("n1", 2)]));
        assert_eq!(n2.delete("x"), deleted(&[("n1", 1), ("n2", 2)]));
        assert!(replicate(&n2, &mut n1, "x"));
        assert!(replicate(&n1, &mut n2, "x"));
        let both = deleted(&[("n1", 2), ("n2", 2)]);
        assert_eq!((n1.get("x"), n2.get("x")), (Some(&both), Some(&both)));
    }

    #[test]
    fn the_merge_order_can_decide_a_deleted_portions_fate_until_states_are_resent() {
        // n1 increments 5 ({n1: 5@1}); n3 gets it and deletes ({n1: 1, n3: 1}); n2, which saw
        // neither, increments 3 ({n2: 3@1}).
        let mut stores = ["n1", "n2", "n3"].map(RavenStore::new);
        let [n1, n2, n3] = &mut stores;
        n1.increment("x", 5);
        replicate(n1, n3, "x");
        n3.delete("x");
        n2.increment("x", 3);
        let (s1, s2, s3) = (n1.clone(), n2.clone(), n3.clone());
        // n1 takes the marker first (it saw n1@1: deleted), then n2's counter (concurrent: it
        // wins whole): 3. n2 takes n1's counter first ({n1: 5@1, n2: 3@1}), then the marker
        // (it did not see n2@1: ignored): 8. The marker is gone from both, so nothing can
        // remove n1's 5 from n2 again.
        replicate(&s3, n1, "x");
        replicate(&s2, n1, "x");
        replicate(&s1, n2, "x");
        replicate(&s3, n2, "x");
        assert_eq!((value(n1, "x"), value(n2, "x")), (Some(3), Some(8)));
        // n2 changed (it took n1's counter), so, as RavenDB does, it sends its state on: n1
        // merges live vs live, n3's marker had not seen n2@1: all end at {n1: 5@1, n2: 3@1} = 8.
        replicate(n2, n1, "x");
        replicate(n1, n3, "x");
        assert_eq!([0, 1, 2].map(|i| value(&stores[i], "x")), [Some(8); 3]);
    }

    #[test]
    fn a_nodes_etags_increase_across_increments_and_deletes() {
        let mut n1 = RavenStore::new("n1");
        let states = [
            n1.increment("x", 1),
            n1.delete("y"),
            n1.delete("x"),
            n1.increment("x", 4),
            n1.increment("y", -2),
        ];
        assert_eq!(states.map(|s| s.version("n1")), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_restarted_node_does_not_reuse_its_etags() {
        // n1 reaches etag 3 on x ({n1: 6@3}) and 4 on a deleted y ({n1: 4}), then restarts
        // empty. Getting x back, its next etag is 4; getting y's marker back, it is 5.
        let mut n1 = RavenStore::new("n1");
        n1.increment("x", 1);
        n1.increment("x", 2);
        let x = n1.increment("x", 3);
        let y = n1.delete("y");
        let mut from_portion = RavenStore::new("n1");
        from_portion.merge("x", &x);
        assert_eq!(from_portion.increment("x", 1), live(&[("n1", 7, 4)]));
        let mut from_marker = RavenStore::new("n1");
        from_marker.merge("y", &y);
        assert_eq!(from_marker.increment("y", 1), live(&[("n1", 1, 5)]));
    }

    #[test]
    fn a_missing_counter_deleted_leaves_a_marker_of_its_own_entry() {
        let mut n1 = RavenStore::new("n1");
        assert_eq!(n1.delete("x"), deleted(&[("n1", 1)]));
        assert_eq!(
            (n1.get("x"), value(&n1, "x")),
            (Some(&deleted(&[("n1", 1)])), None)
        );
    }

    #[test]
    fn states_travel_tagged_by_state() -> serde_json::Result<()> {
        let json = serde_json::to_value(live(&[("n1", 5, 1)]))?;
        assert_eq!(
            json,
            serde_json::json!({"state": "live", "portions": {"n1": {"value": 5, "etag": 1}}})
        );
        let json = serde_json::to_value(deleted(&[("n1", 2)]))?;
        assert_eq!(
            json,
            serde_json::json!({"state": "deleted", "vector": {"n1": 2}})
        );
        Ok(())
    }

    /// Hand-picked states: lives that overlap, race, tie on an etag, and markers that saw all,
    /// some or none of them.
    fn samples() -> Vec<RavenCounter> {
        vec![
            live(&[]),
            live(&[("n1", 5, 1)]),
            live(&[("n1", 9, 1)]),
            live(&[("n1", 6, 2), ("n2", 3, 1)]),
            live(&[("n2", 3, 1)]),
            live(&[("n3", 1, 4)]),
            deleted(&[("n1", 1)]),
            deleted(&[("n1", 2), ("n2", 1)]),
            deleted(&[("n2", 3)]),
            deleted(&[("n3", 4)]),
            deleted(&[("n1", 9), ("n2", 9), ("n3", 9)]),
        ]
    }

    #[test]
    fn merging_sample_states_is_commutative_and_idempotent() {
        for a in &samples() {
            assert_eq!(&a.merged(a), a);
            for b in &samples() {
                let ab = a.merged(b);
                assert_eq!(ab, b.merged(a), "{a:?} with {b:?}");
                assert_eq!(ab.merged(b), ab, "{a:?} with {b:?} twice");
            }
        }
    }

    /// Whether every marker among `states` saw every live one, or their merged vectors saw
    /// none: then no marker can be forgotten halfway and the order of merges cannot matter.
    fn deletes_agree(states: &[&RavenCounter]) -> bool {
        let vectors: Vec<_> = states.iter().filter_map(|s| s.vector()).collect();
        let lives: Vec<_> = states.iter().filter_map(|s| s.portions()).collect();
        let all = vectors
            .iter()
            .fold(BTreeMap::new(), |v, w| highest_etags(&v, w));
        vectors
            .iter()
            .all(|v| lives.iter().all(|p| saw_everything(v, p)))
            || !lives.iter().any(|p| saw_everything(&all, p))
    }

    impl RavenCounter {
        fn vector(&self) -> Option<&BTreeMap<String, u64>> {
            match self {
                RavenCounter::Deleted { vector } => Some(vector),
                RavenCounter::Live { .. } => None,
            }
        }

        fn portions(&self) -> Option<&BTreeMap<String, Portion>> {
            match self {
                RavenCounter::Live { portions } => Some(portions),
                RavenCounter::Deleted { .. } => None,
            }
        }
    }

    #[test]
    fn merging_sample_states_is_associative_when_the_deletes_agree() {
        let samples = samples();
        let mut checked = 0;
        for a in &samples {
            for b in &samples {
                for c in samples.iter().filter(|c| deletes_agree(&[a, b, c])) {
                    assert_eq!(
                        a.merged(b).merged(c),
                        a.merged(&b.merged(c)),
                        "{a:?} {b:?} {c:?}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(
            checked > samples.len().pow(3) / 2,
            "only {checked} triples agree"
        );
    }

    const KEYS: [&str; 2] = ["x", "y"];

    /// One thing that happens to the three stores.
    #[derive(Debug, Clone)]
    enum Step {
        Increment { node: usize, key: usize, delta: i64 },
        Delete { node: usize, key: usize },
        Replicate { from: usize, to: usize, key: usize },
    }

    fn increment_or_replicate() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..3usize, 0..2usize, -5i64..=5).prop_map(|(node, key, delta)| Step::Increment {
                node,
                key,
                delta
            }),
            (0..3usize, 0..3usize, 0..2usize).prop_map(|(from, to, key)| Step::Replicate {
                from,
                to,
                key
            }),
        ]
    }

    fn any_step() -> impl Strategy<Value = Step> {
        prop_oneof![
            2 => increment_or_replicate(),
            1 => (0..3usize, 0..2usize).prop_map(|(node, key)| Step::Delete { node, key }),
        ]
    }

    /// Every (from, to) pair of distinct stores, in a random order.
    fn exchange_order() -> impl Strategy<Value = Vec<(usize, usize)>> {
        let pairs = (0..3).flat_map(|f| (0..3).filter(move |&t| t != f).map(move |t| (f, t)));
        Just(pairs.collect::<Vec<_>>()).prop_shuffle()
    }

    /// Applies a step to the stores.
    fn apply(stores: &mut [RavenStore], step: &Step) -> Result<(), TestCaseError> {
        match *step {
            Step::Increment { node, key, delta } => {
                write(&mut stores[node], |s| s.increment(KEYS[key], delta))
            }
            Step::Delete { node, key } => write(&mut stores[node], |s| s.delete(KEYS[key])),
            Step::Replicate { from, to, key } => replicate_twice(stores, from, to, KEYS[key]),
        }
    }

    /// A local write, checking that it took a fresh etag of the store's own id.
    fn write(
        store: &mut RavenStore,
        change: impl FnOnce(&mut RavenStore) -> RavenCounter,
    ) -> Result<(), TestCaseError> {
        let before = store.last_etag;
        let state = change(store);
        prop_assert!(
            state.version(&store.node) > before,
            "stale etag in {state:?}"
        );
        Ok(())
    }

    /// Sends `from`'s state of `key` to `to` twice, checking that the second merge changes
    /// nothing.
    fn replicate_twice(
        stores: &mut [RavenStore],
        from: usize,
        to: usize,
        key: &str,
    ) -> Result<(), TestCaseError> {
        if let Some(state) = stores[from].get(key).cloned() {
            stores[to].merge(key, &state);
            prop_assert!(!stores[to].merge(key, &state), "merged twice: {state:?}");
        }
        Ok(())
    }

    /// Whether `store` has seen no etag of its own id above its sequence.
    fn etags_fresh(store: &RavenStore) -> bool {
        store
            .counters
            .values()
            .all(|c| c.version(&store.node) <= store.last_etag)
    }

    /// Every store merges every other store's state as it was when the round began, in
    /// `order`; returns whether any store changed.
    fn exchange(stores: &mut [RavenStore], order: &[(usize, usize)]) -> bool {
        let sent: Vec<_> = stores.iter().map(|s| s.counters().clone()).collect();
        let mut changed = false;
        for &(from, to) in order {
            for (key, state) in &sent[from] {
                changed |= stores[to].merge(key, state);
            }
        }
        changed
    }

    fn run(steps: &[Step]) -> Result<[RavenStore; 3], TestCaseError> {
        let mut stores = ["n1", "n2", "n3"].map(RavenStore::new);
        for step in steps {
            apply(&mut stores, step)?;
            prop_assert!(stores.iter().all(etags_fresh), "after {step:?}");
        }
        Ok(stores)
    }

    fn converged(stores: &[RavenStore]) -> bool {
        stores.iter().all(|s| s.counters() == stores[0].counters())
    }

    proptest! {
        #[test]
        fn three_stores_converge_once_changed_states_are_resent(
            steps in prop::collection::vec(any_step(), 0..40),
            order in exchange_order(),
        ) {
            // One round is not enough (see the merge-order test), but RavenDB replicates every
            // change it makes, merges included: exchange whole states until a round changes
            // nothing. Two rounds always sufficed over 20,000 runs of 80 steps; 4 is a margin.
            let mut stores = run(&steps)?;
            let mut rounds = 0;
            while exchange(&mut stores, &order) {
                rounds += 1;
                prop_assert!(rounds <= 4, "still changing after {rounds} rounds");
            }
            prop_assert!(converged(&stores), "{stores:#?}");
            prop_assert!(stores.iter().all(etags_fresh));
        }

        #[test]
        fn without_deletes_one_exchange_converges(
            steps in prop::collection::vec(increment_or_replicate(), 0..40),
            order in exchange_order(),
        ) {
            let mut stores = run(&steps)?;
            exchange(&mut stores, &order);
            prop_assert!(converged(&stores), "{stores:#?}");
            prop_assert!(!exchange(&mut stores, &order), "merging the same states twice");
        }

        #[test]
        fn merging_any_states_is_commutative_and_idempotent(a in any_state(), b in any_state()) {
            let ab = a.merged(&b);
            prop_assert_eq!(&ab, &b.merged(&a));
            prop_assert_eq!(&a.merged(&a), &a);
            prop_assert_eq!(&ab.merged(&b), &ab);
        }

        #[test]
        fn merging_counters_or_markers_alone_is_associative(
            (a, b, c) in (any_portions(), any_portions(), any_portions()),
            (u, v, w) in (any_vector(), any_vector(), any_vector()),
        ) {
            let [a, b, c] = [a, b, c].map(|portions| RavenCounter::Live { portions });
            prop_assert_eq!(a.merged(&b).merged(&c), a.merged(&b.merged(&c)));
            let [u, v, w] = [u, v, w].map(|vector| RavenCounter::Deleted { vector });
            prop_assert_eq!(u.merged(&v).merged(&w), u.merged(&v.merged(&w)));
        }
    }

    fn any_id() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["n1", "n2", "n3"]).prop_map(String::from)
    }

    fn any_portions() -> impl Strategy<Value = BTreeMap<String, Portion>> {
        let portion = (-3i64..=3, 0u64..4).prop_map(|(value, etag)| Portion { value, etag });
        prop::collection::btree_map(any_id(), portion, 0..3)
    }

    fn any_vector() -> impl Strategy<Value = BTreeMap<String, u64>> {
        prop::collection::btree_map(any_id(), 0u64..4, 0..3)
    }

    fn any_state() -> impl Strategy<Value = RavenCounter> {
        prop_oneof![
            any_portions().prop_map(|portions| RavenCounter::Live { portions }),
            any_vector().prop_map(|vector| RavenCounter::Deleted { vector }),
        ]
    }
}

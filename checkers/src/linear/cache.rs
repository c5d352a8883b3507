//! The search's cache of (linearized set, state) pairs already explored, kept compact: the
//! sets' words in one arena and the entries in one table, so a cache of millions of entries
//! is three allocations (the arena has a spare to be compacted into), whose growth the
//! search sees coming and which are freed at once. Thinning it keeps their room, so that a
//! long search does not grow them again, page by page, after each thinning.

use hashbrown::HashTable;

/// One explored pair: the set's hash mixed with the state's, where its words are in the
/// arena, and the state.
struct Entry<S> {
    hash: u64,
    low: usize,
    at: usize,
    len: usize,
    state: S,
}

/// The (linearized set, state) pairs a search has explored.
pub struct Cache<S> {
    words: Vec<u64>,
    /// The arena the next thinning compacts the words into (its room kept).
    spare: Vec<u64>,
    table: HashTable<Entry<S>>,
}

impl<S: Eq + Clone> Cache<S> {
    /// An empty cache.
    pub fn new() -> Self {
        Cache {
            words: Vec::new(),
            spare: Vec::new(),
            table: HashTable::new(),
        }
    }

    /// Adds the pair of a set (`low` and the words above it, see `Linearized::key`) and a
    /// state, with their hash; `false` when it was already there.
    pub fn insert(&mut self, hash: u64, (low, words): (usize, &[u64]), state: &S) -> bool {
        let arena = &self.words;
        let found = self.table.find(hash, |e| {
            e.hash == hash
                && e.low == low
                && arena[e.at..e.at + e.len] == *words
                && e.state == *state
        });
        if found.is_some() {
            return false;
        }
        let at = self.words.len();
        self.words.extend_from_slice(words);
        let entry = Entry {
            hash,
            low,
            at,
            len: words.len(),
            state: state.clone(),
        };
        self.table.insert_unique(hash, entry, |e| e.hash);
        true
    }

    /// Bytes the next insert of a set of `words` words may allocate at once: a grown table,
    /// a grown arena (the table doubles, the arena at least doubles). A full table that is
    /// at most half live (the rest the slots of thinned pairs) is rehashed where it is.
    pub fn next_growth(&self, words: usize) -> usize {
        let buckets = self.table.num_buckets();
        let usable = match buckets {
            0..=8 => buckets.saturating_sub(1),
            _ => buckets / 8 * 7,
        };
        let full = self.table.len() >= self.table.capacity();
        let table = match full && self.table.len() + 1 > usable / 2 {
            true => (buckets * 2).max(4) * (std::mem::size_of::<Entry<S>>() + 1),
            false => 0,
        };
        let arena = if self.words.len() + words > self.words.capacity() {
            (self.words.capacity() * 2).max(words) * 8
        } else {
            0
        };
        table + arena
    }

    /// Drops the pairs whose set's dense prefix ends below `low`, and compacts the arena;
    /// the room stays. The cache only saves work: a pair dropped is at worst explored again.
    pub fn evict_below(&mut self, low: usize) {
        let mut words = std::mem::take(&mut self.spare);
        words.clear();
        let old = &self.words;
        self.table.retain(|e| {
            if e.low < low {
                return false;
            }
            let at = words.len();
            words.extend_from_slice(&old[e.at..e.at + e.len]);
            e.at = at;
            true
        });
        self.spare = std::mem::replace(&mut self.words, words);
    }

    /// Drops every pair, keeping the room they took.
    pub fn clear(&mut self) {
        self.words.clear();
        self.spare.clear();
        self.table.clear();
    }

    /// Bytes the cache holds, room for more included, states' own heap left out.
    pub fn bytes(&self) -> usize {
        // The table's allocation, not its capacity: a thinned table's capacity leaves out
        // the slots its dropped pairs still take until it is rehashed.
        let arenas = self.words.capacity() + self.spare.capacity();
        self.table.allocation_size() + arenas * 8
    }

    /// Bytes its pairs take, the room for more left out.
    pub fn live_bytes(&self) -> usize {
        self.table.len() * (std::mem::size_of::<Entry<S>>() + 1) + self.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_drops_the_pairs_below_and_keeps_the_others_and_the_room() {
        let mut cache = Cache::new();
        for low in 0..1000usize {
            let words = [low as u64, !(low as u64)];
            assert!(cache.insert(low as u64 * 31, (low, &words[..=low % 2]), &(low % 7)));
        }
        let (bytes, live) = (cache.bytes(), cache.live_bytes());
        cache.evict_below(600);
        assert_eq!(cache.table.len(), 400);
        assert!(cache.live_bytes() < live);
        assert!(cache.bytes() >= bytes, "the room is kept");
        for low in 0..1000usize {
            let words = [low as u64, !(low as u64)];
            let new = cache.insert(low as u64 * 31, (low, &words[..=low % 2]), &(low % 7));
            assert_eq!(new, low < 600, "pair {low}");
        }
        // Thinned again, it compacts into the spare: no room is added.
        cache.evict_below(1000);
        let bytes = cache.bytes();
        for low in 1000..1400usize {
            cache.insert(low as u64, (low, &[1, 2][..]), &0);
        }
        cache.evict_below(1400);
        assert_eq!((cache.table.len(), cache.bytes()), (0, bytes));
    }

    #[test]
    fn growth_is_foreseen_only_when_the_table_must_grow() {
        let mut cache = Cache::new();
        let entry = std::mem::size_of::<Entry<usize>>() + 1;
        assert_eq!(cache.next_growth(1), 4 * entry + 8);
        let (mut grown, mut unforeseen) = (0, 0);
        for low in 0..20_000usize {
            if low % 1000 == 999 {
                // Thinned often, the table fills with the slots of dropped pairs, which it
                // rehashes where it is rather than growing.
                cache.evict_below(low - 100);
            }
            let growth = cache.next_growth(0);
            let before = cache.table.allocation_size();
            cache.insert(low as u64, (low, &[1][..]), &0);
            let grew = cache.table.allocation_size() > before;
            assert!(!grew || growth > 0, "insert {low}: growth not foreseen");
            grown += usize::from(grew);
            unforeseen += usize::from(growth > 0 && !grew);
        }
        assert!(grown >= 8, "the table grew {grown} times");
        assert_eq!(unforeseen, 0, "growth foreseen that did not come");
    }
}

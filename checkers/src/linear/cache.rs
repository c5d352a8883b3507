//! The search's cache of (linearized set, state) pairs already explored, kept compact: the
//! sets' words in one arena and the entries in one table, so a cache of millions of entries
//! is two allocations, whose growth the search sees coming and which are freed at once.

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
    table: HashTable<Entry<S>>,
}

impl<S: Eq + Clone> Cache<S> {
    /// An empty cache.
    pub fn new() -> Self {
        Cache {
            words: Vec::new(),
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
    /// a grown arena (the table doubles, the arena at least doubles).
    pub fn next_growth(&self, words: usize) -> usize {
        let table = if self.table.len() == self.table.capacity() {
            (self.table.capacity() * 2).max(4) * (std::mem::size_of::<Entry<S>>() + 1)
        } else {
            0
        };
        let arena = if self.words.len() + words > self.words.capacity() {
            (self.words.capacity() * 2).max(words) * 8
        } else {
            0
        };
        table + arena
    }

    /// Drops the pairs whose set's dense prefix ends below `low`, and compacts the arena.
    /// The cache only saves work: a pair dropped is at worst explored again.
    pub fn evict_below(&mut self, low: usize) {
        let old = &self.words;
        let mut words = Vec::with_capacity(old.len() / 2);
        self.table.retain(|e| {
            if e.low < low {
                return false;
            }
            let at = words.len();
            words.extend_from_slice(&old[e.at..e.at + e.len]);
            e.at = at;
            true
        });
        self.words = words;
        self.table.shrink_to_fit(|e| e.hash);
    }

    /// Drops every pair, keeping the room they took.
    pub fn clear(&mut self) {
        self.words.clear();
        self.table.clear();
    }

    /// Bytes the cache holds, states' own heap left out.
    pub fn bytes(&self) -> usize {
        self.table.capacity() * (std::mem::size_of::<Entry<S>>() + 1) + self.words.capacity() * 8
    }
}

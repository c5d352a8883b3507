//! The set of linearized ops, with a hash kept up to date as bits flip (Zobrist hashing) and
//! a compact key for the cache: ops are linearized roughly in call order, so the set is
//! "every op below `low`" plus a few bits between `low` and `high`, and only those are kept.
//!
//! An op whose outcome is unknown may never be linearized, and would hold `low` back for the
//! rest of the search: the key would grow with the history. Such ops are counted instead,
//! per class of interchangeable ops (`symmetry`): the search linearizes the ops of a class
//! whose outcome is unknown in call order (of the callable ones it tries the first only), so
//! how many of a class are linearized says which. `low` skips them.

/// A fixed-size bit set whose hash is updated in O(1) on every set and clear.
#[derive(Debug, Clone)]
pub struct Linearized {
    words: Vec<u64>,
    hash: u64,
    /// Every op below this one is in the set.
    low: usize,
    /// No op at or above this one is in the set.
    high: usize,
    /// For each op whose outcome is unknown, the counter of its class.
    open: Vec<Option<u32>>,
    /// Linearized ops of unknown outcome, per class.
    counts: Vec<u64>,
    /// Scratch for `key`.
    key: Vec<u64>,
}

/// A well-mixed 64-bit value for bit `i` (splitmix64).
fn zobrist(i: usize) -> u64 {
    let mut z = (i as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Linearized {
    /// An empty set for `open.len()` ops, `open[i]` the class of op `i` if its outcome is
    /// unknown (classes numbered from 0).
    pub fn new(open: Vec<Option<u32>>) -> Self {
        let classes = open.iter().flatten().map(|&c| c as usize + 1).max();
        Linearized {
            words: vec![0; open.len().div_ceil(64)],
            hash: 0,
            low: 0,
            high: 0,
            counts: vec![0; classes.unwrap_or(0)],
            open,
            key: Vec::new(),
        }
    }

    /// Whether `low` may pass op `i`: it is in the set, or its outcome is unknown.
    fn passed(&self, i: usize) -> bool {
        self.contains(i) || self.open[i].is_some()
    }

    fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Adds op `i`.
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.hash ^= zobrist(i);
        if let Some(c) = self.open[i] {
            self.counts[c as usize] += 1;
        }
        self.high = self.high.max(i + 1);
        while self.low < self.high && self.passed(self.low) {
            self.low += 1;
        }
    }

    /// Removes op `i`.
    pub fn clear(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
        self.hash ^= zobrist(i);
        match self.open[i] {
            Some(c) => self.counts[c as usize] -= 1,
            None => self.low = self.low.min(i),
        }
        while self.high > self.low && !self.contains(self.high - 1) {
            self.high -= 1;
        }
    }

    /// Every op below this one is linearized, or of unknown outcome.
    pub fn low(&self) -> usize {
        self.low
    }

    /// The hash of the set's contents.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// A canonical, compact form of the set: `low`, the words from `low` to `high`, and the
    /// counts of linearized ops of unknown outcome per class.
    pub fn key(&mut self) -> (usize, &[u64]) {
        let from = self.low / 64;
        let to = self.high.div_ceil(64).max(from);
        self.key.clear();
        self.key.extend_from_slice(&self.words[from..to]);
        self.key.extend_from_slice(&self.counts);
        (self.low, &self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_and_key_depend_on_contents_not_history() {
        let mut a = Linearized::new(vec![None; 300]);
        let mut b = Linearized::new(vec![None; 300]);
        for i in [0, 1, 2, 129] {
            a.set(i);
        }
        for i in [129, 7, 2, 1, 0, 250] {
            b.set(i);
        }
        b.clear(7);
        b.clear(250);
        assert_eq!(a.hash(), b.hash());
        assert_eq!(a.key().0, 3);
        assert_eq!(a.key().1.to_vec(), b.key().1.to_vec());
        a.clear(1);
        assert_ne!(a.hash(), b.hash());
        assert_ne!(a.key().0, b.key().0);
    }

    #[test]
    fn a_dense_prefix_keeps_the_key_small() {
        let mut set = Linearized::new(vec![None; 100_000]);
        for i in 0..99_000 {
            set.set(i);
        }
        set.set(99_100);
        let (low, words) = set.key();
        assert_eq!(low, 99_000);
        assert!(words.len() <= 3, "{} words", words.len());
    }

    #[test]
    fn ops_of_unknown_outcome_are_counted_and_hold_low_back_no_more() {
        // Ops 0 and 2 have unknown outcomes, of one class; op 2 is never linearized.
        let mut open = vec![None; 10_000];
        open[0] = Some(0);
        open[2] = Some(0);
        let mut set = Linearized::new(open);
        for i in (0..9_000).filter(|&i| i != 2) {
            set.set(i);
        }
        let (low, words) = set.key();
        assert_eq!(low, 9_000);
        // The word holding `low`, then the count: one of the class linearized.
        assert_eq!(words, [(1u64 << 40) - 1, 1].as_slice());
        set.clear(0);
        assert_eq!(set.key().1, [(1u64 << 40) - 1, 0].as_slice());
        set.clear(5);
        assert_eq!(set.key().0, 5);
    }
}

//! The set of linearized ops, with a hash kept up to date as bits flip (Zobrist hashing) and
//! a compact key for the cache: ops are linearized roughly in call order, so the set is
//! "every op below `low`" plus a few bits between `low` and `high`, and only those are kept.

/// A fixed-size bit set whose hash is updated in O(1) on every set and clear.
#[derive(Debug, Clone)]
pub struct Linearized {
    words: Vec<u64>,
    hash: u64,
    /// Every op below this one is in the set.
    low: usize,
    /// No op at or above this one is in the set.
    high: usize,
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
    /// An empty set for `n` ops.
    pub fn new(n: usize) -> Self {
        Linearized {
            words: vec![0; n.div_ceil(64)],
            hash: 0,
            low: 0,
            high: 0,
        }
    }

    fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Adds op `i`.
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.hash ^= zobrist(i);
        self.high = self.high.max(i + 1);
        while self.low < self.high && self.contains(self.low) {
            self.low += 1;
        }
    }

    /// Removes op `i`.
    pub fn clear(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
        self.hash ^= zobrist(i);
        self.low = self.low.min(i);
        while self.high > self.low && !self.contains(self.high - 1) {
            self.high -= 1;
        }
    }

    /// The hash of the set's contents.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// A canonical, compact form of the set: `low` and the words from `low` to `high`.
    pub fn key(&self) -> (usize, &[u64]) {
        let from = self.low / 64;
        let to = self.high.div_ceil(64).max(from);
        (self.low, &self.words[from..to])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_and_key_depend_on_contents_not_history() {
        let mut a = Linearized::new(300);
        let mut b = Linearized::new(300);
        for i in [0, 1, 2, 129] {
            a.set(i);
        }
        for i in [129, 7, 2, 1, 0, 250] {
            b.set(i);
        }
        b.clear(7);
        b.clear(250);
        assert_eq!(a.hash(), b.hash());
        assert_eq!(a.key(), b.key());
        assert_eq!(a.key().0, 3);
        a.clear(1);
        assert_ne!(a.hash(), b.hash());
        assert_ne!(a.key(), b.key());
    }

    #[test]
    fn a_dense_prefix_keeps_the_key_small() {
        let mut set = Linearized::new(100_000);
        for i in 0..99_000 {
            set.set(i);
        }
        set.set(99_100);
        let (low, words) = set.key();
        assert_eq!(low, 99_000);
        assert!(words.len() <= 3, "{} words", words.len());
    }
}

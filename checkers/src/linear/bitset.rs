//! The set of linearized ops, with a hash kept up to date as bits flip (Zobrist hashing).

/// A fixed-size bit set whose hash is updated in O(1) on every set and clear.
#[derive(Debug, Clone)]
pub struct Linearized {
    words: Vec<u64>,
    hash: u64,
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
        }
    }

    /// Adds op `i`.
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.hash ^= zobrist(i);
    }

    /// Removes op `i`.
    pub fn clear(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
        self.hash ^= zobrist(i);
    }

    /// The hash of the set's contents.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The set's bits.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_depends_on_contents_not_history() {
        let mut a = Linearized::new(130);
        let mut b = Linearized::new(130);
        a.set(3);
        a.set(129);
        b.set(129);
        b.set(7);
        b.set(3);
        b.clear(7);
        assert_eq!(a.hash(), b.hash());
        assert_eq!(a.words(), b.words());
        a.clear(3);
        assert_ne!(a.hash(), b.hash());
    }
}

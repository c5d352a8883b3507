//! The reserve's uses that a sweep's configurations hold, each kept once and named by a
//! number, so a configuration stays 32 bytes however many delta classes there are.

use crate::linear::models::counter::pool::{Counts, MAX_CLASSES};
use rustc_hash::FxHashMap;

/// Uses kept before the unused ones are dropped (`compact`).
const COMPACT_PAST: usize = 1 << 12;

/// Every distinct count of used adds per class a configuration holds; number 0 is none used.
#[derive(Debug, Clone)]
pub(super) struct Uses {
    /// The counts by number.
    all: Vec<Counts>,
    /// The number of each of `all`.
    numbers: FxHashMap<Counts, u32>,
    /// Counts kept before the next compaction.
    room: usize,
}

impl Default for Uses {
    fn default() -> Self {
        let none = [0; MAX_CLASSES];
        Uses {
            all: vec![none],
            numbers: FxHashMap::from_iter([(none, 0)]),
            room: COMPACT_PAST,
        }
    }
}

impl Uses {
    /// The counts numbered `n`.
    pub fn get(&self, n: u32) -> &Counts {
        &self.all[n as usize]
    }

    /// The number of `counts`, given one if they are new.
    pub fn number(&mut self, counts: &Counts) -> u32 {
        if let Some(&n) = self.numbers.get(counts) {
            return n;
        }
        let n = self.all.len() as u32;
        self.all.push(*counts);
        self.numbers.insert(*counts, n);
        n
    }

    /// The number of the counts numbered `n` with `more` added.
    pub fn plus(&mut self, n: u32, more: &Counts) -> u32 {
        let mut counts = *self.get(n);
        counts.iter_mut().zip(more).for_each(|(c, m)| *c += m);
        self.number(&counts)
    }

    /// The number of the counts numbered `n` with one more of `class`.
    pub fn plus_one(&mut self, n: u32, class: usize) -> u32 {
        let mut more = [0; MAX_CLASSES];
        more[class] = 1;
        self.plus(n, &more)
    }

    /// Whether the counts numbered `a` are no more than those numbered `b` in every class.
    pub fn no_more_than(&self, a: u32, b: u32) -> bool {
        a == b || self.get(a).iter().zip(self.get(b)).all(|(x, y)| x <= y)
    }

    /// The adds the counts numbered `n` use in all.
    pub fn total(&self, n: u32) -> u64 {
        self.get(n).iter().map(|&u| u64::from(u)).sum()
    }

    /// Keeps only the counts `live` name (renumbering them in place), once many are kept:
    /// twice as many as the last compaction kept, and at least `COMPACT_PAST`.
    pub fn compact<'a>(&mut self, live: impl Iterator<Item = &'a mut u32>) {
        if self.all.len() <= self.room {
            return;
        }
        let old = std::mem::take(self);
        for n in live {
            *n = self.number(old.get(*n));
        }
        self.room = COMPACT_PAST.max(2 * self.all.len());
    }

    /// How many counts are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.all.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_counts_share_a_number_and_compaction_keeps_only_live_ones() {
        let mut uses = Uses::default();
        let a = uses.plus_one(0, 2);
        assert_eq!(uses.plus_one(0, 2), a);
        let b = uses.plus_one(a, 2);
        assert!(uses.no_more_than(a, b) && !uses.no_more_than(b, a));
        assert_eq!((uses.get(b)[2], uses.total(b)), (2, 2));
        let mut others = Vec::new();
        for class in 0..MAX_CLASSES {
            for k in 0..COMPACT_PAST as u32 / MAX_CLASSES as u32 + 1 {
                let mut counts = [0; MAX_CLASSES];
                counts[class] = k + 10;
                others.push(uses.number(&counts));
            }
        }
        let mut live = [b, others[5]];
        let kept = (*uses.get(live[0]), *uses.get(live[1]));
        uses.compact(live.iter_mut());
        assert_eq!(uses.len(), 3);
        assert_eq!((*uses.get(live[0]), *uses.get(live[1])), kept);
    }
}

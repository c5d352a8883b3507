//! The bursts a counter's sweep tries: of each group of equal open adds, only those that end
//! first.

use crate::ideal::Sum;

/// The sums some of a list of adds can make: at least `down`, at most `up`, and when the
/// span is narrow, exactly which (bit `i` of `sums`: `down + i`). Sums stay within ±2^62
/// (`config::MOST`), so `i64` holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    down: i64,
    up: i64,
    sums: u128,
}

impl Reach {
    /// What no adds make: 0 only.
    pub const NONE: Reach = Reach {
        down: 0,
        up: 0,
        sums: 1,
    };

    /// What these adds and one more of `delta` make.
    pub fn and(self, delta: i64) -> Reach {
        let (down, up) = (self.down + delta.min(0), self.up + delta.max(0));
        let sums = match up - down < 128 {
            // Without the new add, and with it: shifted up by how far `down` moved.
            true => self.sums << (self.down - down) | self.sums << (self.down + delta - down),
            false => u128::MAX,
        };
        Reach { down, up, sums }
    }

    /// Whether some of the adds may make `sum`.
    pub fn may(&self, sum: Sum) -> bool {
        let Ok(sum) = i64::try_from(sum) else {
            return false;
        };
        self.may_64(sum)
    }

    /// `may`, for a sum known to fit `i64`.
    fn may_64(&self, sum: i64) -> bool {
        sum >= self.down
            && sum <= self.up
            && (self.up - self.down >= 128 || self.sums >> (sum - self.down) & 1 == 1)
    }
}

/// The free adds a burst chooses from, in groups of equal adds, and the sums they make.
#[derive(Debug, Default)]
pub struct Choice {
    /// Sorted by delta, optional, end.
    order: Vec<(i64, bool, u64, u8)>,
    /// The groups of equal adds (same delta, both optional or both not), as ranges of `order`.
    groups: Vec<(usize, usize)>,
    /// `reach[g]`: the sums the groups from `g` on can make.
    reach: Vec<Reach>,
}

impl Choice {
    /// Chooses from `adds`, `(delta, optional, end, slot)` sorted.
    pub fn set(&mut self, adds: impl Iterator<Item = (i64, bool, u64, u8)>) {
        let Choice {
            order,
            groups,
            reach,
        } = self;
        order.clear();
        order.extend(adds);
        groups.clear();
        for (i, a) in order.iter().enumerate() {
            match groups.last_mut() {
                Some((start, end)) if (order[*start].0, order[*start].1) == (a.0, a.1) => {
                    *end = i + 1
                }
                _ => groups.push((i, i + 1)),
            }
        }
        reach.clear();
        reach.resize(groups.len() + 1, Reach::NONE);
        // Of a group, the first j for every j: the sums j times its delta.
        for (g, &(start, end)) in groups.iter().enumerate().rev() {
            reach[g] = (start..end).fold(reach[g + 1], |r, _| r.and(order[start].0));
        }
    }

    /// Whether some burst may make `sum`.
    pub fn may(&self, sum: Sum) -> bool {
        self.reach[0].may(sum)
    }

    /// Every burst that takes of each group the adds ending first: as `(slot bits, sum)`;
    /// with `want`, only those whose sum is `want`. Taking a later add of a group instead
    /// leaves a configuration this one beats (the earlier one must take effect sooner), so
    /// no other burst matters.
    pub fn prefixes(&self, want: Option<Sum>, found: &mut Vec<(u64, Sum)>) {
        let want = match want {
            Some(w) if !self.may(w) => return,
            // Within the reach, so within `i64`.
            Some(w) => Some(w as i64),
            None => None,
        };
        walk(&self.order, &self.groups, &self.reach, want, (0, 0), found);
    }
}

/// The bursts from group `groups[0]` on, given what the groups before took.
fn walk(
    order: &[(i64, bool, u64, u8)],
    groups: &[(usize, usize)],
    reach: &[Reach],
    want: Option<i64>,
    (mask, sum): (u64, i64),
    found: &mut Vec<(u64, Sum)>,
) {
    let Some((&(start, end), rest)) = groups.split_first() else {
        found.push((mask, Sum::from(sum)));
        return;
    };
    let delta = order[start].0;
    let (mut mask, mut sum) = (mask, sum);
    for take in start..=end {
        if take > start {
            mask |= 1 << order[take - 1].3;
            sum += delta;
        }
        if want.is_none_or(|w| reach[1].may_64(w - sum)) {
            walk(order, rest, &reach[1..], want, (mask, sum), found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_knows_exactly_which_sums_narrow_adds_make() {
        let reach = [3, 3, -2].iter().fold(Reach::NONE, |r, &d| r.and(d));
        let made: Vec<Sum> = (-5..10).filter(|&s| reach.may(s)).collect();
        assert_eq!(made, vec![-2, 0, 1, 3, 4, 6]);
        // Of equal adds, those ending first are taken first.
        let mut choice = Choice::default();
        choice.set([(-2, false, 5, 0), (3, false, 1, 1), (3, false, 2, 2)].into_iter());
        let mut found = Vec::new();
        choice.prefixes(Some(4), &mut found);
        assert_eq!(found, vec![(0b111, 4)]);
        found.clear();
        choice.prefixes(Some(3), &mut found);
        assert_eq!(found, vec![(0b010, 3)]);
        found.clear();
        choice.prefixes(None, &mut found);
        assert_eq!(found.len(), 6);
        assert!(choice.may(-2) && !choice.may(2) && !choice.may(Sum::MAX));
        // Past 128 apart, every sum in the range is possible.
        let wide = Reach::NONE.and(100).and(-100);
        assert!(wide.may(-100) && wide.may(1) && wide.may(100) && !wide.may(101));
        assert!(!wide.may(-101) && !wide.may(Sum::MIN));
    }
}

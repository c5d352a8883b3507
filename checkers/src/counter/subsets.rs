//! The sums of the subsets of some adds that may or may not take effect, with the empty
//! subset told apart: any add, of 0 too, makes an absent counter exist; none leaves it as
//! it was.

use super::ranges::RangeSet;
use crate::ideal::Sum;

/// Sums of the non-empty subsets of some optional adds, and of all of them (with the empty
/// one, 0), each kept merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subsets {
    some: RangeSet,
    all: RangeSet,
}

impl Default for Subsets {
    fn default() -> Self {
        Subsets {
            some: RangeSet::default(),
            all: RangeSet::single(0),
        }
    }
}

impl Subsets {
    /// The subsets of no adds: only the empty one.
    pub fn none() -> Self {
        Self::default()
    }

    /// The sums of the non-empty subsets of some adds whose non-empty subsets sum to
    /// `some` (a range, if any) together with the optional adds of `deltas`.
    pub fn nonempty_sums(some: Option<(Sum, Sum)>, deltas: impl Iterator<Item = i64>) -> RangeSet {
        let mut sums = RangeSet::from_ranges(some.into_iter().collect());
        for delta in deltas {
            let delta = Sum::from(delta);
            sums = shifted(&sums, delta, Some((delta, delta)));
        }
        sums
    }

    /// The subsets with one more optional add of `delta`.
    pub fn with_optional(&self, delta: i64) -> Self {
        let delta = Sum::from(delta);
        Subsets {
            some: shifted(&self.some, delta, Some((delta, delta))),
            all: shifted(&self.all, delta, None),
        }
    }

    /// The subsets of both groups of adds together.
    pub fn join(&self, other: &Subsets) -> Self {
        let (a, b) = (self.some.ranges(), other.some.ranges());
        let mut some = Vec::with_capacity(a.len() * b.len() + a.len() + b.len());
        some.extend_from_slice(a);
        some.extend_from_slice(b);
        for &(lo, hi) in a {
            some.extend(
                b.iter()
                    .map(|&(c, d)| (lo.saturating_add(c), hi.saturating_add(d))),
            );
        }
        Subsets {
            some: RangeSet::from_ranges(some),
            all: self.all.sum(&other.all),
        }
    }

    /// The sums of the non-empty subsets.
    pub fn some(&self) -> Spans<'_> {
        Spans {
            ranges: self.some.ranges(),
            zero: false,
        }
    }

    /// The sums of every subset, the empty one (0) included.
    pub fn all(&self) -> Spans<'_> {
        Spans {
            ranges: self.all.ranges(),
            zero: false,
        }
    }
}

/// The set, the set shifted by `delta`, and `extra`.
fn shifted(set: &RangeSet, delta: Sum, extra: Option<(Sum, Sum)>) -> RangeSet {
    let ranges = set.ranges();
    let mut all = Vec::with_capacity(2 * ranges.len() + 1);
    all.extend_from_slice(ranges);
    all.extend(
        ranges
            .iter()
            .map(|&(a, b)| (a.saturating_add(delta), b.saturating_add(delta))),
    );
    all.extend(extra);
    RangeSet::from_ranges(all)
}

/// Ranges of sums to combine without building a set: `ranges`, and `0` when `zero`.
#[derive(Debug, Clone, Copy)]
pub struct Spans<'a> {
    /// The ranges, inclusive.
    pub ranges: &'a [(Sum, Sum)],
    /// The sum 0 as well.
    pub zero: bool,
}

impl<'a> Spans<'a> {
    /// Nothing.
    pub const NONE: Spans<'static> = Spans {
        ranges: &[],
        zero: false,
    };

    /// Only 0.
    pub const ZERO: Spans<'static> = Spans {
        ranges: &[],
        zero: true,
    };

    /// The ranges, then `(0, 0)` if it is there.
    pub fn iter(self) -> impl Iterator<Item = (Sum, Sum)> + 'a {
        self.ranges
            .iter()
            .copied()
            .chain(self.zero.then_some((0, 0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(spans: Spans) -> RangeSet {
        RangeSet::from_ranges(spans.iter().collect())
    }

    #[test]
    fn the_empty_subset_is_apart_from_a_subset_that_sums_to_zero() {
        let five = Subsets::none().with_optional(5);
        assert_eq!(listed(five.some()).ranges(), &[(5, 5)]);
        assert_eq!(listed(five.all()).ranges(), &[(0, 0), (5, 5)]);
        let balanced = five.with_optional(-5);
        assert_eq!(
            listed(balanced.some()).ranges(),
            &[(-5, -5), (0, 0), (5, 5)]
        );
        assert_eq!(
            listed(Subsets::none().with_optional(0).some()).ranges(),
            &[(0, 0)]
        );
        assert!(listed(Subsets::none().some()).is_empty());
    }

    #[test]
    fn two_groups_join_as_one() {
        let a = Subsets::none().with_optional(2);
        let b = Subsets::none().with_optional(3).with_optional(-3);
        let joined = a.join(&b);
        let direct = Subsets::none()
            .with_optional(2)
            .with_optional(3)
            .with_optional(-3);
        assert_eq!(joined, direct);
    }
}

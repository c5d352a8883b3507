//! Sets of counter values kept as sorted, disjoint, non-adjacent ranges of true sums.

use super::wide::Wide;
use crate::ideal::Sum;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Past this many ranges the closest ones are merged: the set only grows, so bounds stay sound.
const MAX_RANGES: usize = 16;

/// A set of sums as inclusive ranges `[lo, hi]`, sorted, disjoint and not touching. In JSON:
/// `[[lo, hi], ...]`, each bound a number, or a string past `i64` (`wide`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RangeSet(Vec<(Sum, Sum)>);

impl RangeSet {
    /// The set holding only `value`.
    pub fn single(value: Sum) -> Self {
        RangeSet(vec![(value, value)])
    }

    /// The union of `ranges` (each `lo <= hi`, any integer type up to `Sum`), in any order.
    pub fn from_ranges<T: Into<Sum>>(ranges: Vec<(T, T)>) -> Self {
        // For `Sum` itself this maps in place, without allocating.
        let ranges = ranges.into_iter().map(|(lo, hi)| (lo.into(), hi.into()));
        RangeSet::from_sums(ranges.collect())
    }

    /// The union of `ranges` (each `lo <= hi`), in any order.
    fn from_sums(mut merged: Vec<(Sum, Sum)>) -> Self {
        // Merged in place: ranges sharing a low end merge whatever order they come in.
        merged.sort_unstable_by_key(|r| r.0);
        let mut kept: usize = 0;
        for i in 0..merged.len() {
            let (lo, hi) = merged[i];
            match kept.checked_sub(1).map(|last| &mut merged[last]) {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => {
                    merged[kept] = (lo, hi);
                    kept += 1;
                }
            }
        }
        merged.truncate(kept);
        while merged.len() > MAX_RANGES {
            let gap = (1..merged.len())
                .min_by_key(|&i| merged[i].0.saturating_sub(merged[i - 1].1))
                .expect("more than one range");
            merged[gap - 1].1 = merged[gap].1;
            merged.remove(gap);
        }
        RangeSet(merged)
    }

    /// The ranges, lowest first.
    pub fn ranges(&self) -> &[(Sum, Sum)] {
        &self.0
    }

    /// Whether the set holds nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The smallest value.
    pub fn min(&self) -> Option<Sum> {
        self.0.first().map(|r| r.0)
    }

    /// The largest value.
    pub fn max(&self) -> Option<Sum> {
        self.0.last().map(|r| r.1)
    }

    /// Whether `value` is in the set.
    pub fn contains(&self, value: Sum) -> bool {
        self.0.iter().any(|&(lo, hi)| lo <= value && value <= hi)
    }

    /// Every `a + b` with `a` in the set and `b` in `[lo, hi]`.
    pub fn plus(&self, (lo, hi): (Sum, Sum)) -> Self {
        RangeSet::from_sums(
            self.0
                .iter()
                .map(|&(a, b)| (a.saturating_add(lo), b.saturating_add(hi)))
                .collect(),
        )
    }

    /// Every `a + b` with `a` in this set and `b` in `other`.
    pub fn sum(&self, other: &RangeSet) -> Self {
        let mut ranges = Vec::with_capacity(self.0.len() * other.0.len());
        for &(a, b) in &self.0 {
            for &(c, d) in &other.0 {
                ranges.push((a.saturating_add(c), b.saturating_add(d)));
            }
        }
        RangeSet::from_sums(ranges)
    }

    /// Every `start + (sum of any subset of deltas)`, with `start` in `[lo, hi]`.
    pub fn subset_sums((lo, hi): (Sum, Sum), deltas: impl IntoIterator<Item = i64>) -> Self {
        let mut ranges = vec![(lo, hi)];
        for delta in deltas {
            let delta = Sum::from(delta);
            let n = ranges.len();
            for i in 0..n {
                let (a, b) = ranges[i];
                ranges.push((a.saturating_add(delta), b.saturating_add(delta)));
            }
            ranges = RangeSet::from_sums(ranges).0;
        }
        RangeSet(ranges)
    }

    /// The set, and the set shifted by `delta`: the sums with an optional add of `delta`.
    pub fn with_optional(&self, delta: i64) -> Self {
        let delta = Sum::from(delta);
        let mut ranges = self.0.clone();
        ranges.extend(
            self.0
                .iter()
                .map(|&(a, b)| (a.saturating_add(delta), b.saturating_add(delta))),
        );
        RangeSet::from_sums(ranges)
    }

    /// Every value in either set.
    pub fn union(sets: impl IntoIterator<Item = RangeSet>) -> Self {
        RangeSet::from_sums(sets.into_iter().flat_map(|s| s.0).collect())
    }

    /// Whether some value of the set is one a 64-bit counter cannot hold.
    pub fn leaves_64_bits(&self) -> bool {
        let outside = |v: Sum| !crate::ideal::fits_64_bits(v);
        self.min().is_some_and(outside) || self.max().is_some_and(outside)
    }

    /// The largest value `<= value`, and the smallest `>= value`.
    pub fn neighbours(&self, value: Sum) -> (Option<Sum>, Option<Sum>) {
        let below = self
            .0
            .iter()
            .rev()
            .find(|r| r.0 <= value)
            .map(|r| r.1.min(value));
        let above = self.0.iter().find(|r| r.1 >= value).map(|r| r.0.max(value));
        (below, above)
    }
}

impl Serialize for RangeSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wide = self.0.iter().map(|&(lo, hi)| (Wide(lo), Wide(hi)));
        serializer.collect_seq(wide)
    }
}

impl<'de> Deserialize<'de> for RangeSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ranges: Vec<(Wide, Wide)> = Vec::deserialize(deserializer)?;
        Ok(RangeSet(
            ranges.into_iter().map(|(lo, hi)| (lo.0, hi.0)).collect(),
        ))
    }
}

/// `0..=3 or 5 or 7..=9`.
impl std::fmt::Display for RangeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, &(lo, hi)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" or ")?;
            }
            if lo == hi {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}..={hi}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_touching_ranges_merge() {
        let set = RangeSet::from_ranges(vec![(5, 6), (0, 1), (2, 2), (9, 12), (10, 11)]);
        assert_eq!(set.ranges(), &[(0, 2), (5, 6), (9, 12)]);
        assert!(set.contains(6) && !set.contains(7) && !set.contains(13));
        assert_eq!((set.min(), set.max()), (Some(0), Some(12)));
    }

    #[test]
    fn a_set_reads_as_its_ranges() {
        let set = RangeSet::from_ranges(vec![(0, 3), (5, 5)]);
        assert_eq!(set.to_string(), "0..=3 or 5");
    }

    #[test]
    fn neighbours_of_a_value_in_a_gap() {
        let set = RangeSet::from_ranges(vec![(0, 1), (5, 6)]);
        assert_eq!(set.neighbours(3), (Some(1), Some(5)));
        assert_eq!(set.neighbours(5), (Some(5), Some(5)));
        assert_eq!(set.neighbours(9), (Some(6), None));
        assert_eq!(set.neighbours(-1), (None, Some(0)));
    }

    #[test]
    fn optional_adds_of_three_leave_gaps() {
        // Sums of any subset of {3, 3, -1}: 0, 3, 6, -1, 2, 5.
        let set = RangeSet::single(0)
            .with_optional(3)
            .with_optional(3)
            .with_optional(-1);
        assert_eq!(set.ranges(), &[(-1, 0), (2, 3), (5, 6)]);
        let both = set.sum(&RangeSet::from_ranges(vec![(0, 0), (10, 10)]));
        assert_eq!(
            both.ranges(),
            &[(-1, 0), (2, 3), (5, 6), (9, 10), (12, 13), (15, 16)]
        );
    }

    #[test]
    fn plus_shifts_and_widens_every_range() {
        let set = RangeSet::from_ranges(vec![(0, 0), (5, 5)]).plus((-1, 1));
        assert_eq!(set.ranges(), &[(-1, 1), (4, 6)]);
    }

    #[test]
    fn too_many_ranges_merge_across_the_smallest_gap_and_only_grow() {
        let ranges: Vec<(Sum, Sum)> = (0..20).map(|i| (i * 10, i * 10)).collect();
        let mut wide = ranges.clone();
        wide[3].1 = 38; // the gap between 38 and 40 is the smallest
        let set = RangeSet::from_ranges(wide);
        assert!(set.ranges().len() <= MAX_RANGES);
        for (lo, _) in ranges {
            assert!(set.contains(lo), "{lo} lost");
        }
        assert!(set.contains(39), "the smallest gap is the one filled first");
    }

    #[test]
    fn sums_past_64_bits_are_kept_and_written_as_strings() {
        let max = Sum::from(i64::MAX);
        let set = RangeSet::single(max).with_optional(i64::MAX).plus((0, 1));
        assert_eq!(set.ranges(), &[(max, max + 1), (2 * max, 2 * max + 1)]);
        assert!(set.leaves_64_bits());
        assert!(!RangeSet::from_ranges(vec![(i64::MIN, i64::MAX)]).leaves_64_bits());
        assert!(!RangeSet::default().leaves_64_bits());
        let text = serde_json::to_string(&set).expect("serializes");
        assert_eq!(
            text,
            r#"[[9223372036854775807,"9223372036854775808"],["18446744073709551614","18446744073709551615"]]"#
        );
        let back: RangeSet = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, set);
        let small = RangeSet::from_ranges(vec![(0, 3), (5, 5)]);
        assert_eq!(
            serde_json::to_string(&small).expect("serializes"),
            "[[0,3],[5,5]]"
        );
    }
}

//! The values a read may return, absent included, and what is wrong with a read that
//! returned something else: the one judgement every checker of counts applies.

use super::ranges::RangeSet;
use crate::ideal::{saturate, Count, Reading, Sum};
use serde::{Deserialize, Serialize};

/// A set of counter states: absent, and sets of counts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Values {
    /// The counter may be absent.
    pub absent: bool,
    /// The counts it may hold.
    pub counts: RangeSet,
}

impl Values {
    /// Only absent: a counter never written, or just deleted.
    pub fn absent() -> Self {
        Values {
            absent: true,
            counts: RangeSet::default(),
        }
    }

    /// Only the count `n`.
    pub fn count(n: Sum) -> Self {
        Values {
            absent: false,
            counts: RangeSet::single(n),
        }
    }

    /// Whether a counter in some state of the set may read as `returned`.
    pub fn contains(&self, returned: Count) -> bool {
        Reading::default().admits(self.absent, |n| self.counts.contains(n), returned)
    }

    /// Whether the set holds no state.
    pub fn is_empty(&self) -> bool {
        !self.absent && self.counts.is_empty()
    }

    /// The set as reads compare it: under `absent_is_zero`, absent is the count 0 (what
    /// `contains` then holds is what [`Reading::admits`] admits of the set as it was).
    pub fn read(&self, reading: Reading) -> Values {
        if reading.absent_is_zero && self.absent {
            Values {
                absent: false,
                counts: RangeSet::union([self.counts.clone(), RangeSet::single(0)]),
            }
        } else {
            self.clone()
        }
    }

    /// The counts, with absent as 0: what distances and charts measure against.
    pub fn numbers(&self) -> RangeSet {
        if self.absent {
            RangeSet::union([self.counts.clone(), RangeSet::single(0)])
        } else {
            self.counts.clone()
        }
    }

    /// Whether some count is one a 64-bit counter cannot hold: the true sum left `i64`.
    pub fn leaves_64_bits(&self) -> bool {
        self.counts.leaves_64_bits()
    }

    /// The smallest and largest of the counts, with absent as 0.
    pub fn span(&self) -> Option<(Sum, Sum)> {
        let zero = self.absent.then_some(0);
        let lo = [self.counts.min(), zero].into_iter().flatten().min()?;
        let hi = [self.counts.max(), zero].into_iter().flatten().max()?;
        Some((lo, hi))
    }

    /// The largest count `<= value` and the smallest `>= value`, with absent as 0.
    fn neighbours(&self, value: Sum) -> (Option<Sum>, Option<Sum>) {
        let (below, above) = self.counts.neighbours(value);
        if !self.absent {
            return (below, above);
        }
        let below = if value >= 0 {
            below.max(Some(0))
        } else {
            below
        };
        let above = match above {
            Some(a) if value <= 0 => Some(a.min(0)),
            None if value <= 0 => Some(0),
            other => other,
        };
        (below, above)
    }

    /// Every state of either set.
    pub fn union(sets: impl IntoIterator<Item = Values>) -> Values {
        let mut absent = false;
        let counts = RangeSet::union(sets.into_iter().map(|v| {
            absent |= v.absent;
            v.counts
        }));
        Values { absent, counts }
    }
}

/// `absent or 0..=3 or 5`.
impl std::fmt::Display for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.absent, self.counts.is_empty()) {
            (true, true) => f.write_str("absent"),
            (true, false) => write!(f, "absent or {}", self.counts),
            (false, true) => f.write_str("nothing"),
            (false, false) => write!(f, "{}", self.counts),
        }
    }
}

/// What is wrong with a read no state of its allowed set explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misread {
    /// Above the nearest allowed count (absent counts as 0): by how much, and that count.
    Over(i64, i64),
    /// Below the nearest allowed count: by how much, and that count.
    Under(i64, i64),
    /// Returned 0 for a counter that must be absent (and holds no 0).
    AbsentAsZero,
    /// Returned `null` for a counter that must exist, and may hold 0.
    ZeroAsAbsent,
}

impl Misread {
    /// How far the read was from what is allowed: 0 for a read wrong only about existence.
    pub fn error(self) -> i64 {
        match self {
            Misread::Over(by, _) | Misread::Under(by, _) => by,
            Misread::AbsentAsZero | Misread::ZeroAsAbsent => 0,
        }
    }
}

/// What is wrong with a read that returned `returned`, if no state of `allowed` explains
/// it. A read in a gap between allowed counts is off by the distance to the nearest one (at
/// most `i64::MAX`); a read wrong only about existence says so. None when some allowed
/// count leaves `i64`: such a read is an overflow, not a misread.
pub fn misread(allowed: &Values, returned: Count) -> Option<Misread> {
    if allowed.contains(returned) || allowed.leaves_64_bits() {
        return None;
    }
    match returned {
        None if allowed.counts.contains(0) => return Some(Misread::ZeroAsAbsent),
        Some(0) if allowed.absent => return Some(Misread::AbsentAsZero),
        _ => {}
    }
    let value = Sum::from(returned.unwrap_or(0));
    let (below, above) = allowed.neighbours(value);
    // Every allowed count fits in i64 here, so only a distance can exceed it.
    let over = below.map(|b| (value - b, Misread::Over(saturate(value - b), saturate(b))));
    let under = above.map(|a| (a - value, Misread::Under(saturate(a - value), saturate(a))));
    match (over, under) {
        (Some(o), Some(u)) => Some(if u.0 < o.0 { u.1 } else { o.1 }),
        (o, u) => o.or(u).map(|(_, m)| m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(absent: bool, ranges: &[(Sum, Sum)]) -> Values {
        Values {
            absent,
            counts: RangeSet::from_ranges(ranges.to_vec()),
        }
    }

    #[test]
    fn a_read_of_zero_where_only_absent_fits_is_absent_as_zero() {
        let deleted = Values::absent();
        assert_eq!(misread(&deleted, None), None);
        assert_eq!(misread(&deleted, Some(0)), Some(Misread::AbsentAsZero));
        assert_eq!(misread(&deleted, Some(3)), Some(Misread::Over(3, 0)));
        assert_eq!(misread(&deleted, Some(-2)), Some(Misread::Under(2, 0)));
    }

    #[test]
    fn a_null_read_where_zero_must_be_held_is_zero_as_absent() {
        let zero = Values::count(0);
        assert_eq!(misread(&zero, None), Some(Misread::ZeroAsAbsent));
        assert_eq!(misread(&Values::count(5), None), Some(Misread::Under(5, 5)));
    }

    #[test]
    fn a_read_in_a_gap_is_off_by_the_distance_to_the_nearest_allowed_value() {
        // add 5, delete, add 5 in flight: absent or 5.
        let allowed = values(true, &[(5, 5)]);
        assert_eq!(misread(&allowed, Some(2)), Some(Misread::Over(2, 0)));
        assert_eq!(misread(&allowed, Some(4)), Some(Misread::Under(1, 5)));
        assert_eq!(misread(&allowed, Some(7)), Some(Misread::Over(2, 5)));
        assert_eq!(misread(&allowed, Some(0)), Some(Misread::AbsentAsZero));
        assert_eq!(allowed.to_string(), "absent or 5");
    }

    #[test]
    fn neighbours_count_absent_as_zero_without_building_the_set() {
        for absent in [false, true] {
            let allowed = values(absent, &[(-5, -4), (3, 3)]);
            for value in -8..8 {
                let direct = allowed.numbers().neighbours(value);
                assert_eq!(allowed.neighbours(value), direct, "{absent} {value}");
            }
            let numbers = allowed.numbers();
            assert_eq!(
                allowed.span(),
                Some((numbers.min().unwrap(), numbers.max().unwrap()))
            );
        }
        assert_eq!(Values::default().span(), None);
    }

    #[test]
    fn a_set_read_holds_what_the_reading_admits_of_it() {
        let sets = [
            Values::absent(),
            Values::count(0),
            Values::count(3),
            values(true, &[(2, 4)]),
            values(false, &[(-1, 1)]),
            Values::default(),
        ];
        for absent_is_zero in [false, true] {
            let reading = Reading { absent_is_zero };
            for set in &sets {
                for returned in [None, Some(-1), Some(0), Some(1), Some(3), Some(5)] {
                    let admitted = reading.admits(set.absent, |n| set.counts.contains(n), returned);
                    assert_eq!(
                        set.read(reading).contains(returned),
                        admitted,
                        "{set} {returned:?} absent_is_zero={absent_is_zero}"
                    );
                }
            }
        }
    }

    #[test]
    fn absent_is_zero_folds_absent_into_the_counts() {
        let lenient = Reading {
            absent_is_zero: true,
        };
        let allowed = Values::absent().read(lenient);
        assert_eq!(misread(&allowed, lenient.of(None)), None);
        assert_eq!(misread(&allowed, Some(0)), None);
        assert_eq!(allowed, Values::count(0));
    }

    #[test]
    fn a_read_where_some_count_leaves_64_bits_is_no_misread() {
        let max = Sum::from(i64::MAX);
        let wide = values(false, &[(max, max + 1)]);
        assert!(wide.leaves_64_bits() && !values(true, &[(max, max)]).leaves_64_bits());
        assert_eq!(misread(&wide, Some(-2)), None);
        assert_eq!(misread(&wide, None), None);
    }

    #[test]
    fn distances_past_i64_pick_the_nearer_side_and_saturate() {
        let (min, max) = (Sum::from(i64::MIN), Sum::from(i64::MAX));
        // 0 is 2^63 above i64::MIN and 2^63 - 1 below i64::MAX.
        let ends = values(false, &[(min, min), (max, max)]);
        assert_eq!(
            misread(&ends, Some(0)),
            Some(Misread::Under(i64::MAX, i64::MAX))
        );
        let top = values(false, &[(max, max)]);
        assert_eq!(
            misread(&top, Some(i64::MIN)),
            Some(Misread::Under(i64::MAX, i64::MAX))
        );
    }
}

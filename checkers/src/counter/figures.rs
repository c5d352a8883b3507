//! What the counter checker reports: per read, per key and for the run.

use super::overflow::Overflow;
use super::values::{misread, Misread, Values};
use crate::ideal::Sum;
use crate::resurrection::ResurrectionResult;
use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many of the largest errors results.json lists.
pub const ERRORS_KEPT: usize = 100;

/// Of those, how many of the worst of each kind (overcount, undercount, resurrection,
/// existence) are kept whatever the other kinds hold: every kind found has examples.
pub const EACH_KIND_KEPT: usize = 10;

/// How many op indices an error names for its bound.
pub const BOUND_OPS_KEPT: usize = 20;

/// Reads that were off in one direction: how many, the largest and the total error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Magnitude {
    /// Reads off in this direction.
    pub reads: u64,
    /// The largest error of one read.
    pub max: i64,
    /// The errors added up.
    #[serde(with = "super::wide")]
    pub sum: Sum,
    /// The largest error of one read relative to the bound it broke (1.0 = off by the
    /// whole count; a bound of 0 counts as 1).
    #[serde(default)]
    pub max_relative: f64,
}

impl Magnitude {
    /// Counts one read off by `error` from a bound of `bound`.
    pub fn record(&mut self, error: i64, bound: i64) {
        self.reads += 1;
        self.max = self.max.max(error);
        self.sum = self.sum.saturating_add(Sum::from(error));
        let relative = error as f64 / bound.unsigned_abs().max(1) as f64;
        self.max_relative = self.max_relative.max(relative);
    }
}

/// The counter checker's figures for one key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyFigures {
    /// Ok reads checked.
    pub reads: u64,
    /// Reads above what any order allows (resurrections apart).
    pub overcount: Magnitude,
    /// Reads below what any order allows.
    pub undercount: Magnitude,
    /// Reads that brought back counts from before a delete.
    #[serde(default)]
    pub resurrected: u64,
    /// Reads that returned 0 where the counter must be absent.
    #[serde(default)]
    pub absent_as_zero: u64,
    /// Reads that returned `null` where the counter must exist, holding 0.
    #[serde(default)]
    pub zero_as_absent: u64,
    /// Reads some legal order gives a true sum outside `i64`.
    #[serde(default)]
    pub overflow_reads: u64,
}

/// One ok read with the values the history allows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadBounds {
    /// The counter read.
    pub key: String,
    /// Index of the read's invoke.
    pub invoke_index: u64,
    /// Index of the read's ok completion.
    pub index: u64,
    /// Time of the invoke, ns.
    pub invoke_time: u64,
    /// Time of the completion, ns.
    pub time: u64,
    /// What the read returned (`None`: `null`, the counter was absent; 0 under
    /// `absent_is_zero`).
    pub value: Option<i64>,
    /// The smallest count some legal order allows (absent as 0; held to `i64`, see `Overflow`).
    pub lower: i64,
    /// The largest count some legal order allows (absent as 0; held to `i64`, see `Overflow`).
    pub upper: i64,
    /// The states some legal order allows: absent, and the counts.
    pub allowed: Values,
    /// The node that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// For a read out of bounds: the invoke indices of the adds that make up the bound it
    /// broke (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bound_ops: Vec<u64>,
    /// The bound also counts every op that completed by this index, folded together
    /// (`bound_ops` names only the later ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_through: Option<u64>,
    /// The last delete that definitely completed before the read began, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_delete: Option<u64>,
    /// The read brought back counts from before that delete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resurrection: bool,
}

impl ReadBounds {
    /// The read's value as a number: an absent counter counts as 0 (for charts).
    pub fn count(&self) -> i64 {
        self.value.unwrap_or(0)
    }

    /// What is wrong with the read, if no allowed state explains it (none for an overflow).
    pub fn misread(&self) -> Option<Misread> {
        misread(&self.allowed, self.value)
    }

    /// Whether some legal order gives the read a true sum outside `i64`: an overflow.
    pub fn leaves_64_bits(&self) -> bool {
        self.allowed.leaves_64_bits()
    }

    /// By how much the read exceeded the nearest allowed count below it (0 when allowed,
    /// or when the nearest allowed count is above it).
    pub fn overcount(&self) -> i64 {
        match self.error() {
            Some((error, Direction::Over, _)) => error,
            _ => 0,
        }
    }

    /// By how much the read fell short of the nearest allowed count above it.
    pub fn undercount(&self) -> i64 {
        match self.error() {
            Some((error, Direction::Under, _)) => error,
            _ => 0,
        }
    }

    /// For a read off in count: the distance to the nearest allowed count (absent as 0),
    /// its direction and that count. None when allowed, or wrong only about existence.
    pub fn error(&self) -> Option<(i64, Direction, i64)> {
        match self.misread()? {
            Misread::Over(by, nearest) => Some((by, Direction::Over, nearest)),
            Misread::Under(by, nearest) => Some((by, Direction::Under, nearest)),
            Misread::AbsentAsZero | Misread::ZeroAsAbsent => None,
        }
    }
}

impl ReadBounds {
    /// The overflow finding of this read, if some state it allows leaves `i64`.
    pub fn overflow(&self) -> Option<Overflow> {
        if !self.allowed.leaves_64_bits() {
            return None;
        }
        let (lower, upper) = self.allowed.span()?;
        Some(Overflow {
            key: self.key.clone(),
            invoke_index: self.invoke_index,
            index: self.index,
            time: self.time,
            value: self.value,
            lower,
            upper,
            allowed: self.allowed.clone(),
            node: self.node.clone(),
        })
    }

    /// The finding in words (`overcount by 3`, `0 where the counter must be absent`).
    pub fn finding(&self) -> Option<String> {
        Some(match self.misread()? {
            Misread::Over(by, _) if self.resurrection => format!("resurrection, {by} over"),
            Misread::Over(by, _) => format!("overcount by {by}"),
            Misread::Under(by, _) => format!("undercount by {by}"),
            Misread::AbsentAsZero => "0 where the counter must be absent".to_string(),
            Misread::ZeroAsAbsent => "null where the counter must exist, holding 0".to_string(),
        })
    }
}

/// Which way a read was off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Above every allowed value near it.
    Over,
    /// Below every allowed value near it.
    Under,
}

/// The counter checker's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterResult {
    /// Invalid when a read is out of bounds or overflows; unknown when some could not be checked.
    pub valid: Validity,
    /// Ok reads checked (each cell of a scan counts as one).
    pub reads: u64,
    /// Reads above what any order allows, resurrections apart.
    pub overcount: Magnitude,
    /// Reads below what any order allows.
    pub undercount: Magnitude,
    /// Reads that returned 0 where the counter must be absent (deleted, or never written).
    #[serde(default)]
    pub absent_as_zero: u64,
    /// Reads that returned `null` where the counter must exist, holding 0.
    #[serde(default)]
    pub zero_as_absent: u64,
    /// Reads some legal order gives a true sum outside `i64`, not judged as over- or undercounts.
    #[serde(default)]
    pub overflow_reads: u64,
    /// The first overflowing reads, earliest first (at most 100).
    #[serde(default)]
    pub overflows: Vec<Overflow>,
    /// Reads this checker could not judge (a value that is not a number).
    #[serde(default)]
    pub unchecked_reads: u64,
    /// The sum of the deltas of adds that completed ok, what relative errors compare to.
    #[serde(default, with = "super::wide")]
    pub increments: Sum,
    /// Figures per key.
    #[serde(default)]
    pub keys: BTreeMap<String, KeyFigures>,
    /// The largest errors, worst first (resurrections and existence misreads included).
    #[serde(default)]
    pub errors: Vec<ReadBounds>,
    /// Reads kept for charts when asked for, by index: every read out of bounds and a
    /// thinned series of each counter's reads that fit; never serialized.
    #[serde(skip)]
    pub read_bounds: Vec<ReadBounds>,
    /// The states each counter may be in once the history has ended; never serialized.
    #[serde(skip)]
    pub final_values: BTreeMap<String, Values>,
    /// The reads found to be resurrections, grouped; moved to its own checker's key.
    #[serde(skip)]
    pub resurrection: ResurrectionResult,
}

impl CounterResult {
    /// A read of `key` that fits, its bounds not worked out.
    pub(super) fn record_fit(&mut self, key: String) {
        self.reads += 1;
        self.keys.entry(key).or_default().reads += 1;
    }

    /// A read judged in full (none: unchecked).
    pub(super) fn record(&mut self, bounds: Option<&ReadBounds>) {
        let Some(bounds) = bounds else {
            self.unchecked_reads += 1;
            return;
        };
        let figures = self.keys.entry(bounds.key.clone()).or_default();
        self.reads += 1;
        figures.reads += 1;
        if let Some(overflow) = bounds.overflow() {
            self.overflow_reads += 1;
            figures.overflow_reads += 1;
            super::overflow::keep(&mut self.overflows, overflow);
        } else if let Some(misread) = bounds.misread() {
            match misread {
                _ if bounds.resurrection => figures.resurrected += 1,
                Misread::Over(error, nearest) => {
                    self.overcount.record(error, nearest);
                    figures.overcount.record(error, nearest);
                }
                Misread::Under(error, nearest) => {
                    self.undercount.record(error, nearest);
                    figures.undercount.record(error, nearest);
                }
                Misread::AbsentAsZero => {
                    self.absent_as_zero += 1;
                    figures.absent_as_zero += 1;
                }
                Misread::ZeroAsAbsent => {
                    self.zero_as_absent += 1;
                    figures.zero_as_absent += 1;
                }
            }
            self.errors.push(bounds.clone());
            if self.errors.len() >= 2 * ERRORS_KEPT {
                self.trim_errors();
            }
        }
    }

    /// Keeps the worst errors only, worst first, with the worst [`EACH_KIND_KEPT`] of each
    /// kind among them.
    pub fn trim_errors(&mut self) {
        self.errors
            .sort_by_key(|r| (std::cmp::Reverse(error_of(r)), r.index));
        let mut per_kind = [0; 4];
        let mut keep: Vec<bool> = (self.errors.iter())
            .map(|r| {
                let n = &mut per_kind[r.wrong_kind() as usize];
                *n += 1;
                *n <= EACH_KIND_KEPT
            })
            .collect();
        let mut room = ERRORS_KEPT.saturating_sub(keep.iter().filter(|&&k| k).count());
        for k in keep.iter_mut().filter(|k| !**k) {
            if room == 0 {
                break;
            }
            (*k, room) = (true, room - 1);
        }
        let mut kept = keep.into_iter();
        self.errors.retain(|_| kept.next().unwrap_or(false));
    }
}

/// The kinds of wrong read, each of which keeps examples of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrongRead {
    /// It brought back counts a delete erased.
    Resurrection,
    /// Above what any order allows.
    Overcount,
    /// Below what any order allows.
    Undercount,
    /// Wrong only about whether the counter exists.
    Existence,
}

impl ReadBounds {
    /// What kind of wrong read this is (one out of bounds or wrong about existence).
    pub fn wrong_kind(&self) -> WrongRead {
        match (
            self.resurrection,
            self.overcount() > 0,
            self.undercount() > 0,
        ) {
            (true, _, _) => WrongRead::Resurrection,
            (_, true, _) => WrongRead::Overcount,
            (_, _, true) => WrongRead::Undercount,
            _ => WrongRead::Existence,
        }
    }
}

/// How far a read was from the nearest allowed value, for ranking: a read wrong only
/// about existence ranks with errors of 1.
pub fn error_of(read: &ReadBounds) -> i64 {
    read.misread().map_or(0, |m| m.error().max(1))
}

/// Keeps the first `BOUND_OPS_KEPT` ids.
pub fn kept(mut ids: Vec<u64>) -> Vec<u64> {
    ids.sort_unstable();
    ids.truncate(BOUND_OPS_KEPT);
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrong(index: u64, allowed: Sum, value: i64, resurrection: bool) -> ReadBounds {
        ReadBounds {
            key: "k/a".to_string(),
            index,
            value: Some(value),
            allowed: Values::count(allowed),
            resurrection,
            ..ReadBounds::default()
        }
    }

    #[test]
    fn trimming_keeps_examples_of_a_kind_that_larger_errors_crowd_out() {
        // 150 resurrections 300 back, then 5 undercounts of 2 and 5 overcounts of 1.
        let mut result = CounterResult {
            errors: (0..150).map(|i| wrong(i, 10, 310, true)).collect(),
            ..CounterResult::default()
        };
        result
            .errors
            .extend((150..155).map(|i| wrong(i, 10, 8, false)));
        result
            .errors
            .extend((155..160).map(|i| wrong(i, 10, 11, false)));
        result.trim_errors();
        assert_eq!(result.errors.len(), ERRORS_KEPT);
        assert_eq!(
            result.errors.iter().filter(|r| r.undercount() == 2).count(),
            5
        );
        assert_eq!(
            result.errors.iter().filter(|r| r.overcount() == 1).count(),
            5
        );
        // Still worst first.
        assert!(result.errors[0].resurrection);
        let errors: Vec<i64> = result.errors.iter().map(error_of).collect();
        assert!(errors.windows(2).all(|w| w[0] >= w[1]), "{errors:?}");
        // Without crowding, trimming only sorts.
        let mut few = CounterResult {
            errors: vec![wrong(1, 10, 11, false), wrong(0, 10, 30, true)],
            ..CounterResult::default()
        };
        few.trim_errors();
        assert_eq!(
            few.errors.iter().map(|r| r.index).collect::<Vec<_>>(),
            [0, 1]
        );
    }
}

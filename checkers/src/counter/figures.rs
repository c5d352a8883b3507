//! What the counter checker reports: per read, per key and for the run.

use super::ranges::RangeSet;
use crate::resurrection::ResurrectionResult;
use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many of the largest errors results.json lists.
pub const ERRORS_KEPT: usize = 100;

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
    pub sum: i64,
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
        self.sum = self.sum.saturating_add(error);
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
    /// What the read returned (`None`: the counter was absent, checked as 0).
    pub value: Option<i64>,
    /// The smallest value some legal order allows.
    pub lower: i64,
    /// The largest value some legal order allows.
    pub upper: i64,
    /// The values allowed, when they are not every value from `lower` to `upper`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<RangeSet>,
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
    /// The read's value as a number: an absent counter counts as 0.
    pub fn count(&self) -> i64 {
        self.value.unwrap_or(0)
    }

    /// The values allowed.
    pub fn allowed_values(&self) -> RangeSet {
        self.allowed
            .clone()
            .unwrap_or_else(|| RangeSet::from_ranges(vec![(self.lower, self.upper)]))
    }

    /// By how much the read exceeded the nearest allowed value below it (0 when allowed,
    /// or when the nearest allowed value is above it).
    pub fn overcount(&self) -> i64 {
        match self.error() {
            Some((error, Direction::Over, _)) => error,
            _ => 0,
        }
    }

    /// By how much the read fell short of the nearest allowed value above it.
    pub fn undercount(&self) -> i64 {
        match self.error() {
            Some((error, Direction::Under, _)) => error,
            _ => 0,
        }
    }

    /// The distance to the nearest allowed value, its direction and that value; none when
    /// the value is allowed.
    pub fn error(&self) -> Option<(i64, Direction, i64)> {
        let allowed = self.allowed_values();
        let value = self.count();
        if allowed.contains(value) {
            return None;
        }
        let (below, above) = allowed.neighbours(value);
        let over = below.map(|b| (value.saturating_sub(b), Direction::Over, b));
        let under = above.map(|a| (a.saturating_sub(value), Direction::Under, a));
        match (over, under) {
            (Some(o), Some(u)) => Some(if u.0 < o.0 { u } else { o }),
            (o, u) => o.or(u),
        }
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
    /// Invalid when any read is out of bounds; unknown when some reads could not be checked.
    pub valid: Validity,
    /// Ok reads checked (each cell of a scan counts as one).
    pub reads: u64,
    /// Reads above what any order allows, resurrections apart.
    pub overcount: Magnitude,
    /// Reads below what any order allows.
    pub undercount: Magnitude,
    /// Reads this checker could not judge (a value that is not a number).
    #[serde(default)]
    pub unchecked_reads: u64,
    /// The sum of the deltas of adds that completed ok: what relative errors compare to.
    #[serde(default)]
    pub increments: i64,
    /// Figures per key.
    #[serde(default)]
    pub keys: BTreeMap<String, KeyFigures>,
    /// The largest errors, worst first (resurrections included, marked).
    #[serde(default)]
    pub errors: Vec<ReadBounds>,
    /// Every checked read, kept only when asked for (charts); never serialized.
    #[serde(skip)]
    pub read_bounds: Vec<ReadBounds>,
    /// The values each counter may hold once the history has ended; never serialized.
    #[serde(skip)]
    pub final_values: BTreeMap<String, RangeSet>,
    /// The reads found to be resurrections, grouped; moved to its own checker's key.
    #[serde(skip)]
    pub resurrection: ResurrectionResult,
}

impl CounterResult {
    /// Keeps the worst errors only, worst first.
    pub fn trim_errors(&mut self) {
        self.errors
            .sort_by_key(|r| (std::cmp::Reverse(error_of(r)), r.index));
        self.errors.truncate(ERRORS_KEPT);
    }
}

/// How far a read was from the nearest allowed value.
pub fn error_of(read: &ReadBounds) -> i64 {
    read.error().map_or(0, |(error, _, _)| error)
}

/// Keeps the first `BOUND_OPS_KEPT` ids.
pub fn kept(mut ids: Vec<u64>) -> Vec<u64> {
    ids.sort_unstable();
    ids.truncate(BOUND_OPS_KEPT);
    ids
}

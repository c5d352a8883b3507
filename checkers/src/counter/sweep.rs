//! The values one read may return: every legal placement of the window's ops around it.
//!
//! Times are doubled history indices: event `e` sits at `2e`, and an op can take effect at
//! any odd point between its invoke and its completion. An ideal counter read at point `r`
//! returns the adds placed after the last delete placed before `r`. So for a read we try
//! every last delete `D` (or none, leaving the settled past, `base`, in force) at every
//! point `d`, and every read point `r > d`; given `(d, r)` each add is forced in (it must
//! lie in `(d, r)`), free (it may or may not), or out, and each other delete must fit
//! outside `(d, r)`. Only points just after an event need trying, since nothing changes
//! between events. Free adds of ±1 make every sum between their negatives and positives,
//! so the union is exact then; with larger deltas it is the enclosing range, never narrower.

use super::frame::{End, Frame, WindowOp};
use super::ranges::RangeSet;

/// Which placement produced a range of values, to name the ops behind a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The last delete before the read (its op id), or none: the settled past stands.
    pub delete: Option<u64>,
    /// Where that delete took effect.
    pub delete_at: u64,
    /// Where the read took effect.
    pub read_at: u64,
}

/// A range of values one placement allows (a placement may allow several).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The smallest value.
    pub lo: i64,
    /// The largest value.
    pub hi: i64,
    /// The placement.
    pub choice: Choice,
}

impl Outcome {
    /// Whether `value` is in the range.
    pub fn contains(&self, value: i64) -> bool {
        self.lo <= value && value <= self.hi
    }
}

/// The sums of a placement's adds: one range when every free delta is ±1.
enum Sums {
    Range(i64, i64),
    Set(RangeSet),
}

/// Op id standing for a delete that timed out before the settled past and may land anywhere.
pub const FLOATING_DELETE: u64 = u64::MAX;

/// How one add stands for a placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Out,
    Free,
    Forced,
}

/// The values a read placed anywhere in `reads` (odd points, inclusive) may return.
pub fn allowed(frame: &Frame, reads: (u64, u64)) -> Vec<Outcome> {
    let (first, last) = (reads.0.max(frame.floor | 1), reads.1);
    if first > last {
        return Vec::new();
    }
    let read_points = points_within(frame.ops, first, last);
    let mut outcomes = Vec::new();
    for delete in deletes(frame) {
        let (id, start, end) = delete;
        let lowest = frame.floor.max(2 * start + 1) | 1;
        let highest = end.map_or(last, |b| (2 * b - 1).min(last));
        let delete_points = match id {
            None => vec![0],
            Some(_) => points_within(frame.ops, lowest, highest),
        };
        for &delete_at in &delete_points {
            for &read_at in read_points.iter().filter(|&&r| r >= delete_at) {
                let choice = Choice {
                    delete: id,
                    delete_at,
                    read_at,
                };
                if let Some(sums) = evaluate(frame, choice) {
                    push_outcomes(frame, choice, &sums, &mut outcomes);
                }
            }
        }
    }
    outcomes
}

/// The union of the outcomes' values.
pub fn values(outcomes: &[Outcome]) -> RangeSet {
    RangeSet::from_ranges(outcomes.iter().map(|o| (o.lo, o.hi)).collect())
}

/// The ids of the adds that make up a placement's lowest or highest value.
pub fn ops_behind(frame: &Frame, choice: Choice, highest: bool) -> Vec<u64> {
    frame
        .ops
        .iter()
        .filter(|op| match (op.delta, part(frame, op, choice)) {
            (Some(_), Part::Forced) => true,
            (Some(delta), Part::Free) => (delta > 0) == highest && delta != 0,
            _ => false,
        })
        .map(|op| op.id)
        .collect()
}

/// Every candidate last delete: none, each delete of the window, the floating one.
fn deletes(frame: &Frame) -> Vec<(Option<u64>, u64, Option<u64>)> {
    let mut all = vec![(None, 0, None)];
    for op in frame.ops.iter().filter(|op| op.delta.is_none()) {
        all.push((Some(op.id), op.start, op.end.at()));
    }
    if frame.floating_delete {
        all.push((Some(FLOATING_DELETE), 0, None));
    }
    all
}

/// `first` and every point just after an event of the window, up to `last`.
fn points_within(ops: &[WindowOp], first: u64, last: u64) -> Vec<u64> {
    if first > last {
        return Vec::new();
    }
    let mut points = vec![first];
    for op in ops {
        for event in [Some(op.start), op.end.at()].into_iter().flatten() {
            let point = 2 * event + 1;
            if point > first && point <= last {
                points.push(point);
            }
        }
    }
    points.sort_unstable();
    points.dedup();
    points
}

/// Adds each range of `sums` plus the floating adds (plus the settled past, when no delete
/// of the window came last), skipping a repeat of the range just added.
fn push_outcomes(frame: &Frame, choice: Choice, sums: &Sums, out: &mut Vec<Outcome>) {
    let single;
    let sums = match sums {
        Sums::Range(lo, hi) => {
            single = [(*lo, *hi)];
            &single[..]
        }
        Sums::Set(set) => set.ranges(),
    };
    let no_base = [(0, 0)];
    let base = match choice.delete {
        None => frame.base.ranges(),
        Some(_) => &no_base[..],
    };
    for &(a, b) in sums {
        for &(c, d) in frame.floating.ranges() {
            for &(e, f) in base {
                let (lo, hi) = (
                    a.saturating_add(c).saturating_add(e),
                    b.saturating_add(d).saturating_add(f),
                );
                if out.last().is_some_and(|o| (o.lo, o.hi) == (lo, hi)) {
                    continue;
                }
                out.push(Outcome { lo, hi, choice });
            }
        }
    }
}

/// The sums a placement allows from the window's adds, or none if some other delete cannot
/// be placed outside `(delete_at, read_at)`. Free adds of ±1 make every sum between their
/// negatives and positives; larger ones are summed subset by subset.
fn evaluate(frame: &Frame, choice: Choice) -> Option<Sums> {
    let (mut forced, mut low, mut high, mut units) = (0i64, 0i64, 0i64, true);
    for op in frame.ops {
        match op.delta {
            None if Some(op.id) == choice.delete => {}
            None => {
                if !fits_outside(op, choice) {
                    return None;
                }
            }
            Some(delta) => match part(frame, op, choice) {
                Part::Forced => forced = forced.saturating_add(delta),
                Part::Free => {
                    low = low.saturating_add(delta.min(0));
                    high = high.saturating_add(delta.max(0));
                    units &= delta.unsigned_abs() <= 1;
                }
                Part::Out => {}
            },
        }
    }
    if units {
        return Some(Sums::Range(forced + low, forced + high));
    }
    // Units make one range; each larger delta splits it in two.
    let large = frame.ops.iter().filter_map(|op| match op.delta {
        Some(delta) if delta.unsigned_abs() > 1 && part(frame, op, choice) == Part::Free => {
            Some(delta)
        }
        _ => None,
    });
    let (large_low, large_high) = large
        .clone()
        .fold((0, 0), |(l, h), d| (l + d.min(0), h + d.max(0)));
    let units = (
        forced.saturating_add(low).saturating_sub(large_low),
        forced.saturating_add(high).saturating_sub(large_high),
    );
    let sums = RangeSet::subset_sums(units, large);
    Some(Sums::Set(sums))
}

/// Whether a delete other than the chosen one can lie outside `(delete_at, read_at)`.
fn fits_outside(op: &WindowOp, choice: Choice) -> bool {
    if 2 * op.start > choice.read_at {
        return true;
    }
    let before_the_chosen_delete = choice.delete.is_some() && 2 * op.start < choice.delete_at;
    may_not_happen(op) || before_the_chosen_delete || ends_after(op, choice.read_at)
}

fn part(frame: &Frame, op: &WindowOp, choice: Choice) -> Part {
    let after_delete = match choice.delete {
        None => true,
        Some(_) => op.end.at().is_none_or(|b| 2 * b > choice.delete_at),
    };
    let can_be_in = 2 * op.start < choice.read_at && after_delete;
    if !can_be_in {
        return Part::Out;
    }
    let can_be_out = may_not_happen(op)
        || ends_after(op, choice.read_at)
        || match choice.delete {
            Some(_) => 2 * op.start < choice.delete_at,
            // A timed-out delete may have struck before the settled past ended, after an
            // add that began before then: that add may be gone.
            None => frame.floating_delete && 2 * op.start < frame.floor,
        };
    if can_be_out {
        Part::Free
    } else {
        Part::Forced
    }
}

fn may_not_happen(op: &WindowOp) -> bool {
    op.loose || !matches!(op.end, End::At(_))
}

fn ends_after(op: &WindowOp, point: u64) -> bool {
    op.end.at().is_none_or(|b| 2 * b > point)
}

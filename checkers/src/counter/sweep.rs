//! The values one read may return: every legal placement of the window's ops around it.
//!
//! Times are doubled history indices: event `e` sits at `2e`, and an op can take effect at
//! any odd point between its invoke and its completion. An ideal counter read at point `r`
//! returns the adds placed after the last delete placed before `r`, or absent when there
//! are none. So for a read we try every last delete `D` (or none, leaving the settled past,
//! `base`, in force) at every point `d`, and every read point `r > d`; given `(d, r)` each
//! add is forced in (it must lie in `(d, r)`), free (it may or may not), or out, and each
//! other delete must fit outside `(d, r)`. Only points just after an event need trying,
//! since nothing changes between events. Free adds of ±1 make every sum between their
//! negatives and positives, so the union is exact then; with larger deltas it is the
//! subset sums, merged past 16 ranges, never narrower. Sums are `Sum` (i128): exact however
//! far past `i64` the adds take them.

use super::frame::{End, Frame, WindowOp};
use super::ranges::RangeSet;
use super::subsets::{Spans, Subsets};
use super::values::Values;
use crate::ideal::{Count, Reading, Sum};

/// Which placement produced a range of values, to name the ops behind a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The last delete before the read (its op id), or none: the settled past stands.
    pub delete: Option<u64>,
    /// Where that delete took effect.
    pub delete_at: u64,
    /// Where the read took effect.
    pub read_at: u64,
    /// A timed-out delete struck before the settled past ended (the settled states it left,
    /// or the chosen delete timed out): an add in play that began before then may be gone.
    pub struck: bool,
}

/// What one placement allows: absent, or a range of counts (a placement may allow several).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The counter is absent (`lo` and `hi` are then 0).
    pub absent: bool,
    /// The smallest count.
    pub lo: Sum,
    /// The largest count.
    pub hi: Sum,
    /// The placement.
    pub choice: Choice,
}

impl Outcome {
    /// Whether a read that returned `returned` fits this outcome, as `reading` compares.
    pub fn fits(&self, reading: Reading, returned: Count) -> bool {
        let holds = |n| !self.absent && self.lo <= n && n <= self.hi;
        reading.admits(self.absent, holds, returned)
    }
}

/// The sums of a placement's free adds: one range when every free delta is 0 or ±1.
enum Free {
    /// Every sum from `all.0` to `all.1`; the non-empty subsets give `some`, if any.
    Units {
        all: [(Sum, Sum); 1],
        some: Option<[(Sum, Sum); 1]>,
    },
    /// Subset by subset: every sum, and those of the non-empty subsets when a placement
    /// needs them (no add forced, nothing before: the counter may stay absent).
    Set { all: RangeSet, some: RangeSet },
}

impl Free {
    fn some(&self) -> Spans<'_> {
        match self {
            Free::Units { some: Some(r), .. } => Spans {
                ranges: r,
                zero: false,
            },
            Free::Units { some: None, .. } => Spans::NONE,
            Free::Set { some, .. } => Spans {
                ranges: some.ranges(),
                zero: false,
            },
        }
    }

    fn all(&self) -> Spans<'_> {
        match self {
            Free::Units { all, .. } => Spans {
                ranges: all,
                zero: false,
            },
            Free::Set { all, .. } => Spans {
                ranges: all.ranges(),
                zero: false,
            },
        }
    }
}

/// A placement's adds: the sum of those forced in (none when no add is), and the free ones.
struct Placed {
    forced: Option<Sum>,
    free: Free,
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
    let mut outcomes = Vec::new();
    placements(frame, reads, &mut outcomes, |_| false);
    outcomes
}

/// Whether a read placed somewhere in `reads` may return what `fits` accepts: placements
/// are tried in the order [`allowed`] lists them, up to the first outcome `fits` accepts.
pub fn admits(frame: &Frame, reads: (u64, u64), fits: impl Fn(&Outcome) -> bool) -> bool {
    placements(frame, reads, &mut Vec::new(), fits)
}

/// Whether no placement of the frame can make a count outside `i64`: the settled states,
/// every add of the window and every floating add together stay within it.
pub fn within_64_bits(frame: &Frame) -> bool {
    let widest = |ranges: &[(Sum, Sum)]| {
        ranges
            .iter()
            .map(|&(lo, hi)| lo.unsigned_abs().max(hi.unsigned_abs()))
            .max()
            .unwrap_or(0)
    };
    let settled = widest(frame.base.counts.ranges()).max(widest(frame.struck.counts.ranges()));
    let floating = widest(frame.floating.all().ranges);
    let window: u128 = frame
        .ops
        .iter()
        .filter_map(|op| op.delta)
        .map(|delta| u128::from(delta.unsigned_abs()))
        .sum();
    settled.saturating_add(floating).saturating_add(window) <= i64::MAX as u128
}

/// Every placement of a read in `reads` into `outcomes`, in order, up to the first outcome
/// `stop` accepts; whether one did.
fn placements(
    frame: &Frame,
    reads: (u64, u64),
    outcomes: &mut Vec<Outcome>,
    stop: impl Fn(&Outcome) -> bool,
) -> bool {
    let (first, last) = (reads.0.max(frame.floor | 1), reads.1);
    if first > last {
        return false;
    }
    let read_points = points_within(frame.ops, first, last);
    let mut delete_points = Vec::new();
    for delete in deletes(frame) {
        let (id, start, end, struck) = delete;
        let lowest = frame.floor.max(2 * start + 1) | 1;
        let highest = end.map_or(last, |b| (2 * b - 1).min(last));
        delete_points.clear();
        match id {
            None => delete_points.push(0),
            Some(_) => points_into(frame.ops, lowest, highest, &mut delete_points),
        };
        for &delete_at in &delete_points {
            for &read_at in read_points.iter().filter(|&&r| r >= delete_at) {
                let choice = Choice {
                    delete: id,
                    delete_at,
                    read_at,
                    struck,
                };
                if let Some(placed) = evaluate(frame, choice) {
                    let new = outcomes.len();
                    push_outcomes(frame, choice, &placed, outcomes);
                    if outcomes[new..].iter().any(&stop) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// The union of the outcomes' values.
pub fn values(outcomes: &[Outcome]) -> Values {
    values_where(outcomes, |_| true)
}

/// The union of the values of the outcomes that `keep` keeps.
pub fn values_where(outcomes: &[Outcome], keep: impl Fn(&Outcome) -> bool) -> Values {
    let mut absent = false;
    let mut counts = Vec::with_capacity(outcomes.len());
    for o in outcomes.iter().filter(|o| keep(o)) {
        match o.absent {
            true => absent = true,
            false => counts.push((o.lo, o.hi)),
        }
    }
    Values {
        absent,
        counts: RangeSet::from_ranges(counts),
    }
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

/// Every candidate last delete (its id, invoke, completion and whether it timed out):
/// none (from the clean settled states, and from those a timed-out delete left), each
/// delete of the window, the floating one.
fn deletes<'a>(
    frame: &'a Frame,
) -> impl Iterator<Item = (Option<u64>, u64, Option<u64>, bool)> + 'a {
    let clean = std::iter::once((None, 0, None, false));
    let struck = (!frame.struck.is_empty()).then_some((None, 0, None, true));
    let window = frame.ops.iter().filter(|op| op.delta.is_none()).map(|op| {
        let timed_out = matches!(op.end, End::Never(_));
        (Some(op.id), op.start, op.end.at(), timed_out)
    });
    let floating = frame
        .floating_delete
        .then_some((Some(FLOATING_DELETE), 0, None, true));
    clean.chain(struck).chain(window).chain(floating)
}

/// `first` and every point just after an event of the window, up to `last`.
fn points_within(ops: &[WindowOp], first: u64, last: u64) -> Vec<u64> {
    let mut points = Vec::new();
    points_into(ops, first, last, &mut points);
    points
}

/// `first` and every point just after an event of the window, up to `last`, into `points`
/// (empty).
fn points_into(ops: &[WindowOp], first: u64, last: u64, points: &mut Vec<u64>) {
    if first > last {
        return;
    }
    points.push(first);
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
}

/// Adds what a placement allows: its adds, the floating adds and, when no delete of the
/// window came last, the settled past. The counter is absent when no add took effect since
/// the last delete (or ever); a repeat of the range just added is skipped.
fn push_outcomes(frame: &Frame, choice: Choice, placed: &Placed, out: &mut Vec<Outcome>) {
    let floating = frame.floating;
    let settled = if choice.struck {
        frame.struck
    } else {
        frame.base
    };
    let (base_absent, base) = match choice.delete {
        None => (settled.absent, settled.counts.ranges()),
        Some(_) => (true, &[][..]),
    };
    let mut push = |lo: Sum, hi: Sum| {
        let repeat =
            |o: &Outcome| !o.absent && (o.lo, o.hi) == (lo, hi) && o.choice.struck == choice.struck;
        if out.last().is_some_and(repeat) {
            return;
        }
        out.push(Outcome {
            absent: false,
            lo,
            hi,
            choice,
        });
    };
    let mut combine = |start: (Sum, Sum), adds: Spans, floats: Spans| {
        for (a, b) in adds.iter() {
            for (c, d) in floats.iter() {
                push(
                    start.0.saturating_add(a).saturating_add(c),
                    start.1.saturating_add(b).saturating_add(d),
                );
            }
        }
    };
    let start = |shift: Sum| {
        move |(lo, hi): (Sum, Sum)| (lo.saturating_add(shift), hi.saturating_add(shift))
    };
    match placed.forced {
        // Some add took effect: an absent start counts as 0.
        Some(forced) => {
            let starts = Spans {
                ranges: base,
                zero: base_absent,
            };
            for s in starts.iter().map(start(forced)) {
                combine(s, placed.free.all(), floating.all());
            }
        }
        None => {
            for &s in base {
                combine(s, placed.free.all(), floating.all());
            }
            if base_absent {
                // From absent: some free add took effect, or only floating ones, or none.
                combine((0, 0), placed.free.some(), floating.all());
                combine((0, 0), Spans::ZERO, floating.some());
                out.push(Outcome {
                    absent: true,
                    lo: 0,
                    hi: 0,
                    choice,
                });
            }
        }
    }
}

/// The adds a placement allows from the window, or none if some other delete cannot be
/// placed outside `(delete_at, read_at)`. Free adds of 0 and ±1 make every sum between
/// their negatives and positives; larger ones are summed subset by subset.
fn evaluate(frame: &Frame, choice: Choice) -> Option<Placed> {
    let (mut forced, mut any_forced): (Sum, bool) = (0, false);
    // The free units (0 and ±1), apart from the larger free deltas.
    let (mut low, mut high, mut zero, mut large): (Sum, Sum, bool, bool) = (0, 0, false, false);
    for op in frame.ops {
        match op.delta {
            None if Some(op.id) == choice.delete => {}
            None => {
                if !fits_outside(op, choice) {
                    return None;
                }
            }
            Some(delta) => match part(frame, op, choice) {
                Part::Forced => {
                    forced = forced.saturating_add(Sum::from(delta));
                    any_forced = true;
                }
                Part::Free if delta.unsigned_abs() > 1 => large = true,
                Part::Free => {
                    low = low.saturating_add(Sum::from(delta.min(0)));
                    high = high.saturating_add(Sum::from(delta.max(0)));
                    zero |= delta == 0;
                }
                Part::Out => {}
            },
        }
    }
    let forced = any_forced.then_some(forced);
    // Non-empty subsets of units reach 0 only through an add of 0, or a +1 and a -1.
    let some = match (low < 0, high > 0) {
        (false, false) => zero.then_some([(0, 0)]),
        (true, true) => Some([(low, high)]),
        _ if zero => Some([(low, high)]),
        (true, false) => Some([(low, -1)]),
        (false, true) => Some([(1, high)]),
    };
    if !large {
        let free = Free::Units {
            all: [(low, high)],
            some,
        };
        return Some(Placed { forced, free });
    }
    // Each larger delta splits the sums of the units in two.
    let free_deltas = frame.ops.iter().filter_map(|op| match op.delta {
        Some(delta) if delta.unsigned_abs() > 1 && part(frame, op, choice) == Part::Free => {
            Some(delta)
        }
        _ => None,
    });
    let settled = if choice.struck {
        frame.struck
    } else {
        frame.base
    };
    let from_absent = choice.delete.is_some() || settled.absent;
    let free = if forced.is_none() && from_absent {
        // Every sum but 0 comes from a non-empty subset.
        let some = Subsets::nonempty_sums(some.map(|[r]| r), free_deltas);
        let all = RangeSet::union([some.clone(), RangeSet::single(0)]);
        Free::Set { all, some }
    } else {
        Free::Set {
            all: RangeSet::subset_sums((low, high), free_deltas),
            some: RangeSet::default(),
        }
    };
    Some(Placed { forced, free })
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
            // A timed-out delete that left these settled states may have struck after an
            // add that began before the settled past ended: that add may be gone.
            None => choice.struck && 2 * op.start < frame.floor,
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

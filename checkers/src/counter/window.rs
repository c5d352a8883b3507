//! One counter's history as the checker needs it: the settled past folded into a set of
//! values, the ops still in play kept one by one.
//!
//! The past is *settled* up to an event `h` once nothing later can reorder it: every op that
//! began by `h` has ended by `h` (or timed out, and then floats: it may take effect at any
//! later time or never), no unfinished read began by `h`, and no add still in play began
//! before a settled delete ended. The values the counter may hold just after `h` are then
//! all a later read needs of that past, so memory stays proportional to the ops in flight.

use super::frame::{End, Frame, WindowOp};
use super::ranges::RangeSet;
use super::subsets::Subsets;
use super::sweep::{self, Outcome};
use super::values::Values;
use crate::ideal::Sum;

/// How many events after its timeout an add stays in play, holding back the deletes after
/// it, so that a retry can still join it exactly. A later retry is judged loosely (it may
/// count for nothing), which only widens bounds. The driver retries at once.
pub const RETRY_GRACE: u64 = 200;

/// One counter: its settled past and the ops in play.
#[derive(Debug, Clone)]
pub struct Timeline {
    base: Values,
    struck: Values,
    floor: u64,
    floating: Vec<(u64, i64)>,
    frozen_sums: Subsets,
    floating_sums: Subsets,
    floating_delete: bool,
    last_settled_delete: Option<u64>,
    ops: Vec<WindowOp>,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            base: Values::absent(),
            struck: Values::default(),
            floor: 0,
            floating: Vec::new(),
            frozen_sums: Subsets::none(),
            floating_sums: Subsets::none(),
            floating_delete: false,
            last_settled_delete: None,
            ops: Vec::new(),
        }
    }
}

impl Timeline {
    fn frame(&self) -> Frame<'_> {
        Frame {
            base: &self.base,
            struck: &self.struck,
            floor: self.floor,
            floating: &self.floating_sums,
            floating_delete: self.floating_delete,
            ops: &self.ops,
        }
    }

    /// The values a read invoked at event `start` and ended at `end` may return.
    /// (Ops invoked after the read ended take no part: the sweep leaves them out.)
    pub fn allowed(&self, start: u64, end: u64) -> Vec<Outcome> {
        sweep::allowed(&self.frame(), (2 * start + 1, 2 * end - 1))
    }

    /// Whether a read invoked at event `start` and ended at `end` may return what `fits`
    /// accepts, stopping at the first placement that allows it.
    pub fn admits(&self, start: u64, end: u64, fits: impl Fn(&Outcome) -> bool) -> bool {
        sweep::admits(&self.frame(), (2 * start + 1, 2 * end - 1), fits)
    }

    /// Whether no read now judged can have a count outside `i64` among its allowed ones.
    pub fn within_64_bits(&self) -> bool {
        sweep::within_64_bits(&self.frame())
    }

    /// The ids of the adds behind an outcome's lowest or highest value.
    pub fn ops_behind(&self, outcome: &Outcome, highest: bool) -> Vec<u64> {
        sweep::ops_behind(&self.frame(), outcome.choice, highest)
    }

    /// The states the counter may be in just before event `event`, counting ops still open.
    pub fn values_before(&self, event: u64) -> Values {
        let point = (2 * event).saturating_sub(1).max(self.floor | 1);
        sweep::values(&sweep::allowed(&self.frame(), (point, point)))
    }

    /// Whether an op of the window that began before `event` is still open.
    pub fn open_before(&self, event: u64) -> bool {
        self.ops
            .iter()
            .any(|op| op.start < event && op.end == End::Open)
    }

    /// The last event the settled past holds, if any.
    pub fn settled_through(&self) -> Option<u64> {
        (self.floor > 0).then_some(self.floor / 2)
    }

    /// Adds an op that has just been invoked.
    pub fn push(&mut self, op: WindowOp) {
        self.ops.push(op);
    }

    /// Sets how op `id` ended; a failed op is dropped. Returns whether it was in the window.
    pub fn set_end(&mut self, id: u64, end: Option<End>) -> bool {
        let Some(at) = self.ops.iter().position(|op| op.id == id) else {
            return false;
        };
        match end {
            Some(end) => self.ops[at].end = end,
            None => {
                self.ops.remove(at);
            }
        }
        true
    }

    /// Takes back a floating add that a retry brought into play again. It may have struck
    /// before a delete the settled past holds, so it may count for nothing even if the
    /// retry succeeds.
    pub fn unfloat(&mut self, id: u64, delta: i64, start: u64) {
        self.floating.retain(|(floating, _)| *floating != id);
        self.refresh_floating_sums();
        let loose = self.floating_delete || self.last_settled_delete.is_some_and(|b| b > start);
        self.ops.push(WindowOp {
            id,
            delta: Some(delta),
            start,
            end: End::Open,
            loose,
        });
    }

    fn refresh_floating_sums(&mut self) {
        let deltas = self.floating.iter().map(|(_, delta)| *delta);
        let sums = deltas.fold(Subsets::none(), |sums, d| sums.with_optional(d));
        self.floating_sums = sums.join(&self.frozen_sums);
    }

    /// Forgets which op floating add `id` was: no retry can take it back any more.
    pub fn freeze(&mut self, id: u64) {
        if let Some(at) = self
            .floating
            .iter()
            .position(|(floating, _)| *floating == id)
        {
            let (_, delta) = self.floating.swap_remove(at);
            self.frozen_sums = self.frozen_sums.with_optional(delta);
        }
    }

    /// Settles the past up to event `limit` at most, as far as the ops in play allow, at
    /// event `now`. Returns the ids of adds that now float.
    pub fn settle(&mut self, limit: u64, now: u64) -> Vec<u64> {
        let Some(h) = self.settle_point(limit, now) else {
            return Vec::new();
        };
        let settles = |op: &WindowOp| match op.end {
            End::At(b) => b <= h,
            End::Never(_) => op.start <= h && op.delta.is_none(),
            End::Open => false,
        };
        let floats = |op: &WindowOp| match op.end {
            End::Never(at) => op.delta.is_some() && op.start <= h && at + RETRY_GRACE <= now,
            _ => false,
        };
        if !self.ops.iter().any(|op| settles(op) || floats(op)) {
            return Vec::new();
        }
        let settled: Vec<WindowOp> = self.ops.iter().filter(|op| settles(op)).cloned().collect();
        let floated: Vec<WindowOp> = self.ops.iter().filter(|op| floats(op)).cloned().collect();
        let point = 2 * h + 1;
        if !settled.is_empty() {
            (self.base, self.struck) = match self.sure_adds(&settled) {
                Some(sum) => (shifted(&self.base, sum), Values::default()),
                None => self.folded(&settled, point),
            };
        }
        for op in &floated {
            self.floating.push((op.id, op.delta.unwrap_or(0)));
            self.floating_sums = self.floating_sums.with_optional(op.delta.unwrap_or(0));
        }
        self.floating_delete |= settled.iter().any(|op| matches!(op.end, End::Never(_)));
        let deletes_ended = settled.iter().filter(|op| op.delta.is_none());
        if let Some(b) = deletes_ended.filter_map(|op| op.end.at()).max() {
            self.last_settled_delete = Some(b);
        }
        self.floor = point;
        self.ops.retain(|op| !settles(op) && !floats(op));
        floated.iter().map(|op| op.id).collect()
    }

    /// The settled past (the states left clean, and those a timed-out delete struck) once
    /// `settled`, all ended by `point`, are folded in: every legal placement of a read there.
    fn folded(&self, settled: &[WindowOp], point: u64) -> (Values, Values) {
        let frame = Frame {
            base: &self.base,
            struck: &self.struck,
            floor: self.floor,
            floating: &Subsets::none(),
            floating_delete: self.floating_delete,
            ops: settled,
        };
        let outcomes = sweep::allowed(&frame, (point, point));
        let clean = sweep::values_where(&outcomes, |o| !o.choice.struck);
        let struck = sweep::values_where(&outcomes, |o| o.choice.struck);
        (clean, struck)
    }

    /// The sum of `settled` when folding them in needs none of the sweep's placements: all
    /// adds that surely took effect (ok, not loose), and no struck states or floating delete
    /// that could undo one, so every placement forces each of them in.
    fn sure_adds(&self, settled: &[WindowOp]) -> Option<Sum> {
        let sure = |op: &WindowOp| !op.loose && matches!(op.end, End::At(_));
        let plain = self.struck.is_empty() && !self.floating_delete;
        let mut deltas = settled.iter().map(|op| op.delta.filter(|_| sure(op)));
        let sum = deltas.try_fold(0 as Sum, |sum, delta| {
            Some(sum.saturating_add(Sum::from(delta?)))
        });
        sum.filter(|_| plain)
    }

    /// The latest event the past can be settled to, if later than the current floor.
    fn settle_point(&self, limit: u64, now: u64) -> Option<u64> {
        let mut h = limit;
        for op in self.ops.iter().filter(|op| op.delta.is_none()) {
            if op.end == End::Open {
                h = h.min(op.start.checked_sub(1)?);
            }
        }
        loop {
            let mut lowered = false;
            let bound = h;
            for delete in self
                .ops
                .iter()
                .filter(|op| op.delta.is_none() && op.start <= bound)
            {
                let Some(b) = delete.end.at() else { continue };
                let add_in_play = |op: &WindowOp| {
                    op.delta.is_some()
                        && op.start < b
                        && match op.end {
                            End::Open => true,
                            End::At(e) => e > h,
                            End::Never(at) => at + RETRY_GRACE > now,
                        }
                };
                if b > h || self.ops.iter().any(add_in_play) {
                    h = delete.start.checked_sub(1)?;
                    lowered = true;
                }
            }
            if !lowered {
                break;
            }
        }
        (2 * h + 1 > self.floor).then_some(h)
    }
}

/// `base` after adds of `sum` in all surely took effect: an absent counter now holds `sum`.
fn shifted(base: &Values, sum: Sum) -> Values {
    let from_absent = base.absent.then_some((0, 0));
    let counts = base.counts.ranges().iter().copied().chain(from_absent);
    let shift = |(lo, hi): (Sum, Sum)| (lo.saturating_add(sum), hi.saturating_add(sum));
    Values {
        absent: false,
        counts: RangeSet::from_ranges(counts.map(shift).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(id: u64, delta: i64, start: u64, end: End) -> WindowOp {
        WindowOp {
            id,
            delta: Some(delta),
            start,
            end,
            loose: false,
        }
    }

    proptest::proptest! {
        /// Adds that surely took effect, folded in by shifting the past, leave what every
        /// placement of the sweep leaves.
        #[test]
        fn sure_adds_fold_in_as_the_sweep_folds_them(
            absent: bool,
            ranges in proptest::collection::vec((-50i64..50, 0i64..5), 0..4),
            adds in proptest::collection::vec((-3i64..4, 0u64..6, 1u64..6), 1..6),
            floor in 0u64..3,
        ) {
            let base = Values {
                absent,
                counts: RangeSet::from_ranges(ranges.iter().map(|&(lo, w)| (lo, lo + w)).collect()),
            };
            let floor = 2 * floor + 1;
            let first = floor / 2 + 1;
            let settled: Vec<WindowOp> = adds
                .iter()
                .zip(0..)
                .map(|(&(delta, start, len), id)| {
                    add(id, delta, first + start, End::At(first + start + len))
                })
                .collect();
            let h = settled.iter().filter_map(|op| op.end.at()).max().unwrap_or(first);
            let timeline = Timeline { base: base.clone(), floor, ..Timeline::default() };
            let sum = timeline.sure_adds(&settled).expect("every add is sure");
            proptest::prop_assert_eq!(
                (shifted(&base, sum), Values::default()),
                timeline.folded(&settled, 2 * h + 1)
            );
        }
    }

    #[test]
    fn an_add_that_may_not_have_taken_effect_is_not_folded_in_by_shifting() {
        let mut timeline = Timeline::default();
        let mut loose = add(1, 1, 1, End::At(2));
        assert_eq!(timeline.sure_adds(std::slice::from_ref(&loose)), Some(1));
        loose.loose = true;
        assert_eq!(timeline.sure_adds(&[loose]), None);
        let timed_out = add(1, 1, 1, End::Never(2));
        assert_eq!(timeline.sure_adds(&[timed_out]), None);
        let delete = WindowOp {
            delta: None,
            ..add(2, 0, 1, End::At(2))
        };
        assert_eq!(timeline.sure_adds(&[delete]), None);
        timeline.floating_delete = true;
        assert_eq!(timeline.sure_adds(&[add(1, 1, 1, End::At(2))]), None);
    }

    #[test]
    fn a_floating_add_counts_towards_leaving_64_bits() {
        // An add of i64::MAX - 1 times out at event 1 and floats once its grace is over;
        // an add of 2 is then in play: together they may pass i64::MAX.
        let mut timeline = Timeline::default();
        timeline.push(add(0, i64::MAX - 1, 0, End::Never(1)));
        assert!(timeline.within_64_bits());
        assert_eq!(timeline.settle(2, 1 + RETRY_GRACE), vec![0]);
        assert!(timeline.within_64_bits(), "the floating add alone fits");
        timeline.push(add(3, 1, 3 + RETRY_GRACE, End::Open));
        assert!(timeline.within_64_bits(), "it and 1 make i64::MAX");
        timeline.push(add(4, 1, 4 + RETRY_GRACE, End::Open));
        assert!(!timeline.within_64_bits(), "it and 2 pass i64::MAX");
    }
}

//! Which configurations the breadth-first sweep keeps: none that another beats, and past
//! the width, the most promising.

use super::{slots, Config, Event, Sweep, MAX_FRONTIER, STOP_EVERY};
use crate::ideal::saturate;
use crate::ideal::Sum;
use crate::linear::model::Decision;
use std::cmp::Reverse;
use std::collections::VecDeque;

/// Events between the checkpoints a search that kept too few configurations goes back to.
const CHECKPOINT_EVERY: usize = 512;
/// The most configurations a closure's set of those reached keeps room for between events.
const KNOWN_KEPT: usize = 1 << 10;
/// Checkpoints kept: how far back, at most, a search that failed goes.
const CHECKPOINTS: usize = 6;

impl Sweep<'_> {
    /// Sweeps the events breadth first; `None` when too many ops are open at once. When
    /// guessing and too few configurations were kept, goes back to a checkpoint, further
    /// and keeping four times as many each time it fails again, until past where it failed.
    pub(super) fn run(&mut self, events: &[Event], stop: &dyn Fn() -> bool) -> Option<Decision> {
        let narrow = self.guess.width;
        let mut checkpoints: VecDeque<(usize, Sweep)> = VecDeque::new();
        let (mut n, mut narrow_from, mut retreats) = (0, 0, 0);
        let mut next = Vec::new();
        while let Some(event) = events.get(n) {
            if n % STOP_EVERY == 0 && stop() {
                return Some(Decision::Stopped);
            }
            let newest = checkpoints.back().map(|c| c.0);
            if !self.exact_pool && n % CHECKPOINT_EVERY == 0 && newest.is_none_or(|at| at < n) {
                checkpoints.push_back((n, self.clone()));
                if checkpoints.len() > CHECKPOINTS {
                    checkpoints.pop_front();
                }
            }
            if n == narrow_from {
                (self.guess.width, retreats) = (narrow, 0);
            }
            self.enter(event)?;
            if !event.is_return {
                // A call moves no configuration but for the reads it lets one do now, and
                // none can die or multiply: the next return prunes them.
                self.on_call(event);
                n += 1;
                continue;
            }
            // Clearing costs the set's capacity: one grown wide is let go.
            match self.scratch.known.capacity() > KNOWN_KEPT {
                true => self.scratch.known = Default::default(),
                false => self.scratch.known.clear(),
            }
            next.clear();
            for c in std::mem::take(&mut self.frontier) {
                self.step(c, event, &mut next);
            }
            self.leave(event);
            std::mem::swap(&mut self.frontier, &mut next);
            self.prune();
            if !self.frontier.is_empty() {
                // No configuration elsewhere names a use: `known` is cleared at each return.
                self.uses
                    .compact(self.frontier.iter_mut().map(|c| &mut c.used));
                n += 1;
                continue;
            }
            // Back to the checkpoint `retreats` before the failure, well before it.
            let far = |c: &&(usize, Sweep)| c.0 + CHECKPOINT_EVERY / 2 <= n;
            let Some((at, back)) = checkpoints.iter().rev().filter(far).nth(retreats) else {
                return Some(Decision::NotLinearizable {
                    failing: event.op(),
                });
            };
            retreats += 1;
            let wider = narrow.saturating_mul(4usize.pow(retreats as u32));
            // The scratch space is worth keeping; a checkpoint holds none.
            let scratch = std::mem::take(&mut self.scratch);
            *self = back.clone();
            self.scratch = scratch;
            self.guess.width = wider.min(self.guess.widest);
            self.inexact = true;
            narrow_from = narrow_from.max(n + CHECKPOINT_EVERY);
            n = *at;
        }
        Some(Decision::Linearizable)
    }

    /// Drops the configurations another beats; past the width, keeps the most promising.
    /// One that beats another has the same sum once the open adds in effect are taken out
    /// (`closed`), a subset of its open adds in effect, and a superset of its reads done:
    /// sorted by those, it comes first.
    fn prune(&mut self) {
        if self.frontier.len() > 1 {
            let frontier = std::mem::take(&mut self.frontier);
            let mut order = std::mem::take(&mut self.scratch.order);
            order.clear();
            order.extend(frontier.iter().zip(0..).map(|(c, i)| self.order(c, i)));
            order.sort_unstable();
            let mut kept = std::mem::take(&mut self.scratch.kept);
            kept.clear();
            let mut group = (0, None);
            for &(at, then) in &order {
                let c = frontier[then as u32 as usize];
                let closed = (at >> 64) as u64;
                if group.1 != Some(closed) {
                    group = (kept.len(), Some(closed));
                }
                let same = &kept[group.0..];
                if self.beaten(&c, same) {
                    continue;
                }
                // Guessing, one configuration per sum, ops in effect and reads done: a guess.
                let twin =
                    |k: &Config| (k.value, k.applied, k.done) == (c.value, c.applied, c.done);
                if !self.exact_pool && same.iter().any(twin) {
                    self.inexact = true;
                    continue;
                }
                kept.push(c);
            }
            (self.scratch.order, self.scratch.kept) = (order, frontier);
            self.frontier = kept;
        }
        if self.frontier.len() > self.cap() {
            // Lazy and earliest-deadline-first: of 64 kept, this order found witnesses
            // where most reads done first needed 512 (generated histories, 50 clients).
            let mut frontier = std::mem::take(&mut self.frontier);
            frontier.sort_by_cached_key(|c| self.urgency(c));
            self.frontier = frontier;
            self.frontier.truncate(self.cap());
            self.inexact = true;
        }
    }

    /// Where `prune` puts `c`, the `i`th configuration, as two numbers compared in turn: by
    /// its closed sum, then its open adds in effect (a subset first), whether the counter
    /// exists, its reads done (a superset first), fewest guesses, least used from the
    /// reserve, and `i`.
    fn order(&self, c: &Config, i: u32) -> (u128, u128) {
        let closed = saturate(self.closed(c)) as u64 ^ 1 << 63;
        let present = u128::from(!c.value.is_absent());
        let taken = u128::from(c.taken.min((1 << 15) - 1));
        let used = u128::from(self.uses.total(c.used).min((1 << 16) - 1));
        let at = u128::from(closed) << 64 | u128::from(c.applied);
        let then =
            present << 127 | u128::from(!c.done) << 63 | taken << 48 | used << 32 | u128::from(i);
        (at, then)
    }

    /// Whether one of `kept` (of the same `closed` sum) beats `c`: with the same open adds
    /// in effect (`Config::beats`), or fewer (`lazier`).
    fn beaten(&self, c: &Config, kept: &[Config]) -> bool {
        let mut need = None;
        kept.iter().any(|k| match k.applied == c.applied {
            true => k.beats(c, &self.uses),
            false => {
                k.applied & !c.applied == 0 && {
                    let need = *need.get_or_insert_with(|| c.done & !self.fitting(c.value, c.done));
                    self.lazier(k, c, need)
                }
            }
        })
    }

    /// The sum of `c` without its open adds in effect; an absent counter counts as 0.
    fn closed(&self, c: &Config) -> Sum {
        c.value.sum() - Sum::from(self.sum_of(c.applied))
    }

    /// Whether `b`, which has a proper subset of the open adds of `a` in effect, beats `a`:
    /// `b` can put the rest in effect now, as one block, and reach the sum of `a`, with the
    /// reads `need` (those done in `a` that its sum does not fit) done, no more of the
    /// reserve used and no more guesses. Every future of `a` is then one of `b`.
    fn lazier(&self, b: &Config, a: &Config, need: u64) -> bool {
        if need & !b.done != 0 || b.taken > a.taken || !self.uses.no_more_than(b.used, a.used) {
            return false;
        }
        // A proper subset: some add is left, so the sum is present after it.
        a.value == b.value.add(self.sum_of(a.applied & !b.applied))
    }

    /// How promising `c` is, least first: fewest guesses, then the adds in effect fewest
    /// and ending first, then most reads done.
    fn urgency(&self, c: &Config) -> (u32, u64, Reverse<u32>) {
        let ends = slots(c.applied).map(|s| self.add_end[s].min(1 << 40));
        let ends = ends.fold(0u64, u64::saturating_add);
        (c.taken, ends, Reverse(c.done.count_ones()))
    }

    /// The most configurations kept at once.
    pub(super) fn cap(&self) -> usize {
        match self.exact_pool {
            true => MAX_FRONTIER,
            false => self.guess.width,
        }
    }
}

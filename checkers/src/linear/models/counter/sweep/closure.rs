//! The blocks a sweep explores at a return: every configuration reached by bursts and the
//! reads they let do, up to those where the returning op is settled.

use super::{slots, Config, Reserve, Sweep, MAX_SUBSET_ADDS};

impl Sweep<'_> {
    /// `start` and every configuration reached from it by blocks (a burst, then the reads
    /// that fit its sum), at this instant, up to those where the op of slot `goal` (an add
    /// if `is_add`, else a read) is settled, pushed to `seen`: later blocks can wait for its
    /// return.
    pub(super) fn closure(
        &mut self,
        start: Config,
        goal: u64,
        is_add: bool,
        seen: &mut Vec<Config>,
    ) {
        let mut known = std::mem::take(&mut self.scratch.known);
        // A configuration another's closure reached at this event was explored already.
        if !known.insert(start) {
            self.scratch.known = known;
            return;
        }
        let first = seen.len();
        seen.push(start);
        let barred = if is_add { self.equal_adds(goal) } else { 0 };
        let mut blocks = std::mem::take(&mut self.scratch.blocks);
        let mut i = first;
        while i < seen.len() {
            let from = seen[i];
            i += 1;
            let settled = match is_add {
                true => from.applied,
                false => from.done,
            };
            if settled & goal != 0 {
                continue;
            }
            let undone = self.open_reads & !from.done;
            let free = self.open_adds & !from.applied & !barred;
            if undone == 0 {
                continue;
            }
            if free.count_ones() > MAX_SUBSET_ADDS {
                self.inexact = true;
                continue;
            }
            // Free adds by (delta, optional, end): of equal ones, those ending first go first.
            // An add of 0 changes no sum: it waits for its return, unless it makes a counter.
            let absent = from.value.is_absent();
            let adds = self.open_sorted.iter().copied();
            let adds = adds.filter(|o| free >> o.3 & 1 == 1 && (o.0 != 0 || absent));
            self.scratch.choice.set(adds);
            // A read no burst can make fit from here is not done by any block that follows.
            // That holds when no take is allowed: a guess, so a failure proves nothing.
            let reserve = self.reserve(&from);
            if !is_add && self.out_of_reach(&from, &reserve, goal) {
                self.inexact = true;
                continue;
            }
            blocks.clear();
            let mut alike = 0;
            for r in slots(undone) {
                // Reads that returned the same value want the same bursts.
                if alike >> r & 1 == 0 {
                    alike |= self.returned_alike(r, undone);
                    self.bursts(&from, &reserve, r, &mut blocks);
                }
            }
            for &c in &blocks {
                // Exact repeats only: `prune` drops the configurations others beat.
                if known.insert(c) {
                    seen.push(c);
                }
            }
            if seen.len() - first > self.cap() {
                self.inexact = true;
                break;
            }
        }
        (self.scratch.known, self.scratch.blocks) = (known, blocks);
    }

    /// The adds no burst takes at the return (or info completion) of the add of slot `goal`:
    /// it, and for an add of known outcome, the open adds equal to it (same delta, known
    /// outcome). A block whose burst holds the returning add only replays what the step
    /// does: the configuration with that add in effect first (which the step makes) beats
    /// it, since the rest of the burst, with the reads it let do, can follow as one block.
    /// A burst with an equal add instead makes what the burst with the returning add in its
    /// place makes, then the equal add in effect right after (the two swap: both open now,
    /// the same delta). Every future of that is one of the configuration with the returning
    /// add in effect first, two blocks on (the rest of the burst with its reads, then the
    /// equal add, both still open after this return), though `prune` alone would not see it.
    fn equal_adds(&self, goal: u64) -> u64 {
        let g = goal.trailing_zeros() as usize;
        if self.add_optional[g] {
            return goal;
        }
        let equal = self.open_sorted.iter();
        let equal = equal.filter(|o| (o.0, o.1) == (self.add_delta[g], false));
        equal.fold(goal, |barred, o| barred | 1 << o.3)
    }

    /// Whether no burst from `from` makes the open read of slot `read` fit: no sum its free
    /// adds (`scratch.choice`) make fits it, and none may be taken from `reserve`.
    fn out_of_reach(&self, from: &Config, reserve: &Reserve, read: u64) -> bool {
        let Some(target) = self.target(read.trailing_zeros() as usize) else {
            return false;
        };
        reserve.alone && !self.scratch.choice.may(target - from.value.sum())
    }
}

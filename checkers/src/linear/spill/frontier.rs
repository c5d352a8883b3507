//! The spill's low mark: the least first call of an intended op (an op and its retries) that
//! a record written later may still belong to. Written with every record, it lets the
//! read-back hand on whole intended ops in call order while reading the records in the order
//! they were written, holding only the ops in flight.

use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};

/// How many history events after an attempt ends a retry of it may be invoked and still be
/// joined to it by the streamed read-back. A later retry (our driver retries at once) sends
/// its group back to the read-back that holds every record at once.
pub const GRACE: u64 = 4096;

/// The attempts a later record may still belong to, and the low mark they set.
#[derive(Debug, Default)]
pub struct Frontier {
    /// Each attempt open or ended within `GRACE` events, by its call: the first call of its
    /// intended op, and whether it has ended.
    attempts: FxHashMap<u64, (u64, bool)>,
    /// The first calls of those attempts' intended ops, with how many attempts hold each.
    firsts: BTreeMap<u64, u32>,
    /// Ended attempts still held, in the order they ended: (index it ended at, call).
    ended: VecDeque<(u64, u64)>,
    /// The last low mark given: marks never go back.
    low: u64,
}

impl Frontier {
    /// The attempt invoked at `call`, retrying the attempt invoked at `retry_of`; `false`
    /// when it retries one that has not ended, or ended more than `GRACE` events ago (or
    /// never was), which the streamed read-back could not join to it.
    pub fn invoked(&mut self, call: u64, retry_of: Option<u64>) -> bool {
        self.expire(call);
        let (first, joinable) = match retry_of.map(|c| (c, self.attempts.get(&c))) {
            None => (call, true),
            Some((c, Some(&(first, true)))) if c < call => (first, true),
            Some(_) => (call, false),
        };
        self.attempts.insert(call, (first, false));
        *self.firsts.entry(first).or_default() += 1;
        joinable
    }

    /// The attempt invoked at `call` ended at history index `index`.
    pub fn ended(&mut self, call: u64, index: u64) {
        if let Some((_, done)) = self.attempts.get_mut(&call) {
            *done = true;
            self.ended.push_back((index, call));
        }
    }

    /// The low mark once the history has reached `index`: every record written from now on
    /// belongs to an intended op first called at this index or later, unless it is a retry
    /// `invoked` refused. Assumes history indices increase; with no attempt held, the
    /// next op can only be called after `index`.
    pub fn low(&mut self, index: u64) -> u64 {
        self.expire(index);
        let least = self.firsts.keys().next().copied();
        self.low = self.low.max(least.unwrap_or(index.saturating_add(1)));
        self.low
    }

    /// Lets go of the attempts that ended more than `GRACE` events before `index`.
    fn expire(&mut self, index: u64) {
        while let Some(&(at, call)) = self.ended.front() {
            if at.saturating_add(GRACE) >= index {
                break;
            }
            self.ended.pop_front();
            let Some((first, _)) = self.attempts.remove(&call) else {
                continue;
            };
            if let Some(n) = self.firsts.get_mut(&first) {
                *n -= 1;
                if *n == 0 {
                    self.firsts.remove(&first);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_waits_for_open_ops_and_for_retries_within_the_grace() {
        let mut f = Frontier::default();
        assert!(f.invoked(0, None));
        assert!(f.invoked(1, None));
        f.ended(1, 2);
        assert_eq!(f.low(2), 0, "op 0 is still open");
        f.ended(0, 3);
        // Both ended, but either may still be retried.
        assert_eq!(f.low(3), 0);
        assert!(f.invoked(4, Some(0)), "a retry within the grace joins");
        f.ended(4, 5);
        assert_eq!(f.low(5), 0);
        // Past the grace of every attempt, the mark moves past them all.
        assert_eq!(f.low(5 + GRACE + 1), 5 + GRACE + 2);
        assert!(!f.invoked(7 + GRACE, Some(0)), "too late to join");
        assert!(f.invoked(8 + GRACE, None));
        f.ended(8 + GRACE, 9 + GRACE);
        assert_eq!(f.low(9 + GRACE), 7 + GRACE, "the late retry is still open");
    }

    #[test]
    fn a_retry_of_an_open_or_unknown_attempt_cannot_be_joined() {
        let mut f = Frontier::default();
        assert!(f.invoked(0, None));
        assert!(!f.invoked(1, Some(0)), "op 0 has not ended");
        assert!(!f.invoked(2, Some(99)), "no such attempt");
        assert!(f.invoked(3, None));
    }
}

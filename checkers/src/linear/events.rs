//! The search's event list: every op's call and return in time order, doubly linked so that
//! an op can be lifted out when it is linearized and put back in O(1) when the search backs up.

use super::partition::LinOp;

/// The event list: entry `2 * i` is op i's call, `2 * i + 1` its return, plus head and tail.
/// Links are 32-bit, half the bytes a long partition's list would take in `usize`.
pub struct Events {
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The sentinel before the first entry.
    pub head: usize,
    /// The sentinel after the last entry.
    pub tail: usize,
}

/// The most ops a partition may have: its entries and sentinels fit in a 32-bit link, and
/// an op's number in the 30 bits a search's stack frame keeps it in.
pub const MAX_OPS: usize = (1 << 30) - 1;

impl Events {
    /// Links the events of `ops` (at most `MAX_OPS`) in time order; unknown returns go last.
    pub fn new<I>(ops: &[LinOp<I>]) -> Self {
        assert!(
            ops.len() <= MAX_OPS,
            "a partition of more than {MAX_OPS} ops"
        );
        // Entries in time order; at the same time, by entry. Ops come in call order as a
        // rule, so only the returns are sorted (4 bytes an op), then merged with the calls.
        let key = |e: u32| {
            let op = &ops[e as usize / 2];
            match (e % 2, op.ret()) {
                (0, _) => (op.call, 0, e),
                (_, Some(r)) => (r, 0, e),
                (_, None) => (u64::MAX, op.call, e),
            }
        };
        let n = ops.len() as u32;
        let sorted = |mut entries: Vec<u32>| {
            entries.sort_unstable_by_key(|&e| key(e)); // keys are unique
            entries
        };
        let returns = sorted((0..n).map(|i| 2 * i + 1).collect());
        let in_call_order = ops.windows(2).all(|w| w[0].call <= w[1].call);
        let sorted_calls = (!in_call_order).then(|| sorted((0..n).map(|i| 2 * i).collect()));
        let mut calls = (0..n)
            .map(|i| sorted_calls.as_ref().map_or(2 * i, |c| c[i as usize]))
            .peekable();
        let mut returns = returns.into_iter().peekable();
        let (head, tail) = (ops.len() * 2, ops.len() * 2 + 1);
        let mut next = vec![tail as u32; ops.len() * 2 + 2];
        let mut prev = vec![head as u32; ops.len() * 2 + 2];
        let mut last = head as u32;
        loop {
            let entry = match (calls.peek(), returns.peek()) {
                (Some(&c), Some(&r)) if key(c) < key(r) => calls.next(),
                (Some(_), None) => calls.next(),
                _ => returns.next(),
            };
            let Some(entry) = entry else { break };
            next[last as usize] = entry;
            prev[entry as usize] = last;
            last = entry;
        }
        next[last as usize] = tail as u32;
        prev[tail] = last;
        Events {
            next,
            prev,
            head,
            tail,
        }
    }

    /// The entry after `entry`.
    pub fn after(&self, entry: usize) -> usize {
        self.next[entry] as usize
    }

    /// The first entry (the tail when the list is empty).
    pub fn first(&self) -> usize {
        self.after(self.head)
    }

    fn unlink(&mut self, e: usize) {
        let (p, n) = (self.prev[e], self.next[e]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    fn relink(&mut self, e: usize) {
        let (p, n) = (self.prev[e] as usize, self.next[e] as usize);
        self.next[p] = e as u32;
        self.prev[n] = e as u32;
    }

    /// Takes op `i`'s call and return out of the list.
    pub fn lift(&mut self, i: usize) {
        self.unlink(2 * i);
        self.unlink(2 * i + 1);
    }

    /// Puts them back, in the reverse order.
    pub fn unlift(&mut self, i: usize) {
        self.relink(2 * i + 1);
        self.relink(2 * i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// The entries from head to tail.
    fn walk(events: &Events) -> Vec<u32> {
        let mut order = Vec::new();
        let mut at = events.first();
        while at != events.tail {
            order.push(at as u32);
            at = events.after(at);
        }
        order
    }

    #[test]
    fn entries_are_linked_in_time_order_whatever_order_the_ops_come_in() {
        for seed in 0..200 {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut ops: Vec<LinOp<()>> = (0..rng.gen_range(0..60))
                .map(|_| {
                    let call = rng.gen_range(0..40);
                    let ret = rng.gen_bool(0.8).then(|| call + rng.gen_range(0..10));
                    LinOp::new((), call, ret, None)
                })
                .collect();
            if seed % 2 == 0 {
                ops.sort_by_key(|op| op.call);
            }
            let mut expected: Vec<(u64, u64, u32)> = (0u32..)
                .zip(&ops)
                .flat_map(|(i, op)| {
                    let ret = op.ret().map_or((u64::MAX, op.call), |r| (r, 0));
                    [(op.call, 0, 2 * i), (ret.0, ret.1, 2 * i + 1)]
                })
                .collect();
            expected.sort_unstable();
            let expected: Vec<u32> = expected.into_iter().map(|(_, _, e)| e).collect();
            let events = Events::new(&ops);
            assert_eq!(walk(&events), expected, "seed {seed}");
            let mut back = Vec::new();
            let mut at = events.prev[events.tail] as usize;
            while at != events.head {
                back.push(at as u32);
                at = events.prev[at] as usize;
            }
            back.reverse();
            assert_eq!(back, expected, "seed {seed}, backwards");
        }
    }
}

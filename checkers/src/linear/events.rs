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

/// The most ops a partition may have: its entries and sentinels fit in a 32-bit link.
pub const MAX_OPS: usize = (u32::MAX as usize - 2) / 2;

impl Events {
    /// Links the events of `ops` (at most `MAX_OPS`) in time order; unknown returns go last.
    pub fn new<I>(ops: &[LinOp<I>]) -> Self {
        assert!(
            ops.len() <= MAX_OPS,
            "a partition of more than {MAX_OPS} ops"
        );
        let mut order: Vec<(u64, u64, u32)> = Vec::with_capacity(ops.len() * 2);
        for (i, op) in ops.iter().enumerate() {
            let call = 2 * i as u32;
            order.push((op.call, 0, call));
            order.push(
                op.ret()
                    .map_or((u64::MAX, op.call, call + 1), |r| (r, 0, call + 1)),
            );
        }
        order.sort_unstable();
        let (head, tail) = (ops.len() * 2, ops.len() * 2 + 1);
        let mut next = vec![tail as u32; ops.len() * 2 + 2];
        let mut prev = vec![head as u32; ops.len() * 2 + 2];
        let mut last = head as u32;
        for &(_, _, entry) in &order {
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

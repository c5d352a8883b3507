//! The search's event list: every op's call and return in time order, doubly linked so that
//! an op can be lifted out when it is linearized and put back in O(1) when the search backs up.

use super::partition::LinOp;

/// The event list: entry `2 * i` is op i's call, `2 * i + 1` its return, plus head and tail.
pub struct Events {
    /// The entry after each entry.
    pub next: Vec<usize>,
    prev: Vec<usize>,
    /// The sentinel before the first entry.
    pub head: usize,
    /// The sentinel after the last entry.
    pub tail: usize,
}

impl Events {
    /// Links the events of `ops` in time order; unknown returns go last.
    pub fn new<I>(ops: &[LinOp<I>]) -> Self {
        let mut order: Vec<(u64, u64, usize)> = Vec::with_capacity(ops.len() * 2);
        for (i, op) in ops.iter().enumerate() {
            order.push((op.call, 0, 2 * i));
            order.push(
                op.ret
                    .map_or((u64::MAX, op.call, 2 * i + 1), |r| (r, 0, 2 * i + 1)),
            );
        }
        order.sort_unstable();
        let (head, tail) = (ops.len() * 2, ops.len() * 2 + 1);
        let mut next = vec![tail; ops.len() * 2 + 2];
        let mut prev = vec![head; ops.len() * 2 + 2];
        let mut last = head;
        for &(_, _, entry) in &order {
            next[last] = entry;
            prev[entry] = last;
            last = entry;
        }
        next[last] = tail;
        prev[tail] = last;
        Events {
            next,
            prev,
            head,
            tail,
        }
    }

    fn unlink(&mut self, e: usize) {
        let (p, n) = (self.prev[e], self.next[e]);
        self.next[p] = n;
        self.prev[n] = p;
    }

    fn relink(&mut self, e: usize) {
        let (p, n) = (self.prev[e], self.next[e]);
        self.next[p] = e;
        self.prev[n] = e;
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

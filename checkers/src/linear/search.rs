//! The Wing–Gong search with Lowe's just-in-time linearization, as Porcupine does it: call and
//! return events in a doubly linked list, ops lifted out as they are linearized and put back
//! on backtracking, and a cache of (linearized set, model state) pairs already explored.

use super::bitset::Linearized;
use super::model::Model;
use super::prepare::LinOp;
use rustc_hash::FxHasher;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// How often (in search steps) the time and memory limits are looked at.
const CHECK_EVERY: u64 = 4096;

/// When to give up on a search.
pub struct Limits<'a> {
    /// Past this instant the answer is unknown.
    pub deadline: Option<Instant>,
    /// Bytes the caches of all searches may hold together.
    pub memory_limit: usize,
    /// Bytes they hold now.
    pub memory_used: &'a AtomicUsize,
    /// Set when any search gives up, so the others stop too.
    pub cancelled: &'a AtomicBool,
}

/// The answer for one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Some order of the ops explains every result.
    Linearizable,
    /// None does; the longest linearizable prefix found, as op positions in order.
    NotLinearizable {
        /// The ops of the longest partial linearization, in linearization order.
        longest: Vec<usize>,
    },
    /// The search gave up.
    Unknown(&'static str),
}

/// A cached (linearized set, state) pair, hashed once when made.
struct Seen<S> {
    hash: u64,
    words: Box<[u64]>,
    state: S,
}

impl<S> Hash for Seen<S> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}

impl<S: Eq> PartialEq for Seen<S> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.words == other.words && self.state == other.state
    }
}

impl<S: Eq> Eq for Seen<S> {}

/// The event list: entry `2 * i` is op i's call, `2 * i + 1` its return, plus head and tail.
struct Events {
    next: Vec<usize>,
    prev: Vec<usize>,
    head: usize,
    tail: usize,
}

impl Events {
    /// Links the events of `ops` in time order; unknown returns go last.
    fn new<I>(ops: &[LinOp<I>]) -> Self {
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
    fn lift(&mut self, i: usize) {
        self.unlink(2 * i);
        self.unlink(2 * i + 1);
    }

    /// Puts them back, in the reverse order.
    fn unlift(&mut self, i: usize) {
        self.relink(2 * i + 1);
        self.relink(2 * i);
    }
}

/// Decides whether the ops of one partition are linearizable with respect to `model`.
pub fn search<M: Model>(model: &M, ops: &[LinOp<M::Input>], limits: &Limits) -> Verdict {
    let mut events = Events::new(ops);
    let mut linearized = Linearized::new(ops.len());
    let mut cache: HashSet<Seen<M::State>, BuildHasherDefault<FxHasher>> = HashSet::default();
    let entry_bytes = linearized.words().len() * 8 + std::mem::size_of::<Seen<M::State>>() + 16;
    let mut held = 0usize;
    let mut stack: Vec<(usize, M::State)> = Vec::new();
    let mut state = model.init();
    let mut longest: Vec<usize> = Vec::new();
    let mut at_peak = false;
    let mut entry = events.next[events.head];
    let mut steps = 0u64;
    let verdict = loop {
        steps += 1;
        if steps.is_multiple_of(CHECK_EVERY) {
            if let Some(reason) = over_limits(limits) {
                break Verdict::Unknown(reason);
            }
        }
        if entry == events.tail {
            break Verdict::Linearizable;
        }
        let op = entry / 2;
        if !entry.is_multiple_of(2) {
            // A return whose call could not be linearized yet. An unknown return means
            // every op with a known return is already linearized.
            if ops[op].ret.is_none() {
                break Verdict::Linearizable;
            }
            if at_peak {
                longest = stack.iter().map(|(e, _)| e / 2).collect();
                at_peak = false;
            }
            let Some((call, previous)) = stack.pop() else {
                break Verdict::NotLinearizable { longest };
            };
            state = previous;
            linearized.clear(call / 2);
            events.unlift(call / 2);
            entry = events.next[call];
            continue;
        }
        let Some(next_state) = model.step(&state, &ops[op].input) else {
            entry = events.next[entry];
            continue;
        };
        linearized.set(op);
        let mut h = FxHasher::default();
        next_state.hash(&mut h);
        let seen = Seen {
            hash: linearized.hash() ^ h.finish(),
            words: linearized.words().into(),
            state: next_state.clone(),
        };
        if cache.insert(seen) {
            held += entry_bytes;
            limits.memory_used.fetch_add(entry_bytes, Ordering::Relaxed);
            stack.push((entry, std::mem::replace(&mut state, next_state)));
            at_peak |= stack.len() > longest.len();
            events.lift(op);
            entry = events.next[events.head];
        } else {
            linearized.clear(op);
            entry = events.next[entry];
        }
    };
    limits.memory_used.fetch_sub(held, Ordering::Relaxed);
    verdict
}

fn over_limits(limits: &Limits) -> Option<&'static str> {
    if limits.cancelled.load(Ordering::Relaxed) {
        return Some("another partition gave up");
    }
    let reason = if limits.deadline.is_some_and(|d| Instant::now() >= d) {
        "time limit"
    } else if limits.memory_used.load(Ordering::Relaxed) > limits.memory_limit {
        "memory limit"
    } else {
        return None;
    };
    limits.cancelled.store(true, Ordering::Relaxed);
    Some(reason)
}

//! The Wing–Gong search with Lowe's just-in-time linearization, as Porcupine does it: call and
//! return events in a doubly linked list, ops lifted out as they are linearized and put back
//! on backtracking, and a cache of (linearized set, model state) pairs already explored.
//! Two reductions keep it small: interchangeable ops are tried once (`symmetry`), and a
//! read-only op that can be linearized is linearized at once with no alternative tried.

use super::bitset::Linearized;
use super::cache::Cache;
use super::events::{Events, MAX_OPS};
use super::model::{Decision, Model};
use super::partition::LinOp;
use super::resident::resident_bytes;
use super::symmetry::Classes;
use rustc_hash::FxHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

mod window;
pub use window::{search_windowed, Source, Window, Windowed};

/// How often (in search steps) the time and memory limits are looked at.
const CHECK_EVERY: u64 = 1024;

/// Bytes of cached pairs past which the pairs far behind the search's front are dropped:
/// small, so that a long search's cache adds little to its peak (at 64 MiB a 10 M-op check
/// held 60 MB more and ran 10 % slower, its table's lookups missing the processor's caches).
/// The room the cache grew to stays (about two to four times the pairs at their peak).
const EVICT_AT: usize = 8 << 20;

/// How far behind the dense prefix of the current set a pair must be to be dropped, in ops.
const EVICT_BEHIND: usize = 4096;

/// How many pending reads, earliest return first, a new state is tested against.
const DEAD_END_READS: usize = 4;

/// How far down the event list those reads are looked for.
const DEAD_END_WALK: usize = 512;

/// When to give up on a search.
pub struct Limits<'a> {
    /// Past this instant the answer is unknown.
    pub deadline: Option<Instant>,
    /// Bytes of resident memory the process may hold (where the kernel does not say, the
    /// bytes the caches of all searches may hold together).
    pub memory_limit: usize,
    /// Bytes the caches of all searches hold now.
    pub memory_used: &'a AtomicUsize,
    /// Set when any search gives up, so the others stop too.
    pub cancelled: &'a AtomicBool,
    /// Why the first search that gave up did.
    pub reason: &'a OnceLock<&'static str>,
    /// Set when a partition is found not linearizable and the others need not be searched.
    pub decided: &'a AtomicBool,
    /// Use the generic search even where the model has a procedure of its own.
    pub generic: bool,
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
        /// The op that could not be linearized, where the search knows it.
        failing: Option<usize>,
    },
    /// The search gave up.
    Unknown(&'static str),
    /// The search was not run to the end: another partition already decided the verdict.
    NotSearched,
}

/// One linearized op on the search's stack, in 4 bytes (a long search holds one per op): its
/// number (30 bits, as `MAX_OPS` makes it), whether a state was kept for it, and whether
/// it was forced.
#[derive(Clone, Copy)]
struct Frame(u32);

impl Frame {
    /// The op of call `entry`; whether the state before it was `kept` in `states` (else,
    /// unless forced, the model's `undo` gives it back); whether it was `forced`: a read-only op linearized as
    /// soon as it could be, so that the configuration before it is solvable exactly when
    /// the one after it is and there is no alternative to try.
    fn new(entry: usize, kept: bool, forced: bool) -> Self {
        Frame(((entry / 2) as u32) << 2 | u32::from(kept) << 1 | u32::from(forced))
    }

    /// The op's call entry.
    fn entry(self) -> usize {
        2 * self.op()
    }

    /// The op's number.
    fn op(self) -> usize {
        (self.0 >> 2) as usize
    }

    /// Whether the state before it is in `states`.
    fn kept(self) -> bool {
        self.0 & 2 != 0
    }

    /// Whether it was forced.
    fn forced(self) -> bool {
        self.0 & 1 != 0
    }
}

/// One partition's search in progress.
struct Search<'a, M: Model> {
    model: &'a M,
    ops: &'a [LinOp<M::Input>],
    events: Events,
    classes: Classes,
    linearized: Linearized,
    cache: Cache<M::State>,
    held: usize,
    /// Bytes of cached pairs past which it is next thinned (`EVICT_AT`).
    evict_at: usize,
    /// Why the search must stop, once it must.
    gave_up: Option<&'static str>,
    stack: Vec<Frame>,
    /// The state before each frame that kept one, in the stack's order.
    states: Vec<M::State>,
    state: M::State,
    longest: Vec<u32>,
    /// How many frames at the bottom of the stack `longest` starts with: only the frames
    /// above them are copied when `longest` is next rewritten.
    agreed: usize,
    at_peak: bool,
    /// Scratch for `dead_end`: the inputs of writes called before a read returned.
    before: Vec<&'a M::Input>,
    /// Whether states with a dead read are dropped (`dead_end`): always, except when
    /// looking for the longest prefix to explain a failure with.
    prune: bool,
    /// In a windowed search (`window`), the call of the last op loaded: every op called up
    /// to it is in `ops`, none called after; `None` when `ops` are the partition's all.
    horizon: Option<u64>,
    /// Whether `longest` is kept (a windowed search keeps none: it holds no whole order).
    track: bool,
}

/// Why a search stopped.
enum Stop {
    /// It answered.
    Done(Verdict),
    /// A windowed search needs ops past its horizon.
    NeedMore,
}

impl<'a, M: Model> Search<'a, M> {
    fn new(model: &'a M, init: M::State, ops: &'a [LinOp<M::Input>]) -> Self {
        let events = Events::new(ops);
        let mut classes = Classes::new(ops);
        classes.refresh(&events, ops);
        let open = unknown_classes(ops, &classes);
        Search {
            model,
            ops,
            events,
            classes,
            linearized: Linearized::new(open),
            cache: Cache::new(),
            held: 0,
            evict_at: EVICT_AT,
            gave_up: None,
            stack: Vec::new(),
            states: Vec::new(),
            state: init,
            longest: Vec::new(),
            agreed: 0,
            at_peak: false,
            before: Vec::new(),
            prune: true,
            horizon: None,
            track: true,
        }
    }

    /// Whether the ops loaded cannot tell the next step: the first return in the list is
    /// past the horizon, or there is none known (a windowed search only).
    fn beyond_horizon(&self) -> bool {
        let Some(horizon) = self.horizon else {
            return false;
        };
        let mut entry = self.events.first();
        while entry != self.events.tail && entry.is_multiple_of(2) {
            entry = self.events.after(entry);
        }
        entry == self.events.tail || self.ops[entry / 2].ret().is_none_or(|r| r > horizon)
    }

    /// A callable read-only op that succeeds in the current state, if any.
    fn forced_read(&self) -> Option<usize> {
        let mut entry = self.events.first();
        while entry != self.events.tail && entry.is_multiple_of(2) {
            let input = &self.ops[entry / 2].input;
            // Only a read that leaves the state as it is: from a state that stands for any
            // value (`Model::any_state`) a read pins the value, and which read does matters.
            if self.model.is_read_only(input)
                && self.model.step(&self.state, input).as_ref() == Some(&self.state)
            {
                return Some(entry);
            }
            entry = self.events.after(entry);
        }
        None
    }

    /// Tries to linearize the op of call `entry` next: `true` when it was lifted.
    fn try_lift(&mut self, entry: usize, forced: bool, limits: &Limits) -> bool {
        let op = entry / 2;
        let Some(next_state) = self.model.step(&self.state, &self.ops[op].input) else {
            return false;
        };
        if self.prune && self.dead_end(op, &next_state) {
            if self.track && self.stack.len() >= self.longest.len() {
                // Still the longest order found: it explains the failure best.
                self.record_longest();
                // Ops fit in 32 bits (`MAX_OPS`).
                self.longest.push(op as u32);
            }
            return false;
        }
        self.linearized.set(op);
        let mut h = FxHasher::default();
        next_state.hash(&mut h);
        let hash = self.linearized.hash() ^ h.finish();
        let key = self.linearized.key();
        let growth = self.cache.next_growth(key.1.len());
        if growth > 0 && memory_over(limits, growth) {
            self.gave_up = Some("memory limit");
            self.linearized.clear(op);
            return false;
        }
        if !self.cache.insert(hash, key, &next_state) {
            self.linearized.clear(op);
            return false;
        }
        if self.cache.live_bytes() > self.evict_at {
            // A long history's cache would grow with it: the pairs far behind the front are
            // dropped, which costs at most exploring them again.
            let low = self.linearized.low().saturating_sub(EVICT_BEHIND);
            self.cache.evict_below(low);
            self.evict_at = EVICT_AT.max(self.cache.live_bytes() * 2);
        }
        // The cache's bytes change only when it reallocates: the count all searches share
        // is written then, not at every lift.
        let bytes = self.cache.bytes();
        if bytes > self.held {
            limits
                .memory_used
                .fetch_add(bytes - self.held, Ordering::Relaxed);
        } else if bytes < self.held {
            limits
                .memory_used
                .fetch_sub(self.held - bytes, Ordering::Relaxed);
        }
        self.held = bytes;
        let input = &self.ops[op].input;
        let undone = !forced && self.model.undo(&next_state, input).as_ref() == Some(&self.state);
        let state = std::mem::replace(&mut self.state, next_state);
        let kept = !forced && !undone;
        if kept {
            self.states.push(state);
        }
        self.stack.push(Frame::new(entry, kept, forced));
        self.at_peak |= self.stack.len() > self.longest.len();
        self.events.lift(op);
        self.classes.refresh(&self.events, self.ops);
        true
    }

    /// Whether `state`, reached by linearizing `op`, leaves a pending read no way to succeed.
    ///
    /// Proof that such a state can be dropped: every read still in the list (with a known
    /// return) must be linearized later, and only ops whose call comes before its return in
    /// the list can be linearized between now and then. If the model says no order of any
    /// of those writes leads from `state` to one in which the read succeeds
    /// (`Model::may_still_read`), the configuration has no completion, exactly as if `op`
    /// could not take effect. Only the first few reads are looked at, which is enough to
    /// catch a wrong order of writes at the first read that tells it.
    fn dead_end(&mut self, op: usize, state: &M::State) -> bool {
        let mut before = std::mem::take(&mut self.before);
        before.clear();
        let (mut entry, mut walked, mut reads) = (self.events.first(), 0, 0);
        let mut dead = false;
        while entry != self.events.tail && walked < DEAD_END_WALK && reads < DEAD_END_READS {
            let i = entry / 2;
            let input = &self.ops[i].input;
            let read_only = self.model.is_read_only(input);
            if i == op {
            } else if entry.is_multiple_of(2) {
                if !read_only {
                    before.push(input);
                }
            } else if read_only && self.ops[i].ret().is_some() {
                if self
                    .horizon
                    .is_some_and(|h| self.ops[i].ret().is_some_and(|r| r > h))
                {
                    break; // writes called before it may not be loaded yet
                }
                reads += 1;
                if !self.model.may_still_read(state, input, &before) {
                    dead = true;
                    break;
                }
            }
            walked += 1;
            entry = self.events.after(entry);
        }
        self.before = before;
        dead
    }

    /// The stack's ops become the longest order found, copying only the frames pushed since
    /// the last time.
    fn record_longest(&mut self) {
        self.longest.truncate(self.agreed);
        let above = &self.stack[self.agreed..];
        // Ops fit in 32 bits (`MAX_OPS`).
        self.longest.extend(above.iter().map(|f| f.op() as u32));
        self.agreed = self.stack.len();
        self.at_peak = false;
    }

    /// Undoes linearized ops until one leaves alternatives to try; returns the entry to go on
    /// from, or `None` when there is nothing left to undo.
    fn backtrack(&mut self) -> Option<usize> {
        if self.at_peak && self.track {
            self.record_longest();
        }
        loop {
            let frame = self.stack.pop()?;
            let entry = frame.entry();
            self.agreed = self.agreed.min(self.stack.len());
            self.linearized.clear(entry / 2);
            self.events.unlift(entry / 2);
            self.classes.refresh(&self.events, self.ops);
            if !frame.forced() {
                self.state = match frame.kept() {
                    true => self
                        .states
                        .pop()
                        .expect("a state for every frame that kept one"),
                    false => (self.model.undo(&self.state, &self.ops[frame.op()].input))
                        .expect("the state undo gave when the op was linearized"),
                };
                return Some(self.events.after(entry));
            }
        }
    }

    fn run(&mut self, limits: &Limits) -> Verdict {
        match self.advance(limits) {
            Stop::Done(verdict) => verdict,
            // Only a windowed search stops so.
            Stop::NeedMore => Verdict::Unknown("the search's window"),
        }
    }

    /// Searches until it answers or, windowed, needs ops it has not loaded. Windowed, a
    /// search that finds no order may have committed the frames that lead to one: its
    /// "not linearizable" only says that the window found none.
    fn advance(&mut self, limits: &Limits) -> Stop {
        let mut entry = self.events.first();
        let mut steps = 0u64;
        loop {
            steps += 1;
            if let Some(reason) = self.gave_up {
                return Stop::Done(Verdict::Unknown(give_up(limits, reason)));
            }
            if steps.is_multiple_of(CHECK_EVERY) {
                if limits.decided.load(Ordering::Relaxed) {
                    return Stop::Done(Verdict::NotSearched);
                }
                if let Some(reason) = over_limits(limits) {
                    return Stop::Done(Verdict::Unknown(reason));
                }
            }
            if entry == self.events.first() {
                if self.beyond_horizon() {
                    return Stop::NeedMore;
                }
                if let Some(read) = self.forced_read() {
                    entry = if self.try_lift(read, true, limits) {
                        self.events.first()
                    } else if let Some(reason) = self.gave_up {
                        return Stop::Done(Verdict::Unknown(give_up(limits, reason)));
                    } else {
                        // Seen before: what follows it was explored and failed.
                        match self.backtrack() {
                            Some(next) => next,
                            None => return Stop::Done(self.not_linearizable()),
                        }
                    };
                    continue;
                }
            }
            let unknown = entry != self.events.tail
                && !entry.is_multiple_of(2)
                && self.ops[entry / 2].ret().is_none();
            if entry == self.events.tail || unknown {
                // Every op with a known return is linearized: of those loaded, when windowed.
                return match self.horizon {
                    Some(_) => Stop::NeedMore,
                    None => Stop::Done(Verdict::Linearizable),
                };
            }
            let op = entry / 2;
            if !entry.is_multiple_of(2) {
                // A return whose call could not be linearized.
                match self.backtrack() {
                    Some(next) => entry = next,
                    None => return Stop::Done(self.not_linearizable()),
                }
                continue;
            }
            entry = if self.classes.worth_trying(op) && self.try_lift(entry, false, limits) {
                self.events.first()
            } else {
                self.events.after(entry)
            };
        }
    }

    fn not_linearizable(&mut self) -> Verdict {
        Verdict::NotLinearizable {
            longest: self.longest.iter().map(|&op| op as usize).collect(),
            failing: None,
        }
    }
}

/// For each op whose outcome is unknown, its class among such ops, numbered from 0.
fn unknown_classes<I>(ops: &[LinOp<I>], classes: &Classes) -> Vec<Option<u32>> {
    let mut numbers: HashMap<usize, u32> = HashMap::new();
    ops.iter()
        .enumerate()
        .map(|(i, op)| {
            op.ret().is_none().then(|| {
                let next = numbers.len() as u32;
                *numbers.entry(classes.class_of(i)).or_insert(next)
            })
        })
        .collect()
}

/// Decides whether the ops of one partition are linearizable with respect to `model`, from
/// the state `init`.
pub fn search<M: Model>(
    model: &M,
    init: M::State,
    ops: &[LinOp<M::Input>],
    limits: &Limits,
) -> Verdict {
    if limits.decided.load(Ordering::Relaxed) {
        return Verdict::NotSearched;
    }
    if let Some(reason) = over_limits(limits) {
        return Verdict::Unknown(reason);
    }
    if let Some(failing) = model.refute(&init, ops) {
        return Verdict::NotLinearizable {
            longest: Vec::new(),
            failing: Some(failing),
        };
    }
    if !limits.generic {
        let stop = || limits.decided.load(Ordering::Relaxed) || over_limits(limits).is_some();
        match model.decide(&init, ops, &stop) {
            Some(Decision::Linearizable) => return Verdict::Linearizable,
            Some(Decision::NotLinearizable { failing }) => {
                return Verdict::NotLinearizable {
                    longest: Vec::new(),
                    failing: Some(failing),
                }
            }
            Some(Decision::Stopped) => {
                return match over_limits(limits) {
                    Some(reason) => Verdict::Unknown(reason),
                    None => Verdict::NotSearched,
                }
            }
            None => {}
        }
    }
    if ops.len() > MAX_OPS {
        return Verdict::Unknown("a partition of more ops than the search can link");
    }
    let mut search = Search::new(model, init, ops);
    let verdict = search.run(limits);
    limits.memory_used.fetch_sub(search.held, Ordering::Relaxed);
    verdict
}

/// Searches `ops` on their own, with limits of their own (no other search shares them).
pub fn search_alone<M: Model>(
    model: &M,
    init: M::State,
    ops: &[LinOp<M::Input>],
    deadline: Option<Instant>,
    memory_limit: usize,
) -> Verdict {
    with_own_limits(deadline, memory_limit, |limits| {
        search(model, init, ops, limits)
    })
}

/// The longest linearizable prefix of `ops`, found not linearizable, searched without
/// dropping dead states, so that it runs as far as the ops allow: what explains a failure
/// best. `None` when the search does not end before `deadline`.
pub fn longest_prefix<M: Model>(
    model: &M,
    init: M::State,
    ops: &[LinOp<M::Input>],
    deadline: Instant,
) -> Option<Vec<usize>> {
    if ops.len() > MAX_OPS {
        return None;
    }
    with_own_limits(Some(deadline), usize::MAX, |limits| {
        let mut search = Search::new(model, init, ops);
        search.prune = false;
        match search.run(limits) {
            Verdict::NotLinearizable { longest, .. } => Some(longest),
            _ => None,
        }
    })
}

/// Runs `f` with limits no other search shares.
fn with_own_limits<T>(
    deadline: Option<Instant>,
    memory_limit: usize,
    f: impl FnOnce(&Limits) -> T,
) -> T {
    let (used, cancelled, decided, reason) = (
        AtomicUsize::new(0),
        AtomicBool::new(false),
        AtomicBool::new(false),
        OnceLock::new(),
    );
    f(&Limits {
        deadline,
        memory_limit,
        memory_used: &used,
        cancelled: &cancelled,
        decided: &decided,
        reason: &reason,
        generic: false,
    })
}

/// Whether the process's resident memory (or, where the kernel does not say, the caches'
/// bytes) plus `extra` bytes about to be allocated passes the limit.
fn memory_over(limits: &Limits, extra: usize) -> bool {
    let used = resident_bytes().unwrap_or_else(|| limits.memory_used.load(Ordering::Relaxed));
    used.saturating_add(extra) > limits.memory_limit
}

/// Why the search must give up now, if it must.
fn over_limits(limits: &Limits) -> Option<&'static str> {
    if limits.cancelled.load(Ordering::Relaxed) {
        return Some(
            limits
                .reason
                .get()
                .copied()
                .unwrap_or("another partition gave up"),
        );
    }
    if limits.deadline.is_some_and(|d| Instant::now() >= d) {
        Some(give_up(limits, "time limit"))
    } else if memory_over(limits, 0) {
        Some(give_up(limits, "memory limit"))
    } else {
        None
    }
}

/// Stops every search for `reason`, which is kept as the reason unless another came first.
fn give_up(limits: &Limits, reason: &'static str) -> &'static str {
    let first = *limits.reason.get_or_init(|| reason);
    limits.cancelled.store(true, Ordering::Relaxed);
    first
}

//! The counter's own decision procedure: one sweep over the history's events in time order,
//! keeping every way the ops seen so far can have been linearized that might still matter,
//! instead of the generic search's orders. Exact, and linear in the history for the common
//! case; see `docs/how-the-checkers-work.md` ("The counter's sweep") for the argument.
//!
//! Why a sweep can be exact (the normal form). A counter's state after a set of adds does not
//! depend on their order ("anagram-agnostic", Lee and Mathur, arXiv 2509.05586) and a read
//! changes nothing. Take any linearization and move every add as late as it can go: past
//! other adds (which commutes) up to the next read after it, or, for an add that returned,
//! up to its return; an add of unknown outcome (no return) that no read follows is dropped.
//! No read sees a different sum, so the result is a linearization too. In it, adds come in
//! bursts, each right before a read ("a block": a burst, then the reads that see its sum),
//! and a block can itself be moved later until it meets the return of one of its reads, the
//! return of an add in its burst, or the return of an add still waiting to take effect (its
//! forced effect would change what the block's reads see). So some linearization has every
//! burst right before a return event, and the sweep tries bursts only there.
//!
//! What the sweep keeps (a configuration): the sum, which open adds have taken effect, which
//! open reads are done, and how many adds of unknown outcome of each delta have been used
//! from the reserve. A configuration that agrees with another but has used no more of any
//! delta and done no fewer reads is dropped: every future of the second is a future of the
//! first. So is one that another with fewer open adds in effect can reach now, by putting the
//! rest in effect as one block (`frontier::lazier`): the lazier one can do that at any time
//! while they are open, and waiting more only adds ways. A read is done as soon as the sum
//! fits it (doing it later gains nothing). Of equal open adds (same delta, both known or both
//! unknown) a burst takes those that end first: taking a later one instead leaves a
//! configuration the first beats. At an add's return no burst takes it or an add equal to it
//! (`closure::equal_adds`): the configuration with it in effect first beats every such block.
//!
//! Adds of unknown outcome never close, so they wait in a reserve counted by delta (adds of
//! one delta called before now are interchangeable from now on). One that completed with
//! `info` is first held open like a returned add, from its call to that completion (where a
//! service that answered late most likely applied it: a hint, not a deadline), and then joins
//! the reserve, counted as used where it took effect.
//!
//! The sweep is exact when the reserve's deltas take at most one value of each sign (e.g.
//! increments of 1, or +1 and -1): then the take of fewest adds beats every other
//! (`pool::takes`). With many distinct deltas the problem is strongly NP-hard (3-partition
//! reduces to it), and the sweep is a search for a witness, in stages (`GUESSES`): a
//! "linearizable" found is a witness either way, a failure is left to the generic search.

use super::bursts::Choice;
use super::pool::{self, Counts, MAX_CLASSES};
use super::CounterInput;
use crate::ideal::{Count, Reading, State, Sum};
use crate::linear::model::Decision;
use crate::linear::partition::LinOp;
use rustc_hash::FxHashSet;

mod closure;
mod config;
mod frontier;
mod roles;
mod uses;

use config::{Config, Value, MOST};
use roles::{roles, Role};
use uses::Uses;

/// Ops of one kind open at once, at most (a bit each).
const MAX_OPEN: u32 = 64;
/// Open adds not yet in effect over which every subset is tried, at most.
const MAX_SUBSET_ADDS: u32 = 24;
/// Configurations kept at once; past this the best are kept and the sweep is inexact.
const MAX_FRONTIER: usize = 4096;
/// When the takes from the reserve are guesses (`exact_pool` false), the sweep is a search
/// for a witness, tried in stages while it fails: the most adds one burst takes from the
/// reserve, the configurations kept at once (the most promising: fewest guesses, then the
/// adds in effect fewest and ending first, then most reads done), and the most kept where
/// that is too few (`frontier::run` goes back and widens). Witnesses of services that apply
/// an add before they answer it need no take at all.
const GUESSES: [Guess; 2] = [
    Guess {
        most: 0,
        width: 32,
        widest: 4096,
    },
    Guess {
        most: 3,
        width: 64,
        widest: 512,
    },
];
/// Events between checks of `stop`.
const STOP_EVERY: usize = 4096;

/// One end of an op, in time order (16 bytes: a history holds two an op).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    at: u64,
    is_return: bool,
    /// The op's place in the key's ops.
    op: u32,
}

impl Event {
    /// The op's place in the key's ops.
    fn op(&self) -> usize {
        self.op as usize
    }
}

/// Decides one counter's ops from `init`, or `None` when the sweep does not apply (deletes,
/// too many ops open at once, too many distinct unknown deltas, 2^32 ops or more) or cannot
/// decide (a failure found while guessing, at every width). `stop` is asked now and then whether to
/// give up.
pub fn decide(
    reading: Reading,
    init: State,
    ops: &[LinOp<CounterInput>],
    stop: &dyn Fn() -> bool,
) -> Option<Decision> {
    let (roles, deltas) = roles(ops)?;
    // An event names its op in 32 bits, and a sum must fit a `Value`.
    u32::try_from(ops.len()).ok()?;
    let reach = ops
        .iter()
        .fold(init.unwrap_or(0).unsigned_abs(), |reach, op| {
            match op.input {
                CounterInput::Add(_, d) => reach + u128::from(d.unsigned_abs()),
                _ => reach,
            }
        });
    if reach >= MOST.unsigned_abs() {
        return None;
    }
    let mut events: Vec<Event> = Vec::with_capacity(2 * ops.len());
    for ((o, role), op) in ops.iter().zip(&roles).zip(0u32..) {
        events.push(Event {
            at: o.call,
            is_return: false,
            op,
        });
        let end = match role {
            Role::Hinted(_) => o.hint(),
            _ => o.ret(),
        };
        if let Some(at) = end {
            events.push(Event {
                at,
                is_return: true,
                op,
            });
        }
    }
    events.sort_unstable();
    let exact_pool = pool::one_per_sign(deltas.iter().copied());
    let exact = Guess {
        most: 0,
        width: MAX_FRONTIER,
        widest: MAX_FRONTIER,
    };
    let stages: &[Guess] = if exact_pool { &[exact] } else { &GUESSES };
    for &guess in stages {
        let mut sweep = Sweep::new(reading, init, ops, &roles, &deltas, guess);
        match sweep.run(&events, stop)? {
            Decision::NotLinearizable { .. } if sweep.inexact => {}
            decision => return Some(decision),
        }
    }
    None
}

#[derive(Clone)]
struct Sweep<'a> {
    ops: &'a [LinOp<CounterInput>],
    roles: &'a [Role],
    reading: Reading,
    /// The deltas of the reserve's classes.
    deltas: &'a [i64],
    /// Adds of unknown outcome in the reserve so far, per class.
    arrived: Counts,
    /// Each op's slot while it is open.
    slot: Vec<u8>,
    open_adds: u64,
    open_reads: u64,
    add_delta: [i64; MAX_OPEN as usize],
    /// When each open add returns, or for one of unknown outcome, its info completion.
    add_end: [u64; MAX_OPEN as usize],
    /// Whether each open add is of unknown outcome.
    add_optional: [bool; MAX_OPEN as usize],
    /// `in_effect[k][b]`: the sum of the deltas of the open adds in slots `8k..8k + 8` whose
    /// bits are set in `b`.
    in_effect: Box<[[i64; 256]; 8]>,
    /// The open adds as `(delta, optional, end, slot)`, sorted.
    open_sorted: Vec<(i64, bool, u64, u8)>,
    /// Space `bursts` and `closure` reuse.
    scratch: Scratch,
    read_value: [Count; MAX_OPEN as usize],
    frontier: Vec<Config>,
    /// The reserve's uses the configurations name.
    uses: Uses,
    /// Some burst or configuration was left out: a failure proves nothing.
    inexact: bool,
    /// The reserve's deltas take at most one value of each sign: every take that matters is
    /// tried.
    exact_pool: bool,
    /// How far to guess.
    guess: Guess,
}

/// Space the sweep reuses from call to call; not part of its state, so a copy (a
/// checkpoint) starts empty.
#[derive(Default)]
struct Scratch {
    /// For `bursts`: the free adds of the configuration the closure is at.
    choice: Choice,
    /// For `bursts`: the bursts that make the read's count.
    found: Vec<(u64, Sum)>,
    /// For `closure`: the configurations its calls reached at this event.
    known: FxHashSet<Config>,
    /// For `prune`: where it puts each configuration.
    order: Vec<(u128, u128)>,
    /// For `prune`: the configurations it keeps.
    kept: Vec<Config>,
    /// For `step`: the configurations a closure reached.
    ways: Vec<Config>,
    /// For `closure`: the blocks from the configuration it is at.
    blocks: Vec<Config>,
}

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

/// How far the sweep guesses when the reserve is inexact.
#[derive(Debug, Clone, Copy)]
struct Guess {
    /// The most adds one burst takes from the reserve.
    most: u32,
    /// Configurations kept at once, now.
    width: usize,
    /// The most configurations kept at once after widening.
    widest: usize,
}

impl<'a> Sweep<'a> {
    fn new(
        reading: Reading,
        init: State,
        ops: &'a [LinOp<CounterInput>],
        roles: &'a [Role],
        deltas: &'a [i64],
        guess: Guess,
    ) -> Self {
        let exact_pool = pool::one_per_sign(deltas.iter().copied());
        Sweep {
            ops,
            roles,
            reading,
            deltas,
            arrived: [0; MAX_CLASSES],
            slot: vec![0; ops.len()],
            open_adds: 0,
            open_reads: 0,
            add_delta: [0; MAX_OPEN as usize],
            add_end: [0; MAX_OPEN as usize],
            add_optional: [false; MAX_OPEN as usize],
            in_effect: Box::new([[0; 256]; 8]),
            open_sorted: Vec::new(),
            scratch: Scratch::default(),
            read_value: [None; MAX_OPEN as usize],
            frontier: vec![Config {
                value: Value::of(init),
                applied: 0,
                done: 0,
                used: 0,
                taken: 0,
            }],
            uses: Uses::default(),
            inexact: false,
            exact_pool,
            guess,
        }
    }

    /// What `event` changes before the configurations move: a call opens its op; `None`
    /// when too many ops are open at once.
    fn enter(&mut self, event: &Event) -> Option<()> {
        if event.is_return {
            return Some(());
        }
        let op = event.op();
        match self.roles[op] {
            Role::Reserve(class) => self.arrived[class as usize] += 1,
            Role::Add | Role::Hinted(_) => {
                let s = free_slot(self.open_adds)?;
                self.open_add(op, s);
            }
            Role::Read => {
                let s = free_slot(self.open_reads)?;
                self.open_read(op, s);
            }
        }
        Some(())
    }

    /// What `event` changes after the configurations moved: a return closes its op, an info
    /// completion moves its add to the reserve.
    fn leave(&mut self, event: &Event) {
        if !event.is_return {
            return;
        }
        let bit = 1u64 << self.slot[event.op()];
        match self.roles[event.op()] {
            Role::Read => self.open_reads &= !bit,
            Role::Add => self.close_add(bit),
            Role::Hinted(class) => {
                self.arrived[class as usize] += 1;
                self.close_add(bit);
            }
            Role::Reserve(_) => {}
        }
    }

    /// Opens add `op` in slot `s`.
    fn open_add(&mut self, op: usize, s: u8) {
        let o = &self.ops[op];
        let CounterInput::Add(_, d) = o.input else {
            return;
        };
        self.open_adds |= 1 << s;
        self.add_delta[s as usize] = d;
        self.add_end[s as usize] = o.ret().or(o.hint()).unwrap_or(u64::MAX);
        self.add_optional[s as usize] = o.ret().is_none();
        self.shift(s, d);
        let entry = (d, o.ret().is_none(), self.add_end[s as usize], s);
        let at = self.open_sorted.partition_point(|e| *e < entry);
        self.open_sorted.insert(at, entry);
        self.slot[op] = s;
    }

    /// Opens read `op` in slot `s`.
    fn open_read(&mut self, op: usize, s: u8) {
        if let CounterInput::Read(_, v) = self.ops[op].input {
            self.open_reads |= 1 << s;
            self.read_value[s as usize] = v;
            self.slot[op] = s;
        }
    }

    /// What a call changes in the configurations: a read is done where the sum fits it.
    fn on_call(&mut self, event: &Event) {
        if self.roles[event.op()] == Role::Read {
            let mut frontier = std::mem::take(&mut self.frontier);
            frontier.iter_mut().for_each(|c| self.settle(c));
            self.frontier = frontier;
        }
    }

    /// The configurations `c` leads to through `event`, pushed to `out`. At a read's call,
    /// the read is done if the sum fits it. At a return, an add not yet in effect takes
    /// effect, a read not yet done is done, each after any blocks that can come first;
    /// configurations that cannot are gone. An add of unknown outcome at its info completion
    /// goes to the reserve instead: one that took effect counts as used from it.
    fn step(&mut self, mut c: Config, event: &Event, out: &mut Vec<Config>) {
        let op = event.op();
        let role = self.roles[op];
        if !event.is_return {
            if role == Role::Read {
                self.settle(&mut c);
            }
            out.push(c);
            return;
        }
        let bit = 1u64 << self.slot[op];
        if let Role::Hinted(class) = role {
            self.expire(c, bit, class as usize, op, out);
            return;
        }
        let is_add = role == Role::Add;
        let settled = match is_add {
            true => c.applied & bit,
            false => c.done & bit,
        } != 0;
        // With no read left to do, no block can come first.
        let mut ways = std::mem::take(&mut self.scratch.ways);
        ways.clear();
        match settled || self.open_reads & !c.done == 0 {
            true => ways.push(c),
            false => self.closure(c, bit, is_add, &mut ways),
        }
        for mut w in ways.drain(..) {
            if is_add && w.applied & bit == 0 {
                if let CounterInput::Add(_, d) = self.ops[op].input {
                    w.value = w.value.add(d);
                }
                self.settle(&mut w);
            } else if !is_add && w.done & bit == 0 {
                continue;
            }
            match is_add {
                true => w.applied &= !bit,
                false => w.done &= !bit,
            }
            out.push(w);
        }
        self.scratch.ways = ways;
    }

    /// The info completion of an add of unknown outcome (its slot `bit`, its reserve class)
    /// in configuration `c`: from now on it is one more add of its class in the reserve, and
    /// one in effect counts as used from it. When guessing, an add not in effect may also
    /// take effect here, after any blocks that can come first, as at a return: the guesses
    /// then take from the reserve only what they must.
    fn expire(&mut self, c: Config, bit: u64, class: usize, op: usize, out: &mut Vec<Config>) {
        let mut ways = std::mem::take(&mut self.scratch.ways);
        ways.clear();
        match c.applied & bit == 0 && !self.exact_pool {
            true => self.closure(c, bit, true, &mut ways),
            false => ways.push(c),
        }
        for mut w in ways.drain(..) {
            if w.applied & bit == 0 && !self.exact_pool {
                let mut now = w;
                if let CounterInput::Add(_, d) = self.ops[op].input {
                    now.value = now.value.add(d);
                }
                now.used = self.uses.plus_one(now.used, class);
                self.settle(&mut now);
                out.push(now);
            } else if w.applied & bit != 0 {
                w.used = self.uses.plus_one(w.used, class);
                w.applied &= !bit;
            }
            out.push(w);
        }
        self.scratch.ways = ways;
    }

    /// Frees the slot `bit` of an add that is no longer open.
    fn close_add(&mut self, bit: u64) {
        let s = bit.trailing_zeros() as u8;
        self.shift(s, -self.add_delta[s as usize]);
        self.open_adds &= !bit;
        self.open_sorted.retain(|e| e.3 != s);
    }

    /// Adds `delta` to the sums `in_effect` keeps with slot `s` among them.
    fn shift(&mut self, s: u8, delta: i64) {
        let bit = 1 << (s % 8);
        let sums = self.in_effect[s as usize / 8].iter_mut().enumerate();
        sums.filter(|(b, _)| b & bit != 0)
            .for_each(|(_, sum)| *sum += delta);
    }

    /// The sum of the deltas of the open adds in the slots `applied`.
    fn sum_of(&self, applied: u64) -> i64 {
        let bytes = applied.to_le_bytes();
        self.in_effect
            .iter()
            .zip(bytes)
            .map(|(sums, b)| sums[b as usize])
            .sum()
    }

    /// The count open read `r` returned, as compared; `None` for an absent counter.
    fn target(&self, r: usize) -> Option<Sum> {
        self.reading.of(self.read_value[r]).map(Sum::from)
    }

    /// What a burst from `c` may take from the reserve: the adds `c` has not used, per class,
    /// and whether it takes none of them (guessing with no take allowed, and more than one
    /// class of a sign available).
    fn reserve(&self, c: &Config) -> Reserve {
        let mut avail = self.arrived;
        for (a, u) in avail.iter_mut().zip(self.uses.get(c.used)) {
            *a -= u;
        }
        let alone = self.guess.most == 0 && pool::ambiguous(self.deltas, &avail);
        Reserve { avail, alone }
    }

    /// The configurations a burst that makes open read `r` fit leads to from `from`, whose
    /// free adds `scratch.choice` holds and whose `reserve` is given.
    fn bursts(&mut self, from: &Config, reserve: &Reserve, r: usize, out: &mut Vec<Config>) {
        let first = out.len();
        // A burst makes a counter present: a read of null (as compared) never fits after one.
        let Some(target) = self.target(r) else {
            return;
        };
        let base = from.value.sum();
        let Reserve { avail, alone } = *reserve;
        // Guessing with no take allowed: only bursts that make the sum on their own count.
        self.inexact |= alone;
        let mut found = std::mem::take(&mut self.scratch.found);
        found.clear();
        self.scratch
            .choice
            .prefixes(alone.then_some(target - base), &mut found);
        let (deltas, uses) = (self.deltas, &mut self.uses);
        for &(subset, sum) in &found {
            let nonempty = from.value.is_absent() && subset == 0;
            let rest = target - base - sum;
            let mut add = |take: &pool::Take| {
                let mut c = *from;
                c.applied |= subset;
                c.value = Value::of(Some(target));
                if take.iter().any(|&t| t > 0) {
                    c.used = uses.plus(c.used, take);
                    c.taken += take.iter().sum::<u32>();
                }
                out.push(c);
            };
            if alone {
                // A counter made present by no add at all is a guess left out.
                if !nonempty {
                    add(&[0; MAX_CLASSES]);
                }
                continue;
            }
            let partial = pool::takes(rest, nonempty, deltas, &avail, self.guess.most, add);
            self.inexact |= partial;
        }
        self.scratch.found = found;
        for c in &mut out[first..] {
            self.settle(c);
        }
    }

    /// The reads among `reads` that returned what open read `r` returned.
    fn returned_alike(&self, r: usize, reads: u64) -> u64 {
        self.reads_where(reads, |returned| returned == self.read_value[r])
    }

    /// Marks done every open read that fits the sum.
    fn settle(&self, c: &mut Config) {
        c.done |= self.fitting(c.value, self.open_reads & !c.done);
    }

    /// The open reads among `reads` that the sum `value` fits.
    fn fitting(&self, value: Value, reads: u64) -> u64 {
        let state = value.state();
        self.reads_where(reads, |returned| self.reading.fits(state, returned))
    }

    /// The open reads among `reads` whose returned value `keep` keeps.
    fn reads_where(&self, reads: u64, keep: impl Fn(Count) -> bool) -> u64 {
        slots(reads)
            .filter(|&r| keep(self.read_value[r]))
            .fold(0, |kept, r| kept | 1 << r)
    }
}

/// What a burst from one configuration may take from the reserve.
#[derive(Debug, Clone, Copy)]
struct Reserve {
    /// The adds not used yet, per class.
    avail: Counts,
    /// Guessing with no take allowed: a burst takes nothing from the reserve.
    alone: bool,
}

/// The slots whose bits are set in `bits`, lowest first.
fn slots(bits: u64) -> impl Iterator<Item = usize> {
    let mut left = bits;
    std::iter::from_fn(move || {
        (left != 0).then(|| {
            let s = left.trailing_zeros() as usize;
            left &= left - 1;
            s
        })
    })
}

/// The lowest slot not in `open`, if any.
fn free_slot(open: u64) -> Option<u8> {
    let s = (!open).trailing_zeros();
    (s < MAX_OPEN).then_some(s as u8)
}

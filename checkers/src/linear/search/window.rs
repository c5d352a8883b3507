//! The search over a partition too long to hold, for a witness. Its ops are pulled in call
//! order, a chunk at a time, and searched as a window: the search stops when the next step
//! needs ops not loaded yet, and the window is built again with more. Once the stack is
//! deeper than a margin, the frames below it are committed (their ops leave the window and
//! the search will not back up into them), so memory holds the margin, the ops still open
//! and a chunk, whatever the partition's length. An order found so is a witness; a search
//! that would back up past the margin, or finds no order, leaves the answer to the search
//! of the partition held whole.

use super::{over_limits, Frame, Limits, Search, Stop, Verdict, EVICT_AT};
use crate::linear::cache::Cache;
use crate::linear::model::Model;
use crate::linear::partition::LinOp;
use std::sync::atomic::Ordering;

/// Where a windowed search pulls a partition's ops from.
pub trait Source<I> {
    /// Appends the next ops, in call order, about `want` of them, to `out`; `false` once the
    /// partition has none left.
    fn fill(&mut self, want: usize, out: &mut Vec<LinOp<I>>) -> std::io::Result<bool>;
}

/// Which partitions a spilled check searches windowed, and how much a windowed search holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Spilled attempts a partition has, at least, to be searched windowed: below this,
    /// holding it costs less than a window (about 10 MB).
    pub from: u64,
    /// Ops loaded at a time.
    pub chunk: usize,
    /// Frames at the top of the stack kept open to backtracking.
    pub margin: usize,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            from: 1 << 18,
            chunk: 1 << 17,
            margin: 1 << 15,
        }
    }
}

/// What a windowed search answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Windowed {
    /// Some order explains every result.
    Linearizable,
    /// The search gave up.
    Unknown(&'static str),
    /// Another partition already decided the verdict.
    NotSearched,
    /// No witness within the window: search the partition held whole.
    Whole,
}

/// A search's place carried from one window to the next: the stack (each frame's op by its
/// place in the window), the states kept for it, the current state, and the cache emptied
/// (its room kept: a new table grown again page by page cost about 3 % of a long check).
struct Place<S> {
    frames: Vec<Frame>,
    states: Vec<S>,
    state: S,
    cache: Cache<S>,
    evict_at: usize,
}

/// Looks for an order of the partition `source` gives, from `init`, holding at most a
/// `window` of its ops.
pub fn search_windowed<M: Model>(
    model: &M,
    init: M::State,
    source: &mut dyn Source<M::Input>,
    limits: &Limits,
    window: Window,
) -> std::io::Result<Windowed> {
    if limits.decided.load(Ordering::Relaxed) {
        return Ok(Windowed::NotSearched);
    }
    if let Some(reason) = over_limits(limits) {
        return Ok(Windowed::Unknown(reason));
    }
    let mut ops = Vec::new();
    let mut more = load(source, window.chunk, &mut ops)?;
    let mut place = Place {
        frames: Vec::new(),
        states: Vec::new(),
        state: init,
        cache: Cache::new(),
        evict_at: EVICT_AT,
    };
    loop {
        let horizon = more.then(|| ops.last().map_or(0, |op| op.call));
        let mut search = Search::new(model, place.state, &ops);
        (search.cache, search.evict_at) = (place.cache, place.evict_at);
        search.resume(&place.frames, place.states, horizon);
        let stop = search.advance(limits);
        limits.memory_used.fetch_sub(search.held, Ordering::Relaxed);
        match stop {
            Stop::NeedMore if more => {}
            Stop::Done(Verdict::Linearizable) => return Ok(Windowed::Linearizable),
            Stop::Done(Verdict::Unknown(reason)) => return Ok(Windowed::Unknown(reason)),
            Stop::Done(Verdict::NotSearched) => return Ok(Windowed::NotSearched),
            _ => return Ok(Windowed::Whole),
        }
        search.cache.clear();
        place = Place {
            frames: search.stack,
            states: search.states,
            state: search.state,
            cache: search.cache,
            evict_at: search.evict_at,
        };
        commit(&mut place, &mut ops, window.margin);
        more = load(source, window.chunk, &mut ops)?;
    }
}

/// Appends `chunk` ops or more from `source` (or its last) to `ops`; whether more follow.
fn load<I>(
    source: &mut dyn Source<I>,
    chunk: usize,
    ops: &mut Vec<LinOp<I>>,
) -> std::io::Result<bool> {
    let before = ops.len();
    let mut more = true;
    while more && ops.len() < before + chunk.max(1) {
        more = source.fill(before + chunk.max(1) - ops.len(), ops)?;
    }
    Ok(more)
}

/// Commits the frames below the top `margin` (their ops leave `ops`, the states kept for
/// them are dropped) and numbers the ops left again.
fn commit<I, S>(place: &mut Place<S>, ops: &mut Vec<LinOp<I>>, margin: usize) {
    let extra = place.frames.len().saturating_sub(margin);
    let mut gone = vec![false; ops.len()];
    let kept = place.frames[..extra].iter().filter(|f| f.kept()).count();
    place.states.drain(..kept);
    for frame in place.frames.drain(..extra) {
        gone[frame.op()] = true;
    }
    let mut number = vec![0usize; ops.len()];
    let mut next = 0;
    for (i, &gone) in gone.iter().enumerate() {
        number[i] = next;
        next += usize::from(!gone);
    }
    let mut i = 0;
    ops.retain(|_| {
        i += 1;
        !gone[i - 1]
    });
    for frame in &mut place.frames {
        *frame = Frame::new(2 * number[frame.op()], frame.kept(), frame.forced());
    }
}

impl<'a, M: Model> Search<'a, M> {
    /// Takes up a windowed search where it stopped: the frames' ops lifted again in the
    /// stack's order (as the list they came from lifted them), over a window whose ops are
    /// called up to `horizon` (`None`: the partition's last op is in it).
    fn resume(&mut self, frames: &[Frame], states: Vec<M::State>, horizon: Option<u64>) {
        for &frame in frames {
            self.linearized.set(frame.op());
            self.events.lift(frame.op());
            self.stack.push(frame);
        }
        self.classes.refresh(&self.events, self.ops);
        self.states = states;
        self.horizon = horizon;
        self.track = false;
    }
}

#[cfg(test)]
mod tests;

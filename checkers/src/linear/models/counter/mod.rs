//! The ideal counter (`crate::ideal`) as a sequential model: per key, or per partition for
//! the partitions a history deletes whole, so that a partition delete is checked too. Counts
//! are true sums (`ideal::Sum`): a sum past `i64` is kept, never wrapped, and no read fits it.

mod bursts;
mod pool;
mod sweep;

use crate::ideal::{self, Count, Reading, State, Sum};
use crate::linear::model::{unknown_f, Decision, Model, ModelError};
use crate::linear::partition::LinOp;
use crate::op::{Op, OpType, F};
use std::collections::HashMap;
use std::sync::Arc;

/// One counter operation; the cell is the counter's number within a partition checked
/// whole (0 for a counter checked alone).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CounterInput {
    /// Add a delta to a counter.
    Add(u32, i64),
    /// Make a counter absent; `None`: every counter of the partition.
    Delete(Option<u32>),
    /// Read a counter, with what it returned (`None`: absent).
    Read(u32, Count),
}

/// A counter's state, or the state of a partition checked whole.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CounterState {
    /// One counter.
    One(State),
    /// The counters of a partition that are present, by cell number.
    Cells(Arc<[(u32, Sum)]>),
}

/// The ideal counter, starting from `init` (`None`: absent; Jepsen's counter starts at 0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CounterModel {
    /// The value of a counter before any operation.
    pub init: Count,
    /// How reads are compared.
    pub reading: Reading,
    /// The partitions checked whole, and their counters' numbers.
    whole: HashMap<String, HashMap<String, u32>>,
    /// Counter names by number, for explanations.
    names: Vec<String>,
}

impl CounterModel {
    /// The model for `history`: a partition that some delete deletes whole is checked as
    /// one object (an `init` applies to single counters only).
    pub fn for_history(init: Count, reading: Reading, history: &[Op]) -> Result<Self, ModelError> {
        let mut model = CounterModel {
            init,
            reading,
            ..CounterModel::default()
        };
        let is_partition_delete = |op: &&Op| {
            op.process.is_client()
                && op.kind == OpType::Invoke
                && op.f == F::Delete
                && op.key.as_deref().is_some_and(ideal::deletes_partition)
        };
        for op in history.iter().filter(is_partition_delete) {
            let partition = op.key.clone().unwrap_or_default();
            if init.is_some() {
                return Err(ModelError {
                    index: op.index,
                    message: format!(
                        "the delete of the whole partition `{partition}` needs counters that start absent; drop --init"
                    ),
                });
            }
            model.whole.entry(partition).or_default();
        }
        for op in history.iter().filter(|op| op.process.is_client()) {
            let Some(key) = op.key.as_deref().filter(|k| !ideal::deletes_partition(k)) else {
                continue;
            };
            if let Some(cells) = model.whole.get_mut(ideal::partition_of(key)) {
                if !cells.contains_key(key) {
                    cells.insert(key.to_string(), model.names.len() as u32);
                    model.names.push(key.to_string());
                }
            }
        }
        Ok(model)
    }

    /// The model for partitions already known: `whole` names the partitions checked whole,
    /// each with its counters in the order they first appear in the history.
    pub fn with_whole(init: Count, reading: Reading, whole: Vec<(String, Vec<String>)>) -> Self {
        let mut model = CounterModel {
            init,
            reading,
            ..CounterModel::default()
        };
        for (partition, keys) in whole {
            let cells = model.whole.entry(partition).or_default();
            for key in keys {
                cells.insert(key.clone(), model.names.len() as u32);
                model.names.push(key);
            }
        }
        model
    }

    /// The number of the counter `key` in its partition checked whole; 0 otherwise.
    fn cell(&self, key: &str) -> u32 {
        let cells = self.whole.get(ideal::partition_of(key));
        cells.and_then(|c| c.get(key)).copied().unwrap_or(0)
    }

    /// The partition an op on `key` belongs to: the key, or its partition when that is
    /// checked whole.
    pub fn partition_of(&self, key: &str) -> String {
        let partition = ideal::partition_of(key);
        match self.whole.contains_key(partition) {
            true => partition.to_string(),
            false => key.to_string(),
        }
    }

    /// The model's view of a valid op of `f` on `key`: an add's `delta`, what a read
    /// `returned` (`None`: unknown, and the read is left out); a scan is left out (leaving
    /// it out only loosens the check).
    pub fn input_for(
        &self,
        key: &str,
        f: &F,
        delta: i64,
        returned: Option<Count>,
    ) -> Option<CounterInput> {
        let cell = self.cell(key);
        match f {
            F::Add => Some(CounterInput::Add(cell, delta)),
            F::Delete if ideal::deletes_partition(key) => Some(CounterInput::Delete(None)),
            F::Delete => Some(CounterInput::Delete(Some(cell))),
            F::Read => returned.map(|v| CounterInput::Read(cell, v)),
            F::Scan | F::Other(_) => None,
        }
    }
}

/// Deltas by time, with running sums: of all, of the positive and of the negative ones.
struct Sums {
    times: Vec<u64>,
    sums: Vec<(Sum, Sum, Sum)>,
}

impl Sums {
    fn new(deltas: Vec<(u64, Sum)>) -> Self {
        let mut running = (0, 0, 0);
        let mut sums = vec![running];
        for &(_, d) in &deltas {
            running.0 += d;
            if d > 0 {
                running.1 += d;
            } else {
                running.2 += d;
            }
            sums.push(running);
        }
        Sums {
            times: deltas.iter().map(|&(t, _)| t).collect(),
            sums,
        }
    }

    /// The sums of the deltas before time `t`: (all, positive, negative).
    fn before(&self, t: u64) -> (Sum, Sum, Sum) {
        self.sums[self.times.partition_point(|&x| x < t)]
    }
}

/// The state of cell `cell` in a partition's present counters.
fn lookup(cells: &[(u32, Sum)], cell: u32) -> State {
    let at = cells.binary_search_by_key(&cell, |c| c.0).ok()?;
    Some(cells[at].1)
}

/// The partition's counters with cell `cell` set to `count`.
fn with(cells: &[(u32, Sum)], cell: u32, count: State) -> Arc<[(u32, Sum)]> {
    let mut next: Vec<(u32, Sum)> = cells.iter().copied().filter(|c| c.0 != cell).collect();
    if let Some(n) = count {
        let at = next.partition_point(|c| c.0 < cell);
        next.insert(at, (cell, n));
    }
    next.into()
}

impl Model for CounterModel {
    type State = CounterState;
    type Input = CounterInput;

    fn init(&self, partition: Option<&str>) -> CounterState {
        match partition.filter(|p| self.whole.contains_key(*p)) {
            Some(_) => CounterState::Cells(Arc::new([])),
            None => CounterState::One(self.init.map(Sum::from)),
        }
    }

    fn partition(&self, call: &Op) -> Option<String> {
        Some(self.partition_of(call.key.as_deref()?))
    }

    fn input(&self, call: &Op, ret: Option<&Op>) -> Result<Option<CounterInput>, ModelError> {
        let bad = |message: String| ModelError {
            index: call.index,
            message,
        };
        let key = call.key.as_deref().unwrap_or_default();
        let delta = match call.f {
            F::Add => call
                .delta()
                .ok_or_else(|| bad(format!("an add needs an integer delta, got {}", call.value)))?,
            F::Delete | F::Scan | F::Read => 0,
            _ => return Err(unknown_f(call, "counter", "add, delete, read, scan")),
        };
        let returned = match (&call.f, ret) {
            (F::Read, Some(ret)) => Some(ret.read_value().ok_or_else(|| {
                bad(format!(
                    "a read must return an integer or null, got {}",
                    ret.value
                ))
            })?),
            _ => None,
        };
        Ok(self.input_for(key, &call.f, delta, returned))
    }

    fn step(&self, state: &CounterState, input: &CounterInput) -> Option<CounterState> {
        use CounterInput::{Add, Delete, Read};
        use CounterState::{Cells, One};
        Some(match (state, input) {
            (One(count), Add(_, d)) => One(ideal::add(*count, *d)),
            (One(_), Delete(_)) => One(None),
            (One(count), Read(_, v)) => {
                return self.reading.fits(*count, *v).then_some(One(*count))
            }
            (Cells(cells), Add(c, d)) => Cells(with(cells, *c, ideal::add(lookup(cells, *c), *d))),
            (Cells(cells), Delete(Some(c))) => Cells(with(cells, *c, None)),
            (Cells(_), Delete(None)) => Cells(Arc::new([])),
            (Cells(cells), Read(c, v)) => {
                return self
                    .reading
                    .fits(lookup(cells, *c), *v)
                    .then(|| state.clone())
            }
        })
    }

    /// An add to one counter that was present: subtracting its delta gives the state back.
    fn undo(&self, after: &CounterState, input: &CounterInput) -> Option<CounterState> {
        match (after, input) {
            (CounterState::One(Some(sum)), CounterInput::Add(_, d)) => {
                Some(CounterState::One(Some(sum.checked_sub(Sum::from(*d))?)))
            }
            _ => None,
        }
    }

    fn is_read_only(&self, input: &Self::Input) -> bool {
        matches!(input, CounterInput::Read(..))
    }

    /// Adds move a counter by at most the sum of their positive deltas up and of their
    /// negative ones down, whatever subset takes effect and in whatever order; only a delete
    /// makes a present counter absent. So a read of `v` can still succeed after `state` only
    /// if `v` is in that range around it (checked for a counter checked alone, and only
    /// where `null` and `0` are told apart).
    fn may_still_read(
        &self,
        state: &CounterState,
        read: &CounterInput,
        before: &[&CounterInput],
    ) -> bool {
        let (CounterState::One(count), CounterInput::Read(_, returned)) = (state, read) else {
            return true;
        };
        if self.reading.absent_is_zero
            || before.iter().any(|i| matches!(i, CounterInput::Delete(_)))
        {
            return true;
        }
        let Some(returned) = returned else {
            return count.is_none();
        };
        let (down, up) = before.iter().fold((0, 0), |(down, up), i| match i {
            CounterInput::Add(_, d) if *d < 0 => (down + Sum::from(*d), up),
            CounterInput::Add(_, d) => (down, up + Sum::from(*d)),
            _ => (down, up),
        });
        let target = Sum::from(*returned) - count.unwrap_or(0);
        down <= target && target <= up
    }

    /// A read outside the counter checker's bounds: the adds that returned before it was
    /// called must have taken effect, and of the others only those called before it
    /// returned may have, so the sum it sees lies in a range no order can leave. One pass
    /// over the adds, sorted, and a binary search per read; a counter checked alone, with
    /// no delete, only.
    fn refute(&self, init: &CounterState, ops: &[LinOp<CounterInput>]) -> Option<usize> {
        let CounterState::One(init) = init else {
            return None;
        };
        if ops
            .iter()
            .any(|op| matches!(op.input, CounterInput::Delete(_)))
        {
            return None;
        }
        let adds = |known: bool| {
            let mut adds: Vec<(u64, Sum)> = ops
                .iter()
                .filter_map(|op| match op.input {
                    CounterInput::Add(_, d) if known => op.ret().map(|r| (r, Sum::from(d))),
                    CounterInput::Add(_, d) => Some((op.call, Sum::from(d))),
                    _ => None,
                })
                .collect();
            adds.sort_unstable();
            Sums::new(adds)
        };
        let (returned, called) = (adds(true), adds(false));
        ops.iter().position(|op| {
            let (CounterInput::Read(_, Some(v)), Some(ret)) = (&op.input, op.ret()) else {
                return false;
            };
            let (sum, up_done, down_done) = returned.before(op.call);
            let (_, up, down) = called.before(ret);
            let target = Sum::from(*v) - init.unwrap_or(0) - sum;
            target > up - up_done || target < down - down_done
        })
    }

    /// The sweep (`sweep`), for a counter checked alone whose history deletes nothing.
    fn decide(
        &self,
        init: &CounterState,
        ops: &[LinOp<CounterInput>],
        stop: &dyn Fn() -> bool,
    ) -> Option<Decision> {
        let CounterState::One(init) = init else {
            return None;
        };
        sweep::decide(self.reading, *init, ops, stop)
    }

    fn describe(&self, state: &CounterState) -> String {
        let count = |c: State| match c {
            None => "absent".to_string(),
            Some(n) if ideal::fits_64_bits(n) => n.to_string(),
            Some(n) => format!("{n} (past i64: no 64-bit read fits; a 64-bit counter wraps)"),
        };
        match state {
            CounterState::One(c) => count(*c),
            CounterState::Cells(cells) if cells.is_empty() => "every counter absent".to_string(),
            CounterState::Cells(cells) => {
                let named = cells.iter().map(|(c, n)| {
                    let name = self.names.get(*c as usize).map_or("?", String::as_str);
                    format!("{name} = {}", count(Some(*n)))
                });
                format!(
                    "{}; the others absent",
                    named.collect::<Vec<_>>().join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_gives_back_the_state_an_add_was_stepped_from_or_nothing() {
        let model = CounterModel::default();
        let add = CounterInput::Add(0, 5);
        for before in [Some(0), Some(-3), Some(Sum::MAX - 2)] {
            let before = CounterState::One(before);
            let after = model
                .step(&before, &add)
                .expect("an add always takes effect");
            let undone = model.undo(&after, &add);
            // Past the top the add saturates: undo then gives another state, which the
            // search sees differs from the one it had, and keeps that one.
            let exact = before != CounterState::One(Some(Sum::MAX - 2));
            assert_eq!(undone == Some(before.clone()), exact, "{before:?}");
        }
        // An add to an absent counter: undo cannot tell absent from 0.
        let absent = CounterState::One(None);
        let after = model
            .step(&absent, &add)
            .expect("an add always takes effect");
        assert_ne!(model.undo(&after, &add), Some(absent));
        // Reads and deletes are not undone.
        let read = CounterInput::Read(0, Some(5));
        assert_eq!(model.undo(&after, &read), None);
        assert_eq!(model.undo(&after, &CounterInput::Delete(None)), None);
    }
}

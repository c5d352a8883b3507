//! The counter checker: for every ok read, and every cell of an ok scan, the values some
//! legal order of the history allows, and by how much the read missed them.
//!
//! The truth is the ideal counter (docs/how-the-checkers-work.md): an add takes effect at one point between
//! its invoke and its completion (at any later point or never, when it timed out or never
//! completed; never, when it failed); a delete likewise; a retry (`retry_of`) is the same
//! intended op as the one it retries, so together they take effect at most once. A partition
//! delete reaches every counter of the partition. A counter is absent until its first add
//! and after a delete, and a read of it returns `null` (`ideal`). Sums are true sums
//! (`ideal::Sum`); a read some order gives a sum outside `i64` is an *overflow* (`overflow`).
//!
//! Each read is judged against every placement of the ops around it (`sweep`); the past
//! that can no longer move is folded into a set of values (`window`), so the checker makes
//! one pass and keeps memory proportional to keys and to the ops in flight.
//!
//! A read above every value any order allows, made after a delete that definitely completed
//! before it began, is a *resurrection* when the counter held something before that delete and the
//! excess is more than retries of adds could explain; it is reported apart from overcounts.

mod figures;
mod frame;
mod kept;
mod key;
mod overflow;
mod ranges;
mod subsets;
mod sweep;
mod values;
mod wide;
mod window;

pub use crate::ideal::Sum;
pub use figures::{
    error_of, CounterResult, Direction, KeyFigures, Magnitude, ReadBounds, WrongRead, ERRORS_KEPT,
};
pub use overflow::{Overflow, OVERFLOWS_KEPT};
pub use ranges::RangeSet;
pub use values::{misread, Misread, Values};

use crate::ideal::{self, Reading};
use crate::op::{Op, OpType, Process, F};
use crate::resurrection::Resurrections;
use crate::validity::Validity;
use frame::{End, WindowOp};
use kept::KeptReads;
use key::{fits, judge, Counter, DeleteMark, PendingRead, RetryMark};
use rustc_hash::FxHashMap;

/// How many timed-out changes are remembered so that a late retry joins its original. A
/// retry of one forgotten earlier is judged as an op of its own: bounds only widen.
const FLOATING_KEPT: usize = 10_000;

/// One intended add or delete: an op and all its retries.
struct Logical {
    /// The counter, or the partition of a partition delete.
    target: String,
    delta: Option<i64>,
    start: u64,
    attempts: Vec<u64>,
    open: u32,
    info_at: Option<u64>,
    ok_at: Option<u64>,
    floating: bool,
    /// For a delete: the most each counter could hold just before it.
    before: Vec<(String, Sum)>,
}

impl Logical {
    /// How it stands: none once every attempt failed.
    fn end(&self) -> Option<End> {
        match (self.ok_at, self.open, self.info_at) {
            (Some(b), _, _) => Some(End::At(b)),
            (None, 1.., _) => Some(End::Open),
            (None, 0, Some(at)) => Some(End::Never(at)),
            (None, 0, None) => None,
        }
    }

    fn is_partition_delete(&self) -> bool {
        self.delta.is_none() && ideal::deletes_partition(&self.target)
    }
}

/// A read judged: it fits (its key), or its full bounds (none when unchecked).
enum Judged {
    Fits(String),
    /// Judged in full; whether it fits.
    Bounds(Option<ReadBounds>, bool),
}

/// The counters a change reaches: its target alone, or every counter of its partition.
struct Reached {
    target: String,
    /// For a partition delete: the partition's counters.
    partition: Option<Vec<String>>,
}

impl Reached {
    fn keys(&self) -> &[String] {
        self.partition
            .as_deref()
            .unwrap_or(std::slice::from_ref(&self.target))
    }
}

/// An op that has been invoked and has not completed.
enum Open {
    Change { root: u64 },
    Read { key: String, id: u64 },
    Scan(Scan),
    Unchecked,
}

/// A scan in flight: one read per counter of its partition known when it began.
struct Scan {
    partition: String,
    start: u64,
    invoke: (u64, u64),
    reads: Vec<(String, u64)>,
}

/// Streams a history and bounds every ok read.
#[derive(Default)]
pub struct CounterChecker {
    counters: FxHashMap<String, Counter>,
    partitions: FxHashMap<String, Vec<String>>,
    partition_deletes: FxHashMap<String, Vec<u64>>,
    logical: FxHashMap<u64, Logical>,
    attempt_root: FxHashMap<u64, u64>,
    /// Floating adds, oldest first, to forget past `FLOATING_KEPT`.
    floating: std::collections::VecDeque<u64>,
    open: FxHashMap<Process, Open>,
    event: u64,
    next_read: u64,
    kept: Option<KeptReads>,
    reading: Reading,
    resurrections: Resurrections,
    result: CounterResult,
}

impl CounterChecker {
    /// A checker that keeps only the figures.
    pub fn new() -> Self {
        Self::default()
    }

    /// A checker that also keeps reads' bounds, for charts: every read out of bounds, and a
    /// thinned series of each counter's reads that fit.
    pub fn keeping_reads() -> Self {
        CounterChecker {
            kept: Some(KeptReads::default()),
            ..Self::default()
        }
    }

    /// The same checker, comparing reads as `reading` says.
    pub fn reading(mut self, reading: Reading) -> Self {
        self.reading = reading;
        self
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        let event = self.event;
        self.event += 1;
        if !op.process.is_client() {
            return;
        }
        if op.kind == OpType::Invoke {
            // A process that invokes again before its last op returned (malformed, but seen
            // in the wild) abandoned that op: it may take effect any time, or never.
            if let Some(abandoned) = self.open.remove(&op.process) {
                self.abandon(abandoned, event);
            }
            let open = self.invoke(op, event);
            self.open.insert(op.process.clone(), open);
        } else if let Some(open) = self.open.remove(&op.process) {
            self.complete(open, op, event);
        }
    }

    /// Ends the history: changes that never completed may take effect any time or never.
    pub fn finish(mut self) -> CounterResult {
        let end = self.event;
        let open: Vec<Open> = self.open.drain().map(|(_, open)| open).collect();
        for open in open {
            self.abandon(open, end);
        }
        let all: Vec<String> = self.counters.keys().cloned().collect();
        for key in &all {
            self.progress(key, end);
        }
        for (key, counter) in &self.counters {
            let values = counter.timeline.values_before(end).read(self.reading);
            self.result.final_values.insert(key.clone(), values);
        }
        let mut result = self.result;
        result.resurrection = self.resurrections.finish();
        result.trim_errors();
        overflow::trim(&mut result.overflows);
        result.read_bounds = self.kept.map(KeptReads::into_reads).unwrap_or_default();
        // Resurrections are the resurrection checker's to judge.
        let wrong = result.overcount.reads
            + result.undercount.reads
            + result.absent_as_zero
            + result.zero_as_absent
            + result.overflow_reads;
        result.valid = Validity::from_findings(wrong > 0, result.unchecked_reads > 0);
        result
    }

    /// An op that will never return: a change may take effect any time or never; a read
    /// returned nothing to judge.
    fn abandon(&mut self, open: Open, event: u64) {
        match open {
            Open::Change { root } => {
                if let Some(reached) = self.resolve(root, OpType::Info, event) {
                    for key in reached.keys() {
                        self.progress(key, event);
                    }
                }
            }
            Open::Read { key, id } => self.drop_read(&key, id),
            Open::Scan(scan) => scan.reads.iter().for_each(|(k, id)| self.drop_read(k, *id)),
            Open::Unchecked => {}
        }
    }

    fn invoke(&mut self, op: &Op, event: u64) -> Open {
        let key = op.key.clone().unwrap_or_default();
        match op.f {
            F::Add => self.invoke_change(op, event, key, Some(op.delta().unwrap_or(0))),
            F::Delete => self.invoke_change(op, event, key, None),
            F::Read => {
                let id = self.start_read(&key, event, (op.index, op.time));
                Open::Read { key, id }
            }
            F::Scan => {
                let mut keys = self.partitions.get(&key).cloned().unwrap_or_default();
                keys.sort();
                let reads = keys
                    .into_iter()
                    .map(|k| {
                        let id = self.start_read(&k, event, (op.index, op.time));
                        (k, id)
                    })
                    .collect();
                Open::Scan(Scan {
                    partition: key,
                    start: event,
                    invoke: (op.index, op.time),
                    reads,
                })
            }
            F::Other(_) => Open::Unchecked,
        }
    }

    /// The counter `key`, created with the partition deletes still in play.
    fn counter(&mut self, key: &str) -> &mut Counter {
        if !self.counters.contains_key(key) {
            let partition = ideal::partition_of(key);
            let mut counter = Counter::default();
            for root in self.partition_deletes.get(partition).into_iter().flatten() {
                let logical = &self.logical[root];
                if let Some(end) = logical.end() {
                    counter.timeline.push(WindowOp {
                        id: *root,
                        delta: None,
                        start: logical.start,
                        end,
                        loose: false,
                    });
                }
            }
            self.partitions
                .entry(partition.to_string())
                .or_default()
                .push(key.to_string());
            // A scan of the partition in flight reads the new counter too.
            for open in self.open.values_mut() {
                if let Open::Scan(scan) = open {
                    if scan.partition == partition {
                        self.next_read += 1;
                        let read = PendingRead::new(self.next_read, key, scan.start, scan.invoke);
                        scan.reads.push((key.to_string(), read.id));
                        counter.reads.push(read);
                    }
                }
            }
            self.counters.insert(key.to_string(), counter);
        }
        self.counters.get_mut(key).expect("inserted above")
    }

    /// The counters a change of `target` reaches: its own (made if new), or every one of its
    /// partition for a partition delete.
    fn reached(&mut self, target: String, delta: Option<i64>) -> Reached {
        let partition = if delta.is_none() && ideal::deletes_partition(&target) {
            Some(self.partitions.get(&target).cloned().unwrap_or_default())
        } else {
            self.counter(&target);
            None
        };
        Reached { target, partition }
    }

    fn invoke_change(&mut self, op: &Op, event: u64, target: String, delta: Option<i64>) -> Open {
        let root = op
            .retry_of
            .and_then(|r| self.attempt_root.get(&r).copied())
            .filter(|root| {
                self.logical
                    .get(root)
                    .is_some_and(|l| l.target == target && l.delta == delta)
            })
            .unwrap_or(op.index);
        self.attempt_root.insert(op.index, root);
        let reached = self.reached(target, delta);
        if let Some(logical) = self.logical.get_mut(&root) {
            logical.open += 1;
            logical.attempts.push(op.index);
            let (start, floating) = (logical.start, std::mem::take(&mut logical.floating));
            for key in reached.keys() {
                let counter = self.counters.get_mut(key).expect("reached");
                match delta {
                    Some(d) if floating => counter.timeline.unfloat(root, d, start),
                    _ => {
                        counter.timeline.set_end(root, Some(End::Open));
                    }
                }
                // Only reads after a remembered delete ask how much retries explain.
                if let Some(d) = delta.filter(|d| *d > 0 && !counter.deletes.is_empty()) {
                    counter.retries.push(RetryMark {
                        start: event,
                        extra: d,
                    });
                }
            }
            return Open::Change { root };
        }
        let mut before = Vec::new();
        for key in reached.keys() {
            let timeline = &mut self.counters.get_mut(key).expect("reached").timeline;
            if delta.is_none() {
                before.push((
                    key.clone(),
                    timeline.values_before(event).numbers().max().unwrap_or(0),
                ));
            }
            timeline.push(WindowOp {
                id: root,
                delta,
                start: event,
                end: End::Open,
                loose: false,
            });
        }
        let logical = Logical {
            target: reached.target,
            delta,
            start: event,
            attempts: vec![op.index],
            open: 1,
            info_at: None,
            ok_at: None,
            floating: false,
            before,
        };
        if logical.is_partition_delete() {
            self.partition_deletes
                .entry(logical.target.clone())
                .or_default()
                .push(root);
        }
        self.logical.insert(root, logical);
        Open::Change { root }
    }

    /// One attempt of change `root` ended with `kind`; returns the counters it reaches (none
    /// for a change no longer tracked).
    fn resolve(&mut self, root: u64, kind: OpType, event: u64) -> Option<Reached> {
        let logical = self.logical.get_mut(&root)?;
        logical.open -= 1;
        let first_ok = kind == OpType::Ok && logical.ok_at.is_none();
        match kind {
            OpType::Ok => {
                logical.ok_at.get_or_insert(event);
            }
            OpType::Info => logical.info_at = Some(event),
            _ => {}
        }
        let end = logical.end();
        let (target, delta, start) = (logical.target.clone(), logical.delta, logical.start);
        let partition_delete = logical.is_partition_delete();
        let before = logical.before.clone();
        let done = logical.open == 0 && !matches!(end, Some(End::Never(_)));
        let reached = self.reached(target, delta);
        for key in reached.keys() {
            let counter = self.counters.get_mut(key).expect("reached");
            counter.timeline.set_end(root, end);
            if first_ok && delta.is_none() {
                let before = before.iter().find(|(k, _)| k == key).map_or(0, |b| b.1);
                counter.remember_delete(DeleteMark {
                    id: root,
                    start,
                    end: event,
                    before,
                });
            }
        }
        if first_ok {
            let delta = Sum::from(delta.unwrap_or(0));
            self.result.increments = self.result.increments.saturating_add(delta);
        }
        if partition_delete && matches!(end, Some(End::At(_)) | None) {
            if let Some(live) = self.partition_deletes.get_mut(&reached.target) {
                live.retain(|r| *r != root);
            }
        }
        if done {
            if let Some(logical) = self.logical.remove(&root) {
                for attempt in logical.attempts {
                    self.attempt_root.remove(&attempt);
                }
            }
        }
        Some(reached)
    }

    /// Registers a read of `key` invoked at event `start` (op index and time `invoke`);
    /// returns its id.
    fn start_read(&mut self, key: &str, start: u64, invoke: (u64, u64)) -> u64 {
        self.next_read += 1;
        let read = PendingRead::new(self.next_read, key, start, invoke);
        let id = read.id;
        self.counter(key).reads.push(read);
        id
    }

    /// The ok completion `op` of read `id` of `key`, which returned `value`.
    fn end_read(&mut self, key: &str, id: u64, op: &Op, event: u64, value: Option<i64>) {
        let value = self.reading.of(value);
        if let Some(read) = self.counter(key).reads.iter_mut().find(|r| r.id == id) {
            read.end = Some(event);
            read.bounds.index = op.index;
            read.bounds.time = op.time;
            read.bounds.value = value;
            read.bounds.node = op.node.clone();
        }
    }

    fn drop_read(&mut self, key: &str, id: u64) {
        if let Some(counter) = self.counters.get_mut(key) {
            counter.reads.retain(|r| r.id != id);
        }
    }

    fn complete(&mut self, open: Open, op: &Op, event: u64) {
        let ok = op.kind == OpType::Ok;
        match open {
            Open::Change { root } => {
                if let Some(reached) = self.resolve(root, op.kind, event) {
                    for key in reached.keys() {
                        self.progress(key, event);
                    }
                }
            }
            Open::Read { key, id } if ok => match op.read_value() {
                Some(value) => {
                    self.end_read(&key, id, op, event, value);
                    self.progress(&key, event);
                }
                None => {
                    self.result.unchecked_reads += 1;
                    self.drop_read(&key, id);
                }
            },
            Open::Read { key, id } => self.drop_read(&key, id),
            Open::Scan(scan) if ok => self.complete_scan(scan, op, event),
            Open::Scan(scan) => scan.reads.iter().for_each(|(k, id)| self.drop_read(k, *id)),
            Open::Unchecked => {}
        }
    }

    /// Judges each cell of an ok scan (a cell it left out read as absent); a cell of a
    /// counter the scan did not know of when it began is judged too (a counter no add ever
    /// named must be absent: a phantom).
    fn complete_scan(&mut self, scan: Scan, op: &Op, event: u64) {
        let cells = op.value.as_object().cloned().unwrap_or_default();
        let mut touched = Vec::new();
        for (key, id) in &scan.reads {
            let cell = key.split_once('/').map_or("", |(_, c)| c);
            let value = cells.get(cell).and_then(serde_json::Value::as_i64);
            self.end_read(key, *id, op, event, value);
            touched.push(key.clone());
        }
        for (cell, value) in &cells {
            let key = format!("{}/{cell}", scan.partition);
            if scan.reads.iter().any(|(k, _)| *k == key) {
                continue;
            }
            if self.counters.contains_key(&key) {
                // Known, yet not in the scanned partition's list: a scan of a key that is
                // not a partition. Nothing to judge it against.
                self.result.unchecked_reads += 1;
                continue;
            }
            // No add ever named this counter: it must be absent.
            let id = self.start_read(&key, scan.start, scan.invoke);
            self.end_read(&key, id, op, event, value.as_i64());
            touched.push(key);
        }
        for key in touched {
            self.progress(&key, event);
        }
    }

    /// Judges the reads of `key` that can be judged and settles what no longer moves.
    fn progress(&mut self, key: &str, event: u64) {
        let Some(counter) = self.counters.get_mut(key) else {
            return;
        };
        let timeline = &counter.timeline;
        let is_ready = |r: &PendingRead| r.end.is_some_and(|end| !timeline.open_before(end));
        if counter.reads.iter().any(is_ready) {
            let (ready, waiting): (Vec<PendingRead>, Vec<PendingRead>) =
                std::mem::take(&mut counter.reads)
                    .into_iter()
                    .partition(is_ready);
            counter.reads = waiting;
            // A read that fits needs its full bounds only when they are kept.
            let kept = &mut self.kept;
            let judged: Vec<Judged> = ready
                .into_iter()
                .map(|read| {
                    let fits = fits(counter, &read, self.reading);
                    let key = &read.bounds.key;
                    if fits && !kept.as_ref().is_some_and(|k| k.wants_fitting(key)) {
                        if let Some(kept) = kept.as_mut() {
                            kept.pass_fitting(key);
                        }
                        Judged::Fits(read.bounds.key)
                    } else {
                        let resurrections = &mut self.resurrections;
                        Judged::Bounds(judge(counter, read, self.reading, resurrections), fits)
                    }
                })
                .collect();
            for judged in judged {
                match judged {
                    Judged::Fits(key) => self.result.record_fit(key),
                    Judged::Bounds(bounds, fits) => {
                        self.result.record(bounds.as_ref());
                        if let (Some(kept), Some(bounds)) = (self.kept.as_mut(), bounds) {
                            kept.keep(bounds, fits);
                        }
                    }
                }
            }
        }
        let counter = self.counters.get_mut(key).expect("looked up above");
        let limit = counter
            .reads
            .iter()
            .map(|r| r.start.checked_sub(1))
            .min()
            .unwrap_or(Some(event));
        if let Some(limit) = limit {
            for root in counter.timeline.settle(limit.min(event), event) {
                if let Some(logical) = self.logical.get_mut(&root) {
                    logical.floating = true;
                    self.floating.push_back(root);
                }
            }
        }
        while self.floating.len() > FLOATING_KEPT {
            let Some(root) = self.floating.pop_front() else {
                break;
            };
            self.forget(root);
        }
    }

    /// Forgets a floating add that is still floating (not brought back by a retry).
    fn forget(&mut self, root: u64) {
        if !self.logical.get(&root).is_some_and(|l| l.floating) {
            return;
        }
        if let Some(logical) = self.logical.remove(&root) {
            for attempt in &logical.attempts {
                self.attempt_root.remove(attempt);
            }
            if let Some(counter) = self.counters.get_mut(&logical.target) {
                counter.timeline.freeze(root);
            }
        }
    }
}

/// Checks a whole history.
pub fn check<'a>(ops: impl IntoIterator<Item = &'a Op>) -> CounterResult {
    let mut checker = CounterChecker::new();
    for op in ops {
        checker.observe(op);
    }
    checker.finish()
}

//! The counter checker: for every ok read, the interval of values some legal order allows.
//!
//! One pass over the history. An add is *definite* for a read once some attempt of it
//! completed ok before the read was invoked; it *may* count when an attempt was concurrent
//! with the read and did not fail, or when it ended in `info` (or never completed), since
//! such an add may take effect any time after its call. A retry (`retry_of`) is the same
//! intended increment as the op it retries: together they may take effect at most once, so
//! a read that sees both is an overcount. Memory is proportional to keys, concurrency and
//! unresolved (`info`) adds, not to the length of the history.

use crate::op::{Op, OpType, Process, F};
use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// How many of the largest errors results.json lists.
const ERRORS_KEPT: usize = 100;

/// Reads that were off in one direction: how many, the largest and the total error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Magnitude {
    /// Reads off in this direction.
    pub reads: u64,
    /// The largest error of one read.
    pub max: i64,
    /// The errors added up.
    pub sum: i64,
}

impl Magnitude {
    fn record(&mut self, error: i64) {
        self.reads += 1;
        self.max = self.max.max(error);
        self.sum = self.sum.saturating_add(error);
    }
}

/// The counter checker's figures for one key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyFigures {
    /// Ok reads checked.
    pub reads: u64,
    /// Reads above the upper bound.
    pub overcount: Magnitude,
    /// Reads below the lower bound.
    pub undercount: Magnitude,
}

/// One ok read with the values the history allows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadBounds {
    /// The counter read.
    pub key: String,
    /// Index of the read's invoke.
    pub invoke_index: u64,
    /// Index of the read's ok completion.
    pub index: u64,
    /// Time of the invoke, ns.
    pub invoke_time: u64,
    /// Time of the completion, ns.
    pub time: u64,
    /// What the read returned (`None`: the counter was absent, checked as 0).
    pub value: Option<i64>,
    /// The smallest value some legal order allows.
    pub lower: i64,
    /// The largest value some legal order allows.
    pub upper: i64,
    /// The node that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl ReadBounds {
    /// The read's value as a number: an absent counter counts as 0.
    pub fn count(&self) -> i64 {
        self.value.unwrap_or(0)
    }

    /// By how much the read exceeded the upper bound (0 when it did not).
    pub fn overcount(&self) -> i64 {
        self.count().saturating_sub(self.upper).max(0)
    }

    /// By how much the read fell short of the lower bound (0 when it did not).
    pub fn undercount(&self) -> i64 {
        self.lower.saturating_sub(self.count()).max(0)
    }
}

/// The counter checker's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterResult {
    /// Invalid when any read is out of bounds; unknown when some reads could not be checked.
    pub valid: Validity,
    /// Ok reads checked.
    pub reads: u64,
    /// Reads above their upper bound.
    pub overcount: Magnitude,
    /// Reads below their lower bound.
    pub undercount: Magnitude,
    /// Reads this checker cannot judge yet (after a delete of the counter or its partition).
    #[serde(default)]
    pub unchecked_reads: u64,
    /// Figures per key.
    #[serde(default)]
    pub keys: BTreeMap<String, KeyFigures>,
    /// The largest errors, worst first.
    #[serde(default)]
    pub errors: Vec<ReadBounds>,
    /// Every checked read, kept only when asked for (charts); never serialized.
    #[serde(skip)]
    pub read_bounds: Vec<ReadBounds>,
}

/// Whether an add has taken effect, as far as the history has told so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// No attempt has completed ok or info yet.
    Pending,
    /// Some attempt ended in info: it may have taken effect.
    Maybe,
    /// Some attempt completed ok.
    Definite,
}

/// One intended add: an op and all its retries.
struct Logical {
    key: String,
    delta: i64,
    status: Status,
    open_attempts: u32,
    attempts: Vec<u64>,
}

/// What a key's completed history adds up to, for reads invoked from now on.
#[derive(Default)]
struct KeyState {
    definite: i64,
    maybe_low: i64,
    maybe_high: i64,
    deleted: bool,
}

/// An op that has been invoked and has not completed.
enum Open {
    Add {
        root: u64,
        reads: Vec<u64>,
    },
    Read {
        id: u64,
    },
    /// A scan: one read per counter of the partition known when it began.
    Scan {
        partition: String,
        reads: Vec<(String, u64)>,
    },
    Unchecked,
}

/// Ids of the per-counter reads of scans, apart from the invoke indices reads use.
const SCAN_READ_IDS: u64 = 1 << 63;

/// A read waiting for its own completion and for the adds concurrent with it.
struct PendingRead {
    bounds: ReadBounds,
    pending: u32,
    counted: Vec<u64>,
    completed: bool,
}

/// Streams a history and bounds every ok read.
#[derive(Default)]
pub struct CounterChecker {
    keys: HashMap<String, KeyState>,
    open: HashMap<Process, Open>,
    logical: HashMap<u64, Logical>,
    attempt_root: HashMap<u64, u64>,
    reads: HashMap<u64, PendingRead>,
    keep_reads: bool,
    deleted_partitions: std::collections::HashSet<String>,
    next_scan_read: u64,
    result: CounterResult,
}

impl CounterChecker {
    /// A checker that keeps only the figures.
    pub fn new() -> Self {
        Self::default()
    }

    /// A checker that also keeps every read's bounds, for charts.
    pub fn keeping_reads() -> Self {
        CounterChecker {
            keep_reads: true,
            ..Self::default()
        }
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        if !op.process.is_client() {
            return;
        }
        if op.kind == OpType::Invoke {
            self.invoke(op);
        } else {
            self.complete(op);
        }
    }

    /// Ends the history: adds that never completed may have taken effect.
    pub fn finish(mut self) -> CounterResult {
        let open: Vec<Open> = self.open.drain().map(|(_, open)| open).collect();
        for open in open {
            if let Open::Add { root, reads } = open {
                self.resolve_attempt(root, OpType::Info, &reads);
            }
        }
        self.reads.retain(|_, read| read.completed);
        let ids: Vec<u64> = self.reads.keys().copied().collect();
        for id in ids {
            self.finalize(id);
        }
        let mut result = self.result;
        result
            .errors
            .sort_by_key(|r| (std::cmp::Reverse(error_of(r)), r.index));
        result.errors.truncate(ERRORS_KEPT);
        result.read_bounds.sort_by_key(|r| r.index);
        let verdict = if result.overcount.reads + result.undercount.reads > 0 {
            Validity::Invalid
        } else if result.unchecked_reads > 0 {
            Validity::Unknown
        } else {
            Validity::Valid
        };
        result.valid = verdict;
        result
    }

    fn invoke(&mut self, op: &Op) {
        let key = op.key.clone().unwrap_or_default();
        let open = match op.f {
            F::Add => self.invoke_add(op, key),
            F::Read if !self.is_deleted(&key) => self.invoke_read(op, key),
            F::Delete if !key.contains('/') => {
                // A partition delete reaches every counter of the partition, even later ones.
                self.deleted_partitions.insert(key);
                Open::Unchecked
            }
            F::Delete => {
                self.keys.entry(key).or_default().deleted = true;
                Open::Unchecked
            }
            F::Scan if !self.deleted_partitions.contains(&key) => self.invoke_scan(op, key),
            F::Read | F::Scan => {
                self.result.unchecked_reads += 1;
                Open::Unchecked
            }
            F::Other(_) => Open::Unchecked,
        };
        self.open.insert(op.process.clone(), open);
    }

    /// Whether a delete (of the counter or of its partition) was ever invoked.
    fn is_deleted(&self, key: &str) -> bool {
        self.keys.get(key).is_some_and(|k| k.deleted)
            || key
                .split_once('/')
                .is_some_and(|(partition, _)| self.deleted_partitions.contains(partition))
    }

    fn invoke_add(&mut self, op: &Op, key: String) -> Open {
        let delta = op.delta().unwrap_or(0);
        let root = op
            .retry_of
            .and_then(|r| self.attempt_root.get(&r).copied())
            .filter(|root| {
                self.logical
                    .get(root)
                    .is_some_and(|l| l.key == key && l.delta == delta)
            })
            .unwrap_or(op.index);
        self.attempt_root.insert(op.index, root);
        let logical = self.logical.entry(root).or_insert_with(|| Logical {
            key: key.clone(),
            delta,
            status: Status::Pending,
            open_attempts: 0,
            attempts: Vec::new(),
        });
        logical.open_attempts += 1;
        logical.attempts.push(op.index);
        // An add already known to have (maybe) happened is counted in the bounds of
        // every read since, so only a pending one is concurrent in a way that matters.
        let mut reads = Vec::new();
        if logical.status == Status::Pending {
            for (id, read) in self.reads.iter_mut() {
                if !read.completed && read.bounds.key == key {
                    read.pending += 1;
                    reads.push(*id);
                }
            }
        }
        Open::Add { root, reads }
    }

    fn invoke_read(&mut self, op: &Op, key: String) -> Open {
        self.start_read(op, key, op.index);
        Open::Read { id: op.index }
    }

    /// A scan reads every counter of its partition known when it began; one that holds a
    /// deleted counter is left unjudged.
    fn invoke_scan(&mut self, op: &Op, partition: String) -> Open {
        let in_partition = |k: &str| k.split_once('/').is_some_and(|(p, _)| p == partition);
        if self.keys.iter().any(|(k, s)| s.deleted && in_partition(k)) {
            self.result.unchecked_reads += 1;
            return Open::Unchecked;
        }
        let mut keys: Vec<String> = self
            .keys
            .keys()
            .filter(|k| in_partition(k))
            .cloned()
            .collect();
        keys.sort();
        let mut reads = Vec::with_capacity(keys.len());
        for key in keys {
            let id = self.scan_read_id();
            self.start_read(op, key.clone(), id);
            reads.push((key, id));
        }
        Open::Scan { partition, reads }
    }

    fn scan_read_id(&mut self) -> u64 {
        self.next_scan_read += 1;
        SCAN_READ_IDS | self.next_scan_read
    }

    /// Registers a read of `key` invoked by `op`, with the adds concurrent with it.
    fn start_read(&mut self, op: &Op, key: String, id: u64) {
        let state = self.keys.entry(key.clone()).or_default();
        let mut read = PendingRead {
            bounds: ReadBounds {
                key,
                invoke_index: op.index,
                index: op.index,
                invoke_time: op.time,
                time: op.time,
                value: None,
                lower: state.definite.saturating_add(state.maybe_low),
                upper: state.definite.saturating_add(state.maybe_high),
                node: None,
            },
            pending: 0,
            counted: Vec::new(),
            completed: false,
        };
        for open in self.open.values_mut() {
            if let Open::Add { root, reads } = open {
                let logical = &self.logical[root];
                if logical.status == Status::Pending && logical.key == read.bounds.key {
                    read.pending += 1;
                    reads.push(id);
                }
            }
        }
        self.reads.insert(id, read);
    }

    /// The ok completion `op` of the read `id`, which returned `value`.
    fn complete_read(&mut self, id: u64, op: &Op, value: Option<i64>) {
        if let Some(read) = self.reads.get_mut(&id) {
            read.completed = true;
            read.bounds.index = op.index;
            read.bounds.time = op.time;
            read.bounds.value = value;
            read.bounds.node = op.node.clone();
        }
        self.finalize_if_ready(id);
    }

    /// Judges each cell of an ok scan; a cell of a counter no add ever named is judged
    /// against nothing (a phantom), one created during the scan is not judged.
    fn complete_scan(&mut self, op: &Op, partition: &str, reads: Vec<(String, u64)>) {
        let cells = op.value.as_object().cloned().unwrap_or_default();
        for (key, id) in &reads {
            let cell = key.split_once('/').map_or("", |(_, c)| c);
            self.complete_read(*id, op, cells.get(cell).and_then(serde_json::Value::as_i64));
        }
        for (cell, value) in &cells {
            let key = format!("{partition}/{cell}");
            let named = reads.iter().any(|(k, _)| *k == key)
                || self.keys.contains_key(&key)
                || self.logical.values().any(|l| l.key == key);
            if !named {
                let id = self.scan_read_id();
                self.start_read(op, key, id);
                self.complete_read(id, op, value.as_i64());
            }
        }
    }

    fn complete(&mut self, op: &Op) {
        match self.open.remove(&op.process) {
            Some(Open::Add { root, reads }) => self.resolve_attempt(root, op.kind, &reads),
            Some(Open::Read { id }) if op.kind == OpType::Ok => {
                self.complete_read(id, op, op.read_value().flatten());
            }
            Some(Open::Read { id }) => {
                self.reads.remove(&id);
            }
            Some(Open::Scan { partition, reads }) if op.kind == OpType::Ok => {
                self.complete_scan(op, &partition, reads);
            }
            Some(Open::Scan { reads, .. }) => {
                for (_, id) in reads {
                    self.reads.remove(&id);
                }
            }
            Some(Open::Unchecked) | None => {}
        }
    }

    fn resolve_attempt(&mut self, root: u64, outcome: OpType, reads: &[u64]) {
        let Some(logical) = self.logical.get_mut(&root) else {
            return;
        };
        logical.open_attempts -= 1;
        let (delta, low, high) = (logical.delta, logical.delta.min(0), logical.delta.max(0));
        let may_have_happened = matches!(outcome, OpType::Ok | OpType::Info);
        for id in reads {
            let Some(read) = self.reads.get_mut(id) else {
                continue;
            };
            read.pending -= 1;
            if may_have_happened && !read.counted.contains(&root) {
                read.counted.push(root);
                read.bounds.lower = read.bounds.lower.saturating_add(low);
                read.bounds.upper = read.bounds.upper.saturating_add(high);
            }
            self.finalize_if_ready(*id);
        }
        let logical = self.logical.get_mut(&root).expect("looked up above");
        let state = self.keys.entry(logical.key.clone()).or_default();
        match (outcome, logical.status) {
            (OpType::Ok, Status::Maybe) => {
                state.maybe_low = state.maybe_low.saturating_sub(low);
                state.maybe_high = state.maybe_high.saturating_sub(high);
                state.definite = state.definite.saturating_add(delta);
                logical.status = Status::Definite;
            }
            (OpType::Ok, Status::Pending) => {
                state.definite = state.definite.saturating_add(delta);
                logical.status = Status::Definite;
            }
            (OpType::Info, Status::Pending) => {
                state.maybe_low = state.maybe_low.saturating_add(low);
                state.maybe_high = state.maybe_high.saturating_add(high);
                logical.status = Status::Maybe;
            }
            _ => {}
        }
        // A maybe-add stays: a later retry that completes ok makes it definite.
        if logical.open_attempts == 0 && logical.status != Status::Maybe {
            for attempt in &logical.attempts {
                self.attempt_root.remove(attempt);
            }
            self.logical.remove(&root);
        }
    }

    fn finalize_if_ready(&mut self, id: u64) {
        if self
            .reads
            .get(&id)
            .is_some_and(|r| r.completed && r.pending == 0)
        {
            self.finalize(id);
        }
    }

    fn finalize(&mut self, id: u64) {
        let Some(read) = self.reads.remove(&id) else {
            return;
        };
        let bounds = read.bounds;
        let result = &mut self.result;
        let figures = result.keys.entry(bounds.key.clone()).or_default();
        result.reads += 1;
        figures.reads += 1;
        let (over, under) = (bounds.overcount(), bounds.undercount());
        if over > 0 {
            result.overcount.record(over);
            figures.overcount.record(over);
        }
        if under > 0 {
            result.undercount.record(under);
            figures.undercount.record(under);
        }
        if over > 0 || under > 0 {
            result.errors.push(bounds.clone());
            if result.errors.len() >= 2 * ERRORS_KEPT {
                result
                    .errors
                    .sort_by_key(|r| (std::cmp::Reverse(error_of(r)), r.index));
                result.errors.truncate(ERRORS_KEPT);
            }
        }
        if self.keep_reads {
            result.read_bounds.push(bounds);
        }
    }
}

fn error_of(read: &ReadBounds) -> i64 {
    read.overcount().max(read.undercount())
}

/// Checks a whole history.
pub fn check<'a>(ops: impl IntoIterator<Item = &'a Op>) -> CounterResult {
    let mut checker = CounterChecker::new();
    for op in ops {
        checker.observe(op);
    }
    checker.finish()
}

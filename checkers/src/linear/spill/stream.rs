//! A group's spill files read back without holding their records: read in the order they
//! were written (completion order), each record joined to its intended op (the op and its
//! retries), and each intended op handed on, in call order, as soon as the low mark written
//! with the records says none of its attempts is still to come. Memory holds the group's ops
//! and the intended ops in flight, not the records.

use super::group::{self, Slots};
use super::record::{Record, NONE, RECORD};
use crate::ideal::{Count, Reading};
use crate::linear::models::{CounterInput, CounterModel};
use crate::linear::partition::{LinOp, Partition};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;

/// The most intended ops held at once before the group is read back whole instead: each
/// costs more than its record held whole.
pub const IN_FLIGHT: usize = 1 << 16;

/// One spill file of the group: its path and how many records it holds.
pub struct SpillFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its records.
    pub records: u64,
}

/// A spill file's records, one after the other.
struct Records {
    input: BufReader<File>,
    left: u64,
}

impl Records {
    fn open(file: &SpillFile) -> std::io::Result<Self> {
        Ok(Records {
            input: BufReader::with_capacity(64 << 10, File::open(&file.path)?),
            left: file.records,
        })
    }

    fn next(&mut self) -> std::io::Result<Option<Record>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut buf = [0; RECORD];
        self.input.read_exact(&mut buf)?;
        Ok(Some(Record::decode(&buf)))
    }
}

/// One intended op being put together: its attempts so far, and the calls of its retries.
struct Intent {
    attempts: group::Intent<Record>,
    retries: Vec<u64>,
}

/// The group's intended ops in flight, and where its ops go.
struct Assembly<'a> {
    model: &'a CounterModel,
    names: &'a [String],
    slots: Slots,
    /// By first call.
    intents: BTreeMap<u64, Intent>,
    /// A retry's call: the first call of its intended op.
    retry_of: FxHashMap<u64, u64>,
    /// Every intended op first called below this has been handed on.
    released: u64,
    ops: Vec<Vec<LinOp<CounterInput>>>,
}

impl Assembly<'_> {
    /// Joins a record to its intended op; `false` when it starts one below an op already
    /// handed on (a backstop: with the writer's low mark and increasing indices, none does).
    fn take(&mut self, r: Record) -> bool {
        let retried = (r.retry_of != NONE && r.retry_of < r.call)
            .then(|| match self.intents.contains_key(&r.retry_of) {
                true => Some(r.retry_of),
                false => self.retry_of.get(&r.retry_of).copied(),
            })
            .flatten();
        let first = match retried {
            Some(first) => {
                self.retry_of.insert(r.call, first);
                first
            }
            None if r.call < self.released => return false,
            None => r.call,
        };
        let intent = self.intents.entry(first).or_insert_with(|| Intent {
            attempts: group::Intent::new(r),
            retries: Vec::new(),
        });
        if first != r.call {
            intent.retries.push(r.call);
        }
        intent.attempts.join(r, r.end, r.ret, |o| o.ret);
        true
    }

    /// Hands on, in call order, every intended op first called below `low`.
    fn release(&mut self, low: u64) {
        while let Some(entry) = self.intents.first_entry() {
            if *entry.key() >= low {
                break;
            }
            let intent = entry.remove();
            for retry in &intent.retries {
                self.retry_of.remove(retry);
            }
            let a = &intent.attempts;
            let (first, ok, info) = (&a.first, a.ok.as_ref(), a.info.as_ref());
            let op = group::op(self.model, self.names, first, ok, a.maybe, info);
            if let Some(op) = op {
                let slot = self.slots.of(self.model, self.names, first.key);
                self.ops[slot].push(op);
            }
        }
        self.released = self.released.max(low);
    }
}

/// A group's model and partitions (by the rules of `group::partitions`), read back from
/// `files` as they were written; `None` when they are better read back whole: more than
/// `IN_FLIGHT` intended ops held at once (an op never completed holds the low mark back),
/// or a record that `Assembly::take` cannot place.
pub fn partitions(
    files: &[SpillFile],
    names: &[String],
    whole: &BTreeMap<String, u64>,
    init: Count,
    reading: Reading,
) -> std::io::Result<Option<(CounterModel, Vec<Partition<CounterInput>>)>> {
    // A first pass: the counters in the order of their first calls (for the model), and
    // how many records each has (room for its ops, so that no list of ops is copied).
    let mut counters: Vec<(u64, u64)> = vec![(NONE, 0); names.len() + 1];
    for file in files {
        let mut records = Records::open(file)?;
        while let Some(r) = records.next()? {
            let at = &mut counters[(r.key as usize).min(names.len())];
            *at = (at.0.min(r.call), at.1 + 1);
        }
    }
    let mut order: Vec<(u64, u32)> = (counters.iter().zip(0u32..))
        .filter(|((_, n), _)| *n > 0)
        .map(|(&(call, _), key)| (call, key))
        .collect();
    order.sort_unstable();
    let model = group::model(order.iter().map(|&(_, k)| k), names, whole, init, reading);
    let mut slots = Slots::new(names);
    let mut room: Vec<usize> = Vec::new();
    for (&(_, n), key) in counters.iter().zip(0u32..).filter(|((_, n), _)| *n > 0) {
        let s = slots.of(&model, names, key);
        room.resize(room.len().max(s + 1), 0);
        room[s] += n as usize;
    }
    let mut assembly = Assembly {
        model: &model,
        names,
        slots,
        intents: BTreeMap::new(),
        retry_of: FxHashMap::default(),
        released: 0,
        ops: room.into_iter().map(Vec::with_capacity).collect(),
    };
    // The files merged in the order their records were written: by completion, then (the
    // ops still open at the end, written last) by call.
    let mut readers = files
        .iter()
        .map(Records::open)
        .collect::<Result<Vec<_>, _>>()?;
    let mut heads = BinaryHeap::new();
    let mut pending: Vec<Option<Record>> = Vec::with_capacity(readers.len());
    for (i, reader) in readers.iter_mut().enumerate() {
        let head = reader.next()?;
        if let Some(r) = &head {
            heads.push(Reverse((r.ret, r.call, i)));
        }
        pending.push(head);
    }
    while let Some(Reverse((_, _, i))) = heads.pop() {
        let Some(r) = pending[i].take() else {
            continue; // never: a file is in the heap only with its next record
        };
        if let Some(next) = readers[i].next()? {
            heads.push(Reverse((next.ret, next.call, i)));
            pending[i] = Some(next);
        }
        if !assembly.take(r) || assembly.intents.len() > IN_FLIGHT {
            return Ok(None);
        }
        assembly.release(r.low);
    }
    assembly.release(NONE);
    let parts = assembly.slots.partitions(assembly.ops);
    Ok(Some((model, parts)))
}

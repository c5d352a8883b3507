//! A group's spill files read back without holding their records: read in the order they
//! were written (completion order), each record joined to its intended op (the op and its
//! retries), and each intended op handed on, in call order, as soon as the low mark written
//! with the records says none of its attempts is still to come. Memory holds the ops of the
//! partitions gathered and the intended ops in flight, not the records; a long partition's
//! ops can instead be pulled a chunk at a time (`OpStream`), for the windowed search.

use super::group::{self, Slots};
use super::record::{f_code, Record, NONE, RECORD};
use crate::ideal::{Count, Reading};
use crate::linear::models::{CounterInput, CounterModel};
use crate::linear::partition::{LinOp, Partition};
use crate::linear::search::Source;
use crate::op::F;
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
    /// By counter number (the last: ops with no key): whether its ops are gathered.
    keep: Vec<bool>,
    /// By first call (boxed: the map's nodes move their entries as it changes).
    intents: BTreeMap<u64, Box<Intent>>,
    /// A retry's call: the first call of its intended op.
    retry_of: FxHashMap<u64, u64>,
    /// Every intended op first called below this has been handed on.
    released: u64,
    ops: Vec<Vec<LinOp<CounterInput>>>,
}

impl<'a> Assembly<'a> {
    /// Gathers the ops of the counters `keep` says, into the partitions `slots` numbers,
    /// with `room` for each.
    fn new(
        plan: &'a Plan,
        names: &'a [String],
        keep: Vec<bool>,
        slots: Slots,
        room: Vec<usize>,
    ) -> Self {
        Assembly {
            model: &plan.model,
            names,
            slots,
            keep,
            intents: BTreeMap::new(),
            retry_of: FxHashMap::default(),
            released: 0,
            ops: room.into_iter().map(Vec::with_capacity).collect(),
        }
    }

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
        let intent = self.intents.entry(first).or_insert_with(|| {
            Box::new(Intent {
                attempts: group::Intent::new(r),
                retries: Vec::new(),
            })
        });
        if first != r.call {
            intent.retries.push(r.call);
        }
        intent.attempts.join(r, r.end, r.ret, |o| o.ret);
        true
    }

    /// Hands on, in call order, every intended op first called below `low` whose counter is
    /// kept.
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
            if !self.keep[(first.key as usize).min(self.names.len())] {
                continue;
            }
            let op = group::op(self.model, self.names, first, ok, a.maybe, info);
            if let Some(op) = op {
                let slot = self.slots.of(self.model, self.names, first.key);
                if slot >= self.ops.len() {
                    self.ops.resize_with(slot + 1, Vec::new);
                }
                self.ops[slot].push(op);
            }
        }
        self.released = self.released.max(low);
    }

    /// Joins the next record and hands on what it releases; `false` when the group is
    /// better read back whole: a record `take` cannot place, or more than `IN_FLIGHT`
    /// intended ops held at once (an op never completed holds the low mark back).
    fn next(&mut self, r: Record) -> bool {
        if !self.take(r) || self.intents.len() > IN_FLIGHT {
            return false;
        }
        self.release(r.low);
        true
    }
}

/// The files of a group merged in the order their records were written: by completion,
/// then (the ops still open at the end, written last) by call.
struct Merge {
    readers: Vec<Records>,
    heads: BinaryHeap<Reverse<(u64, u64, usize)>>,
    pending: Vec<Option<Record>>,
}

impl Merge {
    fn open(files: &[SpillFile]) -> std::io::Result<Self> {
        let mut readers = files
            .iter()
            .map(Records::open)
            .collect::<Result<Vec<_>, _>>()?;
        let mut heads = BinaryHeap::new();
        let mut pending = Vec::with_capacity(readers.len());
        for (i, reader) in readers.iter_mut().enumerate() {
            let head = reader.next()?;
            if let Some(r) = &head {
                heads.push(Reverse((r.ret, r.call, i)));
            }
            pending.push(head);
        }
        Ok(Merge {
            readers,
            heads,
            pending,
        })
    }

    fn next(&mut self) -> std::io::Result<Option<Record>> {
        while let Some(Reverse((_, _, i))) = self.heads.pop() {
            let Some(r) = self.pending[i].take() else {
                continue; // never: a file is in the heap only with its next record
            };
            if let Some(next) = self.readers[i].next()? {
                self.heads.push(Reverse((next.ret, next.call, i)));
                self.pending[i] = Some(next);
            }
            return Ok(Some(r));
        }
        Ok(None)
    }
}

/// A group's model and, by counter number (the last: ops with no key), each counter's
/// records and whether one is a delete, from a first pass over its files.
pub struct Plan {
    /// The model for the group's partitions.
    pub model: CounterModel,
    /// Records, by counter number.
    records: Vec<u64>,
    /// Whether a record is a delete, by counter number.
    deletes: Vec<bool>,
}

impl Plan {
    /// Reads `files` once: the counters in the order of their first calls (for the model),
    /// how many records each has and whether it deletes.
    pub fn read(
        files: &[SpillFile],
        names: &[String],
        whole: &BTreeMap<String, u64>,
        init: Count,
        reading: Reading,
    ) -> std::io::Result<Self> {
        let delete = f_code(&F::Delete);
        let mut counters: Vec<(u64, u64, bool)> = vec![(NONE, 0, false); names.len() + 1];
        for file in files {
            let mut records = Records::open(file)?;
            while let Some(r) = records.next()? {
                let at = &mut counters[(r.key as usize).min(names.len())];
                *at = (at.0.min(r.call), at.1 + 1, at.2 || Some(r.f) == delete);
            }
        }
        let mut order: Vec<(u64, u32)> = (counters.iter().zip(0u32..))
            .filter(|((_, n, _), _)| *n > 0)
            .map(|(&(call, _, _), key)| (call, key))
            .collect();
        order.sort_unstable();
        let model = group::model(order.iter().map(|&(_, k)| k), names, whole, init, reading);
        Ok(Plan {
            model,
            records: counters.iter().map(|c| c.1).collect(),
            deletes: counters.iter().map(|c| c.2).collect(),
        })
    }

    /// The partitions of at least `records` records (each as which counters are in it, by
    /// number) that `long` picks, given whether one deletes.
    pub fn long(
        &self,
        names: &[String],
        records: u64,
        long: impl Fn(bool) -> bool,
    ) -> Vec<Vec<bool>> {
        let mut partitions: BTreeMap<Option<String>, (u64, bool, Vec<bool>)> = BTreeMap::new();
        for (counter, &n) in self.records.iter().enumerate().filter(|(_, &n)| n > 0) {
            let name = names.get(counter).map(|k| self.model.partition_of(k));
            let at = partitions
                .entry(name)
                .or_insert_with(|| (0, false, vec![false; names.len() + 1]));
            at.0 += n;
            at.1 |= self.deletes[counter];
            at.2[counter] = true;
        }
        partitions
            .into_values()
            .filter(|(n, deletes, _)| *n >= records && long(*deletes))
            .map(|(_, _, counters)| counters)
            .collect()
    }
}

/// A group's partitions (by the rules of `group::partitions`) but those of the counters
/// `leave_out` names (by number), read back from `files` as they were written; `None` when
/// they are better read back whole (`Assembly::next`).
pub fn partitions(
    files: &[SpillFile],
    plan: &Plan,
    names: &[String],
    leave_out: &[bool],
) -> std::io::Result<Option<Vec<Partition<CounterInput>>>> {
    let keep: Vec<bool> = (0..=names.len())
        .map(|c| !leave_out.get(c).copied().unwrap_or(false))
        .collect();
    // Room for each partition's ops, so that no list of ops is copied.
    let mut slots = Slots::new(names);
    let mut room: Vec<usize> = Vec::new();
    for (&n, key) in plan.records.iter().zip(0u32..).filter(|(&n, _)| n > 0) {
        if keep[key as usize] {
            let s = slots.of(&plan.model, names, key);
            room.resize(room.len().max(s + 1), 0);
            room[s] += n as usize;
        }
    }
    let mut assembly = Assembly::new(plan, names, keep, slots, room);
    let mut merge = Merge::open(files)?;
    while let Some(r) = merge.next()? {
        if !assembly.next(r) {
            return Ok(None);
        }
    }
    assembly.release(NONE);
    Ok(Some(assembly.slots.partitions(assembly.ops)))
}

/// One partition's ops, pulled from a group's files in call order as they are read back.
pub struct OpStream<'a> {
    merge: Merge,
    assembly: Assembly<'a>,
    /// Ops handed out.
    pub handed: usize,
}

impl<'a> OpStream<'a> {
    /// The ops of the partition of counters `counters` (by number).
    pub fn open(
        files: &[SpillFile],
        plan: &'a Plan,
        names: &'a [String],
        counters: Vec<bool>,
    ) -> std::io::Result<Self> {
        Ok(OpStream {
            merge: Merge::open(files)?,
            assembly: Assembly::new(plan, names, counters, Slots::new(names), vec![0]),
            handed: 0,
        })
    }
}

impl Source<CounterInput> for OpStream<'_> {
    fn fill(&mut self, want: usize, out: &mut Vec<LinOp<CounterInput>>) -> std::io::Result<bool> {
        let ready = |a: &Assembly| a.ops.first().map_or(0, Vec::len);
        let mut more = true;
        while ready(&self.assembly) < want && more {
            match self.merge.next()? {
                Some(r) if !self.assembly.next(r) => {
                    let message = "more ops in flight than a stream holds";
                    return Err(std::io::Error::other(message));
                }
                Some(_) => {}
                None => {
                    self.assembly.release(NONE);
                    more = false;
                }
            }
        }
        let ops = self
            .assembly
            .ops
            .first_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        self.handed += ops.len();
        out.extend(ops);
        Ok(more)
    }
}

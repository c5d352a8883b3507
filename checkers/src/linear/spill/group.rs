//! A group of spill files read back as the search's input: the model for their partitions
//! and the partitions themselves, by the rules of `prepare::partitions`.

use super::record::{End, Record, NONE};
use crate::ideal::{self, Count, Reading};
use crate::linear::models::{CounterInput, CounterModel};
use crate::linear::partition::{LinOp, Partition};
use std::collections::BTreeMap;

/// The name of counter number `key` (`None`: the op had no key).
fn name(names: &[String], key: u32) -> Option<&str> {
    names.get(key as usize).map(String::as_str)
}

/// The model for the records of counters `names`, given the counters' numbers in the order
/// of their records' calls (repeats allowed), where `whole` names the partitions deleted
/// whole: their counters numbered in the order they first appear.
pub fn model(
    counters: impl IntoIterator<Item = u32>,
    names: &[String],
    whole: &BTreeMap<String, u64>,
    init: Count,
    reading: Reading,
) -> CounterModel {
    let mut cells: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut seen = vec![false; names.len()];
    for k in counters {
        let Some(key) = name(names, k) else {
            continue;
        };
        let partition = ideal::partition_of(key);
        let keys = match whole.get_key_value(partition) {
            Some((p, _)) => cells.entry(p.as_str()).or_default(),
            None => continue,
        };
        if !ideal::deletes_partition(key) && !std::mem::replace(&mut seen[k as usize], true) {
            keys.push(key.to_string());
        }
    }
    let cells = cells.into_iter().map(|(p, k)| (p.to_string(), k));
    CounterModel::with_whole(init, reading, cells.collect())
}

/// Each counter's partition, numbered as first met, and the partitions in their order.
pub struct Slots {
    slots: BTreeMap<Option<String>, usize>,
    /// By counter number; the last: ops with no key.
    slot_of: Vec<Option<usize>>,
}

impl Slots {
    /// No partition yet, for `names.len()` counters.
    pub fn new(names: &[String]) -> Self {
        Slots {
            slots: BTreeMap::new(),
            slot_of: vec![None; names.len() + 1],
        }
    }

    /// The number of the partition of counter `key`.
    pub fn of(&mut self, model: &CounterModel, names: &[String], key: u32) -> usize {
        let at = (key as usize).min(names.len());
        *self.slot_of[at].get_or_insert_with(|| {
            let partition = name(names, key).map(|k| model.partition_of(k));
            let next = self.slots.len();
            *self.slots.entry(partition).or_insert(next)
        })
    }

    /// The partitions of `ops` (by partition number), in the partitions' order; one whose
    /// every op was left out is no partition.
    pub fn partitions(
        self,
        mut ops: Vec<Vec<LinOp<CounterInput>>>,
    ) -> Vec<Partition<CounterInput>> {
        let mut take = |s: usize| ops.get_mut(s).map(std::mem::take).unwrap_or_default();
        let parts = self.slots.into_iter().map(|(key, s)| (key, take(s)));
        parts
            .filter(|(_, ops)| !ops.is_empty())
            .map(|(key, ops)| Partition { key, ops })
            .collect()
    }
}

/// The op the search sees for an intended op: its first attempt, its ok attempt that
/// returned first, whether some attempt may have taken effect without saying so, and its
/// attempt whose info completion came last; `None` when it is left out (every attempt
/// failed, or the model has no input for it).
pub fn op(
    model: &CounterModel,
    names: &[String],
    first: &Record,
    ok: Option<&Record>,
    maybe: bool,
    info: Option<&Record>,
) -> Option<LinOp<CounterInput>> {
    if ok.is_none() && !maybe {
        return None;
    }
    let returned = ok.and_then(Record::returned);
    let key = name(names, first.key);
    let input = model.input_for(key.unwrap_or_default(), &first.f(), first.value, returned)?;
    let hint = info.filter(|_| ok.is_none()).map(|o| o.ret);
    Some(LinOp::new(input, first.call, ok.map(|o| o.ret), hint))
}

/// One intended op: its first attempt and how its attempts (the op and its retries) ended,
/// each attempt as `A` (a record, or its place in the records).
pub struct Intent<A> {
    /// Its first attempt.
    pub first: A,
    /// The ok attempt that returned first.
    pub ok: Option<A>,
    /// Some attempt may have taken effect without saying so.
    pub maybe: bool,
    /// The attempt whose info completion came last.
    pub info: Option<A>,
}

impl<A> Intent<A> {
    /// An intended op first attempted as `first`, its ending not yet joined.
    pub fn new(first: A) -> Self {
        Intent {
            first,
            ok: None,
            maybe: false,
            info: None,
        }
    }

    /// Joins attempt `at` (one of its own, `first` included), which ended `end` at `ret`;
    /// `ret_of` gives the return of an attempt already joined.
    pub fn join(&mut self, at: A, end: End, ret: u64, ret_of: impl Fn(&A) -> u64) {
        match end {
            End::Ok if self.ok.as_ref().is_none_or(|o| ret_of(o) > ret) => self.ok = Some(at),
            End::Ok | End::Fail => {}
            End::Info => {
                self.maybe = true;
                if self.info.as_ref().is_none_or(|o| ret_of(o) < ret) {
                    self.info = Some(at);
                }
            }
            End::Open => self.maybe = true,
        }
    }
}

/// A group's records (in call order, fewer than 2^32) as partitions, by the rules of
/// `prepare::partitions`: retries joined to the op they retry, an op whose every attempt
/// failed left out, one that succeeded returning at its first ok completion. Each
/// partition's intended ops are counted before they are gathered, so a group's memory is
/// its records, a few bytes an op, and its ops.
pub fn partitions(
    model: &CounterModel,
    records: &[Record],
    names: &[String],
) -> Vec<Partition<CounterInput>> {
    let intents = intents(records);
    let kept = || intents.iter().filter(|i| i.ok.is_some() || i.maybe);
    let mut slots = Slots::new(names);
    let mut sizes: Vec<usize> = Vec::new();
    for intent in kept() {
        let s = slots.of(model, names, records[intent.first as usize].key);
        sizes.resize(sizes.len().max(s + 1), 0);
        sizes[s] += 1;
    }
    let mut ops: Vec<Vec<LinOp<CounterInput>>> =
        sizes.into_iter().map(Vec::with_capacity).collect();
    let at = |i: Option<u32>| i.map(|i| &records[i as usize]);
    for intent in kept() {
        let first = &records[intent.first as usize];
        let (ok, info) = (at(intent.ok), at(intent.info));
        if let Some(op) = op(model, names, first, ok, intent.maybe, info) {
            ops[slots.of(model, names, first.key)].push(op);
        }
    }
    slots.partitions(ops)
}

/// The intended ops of records in call order: a retry (found by the call it retries) joins
/// the intent of the op it retries.
fn intents(records: &[Record]) -> Vec<Intent<u32>> {
    let mut intents: Vec<Intent<u32>> = Vec::with_capacity(records.len());
    let mut intent_of: Vec<u32> = Vec::with_capacity(records.len());
    for (r, i) in records.iter().zip(0u32..) {
        let done = &records[..intent_of.len()];
        let retried = (r.retry_of != NONE)
            .then(|| done.binary_search_by_key(&r.retry_of, |d| d.call).ok())
            .flatten();
        let n = match retried {
            Some(at) => intent_of[at],
            None => {
                intents.push(Intent::new(i));
                (intents.len() - 1) as u32
            }
        };
        intent_of.push(n);
        intents[n as usize].join(i, r.end, r.ret, |&o| records[o as usize].ret);
    }
    intents
}

//! A group of spill files read back as the search's input: the model for their partitions
//! and the partitions themselves, by the rules of `prepare::partitions`.

use super::record::{End, Record, NONE};
use crate::ideal::{self, Count, Reading};
use crate::linear::models::{CounterInput, CounterModel};
use crate::linear::partition::{LinOp, Partition};
use crate::op::Process;
use std::collections::{BTreeMap, HashMap};

/// The name of counter number `key` (`None`: the op had no key).
fn name(names: &[String], key: u32) -> Option<&str> {
    names.get(key as usize).map(String::as_str)
}

/// The model for records (in call order) of counters `names`, where `whole` names the
/// partitions deleted whole: their counters numbered in the order they first appear.
pub fn model(
    records: &[Record],
    names: &[String],
    whole: &BTreeMap<String, u64>,
    init: Count,
    reading: Reading,
) -> CounterModel {
    let mut cells: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut seen = vec![false; names.len()];
    for r in records {
        let Some(key) = name(names, r.key) else {
            continue;
        };
        let partition = ideal::partition_of(key);
        let keys = match whole.get_key_value(partition) {
            Some((p, _)) => cells.entry(p.as_str()).or_default(),
            None => continue,
        };
        if !ideal::deletes_partition(key) && !std::mem::replace(&mut seen[r.key as usize], true) {
            keys.push(key.to_string());
        }
    }
    let cells = cells.into_iter().map(|(p, k)| (p.to_string(), k));
    CounterModel::with_whole(init, reading, cells.collect())
}

/// One intended op: its first attempt and how its attempts (the op and its retries) ended.
struct Intent {
    first: usize,
    /// The ok attempt that returned first.
    ok: Option<usize>,
    /// Some attempt may have taken effect without saying so.
    maybe: bool,
    /// The last info completion.
    info: Option<u64>,
}

/// One file's records (in call order) as partitions, by the rules of `prepare::partitions`:
/// retries joined to the op they retry, an op whose every attempt failed left out, one that
/// succeeded returning at its first ok completion.
pub fn partitions(
    model: &CounterModel,
    records: &[Record],
    names: &[String],
) -> Vec<Partition<CounterInput>> {
    let mut intents: Vec<Intent> = Vec::new();
    let mut intent_of: HashMap<u64, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        let retried = (r.retry_of != NONE)
            .then(|| intent_of.get(&r.retry_of))
            .flatten();
        let n = match retried {
            Some(&n) => n,
            None => {
                intents.push(Intent {
                    first: i,
                    ok: None,
                    maybe: false,
                    info: None,
                });
                intents.len() - 1
            }
        };
        intent_of.insert(r.call, n);
        let intent = &mut intents[n];
        match r.end {
            End::Ok if intent.ok.is_none_or(|o| records[o].ret > r.ret) => intent.ok = Some(i),
            End::Ok | End::Fail => {}
            End::Info => {
                intent.maybe = true;
                intent.info = intent.info.max(Some(r.ret));
            }
            End::Open => intent.maybe = true,
        }
    }
    let mut groups: BTreeMap<Option<String>, Vec<LinOp<CounterInput>>> = BTreeMap::new();
    for intent in intents.iter().filter(|i| i.ok.is_some() || i.maybe) {
        let first = &records[intent.first];
        let ok = intent.ok.map(|o| &records[o]);
        let returned = ok.and_then(Record::returned);
        let key = name(names, first.key);
        let input = model.input_for(key.unwrap_or_default(), &first.f(), first.value, returned);
        let Some(input) = input else {
            continue;
        };
        groups
            .entry(key.map(|k| model.partition_of(k)))
            .or_default()
            .push(LinOp {
                input,
                call: first.call,
                ret: ok.map(|o| o.ret),
                hint: intent.info.filter(|_| ok.is_none()),
                process: Process::Client(first.process),
            });
    }
    groups
        .into_iter()
        .map(|(key, ops)| Partition { key, ops })
        .collect()
}

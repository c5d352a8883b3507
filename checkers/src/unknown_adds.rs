//! What became of the adds whose outcome the clients never learned (a timeout, a kill): the
//! nodes' own final values (the oracle) account for how many took effect, on every counter
//! where that is determined: no delete touched it, its nodes agree, and its unknown adds
//! share one delta. A service that lost acknowledged adds makes the count too low: it is
//! what the final values allow, not a proof.

use crate::ideal::{self, Reading};
use crate::op::{Op, OpType, Process, F};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// How many adds of unknown outcome took effect, by the nodes' final values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnknownApplied {
    /// Counters where the count is determined.
    pub keys: u64,
    /// Adds of unknown outcome on them.
    pub adds: u64,
    /// Of those, how many took effect.
    pub applied: u64,
}

/// One counter's adds, as far as the count needs them.
#[derive(Debug, Default)]
struct Adds {
    /// The deltas of the adds that completed ok, summed.
    ok_sum: i128,
    /// Adds of unknown outcome.
    unknown: u64,
    /// Their delta, while they share one.
    delta: Option<i64>,
    /// Two unknown adds differed in delta, or a delete touched the counter.
    undetermined: bool,
}

/// Gathers every counter's adds from a history, one op at a time.
#[derive(Debug, Default)]
pub struct UnknownAdds {
    keys: FxHashMap<String, Adds>,
    /// Each client's open add: its key and delta.
    open: FxHashMap<u64, (String, i64)>,
    /// Partitions and counters some delete named.
    deleted: FxHashSet<String>,
}

impl UnknownAdds {
    /// An empty tally.
    pub fn new() -> Self {
        UnknownAdds::default()
    }

    /// Takes one op of the history.
    pub fn observe(&mut self, op: &Op) {
        let Process::Client(process) = op.process else {
            return;
        };
        // A completion is paired by its process alone: it need not repeat the key.
        match (&op.f, op.kind, &op.key) {
            (F::Delete, OpType::Invoke, Some(key)) => {
                self.deleted.insert(key.clone());
            }
            (F::Add, OpType::Invoke, Some(key)) => {
                if let Some(delta) = op.value.as_i64() {
                    self.open.insert(process, (key.clone(), delta));
                }
            }
            (F::Add, OpType::Ok, _) => {
                if let Some((key, delta)) = self.open.remove(&process) {
                    self.keys.entry(key).or_default().ok_sum += i128::from(delta);
                }
            }
            (F::Add, OpType::Info, _) => {
                if let Some((key, delta)) = self.open.remove(&process) {
                    self.unknown(key, delta);
                }
            }
            (_, OpType::Fail, _) => {
                self.open.remove(&process);
            }
            _ => {}
        }
    }

    fn unknown(&mut self, key: String, delta: i64) {
        let adds = self.keys.entry(key).or_default();
        adds.unknown += 1;
        adds.undetermined |= adds.delta.is_some_and(|d| d != delta) || delta == 0;
        adds.delta = Some(delta);
    }

    /// The count against the nodes' final values (`truth`: counter → node → value, absent
    /// as `None`, compared as `reading` says; a counter in no dump is absent everywhere); a
    /// counter whose nodes disagree is left out.
    pub fn finish(
        mut self,
        truth: &BTreeMap<String, BTreeMap<String, Option<i64>>>,
        reading: Reading,
    ) -> UnknownApplied {
        for (key, delta) in std::mem::take(&mut self.open).into_values() {
            self.unknown(key, delta);
        }
        let mut result = UnknownApplied::default();
        for (key, adds) in &self.keys {
            let partition = ideal::partition_of(key);
            let deleted = self.deleted.contains(key) || self.deleted.contains(partition);
            let (Some(delta), false) = (adds.delta, adds.undetermined || deleted) else {
                continue;
            };
            let absent = BTreeMap::from([(String::new(), None)]);
            let values: BTreeSet<Option<i64>> = (truth.get(key).unwrap_or(&absent).values())
                .map(|v| reading.of(*v))
                .collect();
            let Some(&first) = values.first().filter(|_| values.len() == 1) else {
                continue;
            };
            let extra = i128::from(first.unwrap_or(0)) - adds.ok_sum;
            let delta = i128::from(delta);
            if extra % delta != 0 || extra / delta < 0 || extra / delta > i128::from(adds.unknown) {
                continue;
            }
            result.keys += 1;
            result.adds += adds.unknown;
            result.applied += (extra / delta) as u64;
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn op(process: u64, kind: OpType, f: F, key: &str, value: Value) -> Op {
        Op::new(
            Process::Client(process),
            kind,
            f,
            Some(key.to_string()),
            value,
        )
    }

    fn add(tally: &mut UnknownAdds, process: u64, key: &str, delta: i64, end: Option<OpType>) {
        tally.observe(&op(process, OpType::Invoke, F::Add, key, delta.into()));
        if let Some(kind) = end {
            tally.observe(&op(process, kind, F::Add, key, delta.into()));
        }
    }

    fn truth(values: &[(&str, &[Option<i64>])]) -> BTreeMap<String, BTreeMap<String, Option<i64>>> {
        (values.iter())
            .map(|(key, by_node)| {
                let nodes = (by_node.iter().enumerate()).map(|(i, v)| (format!("n{}", i + 1), *v));
                (key.to_string(), nodes.collect())
            })
            .collect()
    }

    #[test]
    fn the_final_value_less_the_acknowledged_adds_counts_the_unknown_ones_applied() {
        let mut tally = UnknownAdds::new();
        for p in 0..5 {
            add(&mut tally, p, "c/a", 2, Some(OpType::Ok));
        }
        add(&mut tally, 5, "c/a", 2, Some(OpType::Fail));
        for p in 6..9 {
            add(&mut tally, p, "c/a", 2, Some(OpType::Info));
        }
        add(&mut tally, 9, "c/a", 2, None);
        // 5 acknowledged adds of 2 are 10; the nodes hold 14: 2 of the 4 unknown ones applied.
        let result = tally.finish(
            &truth(&[("c/a", &[Some(14), Some(14)])]),
            Reading::default(),
        );
        assert_eq!(
            result,
            UnknownApplied {
                keys: 1,
                adds: 4,
                applied: 2
            }
        );
    }

    #[test]
    fn completions_pair_by_process_and_absent_reads_as_zero_when_asked() {
        let mut tally = UnknownAdds::new();
        tally.observe(&op(0, OpType::Invoke, F::Add, "c/a", 1.into()));
        let mut done = Op::new(Process::Client(0), OpType::Ok, F::Add, None, Value::Null);
        done.index = 1;
        tally.observe(&done);
        add(&mut tally, 1, "c/a", 1, Some(OpType::Info));
        // One node holds 1, another 0 where the target says 0 for absent too.
        let values = truth(&[("c/a", &[Some(1), Some(1)]), ("z/a", &[None, Some(0)])]);
        let applied = tally.finish(
            &values,
            Reading {
                absent_is_zero: true,
            },
        );
        assert_eq!(
            applied,
            UnknownApplied {
                keys: 1,
                adds: 1,
                applied: 0
            }
        );
    }

    #[test]
    fn deletes_mixed_deltas_disagreeing_nodes_and_impossible_values_are_left_out() {
        let mut tally = UnknownAdds::new();
        add(&mut tally, 0, "p/a", 1, Some(OpType::Info));
        tally.observe(&op(1, OpType::Invoke, F::Delete, "p", Value::Null));
        add(&mut tally, 2, "q/a", 1, Some(OpType::Info));
        add(&mut tally, 3, "q/a", 3, Some(OpType::Info));
        add(&mut tally, 4, "r/a", 1, Some(OpType::Info));
        add(&mut tally, 5, "s/a", 1, Some(OpType::Info));
        add(&mut tally, 6, "pp/a", 1, Some(OpType::Info));
        // In no node's dump: absent everywhere, so its unknown add did not take effect.
        add(&mut tally, 7, "t/a", 1, Some(OpType::Info));
        let values = truth(&[
            ("p/a", &[Some(1)]),
            ("q/a", &[Some(4)]),
            ("r/a", &[Some(1), None]),
            ("s/a", &[Some(5)]),
            ("pp/a", &[Some(1)]),
        ]);
        // Only pp/a (a delete of `p` does not touch `pp`) and t/a.
        assert_eq!(
            tally.finish(&values, Reading::default()),
            UnknownApplied {
                keys: 2,
                adds: 2,
                applied: 1
            }
        );
    }
}

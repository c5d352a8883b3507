//! What became of the adds whose outcome the clients never learned (a timeout, a kill): the
//! nodes' own final values (the oracle) say how many took effect, on every counter where
//! that is determined: no delete touched it, and its unknown adds share one delta.

use crate::op::{Op, OpType, Process, F};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
        let Some(key) = &op.key else { return };
        match (&op.f, op.kind) {
            (F::Delete, OpType::Invoke) => {
                self.deleted.insert(key.clone());
            }
            (F::Add, OpType::Invoke) => {
                if let Some(delta) = op.value.as_i64() {
                    self.open.insert(process, (key.clone(), delta));
                }
            }
            (F::Add, OpType::Ok) => {
                if let Some((key, delta)) = self.open.remove(&process) {
                    self.keys.entry(key).or_default().ok_sum += i128::from(delta);
                }
            }
            (F::Add, OpType::Info) => {
                if let Some((key, delta)) = self.open.remove(&process) {
                    self.unknown(key, delta);
                }
            }
            (F::Add, OpType::Fail) => {
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
    /// as `None`); a counter whose nodes disagree is left out.
    pub fn finish(
        mut self,
        truth: &BTreeMap<String, BTreeMap<String, Option<i64>>>,
    ) -> UnknownApplied {
        for (key, delta) in std::mem::take(&mut self.open).into_values() {
            self.unknown(key, delta);
        }
        let mut result = UnknownApplied::default();
        for (key, adds) in &self.keys {
            let touched = |d: &String| {
                key == d
                    || key
                        .strip_prefix(d.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            };
            let (Some(delta), false) = (
                adds.delta,
                adds.undetermined || self.deleted.iter().any(touched),
            ) else {
                continue;
            };
            let Some(values) = truth
                .get(key)
                .map(|by_node| by_node.values().collect::<Vec<_>>())
            else {
                continue;
            };
            let Some(&&first) = values
                .first()
                .filter(|_| values.windows(2).all(|w| w[0] == w[1]))
            else {
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
        let result = tally.finish(&truth(&[("c/a", &[Some(14), Some(14)])]));
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
    fn deletes_mixed_deltas_disagreeing_nodes_and_impossible_values_are_left_out() {
        let mut tally = UnknownAdds::new();
        add(&mut tally, 0, "p/a", 1, Some(OpType::Info));
        tally.observe(&op(1, OpType::Invoke, F::Delete, "p", Value::Null));
        add(&mut tally, 2, "q/a", 1, Some(OpType::Info));
        add(&mut tally, 3, "q/a", 3, Some(OpType::Info));
        add(&mut tally, 4, "r/a", 1, Some(OpType::Info));
        add(&mut tally, 5, "s/a", 1, Some(OpType::Info));
        add(&mut tally, 6, "pp/a", 1, Some(OpType::Info));
        let values = truth(&[
            ("p/a", &[Some(1)]),
            ("q/a", &[Some(4)]),
            ("r/a", &[Some(1), None]),
            ("s/a", &[Some(5)]),
            ("pp/a", &[Some(1)]),
        ]);
        // Only pp/a: a delete of `p` does not touch `pp`.
        assert_eq!(
            tally.finish(&values),
            UnknownApplied {
                keys: 1,
                adds: 1,
                applied: 1
            }
        );
    }
}
